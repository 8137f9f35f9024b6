"""`InterceptorChain`: ordering, and one call through the onion of interceptors.

The ordering rule is the hooks' rule: by priority, ties in registration order; the first in
that order is the outermost layer, so it sees the call first and the response last.

```text
call ──► [priority 10] ──► [priority 50] ──► [priority 100] ──► model / tool
response ◄──────────────◄────────────────◄──────────────────◄──
```
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rxagent.errors import (
    AgentRunError,
    ConfigurationError,
    InterceptorContractError,
    InterceptorFailedError,
)
from rxagent.interceptors._call import Interceptor, InterceptorKind, ModelCall, ToolCall
from rxagent.messages import ToolResultBlock
from rxagent.models.base import ModelResponse

__all__ = [
    "InterceptorChain",
    "InterceptorInfo",
    "Layer",
    "Onion",
    "order_interceptors",
]

C = TypeVar("C", ModelCall, ToolCall)
R = TypeVar("R", ModelResponse, ToolResultBlock)

Layer = tuple[str, Callable[[Any, Any], Awaitable[Any]]]
"""One layer of a resolved chain: the interceptor's name and its wrapper function."""


def order_interceptors(interceptors: Iterable[Interceptor]) -> list[Interceptor]:
    """Return `interceptors` outermost first: by priority, ties in registration order.

    This is the whole ordering rule, the hooks' one (`rxagent.hooks.order_hooks`): `sorted` is
    stable, so sorting by priority alone keeps the registration order of equal priorities.

    Example:
        ```python
        from rxagent.interceptors import around_model_call, order_interceptors


        async def f(call, call_next):
            return await call_next(call)


        a = around_model_call(priority=50, name="a")(f)
        b = around_model_call(priority=10, name="b")(f)
        c = around_model_call(priority=50, name="c")(f)
        assert [i.name for i in order_interceptors([a, b, c])] == ["b", "a", "c"]
        ```
    """
    return sorted(interceptors, key=lambda i: i.priority)


@dataclass(frozen=True, slots=True)
class InterceptorInfo:
    """One entry of a resolved interceptor chain, as `explain()` reports it."""

    position: int
    """Order from the outside in, from 0."""
    name: str
    """The interceptor's name."""
    priority: int
    """Its priority."""
    kind: InterceptorKind
    """What it wraps here."""

    def __str__(self) -> str:
        return f"{self.position}. {self.name} (priority {self.priority}, around {self.kind} call)"


def check_interceptor(interceptor: object) -> Interceptor:
    """Return `interceptor` if it can be registered.

    Raises:
        ConfigurationError: Without a name and an int priority, or wrapping nothing.
    """
    name = getattr(interceptor, "name", None)
    priority = getattr(interceptor, "priority", None)
    wraps = [getattr(interceptor, f"around_{k}_call", None) for k in ("model", "tool")]
    if (
        not isinstance(name, str)
        or isinstance(priority, bool)
        or not isinstance(priority, int)
        or not any(callable(w) for w in wraps)
    ):
        raise ConfigurationError(
            f"interceptors= takes interceptors: functions decorated with @around_model_call or "
            f"@around_tool_call, or objects with a str `name`, an int `priority` and an "
            f"`around_model_call` or `around_tool_call` method; got {interceptor!r}"
        )
    assert isinstance(interceptor, Interceptor)
    return interceptor


class InterceptorChain:
    """Interceptors in registration order, resolved per kind outermost first.

    Example:
        ```python
        from rxagent.interceptors import InterceptorChain, UsageLimits, around_tool_call


        @around_tool_call(priority=-10)
        async def audit(call, call_next):
            return await call_next(call)


        chain = InterceptorChain([UsageLimits(max_requests=3), audit])
        assert [i.name for i in chain.explain("tool")] == ["audit", "usage_limits"]
        assert [i.name for i in chain.explain("model")] == ["usage_limits"]
        ```
    """

    def __init__(self, interceptors: Iterable[object] = ()) -> None:
        self._items: list[Interceptor] = []
        self._layers: dict[InterceptorKind, tuple[Layer, ...]] = {}
        for interceptor in interceptors:
            self.add(interceptor)

    def add(self, interceptor: object) -> Interceptor:
        """Register an interceptor (checked now) and return it."""
        checked = check_interceptor(interceptor)
        self._items.append(checked)
        self._layers.clear()
        return checked

    def remove(self, interceptor: Interceptor) -> None:
        """Unregister an interceptor.

        Raises:
            ValueError: When it is not registered.
        """
        self._items.remove(interceptor)
        self._layers.clear()

    def __iter__(self) -> Iterator[Interceptor]:
        return iter(order_interceptors(self._items))

    def __len__(self) -> int:
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def with_extra(self, extra: Iterable[object]) -> InterceptorChain:
        """A chain of these interceptors, then `extra` (a call's own), registered after them."""
        return InterceptorChain([*self._items, *extra])

    def layers(self, kind: InterceptorKind) -> tuple[Layer, ...]:
        """The wrappers of `kind`, outermost first (cached until the chain changes)."""
        found = self._layers.get(kind)
        if found is None:
            attribute = f"around_{kind}_call"
            found = self._layers[kind] = tuple(
                (i.name, getattr(i, attribute))
                for i in order_interceptors(self._items)
                if callable(getattr(i, attribute, None))
            )
        return found

    def explain(self, kind: InterceptorKind) -> list[InterceptorInfo]:
        """Describe the resolved chain of `kind` (`"model"` or `"tool"`), outermost first."""
        attribute = f"around_{kind}_call"
        return [
            InterceptorInfo(position, i.name, i.priority, kind)
            for position, i in enumerate(
                i for i in order_interceptors(self._items) if callable(getattr(i, attribute, None))
            )
        ]


class _Next:
    """`call_next` of one layer: the rest of the chain, remembering what it was given."""

    __slots__ = ("_at", "_name", "_onion", "_received", "given")

    def __init__(self, onion: Onion[Any, Any], at: int, name: str, received: Any) -> None:
        self._onion = onion
        self._at = at
        self._name = name
        self._received = received
        self.given: list[Any] = []  # every response call_next returned to this layer

    @property
    def started(self) -> bool:
        return self._onion.started()

    async def __call__(self, call: Any) -> Any:
        onion = self._onion
        if not isinstance(call, onion.call_type):
            raise InterceptorContractError(
                f"interceptor {self._name!r} passed {type(call).__name__} to call_next; pass a "
                f"{onion.call_type.__name__} (call.model_copy(update=...) makes a changed one)",
                interceptor=self._name,
            )
        if call is not self._received and call != self._received:
            onion.mark(self._name)
        try:
            response = await onion.run_layer(self._at, call)
        except InterceptorContractError as exc:
            if not exc.interceptor:  # raised by the innermost call: this layer called it
                exc.interceptor = self._name
                exc.args = (f"interceptor {self._name!r}: {exc}",)
            raise
        self.given.append(response)
        return response


class Onion(Generic[C, R]):
    """One call through resolved layers to `innermost`, recording who changed what.

    `modified_by` names each interceptor that passed `call_next` a changed call, or returned a
    response other than the one its `call_next` gave it (a cache hit, a rewritten answer).

    Args:
        layers: The wrappers, outermost first.
        innermost: Makes the call for real (the model, the tool).
        call_type: `ModelCall` or `ToolCall`.
        response_type: `ModelResponse` or `ToolResultBlock`.
        started: Whether `call_next` may no longer be called (a delta reached subscribers).
    """

    __slots__ = ("_innermost", "_layers", "call_type", "modified_by", "response_type", "started")

    def __init__(
        self,
        layers: tuple[Layer, ...],
        innermost: Callable[[C], Awaitable[R]],
        call_type: type[C],
        response_type: type[R],
        started: Callable[[], bool] = lambda: False,
    ) -> None:
        self._layers = layers
        self._innermost: Callable[[C], Awaitable[R]] = innermost
        self.call_type: type[C] = call_type
        self.response_type: type[R] = response_type
        self.started = started
        self.modified_by: list[str] = []

    def mark(self, name: str) -> None:
        """Record that interceptor `name` changed the call or the response (once)."""
        if name not in self.modified_by:
            self.modified_by.append(name)

    async def __call__(self, call: C) -> R:
        response: R = await self.run_layer(0, call)
        return response

    async def run_layer(self, at: int, call: Any) -> Any:
        """Run layer `at` (or the innermost call, past the last layer) on `call`."""
        if at == len(self._layers):
            return await self._innermost(call)
        name, wrapper = self._layers[at]
        following = _Next(self, at + 1, name, call)
        try:
            response = await wrapper(call, following)
        except (AgentRunError, InterceptorContractError, InterceptorFailedError):
            raise  # typed: a run failure, or already named after its interceptor
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise InterceptorFailedError(name, exc) from exc
        if not isinstance(response, self.response_type):
            raise InterceptorContractError(
                f"interceptor {name!r} returned {type(response).__name__}; return a "
                f"{self.response_type.__name__} (what `await call_next(call)` gives, or one "
                "you build)",
                interceptor=name,
            )
        if not any(response is given for given in following.given):
            self.mark(name)
        return response
