"""Anthropic message threads (the ``message-threads-2026-08-12`` beta), as pi 1.6 uses
them (sans-IO).

With a ``session_id`` and ``cache_retention`` not ``"none"``, a request continues on the
server from the session's previous reply and sends only the new messages
(``thread: {"type": "continue", "previous_message_id": ...}``, without ``system`` and
``tools``, which the server keeps). That needs everything the server already holds to be
unchanged: the settings (endpoint, model, system, tools, thinking, output config, tool
choice, betas, fallbacks) and the messages up to the previous reply, compared by a hash
that ignores cache markers and whether a text is a string or one text block. Otherwise
the full request goes as a new thread (``thread: {"type": "create"}``). Each reply can be
continued once.

A rejection about the thread (``thread_not_found``, ``thread_already_continued``,
``thread_continue_in_flight``, ``thread_fingerprint_mismatch``) is sent again, once, as a
new thread; an endpoint that cannot use threads (``thread_unsupported_request``, or a 400
without a code whose text names ``thread``) gets the request again without ``thread``,
and the session sends none from then on. Either way the message keeps an
``anthropic_thread_fallback`` diagnostic. Threads are on by default only for endpoints on
``api.anthropic.com`` (``compat.supportsMessageThreads`` changes that: a gateway that drops
the field would lose the conversation); ``StreamOptions.disable_continuation`` keeps a
request (a replay, cache warming) from using or recording the state.

State is per session, at most ``MAX_THREAD_SESSIONS`` (the oldest is dropped first: its
thread has most likely expired on the server anyway); ``forget_threads`` drops a session
(``cleanup_session_resources`` does, when it ends).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Final, Literal

import msgspec

from .._json._depth import decode_json
from .._types import AssistantMessage, Model, now_ms

__all__ = [
    "MAX_THREAD_SESSIONS",
    "ThreadRequest",
    "forget_threads",
    "new_thread",
    "prepare_thread_request",
    "record_thread_reply",
    "thread_fallback",
    "thread_session",
    "threads_off",
]

MAX_THREAD_SESSIONS: Final = 10_000
NEW_THREAD_ERRORS: Final = frozenset(
    {
        "thread_not_found",
        "thread_already_continued",
        "thread_continue_in_flight",
        "thread_fingerprint_mismatch",
    }
)
_SETTINGS: Final = ("system", "tools", "thinking", "output_config", "tool_choice", "fallbacks")


class _Continuation:
    """Where a session's next request can continue: after the request's messages (their
    running hash with the settings, and their count) and the reply ``reply_id``, whose
    wire form ``reply()`` gives once the reply has been read to its end (a provider sends
    its terminal event before the consumer has applied every delta)."""

    __slots__ = ("count", "digest", "reply", "reply_id")

    def __init__(
        self, digest: Any, count: int, reply: Callable[[], list[dict[str, Any]]], reply_id: str
    ) -> None:
        self.digest = digest
        self.count = count
        self.reply = reply
        self.reply_id = reply_id


_OFF: Final = "off"
# insertion-ordered, oldest first; "off" after the endpoint refused threads
_sessions: dict[str, _Continuation | Literal["off"]] = {}


class ThreadRequest(msgspec.Struct, frozen=True):
    """The body to send for a session, with its ``thread`` field."""

    session_id: str
    body: dict[str, Any]


def thread_session(model: Model, session_id: str | None, retention: str) -> str | None:
    """The session whose requests use threads, or ``None`` where threads do not apply."""
    if session_id is None or retention == "none":
        return None
    supported = (model.compat or {}).get("supportsMessageThreads")
    if supported is None:
        supported = "api.anthropic.com" in model.base_url
    return session_id if supported is True else None


def _set(session_id: str, value: _Continuation | Literal["off"]) -> None:
    _sessions.pop(session_id, None)
    _sessions[session_id] = value
    while len(_sessions) > MAX_THREAD_SESSIONS:
        del _sessions[next(iter(_sessions))]


def forget_threads(session_id: str | None = None) -> None:
    """Forget ``session_id``'s thread, or every session's when ``None``."""
    if session_id is None:
        _sessions.clear()
    else:
        _sessions.pop(session_id, None)


def threads_off(session_id: str) -> None:
    """The endpoint refused threads: the session sends none from now on."""
    _set(session_id, _OFF)


def _normalized(value: Any) -> Any:
    """Messages as the API reads them: no cache markers, a string content as one text
    block."""
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "cache_control":
                continue
            if key == "content" and isinstance(item, str):
                out[key] = [{"type": "text", "text": item}]
            else:
                out[key] = _normalized(item)
        return out
    if isinstance(value, list):
        return [_normalized(item) for item in value]
    return value


def _digest(model: Model, body: dict[str, Any], betas: Sequence[str], messages: Any) -> Any:
    """A running hash of the settings and ``messages`` (more can be added)."""
    settings = [model.provider, model.base_url, body.get("model"), list(betas)]
    settings += [body.get(name) for name in _SETTINGS]
    digest = hashlib.sha256(msgspec.json.encode(settings))
    _add(digest, messages)
    return digest


def _add(digest: Any, messages: Any) -> None:
    for message in messages:
        digest.update(b"\n" + msgspec.json.encode(_normalized(message)))


def prepare_thread_request(
    model: Model, session_id: str, body: dict[str, Any], betas: Sequence[str]
) -> ThreadRequest | None:
    """The request to send for ``session_id``: a continuation when the session's
    previous reply can be continued, else a new thread; ``None`` when the session's
    endpoint refused threads."""
    state = _sessions.get(session_id)
    if state == _OFF:
        return None
    messages = body.get("messages")
    if isinstance(state, _Continuation) and isinstance(messages, list):
        # a reply is continued once; forgetting it also keeps a concurrent request off it
        del _sessions[session_id]
        reply = state.reply()
        count = state.count + len(reply)
        held = state.digest.copy()
        _add(held, reply)
        if (
            len(messages) > count
            and _digest(model, body, betas, messages[:count]).digest() == held.digest()
        ):
            rest = {k: v for k, v in body.items() if k not in ("system", "tools")}
            rest["messages"] = messages[count:]
            rest["thread"] = {"type": "continue", "previous_message_id": state.reply_id}
            return ThreadRequest(session_id=session_id, body=rest)
    return new_thread(session_id, body)


def new_thread(session_id: str, body: dict[str, Any]) -> ThreadRequest:
    return ThreadRequest(session_id=session_id, body={**body, "thread": {"type": "create"}})


def thread_fallback(
    message: AssistantMessage, status: int, body: str, text: str
) -> Literal["new", "off"] | None:
    """What to do after the thread request was refused with ``status`` and ``body``
    (``text``: the error as shown): ``"new"`` (send it as a new thread), ``"off"`` (send
    it without ``thread``), or ``None`` (the refusal is not about the thread). Records
    the ``anthropic_thread_fallback`` diagnostic on ``message`` when it is."""
    code = _error_code(body)
    if code in NEW_THREAD_ERRORS:
        action: Literal["new", "off"] | None = "new"
    elif code == "thread_unsupported_request" or (
        code is None and status == 400 and "thread" in text
    ):
        action = "off"
    else:
        return None
    diagnostic = {
        "type": "anthropic_thread_fallback",
        "timestamp": now_ms(),
        "error": {"message": text},
        "details": {"reason": code if code is not None else str(status)},
    }
    message.diagnostics = [*(message.diagnostics or []), diagnostic]
    return action


def _error_code(body: str) -> str | None:
    try:
        data = decode_json(body)
    except msgspec.DecodeError:
        return None
    error = data.get("error") if isinstance(data, dict) else None
    details = error.get("details") if isinstance(error, dict) else None
    code = details.get("error_code") if isinstance(details, dict) else None
    return code if isinstance(code, str) else None


def record_thread_reply(
    model: Model,
    thread: ThreadRequest,
    body: dict[str, Any],
    betas: Sequence[str],
    reply: Callable[[], list[dict[str, Any]]],
    message: AssistantMessage,
) -> None:
    """After a clean reply to ``thread`` (whose full request was ``body``): where the
    session's next request can continue. ``reply()`` gives the answer as the next request
    will send it (called then). A reply of a fallback model (``response_model`` set) is
    not stored by the server and cannot be continued."""
    if message.response_id is None or message.response_model is not None:
        return
    messages = body.get("messages")
    if not isinstance(messages, list):
        return
    digest = _digest(model, body, betas, messages)
    _set(thread.session_id, _Continuation(digest, len(messages), reply, message.response_id))
