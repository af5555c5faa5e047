"""``stream_proxy``: a stream function that routes LLM calls through a Pi proxy server.

The server holds the provider keys and runs the call; the client speaks the original
runtime's proxy protocol (``POST <proxy_url>/api/stream`` with a bearer token, answered
by Server-Sent Events without ``partial``) and rebuilds the message locally.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from ..ai import AssistantMessageEvent, Context, Model, StreamOptions
from ._client import stream_via_proxy

if TYPE_CHECKING:
    import httpx2
    from anyio.abc import ObjectSendStream

__all__ = ["AuthToken", "ProxyStreamFn", "stream_proxy"]

AuthToken: TypeAlias = "str | Callable[[], str | Awaitable[str]]"
"""A bearer token, or a (sync or async) function returning one, called per request."""

_OPTION_NAMES = frozenset(StreamOptions.__struct_fields__)


class ProxyStreamFn:
    """A stream function bound to one proxy server; build it with ``stream_proxy``."""

    __slots__ = ("_auth_token", "_http_client", "_overrides", "proxy_url")

    def __init__(
        self,
        proxy_url: str,
        auth_token: AuthToken,
        http_client: httpx2.AsyncClient | None,
        overrides: dict[str, Any],
    ) -> None:
        if not isinstance(proxy_url, str) or not proxy_url.startswith(("http://", "https://")):
            raise ValueError(
                f"proxy_url must be an http:// or https:// URL such as "
                f"'https://genai.example.com', got {proxy_url!r}"
            )
        if isinstance(auth_token, str):
            if not auth_token:
                raise ValueError("auth_token must be a non-empty bearer token")
        elif not callable(auth_token):
            raise TypeError(
                "auth_token must be a str or a function returning one (sync or async), "
                f"got {type(auth_token).__name__}"
            )
        unknown = sorted(set(overrides) - _OPTION_NAMES)
        if unknown:
            raise TypeError(
                f"stream_proxy() got unknown stream option(s) {', '.join(unknown)}; "
                f"valid ones are the StreamOptions fields: {', '.join(sorted(_OPTION_NAMES))}"
            )
        self.proxy_url = proxy_url
        self._auth_token = auth_token
        self._http_client = http_client
        self._overrides = overrides

    def __repr__(self) -> str:
        return f"<ProxyStreamFn {self.proxy_url!r}>"

    async def __call__(
        self,
        model: Model,
        context: Context,
        options: StreamOptions | None,
        send: ObjectSendStream[AssistantMessageEvent],
        /,
    ) -> None:
        if options is None:
            options = StreamOptions(**self._overrides)
        elif self._overrides:
            options = msgspec.structs.replace(options, **self._overrides)
        token: object = self._auth_token
        if callable(token):
            token = token()
            if inspect.isawaitable(token):
                token = await token
            if not isinstance(token, str) or not token:
                raise TypeError(f"the auth_token function returned {token!r}, expected a token")
        assert isinstance(token, str)
        await stream_via_proxy(
            model,
            context,
            options,
            send,
            proxy_url=self.proxy_url,
            auth_token=token,
            http_client=self._http_client,
        )


def stream_proxy(
    *args: Any,
    proxy_url: str,
    auth_token: AuthToken,
    http_client: httpx2.AsyncClient | None = None,
    **overrides: Any,
) -> Any:
    """A stream function that proxies through a Pi proxy server:
    ``Agent(model=..., stream_fn=stream_proxy(proxy_url="https://genai.example.com",
    auth_token=t))``.

    Keyword arguments other than the proxy's own override the stream options of every
    request (``temperature=0.2``). Requests use ``http_client`` if given, else the shared
    client of the registry in the options. Called with the four stream-function arguments
    ``(model, context, options, send)`` it runs one request right away:
    ``await stream_proxy(model, context, options, send, proxy_url=..., auth_token=...)``.
    """
    fn = ProxyStreamFn(proxy_url, auth_token, http_client, overrides)
    if not args:
        return fn
    if len(args) != 4:
        raise TypeError(
            "stream_proxy() takes either no positional arguments (returns a stream "
            "function) or the four stream-function arguments (model, context, options, "
            f"send), got {len(args)}"
        )
    call: Coroutine[Any, Any, None] = fn(*args)
    return call
