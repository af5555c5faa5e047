"""Cassettes: HTTP traffic recorded once (``RecordingTransport``) and replayed offline
(``CassetteTransport``), with the credentials taken out.

A cassette is a JSON Lines file, one record per line, keys sorted, so that a re-recording
diffs line by line::

    {"cassette": "pi_trio", "version": 1}
    {"id": 1, "kind": "request", "method": "POST", "url": "...", "path": "/v1/messages",
     "headers": {...}, "body": "{...}", "body_sha256": "..."}
    {"id": 1, "kind": "response", "status": 200, "headers": {...}}
    {"id": 1, "kind": "chunk", "data": "event: message_start\\ndata: {...}\\n\\n"}
    ...
    {"id": 1, "kind": "end", "complete": true}

Each exchange's lines are written together when its response is closed (or its request
failed: then an ``error`` line names the exception, and replaying raises it again). A
chunk is one network read; bytes that are not UTF-8 (Bedrock's binary frames) are stored
as ``base64``; with ``timing=True`` each response and chunk line has ``at_ms``, the time
since the request was sent. Framing headers (``content-length``, ``transfer-encoding``)
are not kept, and the recording asks for uncompressed bodies (``accept-encoding:
identity``), so that bodies can be read, diffed and redacted. The writes are small
synchronous appends, as a logging handler makes them.

Credentials never reach the file (``_redact.Redactor``): credential headers and query
parameters are blanked, and every form of a known secret is removed from URLs, headers
and bodies. A replay matches a request by method, path and the SHA-256 of its body
(after the same redaction, so the key used while replaying does not matter); a request
that matches nothing raises ``CassetteMiss`` naming the closest recorded request and what
differs.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

import anyio
import httpx2

from ._redact import Redactor

__all__ = ["CassetteMiss", "RecordingTransport", "body_digest", "load_cassette", "request_record"]

VERSION: Final = 1
_FRAMING: Final = frozenset({"content-length", "transfer-encoding", "connection", "keep-alive"})


class CassetteMiss(AssertionError):
    """A replayed request that the cassette holds no (unused) answer for."""


def body_digest(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def _data(data: bytes) -> dict[str, str]:
    try:
        return {"data": data.decode("utf-8")}
    except UnicodeDecodeError:
        return {"base64": base64.b64encode(data).decode()}


def undata(record: dict[str, Any], text: str = "data", raw: str = "base64") -> bytes:
    """The bytes a record holds as text (``data``) or as ``base64``."""
    if text in record:
        return str(record[text]).encode()
    return base64.b64decode(record.get(raw, ""))


def load_cassette(path: str | os.PathLike[str]) -> dict[int, list[dict[str, Any]]]:
    """The records of each exchange of the cassette at ``path``, in the file's order;
    ``ValueError`` naming the line of one that is not a cassette record."""
    exchanges: dict[int, list[dict[str, Any]]] = {}
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, text in enumerate(lines, 1):
        try:
            record = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ValueError(f"{path}:{number}: not a cassette's JSON line ({exc})") from exc
        if number == 1:
            if record.get("cassette") != "pi_trio":
                raise ValueError(f"{path}:1: not a pi_trio cassette (no cassette header)")
            continue
        if not isinstance(record, dict) or not isinstance(record.get("id"), int):
            raise ValueError(f"{path}:{number}: a record needs an integer 'id'")
        exchanges.setdefault(record["id"], []).append(record)
    return exchanges


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def request_record(request: httpx2.Request, body: bytes, redactor: Redactor) -> dict[str, Any]:
    """What a cassette keeps of a request (the credentials of its headers and URL are
    learnt first, so that the body is cleaned of them too)."""
    headers = redactor.headers(request.headers.multi_items())
    url = redactor.url(str(request.url))
    body = redactor.clean(body)
    stored = _data(body)
    return {
        "method": request.method,
        "url": url,
        "path": request.url.path,
        "headers": headers,
        "body_sha256": body_digest(body),
        **({"body": stored["data"]} if "data" in stored else {"body_base64": stored["base64"]}),
    }


# --------------------------------------------------------------------------- recording


class _Exchange:
    """One request and its response as they are recorded."""

    def __init__(self, number: int, started: float, timing: bool) -> None:
        self.number = number
        self.started = started
        self.timing = timing
        self.records: list[dict[str, Any]] = []
        self.chunks: list[tuple[bytes, float]] = []

    def add(self, kind: str, **fields: Any) -> dict[str, Any]:
        record = {"id": self.number, "kind": kind, **fields}
        if self.timing and kind in ("response", "chunk"):
            record["at_ms"] = round((anyio.current_time() - self.started) * 1000, 3)
        self.records.append(record)
        return record


class _RecordingStream(httpx2.AsyncByteStream):
    """A response body passed through to the client, every chunk recorded."""

    def __init__(self, inner: Any, owner: RecordingTransport, exchange: _Exchange) -> None:
        self._inner = inner
        self._parts: Any = None
        self._owner = owner
        self._exchange = exchange
        self._complete = False
        self._written = False

    def __aiter__(self) -> _RecordingStream:
        self._parts = self._inner.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        try:
            part: bytes = await self._parts.__anext__()
        except StopAsyncIteration:
            self._complete = True
            self._finish()
            raise
        except httpx2.HTTPError as exc:
            self._finish(exc)
            raise
        if part:
            at = anyio.current_time() - self._exchange.started
            self._exchange.chunks.append((part, at))
        return part

    def _finish(self, error: BaseException | None = None) -> None:
        if not self._written:
            self._written = True
            self._owner._write(self._exchange, error, complete=self._complete)

    async def aclose(self) -> None:
        self._finish()
        await self._inner.aclose()


class RecordingTransport(httpx2.AsyncBaseTransport):
    """Sends requests through ``inner`` (a real ``httpx2.AsyncHTTPTransport`` by default)
    and writes each exchange to the cassette at ``path`` (created anew), without
    credentials: ``secrets`` and the keys configured in the environment are removed in
    every form, as is every value of a credential header or query parameter.
    ``timing=True`` records when each chunk arrived."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        inner: httpx2.AsyncBaseTransport | None = None,
        secrets: Iterable[str] = (),
        timing: bool = False,
    ) -> None:
        self.path = Path(path)
        self._inner = inner or httpx2.AsyncHTTPTransport()
        self._redactor = Redactor(secrets)
        self._timing = timing
        self._count = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(_line({"cassette": "pi_trio", "version": VERSION}))

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self._count += 1
        exchange = _Exchange(self._count, anyio.current_time(), self._timing)
        request.headers["accept-encoding"] = "identity"  # bodies stay readable
        exchange.add("request", **request_record(request, await request.aread(), self._redactor))
        try:
            response = await self._inner.handle_async_request(request)
        except Exception as exc:
            self._write(exchange, exc, complete=False)
            raise
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            await response.aclose()
            raise httpx2.DecodingError(
                f"RecordingTransport: the server sent a {encoding!r}-encoded body although "
                "the request asked for 'identity'; a compressed body cannot be redacted, "
                "so it is not recorded",
                request=request,
            )
        kept = [(n, v) for n, v in response.headers.multi_items() if n.lower() not in _FRAMING]
        exchange.add("response", status=response.status_code, headers=self._redactor.headers(kept))
        response.stream = _RecordingStream(response.stream, self, exchange)
        return response

    def _write(self, exchange: _Exchange, error: BaseException | None, *, complete: bool) -> None:
        redact = self._redactor.clean
        chunks = [(redact(data), at) for data, at in exchange.chunks]
        if self._redactor.contains_secret(b"".join(data for data, _ in chunks)):
            # a secret cut between two chunks: kept whole, as one
            chunks = [(redact(b"".join(data for data, _ in exchange.chunks)), chunks[-1][1])]
        lines = [_line(record) for record in exchange.records]
        for data, at in chunks:
            record = {"id": exchange.number, "kind": "chunk", **_data(data)}
            if exchange.timing:
                record["at_ms"] = round(at * 1000, 3)
            lines.append(_line(record))
        if error is not None:
            message = redact(str(error).encode()).decode("utf-8", "replace")
            lines.append(
                _line(
                    {
                        "id": exchange.number,
                        "kind": "error",
                        "type": type(error).__name__,
                        "message": message,
                    }
                )
            )
        else:
            lines.append(_line({"id": exchange.number, "kind": "end", "complete": complete}))
        with self.path.open("a", encoding="utf-8") as file:
            file.write("".join(lines))

    async def aclose(self) -> None:
        await self._inner.aclose()
