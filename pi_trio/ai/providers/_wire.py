"""What the wire mappers share (sans-IO): decoding one event's data into its Struct,
and writing what every API reports alike (response id, model, token counts) onto the
message.

Each provider module decodes an event's ``data:`` text straight into msgspec Structs
(``_<provider>_wire``): unknown fields are ignored, and the common path is one
``BoundedDecoder.decode`` (msgspec's decoder behind the nesting limit of ``_json._depth``:
the data comes from outside). Only when that fails does ``decode_event`` look at the JSON
as plain values, to tell what the mapper skips (data that is not an object; an event, block or
item type it does not know — providers add them often) from what is broken (a field it
reads holding the wrong type, or data that is not JSON), which fails the stream with a
``ProviderError`` naming the data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final, TypeVar, get_args

import msgspec

from .._catalog._models import calculate_cost
from .._errors import ProviderError
from .._json._depth import BoundedDecoder, decode_json
from .._sanitize import replace_lone_surrogate_escapes
from .._types import AssistantMessage, Model, Usage

__all__ = [
    "REFUSAL_TEXT",
    "Tagged",
    "Wire",
    "decode_event",
    "note_response",
    "tags",
    "unparseable_event",
    "wire_type",
    "without_lone_surrogates",
    "write_prompt_usage",
]

T = TypeVar("T")

REFUSAL_TEXT: Final = "The model refused to complete the request"
"""The error text of a refusal that came without an explanation."""

_DATA_PREVIEW: Final = 500


class Wire(msgspec.Struct, gc=False):
    """Base of the decoded wire Structs: they never take part in a reference cycle, so
    the garbage collector does not track them."""


class Tagged(Wire, tag_field="type"):
    """Base of the wire Structs told apart by their ``type`` (a tagged union)."""


def tags(union: Any) -> frozenset[str]:
    """The ``type`` values of a union of ``Tagged`` Structs."""
    return frozenset(kind.__struct_config__.tag for kind in get_args(union))


def unparseable_event(what: str, data: str, exc: Exception) -> ProviderError:
    """The error for an SSE event whose data cannot be read, with the start of the data."""
    preview = data if len(data) <= _DATA_PREVIEW else data[:_DATA_PREVIEW] + "..."
    return ProviderError(f"Could not parse {what}: {exc}; data={preview}")


def decode_event(
    decoder: BoundedDecoder[T],
    data: str,
    what: str,
    skipped: Callable[[Any], bool],
    *,
    repair: Callable[[str], str] | None = None,
) -> T | None:
    """``data`` decoded by ``decoder``, or ``None`` when the mapper skips it:
    ``skipped(value)`` is called with the JSON as plain values only when the Struct does
    not fit, and says whether that is a kind the mapper ignores. Data that is not JSON is
    given to ``repair`` (if any) once. Anything else raises ``unparseable_event(what)``.

    The mappers' per-event paths call ``decoder.decode`` themselves and `decode_failed`
    only when it raises, so a well-formed event is decoded without leaving the mapper."""
    try:
        return decoder.decode(data)
    except msgspec.DecodeError as exc:
        return decode_failed(exc, decoder, data, what, skipped, repair=repair)


def decode_failed(
    exc: msgspec.DecodeError,
    decoder: BoundedDecoder[T],
    data: str,
    what: str,
    skipped: Callable[[Any], bool],
    *,
    repair: Callable[[str], str] | None = None,
) -> T | None:
    """`decode_event` once ``decoder.decode(data)`` has raised ``exc``. A lone
    surrogate escape (``\\ud83d`` without its low half, which msgspec refuses) reads as
    U+FFFD, as the original's JSON parser and the streaming JSON parser read it."""
    if isinstance(exc, msgspec.ValidationError):
        _skip_or_raise(data, what, skipped, exc)
        return None
    repaired = without_lone_surrogates(data if repair is None else repair(data))
    if repaired != data:
        try:
            return decoder.decode(repaired)
        except msgspec.ValidationError as again:
            _skip_or_raise(repaired, what, skipped, again)
            return None
        except msgspec.DecodeError:
            pass
    raise unparseable_event(what, data, exc) from exc


def _skip_or_raise(
    data: str, what: str, skipped: Callable[[Any], bool], exc: msgspec.ValidationError
) -> None:
    if not skipped(decode_json(data)):
        raise unparseable_event(what, data, exc) from exc


def without_lone_surrogates(data: str) -> str:
    """JSON text with each unpaired surrogate escape replaced by ``\\ufffd``."""
    if "\\u" not in data:
        return data
    return replace_lone_surrogate_escapes(data.encode()).decode()


def wire_type(value: Any) -> str | None:
    """The ``type`` string of a JSON object as plain values (for ``skipped``), else None."""
    kind = value.get("type") if isinstance(value, dict) else None
    return kind if isinstance(kind, str) else None


def note_response(
    message: AssistantMessage, model: Model, response_id: str | None, reported: str | None
) -> None:
    """Record the provider's id for the response and the model it says answered (when
    that is not the one asked for); the first of each the stream reports wins."""
    if response_id and message.response_id is None:
        message.response_id = response_id
    if reported and message.response_model is None and reported != model.id:
        message.response_model = reported


def write_prompt_usage(
    usage: Usage,
    model: Model,
    *,
    prompt: int,
    output: int,
    cache_read: int = 0,
    cache_write: int = 0,
    reasoning: int | None = None,
    total: int | None = None,
) -> None:
    """Token counts of an API whose prompt count includes the cached tokens (OpenAI,
    Gemini): ``input`` is the prompt without cache reads and writes (never below zero);
    ``total`` is the provider's, else the sum; ``reasoning`` stays unset when ``None``.
    The cost is computed."""
    fresh = max(0, prompt - cache_read - cache_write)
    usage.input = fresh
    usage.output = output
    usage.cache_read = cache_read
    usage.cache_write = cache_write
    if reasoning is not None:
        usage.reasoning = reasoning
    usage.total_tokens = fresh + output + cache_read + cache_write if total is None else total
    calculate_cost(model, usage)
