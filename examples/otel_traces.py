"""Trace an agent run with OpenTelemetry, offline: a faux model calls a tool, and the
finished spans are printed as a tree. Run: python examples/otel_traces.py"""

import sys

import trio

try:  # the otel extra: the OpenTelemetry API and SDK
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from pi_trio.otel import instrument
except ImportError as exc:
    sys.exit(
        f"otel_traces: {exc.name} is missing; install the otel extra: pip install 'pi-trio[otel]'"
    )

from pi_trio.agent import Agent, tool
from pi_trio.testing import FauxProvider, faux_assistant_message, faux_tool_call

spans = InMemorySpanExporter()  # in production: BatchSpanProcessor(OTLPSpanExporter())
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(spans))


@tool
async def weather(city: str) -> str:
    """The weather in a city."""
    with provider.get_tracer("weather").start_as_current_span("weather service"):
        return f"Sunny in {city}"


def tree(parent=None, depth=0):
    for span in spans.get_finished_spans():
        if (span.parent and span.parent.span_id) == parent:
            tokens = span.attributes.get("gen_ai.usage.output_tokens")
            yield "  " * depth + span.name + (f" ({tokens} tokens out)" if tokens else "")
            yield from tree(span.context.span_id, depth + 1)


async def main():
    faux = FauxProvider()
    faux.set_responses(
        [
            faux_assistant_message(
                [faux_tool_call("weather", {"city": "Paris"})], stop_reason="toolUse"
            ),
            faux_assistant_message("It is sunny in Paris."),
        ]
    )
    agent = Agent(model=faux.get_model(), stream_fn=faux, tools=[weather])
    instrument(agent, tracer_provider=provider)  # instrument() alone: every new Agent
    result = await agent.prompt("What is the weather in Paris?")
    print("\n".join(tree()))  # a failed run has its spans too
    result.raise_for_error()  # and then says why it failed


if __name__ == "__main__":
    trio.run(main)
