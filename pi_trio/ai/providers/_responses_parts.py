"""Pure pieces of the OpenAI Responses mapper (sans-IO): how a finished response ends
(its stop reason, usage and service-tier pricing) and the texts read from finished items
and failed responses."""

from __future__ import annotations

from typing import Final

from .._types import AssistantMessage, Cost, Model, StopReason
from ._http import UNKNOWN_ERROR_TEXT
from ._responses_wire import MessageItem, ReasoningItem, Response, TextPart
from ._wire import write_prompt_usage

__all__ = [
    "apply_service_tier_pricing",
    "error_text",
    "failed_text",
    "message_text",
    "reasoning_text",
    "resolve_codex_service_tier",
    "response_stop",
    "write_response_usage",
]

_STATUS: Final[dict[str, StopReason]] = {
    "completed": "stop",
    "incomplete": "length",  # for max_output_tokens; other reasons are errors
    "failed": "error",
    "cancelled": "error",
    "in_progress": "stop",
    "queued": "stop",
}


def response_stop(response: Response, *, codex: bool) -> tuple[str | None, StopReason, str | None]:
    """How a finished response ends, before its tool calls count: the raw stop reason
    (``status``, or ``status.reason`` when incomplete), the stop reason and the failure
    text, if any. The Codex backend's unknown statuses count as none."""
    status = response.status
    if codex and status not in _STATUS:
        status = None
    details = response.incomplete_details
    reason = details.reason if details is not None else None
    raw = f"{status}.{reason}" if reason and status else status
    stop: StopReason = "stop" if status is None else _STATUS.get(status, "stop")
    failure = None
    if status == "incomplete" and reason != "max_output_tokens":
        stop = "error"
        failure = (
            f"Response incomplete: {reason}"
            if reason
            else "Response incomplete without a provider reason"
        )
    elif stop == "error":
        failure = error_text(response) or UNKNOWN_ERROR_TEXT
    return raw, stop, failure


def write_response_usage(
    message: AssistantMessage,
    model: Model,
    response: Response,
    requested_tier: str | None,
    *,
    codex: bool,
) -> None:
    """The finished response's token counts and their cost at the tier it was billed."""
    usage = response.usage
    if usage is None:
        return
    cached = usage.input_tokens_details
    details = usage.output_tokens_details
    write_prompt_usage(
        message.usage,
        model,
        prompt=usage.input_tokens or 0,
        output=usage.output_tokens or 0,
        cache_read=(cached.cached_tokens or 0) if cached else 0,
        cache_write=(cached.cache_write_tokens or 0) if cached else 0,
        reasoning=(details.reasoning_tokens or 0) if details else 0,
        total=usage.total_tokens or 0,
    )
    if codex:
        tier = resolve_codex_service_tier(response.service_tier, requested_tier)
    else:
        tier = response.service_tier or requested_tier
    apply_service_tier_pricing(model, message.usage.cost, tier, codex=codex)


def _tier_multiplier(model: Model, tier: str | None, codex: bool) -> float:
    if tier == "flex":
        return 0.5
    if tier == "priority" or (tier == "fast" and not codex):
        return 2.5 if model.id == "gpt-5.5" else 2.0
    return 1.0


def apply_service_tier_pricing(
    model: Model, cost: Cost, tier: str | None, *, codex: bool = False
) -> None:
    """Scale the four cost components for ``flex`` (x0.5) and ``priority`` (OpenAI also
    ``fast``; x2, x2.5 for ``gpt-5.5``) service tiers and recompute the total."""
    factor = _tier_multiplier(model, tier, codex)
    if factor == 1.0:
        return
    cost.input *= factor
    cost.output *= factor
    cost.cache_read *= factor
    cost.cache_write *= factor
    cost.total = cost.input + cost.output + cost.cache_read + cost.cache_write


def resolve_codex_service_tier(reported: str | None, requested: str | None) -> str | None:
    """The tier a Codex response is billed at: the requested ``flex`` or ``priority`` when
    the response reports ``default``, else the reported tier, else the requested one."""
    if reported == "default" and requested in ("flex", "priority"):
        return requested
    return reported or requested


def _joined(parts: list[TextPart] | None) -> str | None:
    texts = [part.text for part in parts or () if part.text]
    return "\n\n".join(texts) if texts else None


def reasoning_text(item: ReasoningItem) -> str | None:
    summary = _joined(item.summary)
    return summary if summary is not None else _joined(item.content)


def message_text(item: MessageItem) -> str | None:
    if not item.content:
        return None
    texts: list[str] = []
    for part in item.content:
        if part.type == "output_text" and part.text is not None:
            texts.append(part.text)
        elif part.type == "refusal" and part.refusal is not None:
            texts.append(part.refusal)
    return "".join(texts)


def error_text(response: Response) -> str | None:
    error = response.error
    if error is None or not (error.code or error.message):
        return None
    return f"{error.code or 'unknown'}: {error.message or 'no message'}"


def failed_text(response: Response) -> str:
    text = error_text(response)
    if text is not None:
        return text
    details = response.incomplete_details
    if details is not None and details.reason:
        return f"incomplete: {details.reason}"
    return "Unknown error (no error details in response)"
