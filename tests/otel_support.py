"""An OpenTelemetry SDK pipeline for tests (in-memory span exporter and metric reader),
the span tree as nested labels, and the faux agents the OpenTelemetry tests run."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from pi_trio.agent import AgentTool, AgentToolResult
from pi_trio.ai import TextContent

BACKENDS = ["trio", "asyncio"]
DURATION_METRICS = (
    "gen_ai.client.operation.duration",  # model requests
    "gen_ai.invoke_agent.duration",  # runs
    "gen_ai.execute_tool.duration",  # tool calls
)


@dataclass
class Pipeline:
    exporter: InMemorySpanExporter = field(default_factory=InMemorySpanExporter)
    reader: InMemoryMetricReader = field(default_factory=InMemoryMetricReader)

    def __post_init__(self) -> None:
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])

    @property
    def providers(self) -> dict[str, Any]:
        return {"tracer_provider": self.tracer_provider, "meter_provider": self.meter_provider}

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, prefix: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name.startswith(prefix)]

    def one(self, prefix: str) -> ReadableSpan:
        found = self.named(prefix)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def tree(self) -> list[Any]:
        """The finished spans as ``(label, [children])``, siblings sorted by label."""
        spans = self.spans()
        children: dict[int | None, list[ReadableSpan]] = {}
        ids = {s.context.span_id for s in spans}
        for s in spans:
            parent = s.parent.span_id if s.parent is not None else None
            children.setdefault(parent if parent in ids else None, []).append(s)

        def build(parent: int | None) -> list[Any]:
            nodes = [(label(s), build(s.context.span_id)) for s in children.get(parent, [])]
            return sorted(nodes, key=lambda n: n[0])

        return build(None)

    def durations(self) -> list[tuple[str, Any]]:
        """The points of the three duration histograms, as ``(metric, point)``: requests,
        runs and tool calls."""
        return [(metric, p) for metric in DURATION_METRICS for p in self.points(metric)]

    def points(self, metric: str) -> list[Any]:
        data = self.reader.get_metrics_data()
        if data is None:
            return []
        found = []
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found.extend(m.data.data_points)
        return found


def label(span: ReadableSpan) -> str:
    attributes = span.attributes or {}
    if span.name == "turn":
        return f"turn {attributes['pi.turn.index']}"
    if span.name.startswith("execute_tool"):
        return f"{span.name} {attributes['gen_ai.tool.call.id']}"
    return span.name


def no_recording_errors(caplog: pytest.LogCaptureFixture) -> None:
    failures = [r for r in caplog.records if r.name == "pi_trio.otel"]
    assert failures == [], [r.getMessage() for r in failures]


def by_start(spans: list[Any]) -> list[Any]:
    return sorted(spans, key=lambda s: s.start_time)


def status(span: Any) -> tuple[StatusCode, str | None]:
    return span.status.status_code, (span.attributes or {}).get("error.type")


def text_tool(name: str, execute: Any) -> AgentTool:
    """A tool taking ``{"value": str}`` whose ``execute(tool_call_id, params)`` returns
    the text for the model."""

    async def run(tool_call_id: str, params: Any, signal: Any, on_update: Any) -> Any:
        value = execute(params["value"])
        if not isinstance(value, str):
            value = await value
        return AgentToolResult(content=[TextContent(text=value)])

    return AgentTool(
        name=name,
        description=f"The {name} tool",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "string"}},
            "required": ["value"],
        },
        execute=run,
    )
