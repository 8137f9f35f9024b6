"""`CircuitBreaker`: stop calling a model that keeps failing, for a while."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from rxagent._validate import check_int
from rxagent.errors import AgentRunError, ConfigurationError, ProviderError
from rxagent.interceptors._fallback import failure_kind

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.interceptors._call import ModelCall, NextModelCall
    from rxagent.models.base import ModelResponse

__all__ = ["CircuitBreaker", "CircuitState"]

CircuitState: TypeAlias = Literal["closed", "open", "half_open"]
"""`closed`: calls go through; `open`: refused at once; `half_open`: one trial call goes."""


@dataclass(slots=True)
class _Circuit:
    failures: int = 0
    opened_at: float | None = None
    trial: bool = False  # a half-open trial call is in flight


class CircuitBreaker:
    """Refuse calls to a model after `failures` failures in a row, until `reset_after` passes.

    Circuits are per model name. An open circuit refuses at once with a recoverable
    `ProviderError` (`provider_code="circuit_open"`, status 503), which `FallbackModels`
    (outside it) moves on for. After `reset_after` seconds one trial call goes through: success
    closes the circuit, failure opens it again. Failures are the kinds of
    `rxagent.interceptors.failure_kind` (rate limits, overload, 5xx, timeouts, connections);
    a bad request does not count.

    Args:
        failures: Failures in a row that open the circuit.
        reset_after: Seconds an open circuit waits before a trial call.
        clock: Seconds on a monotonic clock (inject a fake in tests).
        priority: Its place in the onion (default 60: inside `FallbackModels`, so each model
            has its own circuit).
        name: For `modified_by` and errors.

    Example:
        ```python
        from rxagent.interceptors import CircuitBreaker

        now = [0.0]
        breaker = CircuitBreaker(failures=2, reset_after=30, clock=lambda: now[0])
        assert breaker.state("gpt") == "closed"
        ```
    """

    def __init__(
        self,
        failures: int = 5,
        reset_after: float = 30.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        priority: int = 60,
        name: str = "circuit_breaker",
    ) -> None:
        check_int("CircuitBreaker(failures=...)", failures, optional=False, minimum=1)
        if (
            isinstance(reset_after, bool)
            or not isinstance(reset_after, int | float)
            or reset_after < 0
        ):
            raise ConfigurationError(
                f"CircuitBreaker(reset_after=...) takes seconds >= 0, got {reset_after!r}"
            )
        self.failures = failures
        self.reset_after = float(reset_after)
        self.clock = clock
        self.priority = priority
        self.name = name
        self._circuits: dict[str, _Circuit] = {}

    def state(self, model: str) -> CircuitState:
        """The circuit of the model named `model`, now."""
        circuit = self._circuits.get(model)
        if circuit is None or circuit.opened_at is None:
            return "closed"
        if self.clock() - circuit.opened_at >= self.reset_after:
            return "half_open"
        return "open"

    async def around_model_call(self, call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        """Refuse the call while the model's circuit is open; count its failures."""
        name = call.model.name
        circuit = self._circuits.setdefault(name, _Circuit())
        state = self.state(name)
        if state == "open" or (state == "half_open" and circuit.trial):
            raise ProviderError(
                f"the circuit of model {name!r} is open after {circuit.failures} failures in a "
                f"row; it lets a trial call through {self.reset_after:g}s after it opened",
                source="model",
                recoverable=True,
                status=503,
                provider_code="circuit_open",
            )
        circuit.trial = state == "half_open"
        try:
            response = await call_next(call)
        except AgentRunError as exc:
            circuit.trial = False
            if failure_kind(exc) is not None:
                circuit.failures += 1
                if circuit.failures >= self.failures or state == "half_open":
                    circuit.opened_at = self.clock()
            raise
        except BaseException:
            circuit.trial = False
            raise
        circuit.failures, circuit.opened_at, circuit.trial = 0, None, False
        return response
