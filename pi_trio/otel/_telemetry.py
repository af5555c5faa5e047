"""What one ``instrument()`` call sets up: the tracer, the histograms and the options,
shared by every agent it instruments."""

from __future__ import annotations

import os
from typing import Any

from opentelemetry import metrics, trace

from .. import __version__
from ._semconv import (
    EXECUTE_TOOL_DURATION,
    INVOKE_AGENT_DURATION,
    OPERATION_DURATION,
    OPERATION_DURATION_BUCKETS,
    TOKEN_USAGE,
    TOKEN_USAGE_BUCKETS,
)

__all__ = ["CAPTURE_CONTENT_ENV", "INSTRUMENTATION_NAME", "Telemetry"]

INSTRUMENTATION_NAME = "pi_trio"

# The variable OpenTelemetry's GenAI instrumentations read for the content opt-in.
CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def _capture_from_env() -> bool:
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() == "true"


class Telemetry:
    __slots__ = (
        "agent_name",
        "capture_content",
        "duration",
        "run_duration",
        "token_usage",
        "tool_duration",
        "tracer",
    )

    def __init__(
        self,
        *,
        tracer_provider: Any,
        meter_provider: Any,
        capture_content: bool | None,
        agent_name: str | None,
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
        self.capture_content = _capture_from_env() if capture_content is None else capture_content
        self.agent_name = agent_name
