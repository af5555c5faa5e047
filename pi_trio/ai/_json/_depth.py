"""The nesting limit of every JSON document pi_trio decodes from outside (sans-IO).

Every decode of bytes that come from outside (an HTTP error body, an SSE event's data, an
event-stream frame, a proxy line, a transcript or session file, a signature kept in one)
goes through this module: ``BoundedDecoder`` for a typed decoder, ``decode_json`` for
plain values, ``decode_checked`` around any other decoding function.

msgspec decodes nested arrays and objects recursively and raises ``RecursionError`` once
the interpreter's stack runs out (about 1 000 levels, fewer when the caller is itself
deep). ``check_json_depth`` refuses a document nested deeper than ``MAX_JSON_DEPTH``
levels (every array and object counts one) with ``msgspec.DecodeError``, the error every
decoder of pi_trio documents, before it reaches the decoder.

The check runs at C speed: a small document with no more than ``MAX_JSON_DEPTH``
brackets in all cannot be too deep and is let through after two ``count`` calls;
otherwise strings are cut out (escaped quotes first), and the running sum of the brackets
left is the depth: about 2 ms per MB, up to 10 when strings hold many escaped quotes
(source code in tool results), against msgspec's 2 to 6 ms per MB for the decoding.
"""

from __future__ import annotations

import array
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar, overload

import msgspec

if TYPE_CHECKING:
    from typing_extensions import TypeForm  # msgspec's stubs type decoders with it

__all__ = [
    "MAX_JSON_DEPTH",
    "BoundedDecoder",
    "check_json_depth",
    "decode_checked",
    "decode_json",
    "json_depth",
]

# Deeper than any message, tool-call argument or schema a model or a person writes, and
# well inside the interpreter's stack at any call depth a program reaches in practice.
MAX_JSON_DEPTH: Final = 256

_NOT_STRUCTURE: Final = bytes(b for b in range(256) if b not in b'[]{}"')
# Openers count +1 and closers -1 as signed bytes.
_STEPS: Final = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")

# Below this size counting the brackets first often spares the scan; above it a document
# nearly always holds more brackets than the limit, and counting would be a wasted pass.
_COUNT_FIRST_BELOW: Final = 64 * 1024

# A document that decodes has balanced brackets, two characters a level: one no longer
# than this cannot nest deeper than the limit (an unbalanced one is refused as malformed),
# so most SSE events are decoded without counting their brackets first.
_SURELY_SHALLOW: Final = 2 * MAX_JSON_DEPTH

T = TypeVar("T")


def json_depth(data: Any) -> int:
    """The deepest nesting of arrays and objects in ``data`` (0 for a scalar). Malformed
    JSON gives a number without meaning; the decoder refuses such a document anyway."""
    raw = (
        data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(memoryview(data))
    )
    if b"\\" in raw and b'\\"' in raw:  # the first test is a fast memchr
        # an escaped backslash cannot escape the quote after it; drop those pairs first
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Only brackets and quotes matter now. Two adjacent quotes enclose no bracket (an
    # empty string, or the end of one string and the start of the next): dropping them
    # keeps every bracket's side, and leaves quotes only around strings holding brackets.
    structure = raw.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    outside = b"".join(structure.split(b'"')[::2])  # the parts between strings
    steps = array.array("b", outside.translate(_STEPS))
    return max(itertools.accumulate(steps), default=0)


def check_json_depth(data: Any, limit: int = MAX_JSON_DEPTH) -> None:
    """``msgspec.DecodeError`` when ``data`` (``str``, or bytes in any buffer such as
    ``msgspec.Raw``) nests arrays and objects deeper than ``limit``."""
    if len(data) <= limit:
        return
    if not isinstance(data, str | bytes):
        data = bytes(memoryview(data))  # msgspec.Raw, bytearray, memoryview
    if len(data) <= _COUNT_FIRST_BELOW:
        if isinstance(data, str):
            brackets = data.count("[") + data.count("{")
        else:
            brackets = data.count(b"[") + data.count(b"{")
        if brackets <= limit:
            return
    depth = json_depth(data)
    if depth > limit:
        raise msgspec.DecodeError(
            f"JSON nested {depth} levels deep; documents nest arrays and objects at most "
            f"{limit} levels (MAX_JSON_DEPTH), so this one is refused before decoding"
        )


def decode_checked(decode: Callable[[Any], T], data: Any) -> T:
    """``decode(data)`` after ``check_json_depth``; a ``RecursionError`` of a document
    within the limit (a caller already deep in the stack) also becomes
    ``msgspec.DecodeError``."""
    check_json_depth(data)
    try:
        return decode(data)
    except RecursionError as exc:
        raise _stack_exhausted() from exc


def _stack_exhausted() -> msgspec.DecodeError:
    return msgspec.DecodeError(
        "JSON nested too deeply for the remaining interpreter stack; decode it from a "
        "shallower call or raise sys.setrecursionlimit"
    )


class BoundedDecoder(Generic[T]):
    """A ``msgspec.json.Decoder`` of ``type`` that refuses documents nested deeper than
    ``MAX_JSON_DEPTH`` (``check_json_depth``) with ``msgspec.DecodeError``, as its other
    failures. Skipping an unknown field recurses like decoding one, so a Struct decoder
    needs the bound as much as a decoder of plain values."""

    __slots__ = ("_decode", "type")

    @overload
    def __init__(self: BoundedDecoder[T], type: TypeForm[T]) -> None: ...
    @overload
    def __init__(self: BoundedDecoder[Any], type: Any = Any) -> None: ...
    def __init__(self, type: Any = Any) -> None:
        self.type = type
        self._decode = msgspec.json.Decoder(type).decode

    def decode(self, data: Any) -> T:
        if len(data) > _SURELY_SHALLOW:
            check_json_depth(data)
        try:
            return self._decode(data)  # type: ignore[no-any-return]
        except RecursionError as exc:
            raise _stack_exhausted() from exc

    def __repr__(self) -> str:
        return f"BoundedDecoder({self.type!r})"


_PLAIN: Final[BoundedDecoder[Any]] = BoundedDecoder()


def decode_json(data: Any) -> Any:
    """``data`` (``str`` or bytes) as plain JSON values, refused with
    ``msgspec.DecodeError`` when malformed or nested deeper than ``MAX_JSON_DEPTH``."""
    return _PLAIN.decode(data)
