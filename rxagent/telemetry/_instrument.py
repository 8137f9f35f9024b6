"""`instrument()`: trace every agent's runs, and `Instrumentation`, the handle that stops it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from rxagent.hooks._chain import add_process_hook, remove_process_hook
from rxagent.telemetry._otel import require_otel

if TYPE_CHECKING:
    from types import TracebackType

    from opentelemetry.trace import TracerProvider

    from rxagent.hooks import Hook
    from rxagent.telemetry._tracing import Tracing

__all__ = ["Instrumentation", "instrument"]


class Instrumentation:
    """What `instrument()` returns: the process-wide `Tracing` hook, and how to remove it.

    Also a context manager: `with instrument(provider): ...` traces inside the block only.

    Example:
        ```python
        from rxagent import HookChain, PostCallEvent
        from rxagent.telemetry import instrument

        handle = instrument()  # the global tracer provider
        assert handle.active and handle.tracing in HookChain().for_event(PostCallEvent)
        handle.uninstrument()
        assert not handle.active and HookChain().for_event(PostCallEvent) == ()
        ```
    """

    def __init__(self, tracing: Tracing, registered: Hook) -> None:
        self.tracing = tracing
        """The `Tracing` hook every agent runs."""
        self._registered: Hook | None = registered

    @property
    def active(self) -> bool:
        """True until `uninstrument()`."""
        return self._registered is not None

    def uninstrument(self) -> None:
        """Stop tracing new events (runs in flight are ended by their PostCall no more)."""
        registered, self._registered = self._registered, None
        if registered is not None:
            remove_process_hook(registered)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.uninstrument()


def instrument(tracer_provider: TracerProvider | None = None) -> Instrumentation:
    """Trace the runs of every agent in this process, existing and future, as OpenTelemetry spans.

    It adds one `Tracing` hook to every agent's hook chain (it runs after the agents' own
    hooks). Call it once at startup; `uninstrument()` on the handle removes it.

    Args:
        tracer_provider: Where spans go; the global provider when None.

    Raises:
        ConfigurationError: The OpenTelemetry API is missing (`pip install "rxagent[otel]"`).

    Example:
        ```python
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        from rxagent import ReActAgent
        from rxagent.telemetry import instrument
        from rxagent.testing import ScriptedModel

        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        with instrument(provider):
            ReActAgent("demo", "", ScriptedModel(["Hi!"])).call_sync("hello")
        [run] = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent demo"]
        assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
        ```
    """
    require_otel("rxagent.telemetry.instrument()")
    from rxagent.telemetry._tracing import Tracing  # needs the API: imported once it is there

    tracing = Tracing(tracer_provider)
    return Instrumentation(tracing, add_process_hook(tracing))
