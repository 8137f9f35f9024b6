"""Injected tool parameters: which parameters are injected, by what type, and finding their value.

A parameter is injected (supplied at call time, left out of the schema) when it is annotated
`RunContext`, `SessionId`, `Injected[T]`, or a plain class that has no JSON schema (a database
client, say), optionally `| None`.
"""

from __future__ import annotations

import types
import typing
import warnings
from typing import Annotated, Any, Final, TypeAlias, TypeVar, cast

from pydantic import TypeAdapter
from pydantic.errors import PydanticInvalidForJsonSchema, PydanticSchemaGenerationError
from pydantic.json_schema import PydanticJsonSchemaWarning

from rxagent.context import RunContext, find_dependency
from rxagent.errors import ToolDefinitionError

if typing.TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "Injected",
    "SessionId",
    "find_injection",
    "has_json_schema",
    "injection_key",
    "missing_injection_message",
    "run_context_base",
]

T = TypeVar("T")


class _InjectMarker:
    """The `Annotated` metadata that marks a parameter as injected."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<injected>"


_INJECT: Final = _InjectMarker()

Injected: TypeAlias = Annotated[T, _INJECT]
"""Marks a tool parameter as supplied at call time, by type, from the run's `deps`.

`db: Injected[Database]` means `Annotated[Database, <marker>]`: type checkers see a `Database`,
and the parameter is left out of the JSON schema the model sees. A plain class that has no JSON
schema is injected even without the marker; use `Injected` when the type *does* have one (a
dataclass or a pydantic model, say) but must still come from deps.

Example:
    ```python
    import asyncio
    from dataclasses import dataclass

    from rxagent.messages import ToolUseBlock
    from rxagent.tools import Injected, Toolkit, tool


    @dataclass
    class Settings:
        greeting: str


    @tool
    def greet(name: str, settings: Injected[Settings]) -> str:
        \"\"\"Greet someone.\"\"\"
        return f"{settings.greeting}, {name}!"


    assert list(greet.schema.parameters["properties"]) == ["name"]
    call = ToolUseBlock(id="1", name="greet", input={"name": "Ada"})
    outcome = asyncio.run(Toolkit([greet]).execute(call, inject={Settings: Settings("Hello")}))
    assert outcome.result.output == "Hello, Ada!"
    ```
"""


class SessionId(str):
    """Annotate a tool parameter `SessionId` to get the id of the session the tool runs in.

    The agent supplies it (from the run's `RunContext`); the model never sees the parameter.
    With `Toolkit.execute`, pass `inject={SessionId: SessionId("...")}` or a `RunContext`.

    Example:
        ```python
        import asyncio

        from rxagent import ReActAgent
        from rxagent.testing import ScriptedModel, tool_call
        from rxagent.tools import SessionId, tool


        @tool
        def cart(item: str, session: SessionId) -> str:
            \"\"\"Add an item to this session's cart.\"\"\"
            return f"{item} added to the cart of {session}"


        assert list(cart.schema.parameters["properties"]) == ["item"]
        model = ScriptedModel([[tool_call("cart", item="tea")], "Done."])
        agent = ReActAgent("shop", "", model, tools=[cart])
        asyncio.run(agent.call("Add tea", session_id="alice"))
        ```
    """

    __slots__ = ()


_JSON_SCALARS: Final[frozenset[type[Any]]] = frozenset({str, int, float, bool, list, dict})


class _MissingInjection(Exception):
    """An injected parameter had no value at call time; the message says how to supply it."""


def run_context_base(annotation: object) -> type[Any] | None:
    """Return the RunContext class when `annotation` is RunContext or a subclass of it."""
    origin = typing.get_origin(annotation) or annotation
    if isinstance(origin, type) and issubclass(origin, RunContext):
        return RunContext
    return None


def has_json_schema(annotation: object) -> bool:
    """True when pydantic can validate `annotation` and describe it as JSON schema."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            TypeAdapter[Any](cast("Any", annotation)).json_schema()
    except (PydanticSchemaGenerationError, PydanticInvalidForJsonSchema):
        return False
    return True


def injection_key(tool: str, param: str, annotation: object) -> type[Any] | None:
    """Return the type `param` is injected by, or None when the model supplies it.

    Raises:
        ToolDefinitionError: For `Injected[...]` of something that is not a class.
    """
    if isinstance(annotation, type) and annotation in _JSON_SCALARS:
        return None  # the common case, without asking pydantic
    if annotation is SessionId:
        return SessionId
    context = run_context_base(annotation)
    if context is not None:
        return context
    if typing.get_origin(annotation) is Annotated:
        inner, *metadata = typing.get_args(annotation)
        if not any(m is _INJECT for m in metadata):
            return None
        key = typing.get_origin(inner) or inner  # list[int] is injected by list
        if not isinstance(key, type) or key is types.UnionType:
            raise ToolDefinitionError(
                f"tool '{tool}': parameter '{param}' is Injected[{inner}], but values are "
                "injected by class; use a class, e.g. `Injected[Database]`"
            )
        return key
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [m for m in typing.get_args(annotation) if m is not type(None)]
        if len(members) == 1 and typing.get_args(annotation) != tuple(members):
            return _plain_class(members[0])  # `db: Database | None = None`
        return None
    return _plain_class(annotation)


def _plain_class(annotation: object) -> type[Any] | None:
    if isinstance(annotation, type) and not has_json_schema(annotation):
        return annotation
    return None


def find_injection(key: type[Any], inject: Mapping[type[Any], object]) -> object:
    """Return the value for `key`: under `key`, under a subclass of it, or any instance of it.

    Returns `NOT_FOUND` when none fits. A `SessionId` comes from an injected RunContext.
    """
    if key is SessionId and key not in inject:
        for value in inject.values():
            if isinstance(value, RunContext):
                return SessionId(value.session_id)
    return find_dependency(key, inject)


def missing_injection_message(param: str, key: type[Any]) -> str:
    """Say which injected value is missing and how to pass it."""
    if run_context_base(key) is not None:
        return (
            f"parameter '{param}' needs the RunContext, which the agent supplies; "
            "when calling Toolkit.execute() yourself, pass inject={RunContext: ctx}"
        )
    if key is SessionId:
        return (
            f"parameter '{param}' needs the session id, which the agent supplies; when calling "
            "Toolkit.execute() yourself, pass inject={SessionId: SessionId('...')}"
        )
    name = key.__name__
    return (
        f"parameter '{param}' needs a {name} to be injected, and none was given; pass one to "
        f"the agent with deps=[...] (or to Toolkit.execute() with inject={{{name}: value}})"
    )
