"""Comparing pi_trio with the recorded pi 1.6 on one conformance case (sans-IO).

What is compared, after normalizing both sides alike:

- the final message (its JSON, without ``timestamp`` and ``durationMs``: clock readings);
- the event sequence (each event's JSON without ``partial``; the terminal event's
  message normalized as above), aligned by type and content index, so that one event
  more or less shows as that event (``events+thinking_delta``) rather than as a shifted
  sequence;
- the requests the server saw: method, path with query, the JSON body, and the headers
  minus those that identify the transport or the runtime (``IGNORED_HEADERS``).

``diff`` returns the differences as ``Difference(path, pi16, ours)``; ``ACCEPTED.toml``
lists the differences accepted, each with its reason and the cases it covers, and
``Accepted.explain`` says which rule (if any) accepts a difference.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORDED_ORIGIN = "http://loopback.test"

# Headers that name the HTTP client, the runtime or the connection, not the request: the
# SDKs' x-stainless-* and amz-sdk-* telemetry, user agents, and what HTTP/1.1 itself adds.
IGNORED_HEADERS = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "content-length",
        "transfer-encoding",
        "accept-encoding",
        "accept-language",
        "sec-fetch-mode",
        "user-agent",
        "x-amz-user-agent",
        "amz-sdk-invocation-id",
        "amz-sdk-request",
        "x-goog-api-client",
    }
)
IGNORED_HEADER_PREFIXES = ("x-stainless-",)


# Gemini's generated tool-call ids: <name>_<Date.now()>_<a process-wide counter>
_GENERATED_ID = re.compile(r"^(?P<name>.+)_\d{13}_\d+$")


def _clockless(value: Any) -> Any:
    """``value`` without clock readings and process-wide counters: diagnostics'
    ``timestamp`` / ``timestampMs`` and the numbers of generated tool-call ids."""
    if isinstance(value, dict):
        return {
            k: 0 if k in ("timestamp", "timestampMs") else _clockless(v) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_clockless(v) for v in value]
    if isinstance(value, str):
        match = _GENERATED_ID.match(value)
        return f"{match['name']}_<clock>_<n>" if match else value
    return value


def normalize_message(message: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in message.items() if k not in ("timestamp", "durationMs")}
    return _clockless(out)


def normalize_event(event: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in event.items() if k != "partial"}
    for key in ("message", "error"):
        if isinstance(out.get(key), dict):
            out[key] = normalize_message(out[key])
    return _clockless(out)


def normalize_request(request: dict[str, Any]) -> dict[str, Any]:
    headers = {
        name.lower(): value
        for name, value in request["headers"].items()
        if name.lower() not in IGNORED_HEADERS
        and not name.lower().startswith(IGNORED_HEADER_PREFIXES)
    }
    return {
        "method": request["method"],
        "path": request["path"],
        "headers": headers,
        "body": request["body"],
    }


def normalize(result: dict[str, Any]) -> dict[str, Any]:
    """A recorded or observed result: ``events``, ``message``, ``requests``."""
    return {
        "message": normalize_message(result["message"]),
        "events": [normalize_event(e) for e in result["events"]],
        "requests": [normalize_request(r) for r in result["requests"]],
    }


@dataclass(frozen=True)
class Difference:
    path: str
    pi16: Any
    ours: Any

    def __str__(self) -> str:
        return f"{self.path}: pi16={_short(self.pi16)} ours={_short(self.ours)}"


_MISSING = "<absent>"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 300 else text[:300] + "…"


def diff_values(path: str, a: Any, b: Any, out: list[Difference]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            diff_values(f"{path}.{key}", a.get(key, _MISSING), b.get(key, _MISSING), out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            diff_values(f"{path}.{i}", x, y, out)
    elif a != b or type(a) is not type(b):
        # JSON has one number type: 1 and 1.0 are the same value on the wire
        if (
            isinstance(a, int | float)
            and isinstance(b, int | float)
            and not isinstance(a, bool)
            and a == b
        ):
            return
        out.append(Difference(path, a, b))


def _event_key(event: dict[str, Any]) -> tuple[Any, ...]:
    return (event.get("type"), event.get("contentIndex"))


def diff(pi16: dict[str, Any], ours: dict[str, Any]) -> list[Difference]:
    """The differences between two normalized results."""
    out: list[Difference] = []
    diff_values("message", pi16["message"], ours["message"], out)
    a, b = pi16["events"], ours["events"]
    matcher = difflib.SequenceMatcher(
        a=[_event_key(e) for e in a], b=[_event_key(e) for e in b], autojunk=False
    )
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for i, j in zip(range(i1, i2), range(j1, j2), strict=True):
                diff_values(f"events.{a[i]['type']}", a[i], b[j], out)
            continue
        for i in range(i1, i2):
            out.append(Difference(f"events.-{a[i]['type']}", a[i], _MISSING))
        for j in range(j1, j2):
            out.append(Difference(f"events.+{b[j]['type']}", _MISSING, b[j]))
    if len(pi16["requests"]) != len(ours["requests"]):
        out.append(Difference("requests.count", len(pi16["requests"]), len(ours["requests"])))
    for i, (x, y) in enumerate(zip(pi16["requests"], ours["requests"], strict=False)):
        diff_values(f"requests.{i}", x, y, out)
    return out


@dataclass
class Rule:
    """One accepted difference: ``paths`` (globs over a difference's path) in ``cases``
    (globs over ``<api>/<case>``), optionally only with these values."""

    id: str
    reason: str
    cases: list[str]
    paths: list[str]
    pi16: Any = _MISSING
    ours: Any = _MISSING
    used: set[str] = field(default_factory=set)

    def accepts(self, case: str, difference: Difference) -> bool:
        if not any(fnmatch.fnmatchcase(case, pattern) for pattern in self.cases):
            return False
        if not any(fnmatch.fnmatchcase(difference.path, pattern) for pattern in self.paths):
            return False
        if self.pi16 != _MISSING and difference.pi16 != self.pi16:
            return False
        return self.ours == _MISSING or difference.ours == self.ours


class Accepted:
    """The rules of ``ACCEPTED.toml``."""

    def __init__(self, path: Path) -> None:
        data = tomllib.loads(path.read_text())
        self.rules = [
            Rule(
                id=entry["id"],
                reason=entry["reason"],
                cases=list(entry["cases"]),
                paths=list(entry["paths"]),
                pi16=entry.get("pi16", _MISSING),
                ours=entry.get("ours", _MISSING),
            )
            for entry in data["difference"]
        ]
        ids = [rule.id for rule in self.rules]
        assert len(ids) == len(set(ids)), f"duplicate rule ids in {path}"

    def explain(self, case: str, difference: Difference) -> Rule | None:
        for rule in self.rules:
            if rule.accepts(case, difference):
                rule.used.add(case)
                return rule
        return None
