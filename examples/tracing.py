"""Every run as OpenTelemetry spans: agent, step, model call, tool call, and a nested agent.

`instrument()` traces the runs of every agent in the process. Here the spans go to an
in-memory exporter and are printed as a tree; in production give it a `TracerProvider` with an
OTLP exporter (see the observability guide). The travel agent's tool asks a second agent, whose
run becomes a child of that tool call's span, in the same trace.

Run it:

    python -m examples.tracing
"""

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from rxagent import ReActAgent, tool
from rxagent.telemetry import instrument
from rxagent.testing import ScriptedModel, tool_call

__all__ = ["main"]

researcher = ReActAgent("researcher", "You know the weather.", ScriptedModel(["Sunny, 24 °C."]))


@tool
async def ask_researcher(question: str) -> str:
    """Ask the research agent.

    Args:
        question: What to ask.
    """
    return (await researcher.call(question, session_id="research")).text


def show(spans: tuple[ReadableSpan, ...]) -> list[str]:
    """The spans as an indented tree, oldest first, with their key GenAI attributes."""
    by_parent: dict[int | None, list[ReadableSpan]] = {}
    for span in sorted(spans, key=lambda s: s.start_time or 0):
        parent = span.parent.span_id if span.parent is not None else None
        by_parent.setdefault(parent, []).append(span)
    keys = ("gen_ai.conversation.id", "gen_ai.tool.call.id", "gen_ai.usage.output_tokens")
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for span in by_parent.get(parent, []):
            attributes = span.attributes or {}
            values = {k.removeprefix("gen_ai."): attributes.get(k) for k in keys}
            shown = [f"{k}={v}" for k, v in values.items() if isinstance(v, str | int)]
            lines.append("  " * depth + " ".join([span.name, *shown]))
            assert span.context is not None
            walk(span.context.span_id, depth + 1)

    walk(None, 0)
    return lines


def main() -> None:
    """Run the travel agent traced, and print its spans."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    model = ScriptedModel(
        [tool_call("ask_researcher", question="Weather in Lisbon?"), "Pack sunglasses."]
    )
    travel = ReActAgent("travel", "You plan trips.", model, tools=[ask_researcher])
    with instrument(provider):
        result = travel.call_sync("Lisbon tomorrow?", session_id="trip-1")
    print("answer:", result.text)
    lines = show(exporter.get_finished_spans())
    print("\n".join(lines))
    nested = "      invoke_agent researcher conversation.id=research"
    assert lines[0].startswith("invoke_agent travel conversation.id=trip-1")
    assert any(line.startswith(nested) for line in lines)
    print("the researcher's run is a child of the travel agent's tool call")


if __name__ == "__main__":
    main()
