"""Replaying a cassette (see ``_cassette``) with no network: ``CassetteTransport``, and
``cassette_registry``, which records or replays as ``PI_TRIO_RECORD`` says."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, Final

import anyio
import anyio.lowlevel
import httpx2

from pi_trio.ai.providers import ProviderRegistry

from ._cassette import CassetteMiss, RecordingTransport, load_cassette, request_record, undata
from ._redact import Redactor
from ._replay import registry_with_transport

__all__ = ["RECORD_VARIABLE", "CassetteTransport", "cassette_registry"]

RECORD_VARIABLE: Final = "PI_TRIO_RECORD"
# The client of a recording registry waits as long as the default registry's (a live
# provider may think for minutes); a replay needs no timeout.
_RECORD_TIMEOUT: Final = httpx2.Timeout(300.0, connect=15.0)


class _Recorded:
    """One exchange of the cassette, ready to answer a request."""

    __slots__ = ("chunks", "end", "headers", "number", "request", "status", "used")

    def __init__(self, number: int, records: list[dict[str, Any]]) -> None:
        self.number = number
        kinds = {record["kind"]: record for record in records}
        self.request: dict[str, Any] = kinds.get("request", {})
        response = kinds.get("response")
        self.status: int | None = None if response is None else int(response["status"])
        self.headers: dict[str, str] = {} if response is None else dict(response["headers"])
        self.chunks = [
            (undata(r), float(r.get("at_ms", 0.0)) / 1000) for r in records if r["kind"] == "chunk"
        ]
        self.end = kinds.get("error") or kinds.get("end") or {"kind": "end", "complete": False}
        self.used = False

    def describe(self) -> str:
        return f"#{self.number} {self.request.get('method')} {self.request.get('path')}"


def _error(record: dict[str, Any], request: httpx2.Request) -> Exception:
    """The exception an ``error`` record names (an httpx2 one when it is one)."""
    kind = getattr(httpx2, str(record.get("type")), None)
    message = str(record.get("message", ""))
    if isinstance(kind, type) and issubclass(kind, httpx2.RequestError):
        return kind(message, request=request)
    return httpx2.ReadError(f"{record.get('type')}: {message}", request=request)


class _Body(httpx2.AsyncByteStream):
    def __init__(self, exchange: _Recorded, request: httpx2.Request, timing: bool) -> None:
        self._exchange = exchange
        self._request = request
        self._timing = timing
        self._index = 0
        self._started = anyio.current_time()

    def __aiter__(self) -> _Body:
        return self

    async def __anext__(self) -> bytes:
        chunks = self._exchange.chunks
        if self._index < len(chunks):
            data, at = chunks[self._index]
            self._index += 1
            if self._timing:
                await anyio.sleep_until(self._started + at)
            else:
                await anyio.lowlevel.checkpoint()  # one network read per chunk
            return data
        end = self._exchange.end
        if end["kind"] == "error":
            raise _error(end, self._request)
        raise StopAsyncIteration

    async def aclose(self) -> None:
        pass


class CassetteTransport(httpx2.AsyncBaseTransport):
    """Answers each request from the cassette at ``path``: the first exchange not
    replayed yet whose method, path and body digest match (bodies compared after
    redaction, ``secrets`` included). ``timing=True`` replays the recorded pace (on
    anyio's clock). A request without an answer raises ``CassetteMiss`` (also kept in
    ``misses``), naming the closest recorded request and what differs."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        secrets: Iterable[str] = (),
        timing: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self._secrets = list(secrets)
        self._timing = timing
        self.exchanges = [_Recorded(n, records) for n, records in load_cassette(path).items()]
        self.misses: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        sent = request_record(request, await request.aread(), Redactor(self._secrets))
        await anyio.lowlevel.checkpoint()
        key = (sent["method"], sent["path"], sent["body_sha256"])
        matches = [
            e
            for e in self.exchanges
            if (e.request.get("method"), e.request.get("path"), e.request.get("body_sha256")) == key
        ]
        exchange = next((e for e in matches if not e.used), None)
        if exchange is None:
            text = self._miss_text(sent, matches)
            self.misses.append(text)
            raise CassetteMiss(text)
        exchange.used = True
        if exchange.status is None:
            raise _error(exchange.end, request)
        return httpx2.Response(
            exchange.status,
            headers=exchange.headers,
            stream=_Body(exchange, request, self._timing),
            request=request,
        )

    def _miss_text(self, sent: dict[str, Any], matches: list[_Recorded]) -> str:
        what = f"{sent['method']} {sent['path']} (body sha256 {sent['body_sha256'][:12]})"
        if matches:
            return (
                f"The cassette {self.path!r} answered {what} {len(matches)} time(s) already, "
                "as often as it was recorded; record it again with the request made as "
                f"often as the test makes it ({RECORD_VARIABLE}=1)"
            )
        if not self.exchanges:
            return f"The cassette {self.path!r} holds no exchange; nothing answers {what}"
        closest = max(self.exchanges, key=lambda e: _likeness(e.request, sent))
        return (
            f"No exchange of the cassette {self.path!r} matches {what}; the closest, "
            f"{closest.describe()}, differs in {_differences(closest.request, sent)}. If the "
            f"request changed on purpose, record the cassette again ({RECORD_VARIABLE}=1)"
        )


def _common_prefix(a: bytes, b: bytes) -> int:
    """How many leading bytes ``a`` and ``b`` share."""
    n = min(len(a), len(b))
    return next((i for i in range(n) if a[i] != b[i]), n)


def _body(record: dict[str, Any]) -> bytes:
    return undata(record, "body", "body_base64")


def _likeness(recorded: dict[str, Any], sent: dict[str, Any]) -> tuple[int, int]:
    same = (
        2 * (recorded.get("path") == sent["path"])
        + (recorded.get("method") == sent["method"])
        + (recorded.get("body_sha256") == sent["body_sha256"])
    )
    return same, _common_prefix(_body(recorded), _body(sent))


def _differences(recorded: dict[str, Any], sent: dict[str, Any]) -> str:
    found = []
    if recorded.get("method") != sent["method"]:
        found.append(f"the method (recorded {recorded.get('method')}, sent {sent['method']})")
    if recorded.get("path") != sent["path"]:
        found.append(f"the path (recorded {recorded.get('path')!r}, sent {sent['path']!r})")
    if recorded.get("body_sha256") != sent["body_sha256"]:
        old, new = _body(recorded), _body(sent)
        at = _common_prefix(old, new)
        window = slice(max(0, at - 20), at + 40)
        found.append(f"the body from byte {at} (recorded {old[window]!r}, sent {new[window]!r})")
    return "; ".join(found) or "nothing (it was replayed already)"


def cassette_registry(
    path: str | os.PathLike[str],
    *,
    secrets: Iterable[str] = (),
    record: bool | None = None,
    timing: bool = False,
) -> ProviderRegistry:
    """A registry whose providers answer from the cassette at ``path``, or record it:
    ``record=True``, or ``record=None`` with ``PI_TRIO_RECORD`` set (to anything but
    ``0``), sends real requests and writes the cassette anew."""
    if record is None:
        record = os.environ.get(RECORD_VARIABLE, "0").strip() not in ("", "0")
    if record:
        return registry_with_transport(
            RecordingTransport(path, secrets=secrets, timing=timing), timeout=_RECORD_TIMEOUT
        )
    return registry_with_transport(CassetteTransport(path, secrets=secrets, timing=timing))
