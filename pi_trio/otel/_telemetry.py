"""What one ``instrument()`` call sets up: the tracer, the histograms and the options,
shared by every agent it instruments."""

from __future__ import annotations

import logging
import os
from typing import Any, Final, Literal, TypeAlias

from opentelemetry import metrics, trace

from .. import __version__
from ._pi import PiInstruments
from ._semconv import (
    EXECUTE_TOOL_DURATION,
    INVOKE_AGENT_DURATION,
    OPERATION_DURATION,
    OPERATION_DURATION_BUCKETS,
    TOKEN_USAGE,
    TOKEN_USAGE_BUCKETS,
)

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "INSTRUMENTATION_NAME",
    "VOCABULARIES",
    "Telemetry",
    "Vocabulary",
    "capture_content_setting",
]

INSTRUMENTATION_NAME = "pi_trio"

# The variable OpenTelemetry's GenAI instrumentations read for the content opt-in.
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


Vocabulary: TypeAlias = Literal["genai", "pi", "both"]
VOCABULARIES: Final = ("genai", "pi", "both")

# The values OpenTelemetry's GenAI utilities take (``ContentCapturingMode``), and the older
# booleans. pi_trio records content on spans only: the modes with spans capture, the
# others do not (``EVENT_ONLY`` too: pi_trio emits no content events).
_CAPTURE_MODES: Final = {
    "true": True,
    "false": False,
    "span_only": True,
    "span_and_event": True,
    "no_content": False,
    "event_only": False,
}

_log = logging.getLogger("pi_trio.otel")


def capture_content_setting(value: str, where: str) -> bool:
    """Whether the setting ``value`` (of ``where``) asks for content on spans. An unknown
    value captures nothing and is logged with the accepted ones."""
    mode = _CAPTURE_MODES.get(value.strip().lower())
    if mode is None:
        _log.warning(
            "%s=%r is not a content-capture setting; capturing no content (use one of "
            "NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT, true, false)",
            where,
            value,
        )
        return False
    return mode


def _capture_from_env() -> bool:
    value = os.environ.get(CAPTURE_CONTENT_ENV, "")
    return capture_content_setting(value, CAPTURE_CONTENT_ENV) if value.strip() else False


class Telemetry:
    __slots__ = (
        "agent_name",
        "capture_content",
        "duration",
        "pi",
        "run_duration",
        "token_usage",
        "tool_duration",
        "tracer",
        "vocabulary",
    )

    def __init__(
        self,
        *,
        tracer_provider: Any,
        meter_provider: Any,
        capture_content: bool | str | None,
        agent_name: str | None,
        vocabulary: Vocabulary = "genai",
    ) -> None:
        self.tracer = trace.get_tracer(INSTRUMENTATION_NAME, __version__, tracer_provider)
        meter = metrics.get_meter(INSTRUMENTATION_NAME, __version__, meter_provider)
        self.token_usage = meter.create_histogram(
            TOKEN_USAGE,
            unit="{token}",
            description="Number of input and output tokens used.",
            explicit_bucket_boundaries_advisory=TOKEN_USAGE_BUCKETS,
        )
        self.duration = meter.create_histogram(
            OPERATION_DURATION,
            unit="s",
            description="GenAI operation duration.",
            explicit_bucket_boundaries_advisory=OPERATION_DURATION_BUCKETS,
        )
        self.run_duration = meter.create_histogram(
            INVOKE_AGENT_DURATION,
            unit="s",
            description="The end-to-end duration of a single agent invocation.",
            explicit_bucket_boundaries_advisory=OPERATION_DURATION_BUCKETS,
        )
        self.tool_duration = meter.create_histogram(
            EXECUTE_TOOL_DURATION,
            unit="s",
            description="The duration of a single tool execution.",
            explicit_bucket_boundaries_advisory=OPERATION_DURATION_BUCKETS,
        )
        if capture_content is None:
            self.capture_content = _capture_from_env()
        elif isinstance(capture_content, str):
            self.capture_content = capture_content_setting(capture_content, "capture_content")
        else:
            self.capture_content = bool(capture_content)
        self.agent_name = agent_name
        self.vocabulary = vocabulary
        # pi's vocabulary: its own tracer and instruments (``_pi``), when asked for
        self.pi: PiInstruments | None = (
            PiInstruments(tracer_provider, meter_provider, INSTRUMENTATION_NAME)
            if vocabulary != "genai"
            else None
        )
