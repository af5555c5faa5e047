"""The Pi proxy server: ``POST /api/stream`` for ``stream_proxy`` clients (pi_trio's and the
original runtime's). Serving needs the optional ``proxy`` extra (hypercorn)."""

from ._access import TOKENS_ENV as TOKENS_ENV
from ._access import ModelPolicy as ModelPolicy
from ._access import catalog_models_only as catalog_models_only
from ._access import load_tokens as load_tokens
from ._app import DEFAULT_BODY_TIMEOUT_S as DEFAULT_BODY_TIMEOUT_S
from ._app import DEFAULT_FORWARD_HEADERS as DEFAULT_FORWARD_HEADERS
from ._app import DEFAULT_MAX_BODY_BYTES as DEFAULT_MAX_BODY_BYTES
from ._app import DEFAULT_MAX_STREAMS as DEFAULT_MAX_STREAMS
from ._app import ProxyApp as ProxyApp
from ._app import create_app as create_app
from ._server import DEFAULT_HOST as DEFAULT_HOST
from ._server import DEFAULT_PORT as DEFAULT_PORT
from ._server import serve as serve

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_FORWARD_HEADERS",
    "DEFAULT_HOST",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_STREAMS",
    "DEFAULT_PORT",
    "TOKENS_ENV",
    "ModelPolicy",
    "ProxyApp",
    "catalog_models_only",
    "create_app",
    "load_tokens",
    "serve",
]
