"""The Pi proxy protocol, both sides: ``POST /api/stream`` streams one LLM call as
assistant events without ``partial``.

- ``_wire``: the request and event formats (sans-IO), shared by both sides;
- the client: ``stream_proxy`` (``_stream_fn``, also exported by ``pi_trio.agent``), the
  HTTP shell (``_client``) and the rebuilding of the message from the events
  (``_rebuild``, sans-IO);
- the server: ``create_app`` (``_app``, an ASGI app, with the tokens and the model policy
  in ``_access``, what a client may choose of the options in ``_options`` and the memory
  budget of request bodies in ``_body``) and ``serve`` (``_server``), which needs the
  optional ``proxy`` extra (hypercorn), imported only when serving.
"""

import typing
from typing import Any

from ._stream_fn import ProxyStreamFn as ProxyStreamFn
from ._stream_fn import stream_proxy as stream_proxy

if typing.TYPE_CHECKING:
    from ._access import TOKENS_ENV as TOKENS_ENV
    from ._access import ModelPolicy as ModelPolicy
    from ._access import catalog_models_only as catalog_models_only
    from ._access import load_tokens as load_tokens
    from ._app import DEFAULT_BODY_TIMEOUT_S as DEFAULT_BODY_TIMEOUT_S
    from ._app import DEFAULT_MAX_STREAMS as DEFAULT_MAX_STREAMS
    from ._app import ProxyApp as ProxyApp
    from ._app import create_app as create_app
    from ._body import DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES
    from ._body import DEFAULT_MAX_BYTES_IN_FLIGHT as DEFAULT_MAX_BYTES_IN_FLIGHT
    from ._options import DEFAULT_FORWARD_HEADERS as DEFAULT_FORWARD_HEADERS
    from ._options import DEFAULT_SAMPLING_PARAMS as DEFAULT_SAMPLING_PARAMS
    from ._server import DEFAULT_HOST as DEFAULT_HOST
    from ._server import DEFAULT_PORT as DEFAULT_PORT
    from ._server import serve as serve

# The server's names load on first use: a client (``stream_proxy``, which
# ``pi_trio.agent`` re-exports) never loads the server.
_SERVER_NAMES = {
    "DEFAULT_BODY_TIMEOUT_S": "_app",
    "DEFAULT_FORWARD_HEADERS": "_options",
    "DEFAULT_MAX_BODY_BYTES": "_body",
    "DEFAULT_MAX_BYTES_IN_FLIGHT": "_body",
    "DEFAULT_MAX_STREAMS": "_app",
    "DEFAULT_SAMPLING_PARAMS": "_options",
    "TOKENS_ENV": "_access",
    "ModelPolicy": "_access",
    "ProxyApp": "_app",
    "catalog_models_only": "_access",
    "create_app": "_app",
    "load_tokens": "_access",
    "DEFAULT_HOST": "_server",
    "DEFAULT_PORT": "_server",
    "serve": "_server",
}


def __getattr__(name: str) -> Any:
    module = _SERVER_NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'pi_trio.proxy' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_FORWARD_HEADERS",
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_BYTES_IN_FLIGHT",
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_PORT",
    "DEFAULT_SAMPLING_PARAMS",
    "TOKENS_ENV",
    "ModelPolicy",
    "ProxyApp",
    "ProxyStreamFn",
    "catalog_models_only",
    "create_app",
    "load_tokens",
    "serve",
    "stream_proxy",
]
