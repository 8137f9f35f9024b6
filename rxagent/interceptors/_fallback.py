"""`FallbackModels`: when the model fails before its first delta, ask the next one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal, TypeAlias

from rxagent.context import current_run_or_none
from rxagent.errors import AgentRunError, ConfigurationError, RateLimitedError, RunTimeoutError
from rxagent.events import FallbackEvent
from rxagent.models.base import ChatModel

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from rxagent.interceptors._call import ModelCall, NextModelCall
    from rxagent.models.base import ModelResponse

__all__ = ["DEFAULT_FALLBACK_ON", "FailureKind", "FallbackModels", "failure_kind"]

FailureKind: TypeAlias = Literal[
    "rate_limit", "overloaded", "server_error", "timeout", "connection", "circuit_open"
]
"""A kind of model failure that another model may not share."""

DEFAULT_FALLBACK_ON: Final[frozenset[FailureKind]] = frozenset(
    ("rate_limit", "overloaded", "server_error", "timeout", "circuit_open")
)
"""What `FallbackModels` moves on for unless told: everything but a dropped connection."""

_OVERLOADED_STATUS: Final = frozenset((503, 529))
_OVERLOADED_CODES: Final = frozenset(("overloaded", "overloaded_error"))


def failure_kind(exc: BaseException) -> FailureKind | None:
    """The kind of a model failure, from its type, HTTP status and provider code (None: another).

    Example:
        ```python
        from rxagent.errors import InvalidRequestError, ProviderError, RateLimitedError
        from rxagent.interceptors import failure_kind

        assert failure_kind(RateLimitedError("429")) == "rate_limit"
        assert failure_kind(ProviderError("busy", status=529)) == "overloaded"
        assert failure_kind(ProviderError("boom", status=502)) == "server_error"
        assert failure_kind(InvalidRequestError("bad", status=400)) is None
        ```
    """
    if not isinstance(exc, AgentRunError):
        return None
    if isinstance(exc, RateLimitedError):
        return "rate_limit"
    if exc.provider_code == "circuit_open":
        return "circuit_open"
    if exc.status in _OVERLOADED_STATUS or exc.provider_code in _OVERLOADED_CODES:
        return "overloaded"
    if exc.status is not None and exc.status >= 500:
        return "server_error"
    if isinstance(exc, RunTimeoutError) or isinstance(exc.__cause__, TimeoutError):
        return "timeout"
    if (
        exc.status is None
        and exc.recoverable
        and isinstance(exc.__cause__, OSError | ConnectionError)
    ):
        return "connection"
    return None


class FallbackModels:
    """Try the agent's model, then each of `models` in order, on the failures named in `on`.

    A model is left only before the first delta of its response reached subscribers; after
    that, its failure is the step's (a recoverable one restarts the step). Each move is a
    `FallbackEvent` in the run's stream; the last model's failure fails the run as usual.

    Args:
        models: The backups, in order.
        on: The failure kinds to move on for (`failure_kind`), or a predicate of the exception.
        priority: Its place in the onion (default 50: inside `ResponseCache` (20), outside
            `CircuitBreaker` (60), so each model has its own circuit).
        name: For `modified_by` and errors.

    Raises:
        ConfigurationError: No backups, a backup that is not a `ChatModel`, or an unknown kind.

    Example:
        ```python
        from rxagent import FallbackEvent, ReActAgent
        from rxagent.errors import RateLimitedError
        from rxagent.interceptors import FallbackModels
        from rxagent.testing import FunctionModel, ScriptedModel


        def limited(messages, tools, options):
            raise RateLimitedError("429", status=429)


        backup = ScriptedModel(["from the backup"], name="backup")
        agent = ReActAgent("a", "", FunctionModel(limited), interceptors=[FallbackModels([backup])])
        events = []
        result = agent.call_sync("hi")
        assert result.text == "from the backup"
        ```
    """

    def __init__(
        self,
        models: Sequence[ChatModel],
        *,
        on: Iterable[FailureKind] | Callable[[BaseException], bool] = DEFAULT_FALLBACK_ON,
        priority: int = 50,
        name: str = "fallback_models",
    ) -> None:
        models = tuple(models)
        if not models or not all(isinstance(m, ChatModel) for m in models):
            raise ConfigurationError(
                "FallbackModels takes a non-empty list of ChatModels to try after the agent's "
                f"own, e.g. FallbackModels([OpenAIModel('gpt-4o-mini')]); got {models!r}"
            )
        self.models = models
        if callable(on):
            self._on: Callable[[BaseException], bool] = on
        else:
            kinds = frozenset(on)
            unknown = kinds - set(FailureKind.__args__)  # type: ignore[attr-defined]
            if unknown:
                raise ConfigurationError(
                    f"FallbackModels(on=...): unknown failure kinds {sorted(unknown)}; use "
                    f"{', '.join(FailureKind.__args__)} or a predicate"  # type: ignore[attr-defined]
                )
            self._on = lambda exc: failure_kind(exc) in kinds
        self.priority = priority
        self.name = name

    async def aclose(self) -> None:
        """Close the backups' connection pools (`agent.aclose()` calls this)."""
        for model in self.models:
            aclose = getattr(model, "aclose", None)
            if aclose is not None:
                await aclose()

    def falls_back_on(self, exc: BaseException) -> bool:
        """Whether `exc` moves the request to the next model."""
        return bool(self._on(exc))

    async def around_model_call(self, call: ModelCall, call_next: NextModelCall) -> ModelResponse:
        """Ask each model in turn until one answers (or fails in a way that does not move on)."""
        models = (call.model, *self.models)
        last = len(models) - 1
        for position, model in enumerate(models):
            attempt = call if position == 0 else call.model_copy(update={"model": model})
            try:
                return await call_next(attempt)
            except AgentRunError as exc:
                if position == last or call_next.started or not self.falls_back_on(exc):
                    raise
                run = current_run_or_none()
                if run is not None:
                    run.emit(
                        FallbackEvent,
                        from_model=model.name,
                        to_model=models[position + 1].name,
                        code=exc.code,
                        message=exc.message,
                    )
        raise AssertionError("unreachable: the last model answers or raises")  # pragma: no cover
