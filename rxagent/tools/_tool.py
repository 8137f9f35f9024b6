"""`Tool` and the `@tool` decorator: a typed function plus what the model is told about it."""

from __future__ import annotations

import functools
import inspect
import math
import re
import typing
from typing import TYPE_CHECKING, Any, Final, Generic, ParamSpec, TypeVar, overload

from rxagent.errors import ToolDefinitionError
from rxagent.models.base import ToolSchema
from rxagent.tools._schema import ArgumentBinder, build_binder, parse_docstring

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["Tool", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

_VALID_NAME: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


@typing.final
class Tool(Generic[P, R]):
    """A function the model can call, with its name, description and JSON schema.

    Make one with `@tool`. Calling a `Tool` calls the function directly, so decorated functions
    stay easy to unit-test; the agent runs it through `Toolkit.execute`, which validates the
    model's arguments, injects dependencies and turns the return value into a result.

    Attributes:
        name: The name the model calls the tool by.
        description: What the tool does: the docstring without its `Args:` section.
        schema: What the model is told: name, description and the JSON schema of the arguments.
        timeout: Seconds the tool may run before it is abandoned, or None for the toolkit's
            default.
        fn: The decorated function.
        is_async: True when `fn` is a coroutine function (a sync `fn` runs in a worker thread).
        injected: The parameters supplied at call time, by name, with the type they are
            injected by. They are not in the schema.

    Example:
        ```python
        from rxagent.tools import Tool, tool


        @tool
        def add(a: int, b: int = 0) -> int:
            \"\"\"Add two numbers.

            Args:
                a: The first number.
                b: The second number.
            \"\"\"
            return a + b


        assert isinstance(add, Tool) and add.name == "add"
        assert add(2, 3) == 5
        assert add.schema.parameters["required"] == ("a",)
        assert add.schema.parameters["properties"]["b"] == {
            "default": 0, "description": "The second number.", "type": "integer"
        }
        ```
    """  # noqa: D214 - the example tool's docstring has its own Args section

    __slots__ = (
        "__wrapped__",
        "_binder",
        "description",
        "fn",
        "injected",
        "is_async",
        "name",
        "schema",
        "timeout",
    )

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float | None = None,
    ) -> None:
        target = _unwrap(fn)
        self.name: str = name if name is not None else _default_name(fn, target)
        _check_name(self.name)
        self.timeout: float | None = _check_timeout(self.name, timeout)
        if inspect.isasyncgenfunction(target) or inspect.isgeneratorfunction(target):
            raise ToolDefinitionError(
                f"tool '{self.name}': generator functions are not supported as tools; "
                "return the whole result instead of yielding it"
            )
        summary, param_docs = parse_docstring(inspect.getdoc(target))
        self.description: str = summary if description is None else description
        self._binder: ArgumentBinder = build_binder(self.name, fn, target, param_docs)
        self.schema: ToolSchema = ToolSchema(
            name=self.name, description=self.description, parameters=self._binder.parameters
        )
        self.fn: Callable[P, R] = fn
        self.__wrapped__ = fn
        self.is_async: bool = _is_async(fn)
        self.injected: Mapping[str, type[Any]] = self._binder.injected

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        kind = "async " if self.is_async else ""
        return f"<{kind}tool {self.name}>"


def _unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Return the function that holds the name, docstring and annotations of `fn`."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isroutine(fn) or inspect.isclass(fn):
        return fn
    call = getattr(fn, "__call__", None)  # noqa: B004 - a callable object's method
    return call if call is not None else fn


def _default_name(fn: Callable[..., Any], target: Callable[..., Any]) -> str:
    name = getattr(target, "__name__", None)
    if name == "__call__":  # a callable object: name it after its class
        name = type(fn).__name__
    return name if isinstance(name, str) else type(fn).__name__


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - a callable object's method
    return not inspect.isroutine(fn) and inspect.iscoroutinefunction(call)


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not _VALID_NAME.fullmatch(name):
        raise ToolDefinitionError(
            f"tool name {name!r} is invalid: providers accept 1 to 64 letters, digits, '_' "
            "and '-'; pass a valid name with @tool(name=...)"
        )


def _check_timeout(name: str, timeout: object) -> float | None:
    if timeout is None:
        return None
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or timeout <= 0
    ):
        raise ToolDefinitionError(
            f"tool '{name}': timeout must be a positive number of seconds or None, got {timeout!r}"
        )
    return float(timeout)


@overload
def tool(
    fn: Callable[P, R],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Tool[P, R]: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """Turn a typed function (sync or async) into a `Tool`.

    Use it bare (`@tool`) or with options (`@tool(name=..., timeout=...)`). The JSON schema comes
    from the type annotations, with each parameter's description taken from the docstring's
    `Args:` section. Parameters typed `RunContext`, `Injected[T]` or a plain class (one that is
    not JSON, such as a database client) are injected at call time and left out of the schema.

    Args:
        fn: The function (when used bare or called directly).
        name: The tool's name (default: the function's `__name__`).
        description: What the tool does (default: the docstring without its `Args:` section).
        timeout: Seconds the tool may run; it overrides the timeout given to
            `Toolkit.execute`.

    Raises:
        ToolDefinitionError: When a parameter has no annotation, for `*args` or `**kwargs`,
            for a type with no JSON schema, or for a bad name or timeout.

    Example:
        ```python
        import asyncio

        from rxagent.tools import tool


        @tool(timeout=5)
        async def fetch_title(url: str) -> str:
            \"\"\"Fetch a page's title.

            Args:
                url: The page's address.
            \"\"\"
            await asyncio.sleep(0)
            return f"Title of {url}"


        assert fetch_title.timeout == 5.0
        assert fetch_title.schema.description == "Fetch a page's title."
        assert asyncio.run(fetch_title("https://example.com")) == "Title of https://example.com"
        ```
    """  # noqa: D214 - the example tool's docstring has its own Args section
    if fn is None:

        def decorate(f: Callable[P, R]) -> Tool[P, R]:
            return _make_tool(f, name=name, description=description, timeout=timeout)

        return decorate
    return _make_tool(fn, name=name, description=description, timeout=timeout)


def _make_tool(
    fn: Callable[P, R], *, name: str | None, description: str | None, timeout: float | None
) -> Tool[P, R]:
    if isinstance(fn, Tool):
        if name is None and description is None and timeout is None:
            return typing.cast("Tool[P, R]", fn)
        return Tool(
            fn.fn,
            name=fn.name if name is None else name,
            description=fn.description if description is None else description,
            timeout=fn.timeout if timeout is None else timeout,
        )
    if not callable(fn):
        raise ToolDefinitionError(f"@tool decorates a function, got {fn!r}")
    return Tool(fn, name=name, description=description, timeout=timeout)
