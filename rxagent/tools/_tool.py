"""`Tool` and the `@tool` decorator: a typed function plus what the model is told about it."""

from __future__ import annotations

import functools
import inspect
import math
import re
import typing
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final, Generic, ParamSpec, TypeAlias, TypeVar, overload

from rxagent.errors import ToolDefinitionError
from rxagent.models.base import ToolSchema
from rxagent.tools._jsonargs import SchemaBinder
from rxagent.tools._schema import ArgumentBinder, build_binder, parse_docstring

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["Tool", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

ApprovalRule: TypeAlias = "bool | Callable[[dict[str, Any]], bool]"
"""Whether a tool's calls wait for a human: always, never, or as a function of the arguments."""

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
        is_async: True when `fn` is a coroutine or async-generator function (it runs on the
            event loop; a sync `fn` runs in a worker thread unless `blocking` is False).
        blocking: False when the author declared that the sync `fn` never blocks (no I/O, no
            waiting, quick): it runs inline on the event loop, with no worker thread. True for
            every other sync tool; not used for async tools.
        is_generator: True when `fn` is a generator function: each value it yields is progress
            (an `ActingChunkEvent`), and a yielded `ToolResult`, or else the last value, is the
            result.
        injected: The parameters supplied at call time, by name, with the type they are
            injected by. They are not in the schema.
        group: The tool group it belongs to, or None for a tool that is always offered.
        preset: Values for parameters the model does not send, by name (see `with_preset`).
        needs_approval: True when every call waits for a human's approval, or a function of the
            call's arguments (a dict) saying whether this call does (see `ReActAgent.approve`).

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
        "blocking",
        "description",
        "fn",
        "group",
        "injected",
        "is_async",
        "is_generator",
        "name",
        "needs_approval",
        "preset",
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
        group: str | None = None,
        needs_approval: ApprovalRule = False,
        blocking: bool = True,
    ) -> None:
        target = _unwrap(fn)
        self.name: str = name if name is not None else _default_name(fn, target)
        _check_name(self.name)
        self.timeout: float | None = _check_timeout(self.name, timeout)
        self.group: str | None = _check_group(self.name, group)
        self.needs_approval: ApprovalRule = _check_approval(self.name, needs_approval)
        summary, param_docs = parse_docstring(inspect.getdoc(target))
        self.description: str = summary if description is None else description
        self._binder: ArgumentBinder | SchemaBinder = build_binder(
            self.name, fn, target, param_docs
        )
        self.schema: ToolSchema = ToolSchema(
            name=self.name, description=self.description, parameters=self._binder.parameters
        )
        self.fn: Callable[P, R] = fn
        self.__wrapped__ = fn
        self.is_generator: bool = inspect.isasyncgenfunction(target) or inspect.isgeneratorfunction(
            target
        )
        self.is_async: bool = _is_async(fn) or inspect.isasyncgenfunction(target)
        self.blocking: bool = _check_blocking(self.name, blocking)
        self.injected: Mapping[str, type[Any]] = self._binder.injected
        self.preset: Mapping[str, Any] = MappingProxyType({})

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters: Mapping[str, Any],
        fn: Callable[[dict[str, Any]], Any],
        *,
        timeout: float | None = None,
        group: str | None = None,
        needs_approval: ApprovalRule = False,
        blocking: bool = True,
    ) -> Tool[[dict[str, Any]], Any]:
        """Make a tool from a JSON schema and a function that takes the arguments as one dict.

        For tools described elsewhere (an MCP server, a config file): `fn(arguments)` may be
        sync (run in a worker thread), async, or a generator. Before it runs, the arguments are
        checked against the schema's top level (required and unknown fields, each field's JSON
        type); nothing is injected.

        Raises:
            ToolDefinitionError: For a bad name, timeout or group, or a schema that is not an
                object schema.

        Example:
            ```python
            import asyncio

            from rxagent.messages import ToolUseBlock
            from rxagent.tools import Tool, Toolkit


            def area(arguments: dict) -> float:
                return arguments["width"] * arguments["height"]


            schema = {
                "type": "object",
                "properties": {"width": {"type": "number"}, "height": {"type": "number"}},
                "required": ["width", "height"],
            }
            kit = Toolkit([Tool.from_schema("area", "A rectangle's area.", schema, area)])
            call = ToolUseBlock(id="1", name="area", input={"width": 2, "height": "x"})
            bad = asyncio.run(kit.execute(call))
            assert bad.result.text == (
                "Invalid arguments for tool 'area': height: Input should be of type number"
            )
            ```
        """
        made: Tool[[dict[str, Any]], Any] = object.__new__(Tool)
        made.name = name
        _check_name(name)
        made.timeout = _check_timeout(name, timeout)
        made.group = _check_group(name, group)
        made.needs_approval = _check_approval(name, needs_approval)
        made.description = description
        made._binder = SchemaBinder(name, parameters)
        made.schema = ToolSchema(
            name=name, description=description, parameters=made._binder.parameters
        )
        made.fn = fn
        made.__wrapped__ = fn
        target = _unwrap(fn)
        made.is_generator = inspect.isasyncgenfunction(target) or inspect.isgeneratorfunction(
            target
        )
        made.is_async = _is_async(fn) or inspect.isasyncgenfunction(target)
        made.blocking = _check_blocking(name, blocking)
        made.injected = made._binder.injected
        made.preset = MappingProxyType({})
        return made

    def with_preset(
        self, values: Mapping[str, Any] | None = None, /, *, visible: bool = False, **kwargs: Any
    ) -> Tool[..., R]:
        """Return a copy of this tool with preset values for some of its parameters.

        A preset parameter is hidden: it leaves the schema, so the model neither sees nor sends
        it (an API key, a tenant id); if it sends it anyway, that is an invalid-arguments
        result. With `visible=True` the parameters stay in the schema with the preset value as
        their default, so the model may override them. At call time a parameter gets, in this
        order, the model's argument, the preset value, the injected value, its Python default.

        Args:
            values: The preset values, by parameter name (or pass them as keywords).
            visible: Keep the parameters in the schema, defaulting to the preset values.
            **kwargs: More preset values, by parameter name.

        Raises:
            ToolDefinitionError: For a name that is not one of the tool's parameters.

        Example:
            ```python
            import asyncio

            from rxagent.messages import ToolUseBlock
            from rxagent.tools import Toolkit, tool


            @tool
            def weather(city: str, api_key: str) -> str:
                \"\"\"Get the weather.\"\"\"
                return f"sunny in {city} (key {api_key[:2]}...)"


            hidden = weather.with_preset(api_key="sk-secret")
            assert list(hidden.schema.parameters["properties"]) == ["city"]
            call = ToolUseBlock(id="1", name="weather", input={"city": "Oslo"})
            outcome = asyncio.run(Toolkit([hidden]).execute(call))
            assert outcome.result.output == "sunny in Oslo (key sk...)"
            ```
        """
        added = {**(values or {}), **kwargs}
        preset = {**self.preset, **added}
        shown = self._binder.visible - set(added) | (set(added) if visible else set())
        made: Tool[..., R] = object.__new__(Tool)
        for slot in Tool.__slots__:  # every slot is set by both constructors
            setattr(made, slot, getattr(self, slot))
        if isinstance(self._binder, SchemaBinder):
            made._binder = SchemaBinder(self.name, self._binder.source, preset, visible=shown)
        else:
            target = _unwrap(self.fn)
            _, docs = parse_docstring(inspect.getdoc(target))
            made._binder = build_binder(self.name, self.fn, target, docs, preset, visible=shown)
        made.schema = ToolSchema(
            name=self.name,
            description=self.description,
            parameters=made._binder.parameters,
            strict=self.schema.strict,
        )
        made.injected = made._binder.injected
        made.preset = MappingProxyType(preset)
        return made

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


def _check_group(name: str, group: object) -> str | None:
    if group is None:
        return None
    if not isinstance(group, str) or not _VALID_NAME.fullmatch(group):
        raise ToolDefinitionError(
            f"tool '{name}': group must be None or a name of 1 to 64 letters, digits, '_' and "
            f"'-', got {group!r}"
        )
    return group


def _check_approval(name: str, rule: object) -> ApprovalRule:
    if isinstance(rule, bool) or callable(rule):
        return typing.cast("ApprovalRule", rule)
    raise ToolDefinitionError(
        f"tool '{name}': needs_approval must be True, False or a function of the call's "
        f"arguments (a dict) returning a bool, got {rule!r}"
    )


def _check_blocking(name: str, blocking: object) -> bool:
    if not isinstance(blocking, bool):
        raise ToolDefinitionError(
            f"tool '{name}': blocking must be True or False, got {blocking!r}; pass "
            "blocking=False only for a sync function that never blocks"
        )
    return blocking


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
    group: str | None = None,
    needs_approval: ApprovalRule = False,
    blocking: bool = True,
) -> Tool[P, R]: ...


@overload
def tool(
    fn: None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    group: str | None = None,
    needs_approval: ApprovalRule = False,
    blocking: bool = True,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout: float | None = None,
    group: str | None = None,
    needs_approval: ApprovalRule = False,
    blocking: bool = True,
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
        group: The tool group it belongs to: offered only while the group is active (see
            `Toolkit`). None (the default): always offered.
        needs_approval: True to park every call until a human approves it, or a function of
            the call's arguments (a dict) returning whether this call must wait; see "Human
            approval" in the tools guide.
        blocking: For a sync function: False declares that it never blocks (no I/O, no
            sleeping, no heavy computation), so it runs inline on the event loop instead of on
            a worker thread, which saves the thread hand-off on every call. A tool declared
            non-blocking that does block stalls every run on the loop meanwhile, and its
            `timeout` cannot stop it. Ignored for async functions, which always run on the loop.

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
            return _make_tool(
                f,
                name=name,
                description=description,
                timeout=timeout,
                group=group,
                needs_approval=needs_approval,
                blocking=blocking,
            )

        return decorate
    return _make_tool(
        fn,
        name=name,
        description=description,
        timeout=timeout,
        group=group,
        needs_approval=needs_approval,
        blocking=blocking,
    )


def _make_tool(
    fn: Callable[P, R],
    *,
    name: str | None,
    description: str | None,
    timeout: float | None,
    group: str | None,
    needs_approval: ApprovalRule,
    blocking: bool,
) -> Tool[P, R]:
    if isinstance(fn, Tool):
        if (
            name is None
            and description is None
            and timeout is None
            and group is None
            and needs_approval is False
            and blocking is True
        ):
            return typing.cast("Tool[P, R]", fn)
        return Tool(
            fn.fn,
            name=fn.name if name is None else name,
            description=fn.description if description is None else description,
            timeout=fn.timeout if timeout is None else timeout,
            group=fn.group if group is None else group,
            needs_approval=fn.needs_approval if needs_approval is False else needs_approval,
            blocking=fn.blocking and blocking,
        )
    if not callable(fn):
        raise ToolDefinitionError(f"@tool decorates a function, got {fn!r}")
    return Tool(
        fn,
        name=name,
        description=description,
        timeout=timeout,
        group=group,
        needs_approval=needs_approval,
        blocking=blocking,
    )
