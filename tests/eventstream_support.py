"""AWS event-stream frames built per the spec (prelude, string headers, payload, two
CRC32 checksums), for feeding the Bedrock provider real binary bodies."""

from __future__ import annotations

import binascii
import json
import struct
from typing import Any

CONTENT_TYPE = "application/vnd.amazon.eventstream"
_STRING = 7  # header value type: UTF-8 string with a 16-bit length


def frame(headers: dict[str, str], payload: bytes) -> bytes:
    """One message: total and header lengths, the prelude's CRC, the headers, the payload
    and the CRC of everything before it."""
    encoded = b"".join(
        bytes([len(name)])
        + name.encode()
        + bytes([_STRING])
        + struct.pack(">H", len(value.encode()))
        + value.encode()
        for name, value in headers.items()
    )
    total = 12 + len(encoded) + len(payload) + 4
    prelude = struct.pack(">II", total, len(encoded))
    prelude += struct.pack(">I", binascii.crc32(prelude))
    message = prelude + encoded + payload
    return message + struct.pack(">I", binascii.crc32(message))


def event(event_type: str, data: Any) -> bytes:
    """An ``event`` message with a JSON payload."""
    headers = {
        ":message-type": "event",
        ":event-type": event_type,
        ":content-type": "application/json",
    }
    return frame(headers, json.dumps(data).encode())


def exception(exception_type: str, message: str, **fields: Any) -> bytes:
    """An ``exception`` message, as Bedrock sends a modeled error mid-stream."""
    headers = {
        ":message-type": "exception",
        ":exception-type": exception_type,
        ":content-type": "application/json",
    }
    return frame(headers, json.dumps({"message": message, **fields}).encode())


def error(code: str, message: str) -> bytes:
    """An ``error`` message (an unmodeled failure)."""
    return frame({":message-type": "error", ":error-code": code, ":error-message": message}, b"")


def text_delta(index: int, text: str) -> bytes:
    return event("contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": text}})


def block_stop(index: int) -> bytes:
    return event("contentBlockStop", {"contentBlockIndex": index})


def message_stop(reason: str) -> bytes:
    return event("messageStop", {"stopReason": reason})


def metadata(**usage: Any) -> bytes:
    return event("metadata", {"usage": usage, "metrics": {"latencyMs": 12}})


def body(*frames: bytes) -> bytes:
    return b"".join(frames)
