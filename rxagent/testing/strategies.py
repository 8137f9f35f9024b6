"""Hypothesis strategies for rxagent data, to property-test your own hooks, tools and formatters.

Import this module explicitly. It needs `hypothesis`, which the `testing` extra installs
(`pip install "rxagent[testing]"`); without it, the import raises an `ImportError` that says so.

```python
from rxagent.testing import strategies as rst
```

Everything drawn is valid: messages and events validate and round-trip through JSON, conversations
pair every tool call with its result, and scripts can be played by a `ScriptedModel`.

Example:
    ```python
    from hypothesis import given, settings
    from rxagent.events import EVENT_ADAPTER
    from rxagent.testing import strategies as rst


    @settings(max_examples=10)
    @given(rst.events())
    def test_events_round_trip(event) -> None:
        assert EVENT_ADAPTER.validate_json(EVENT_ADAPTER.dump_json(event)) == event


    test_events_round_trip()
    ```
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Final

try:
    from hypothesis import strategies as st
except ModuleNotFoundError as exc:  # only hypothesis itself: a broken install says what is broken
    if exc.name != "hypothesis":
        raise
    raise ImportError(
        "rxagent.testing.strategies needs hypothesis, which is not installed: "
        'install rxagent[testing] (pip install "rxagent[testing]")',
        name=__name__,
    ) from exc

from rxagent.errors import UnsupportedSchemaError as UnsupportedSchemaError
from rxagent.messages import ToolUseBlock
from rxagent.models.base import ToolSchema
from rxagent.testing._builders import Turn, text, thinking
from rxagent.testing._hookspecs import HookAction, HookChainSpec, HookSpec
from rxagent.testing._strategies_events import events as events
from rxagent.testing._strategies_events import model_options as model_options
from rxagent.testing._strategies_events import tool_schemas as tool_schemas
from rxagent.testing._strategies_events import usages as usages
from rxagent.testing._strategies_messages import DEFAULT_TOOL_NAMES as DEFAULT_TOOL_NAMES
from rxagent.testing._strategies_messages import Draw, SearchStrategy, hex_ids, words
from rxagent.testing._strategies_messages import blocks as blocks
from rxagent.testing._strategies_messages import conversations as conversations
from rxagent.testing._strategies_messages import json_values as json_values
from rxagent.testing._strategies_messages import messages as messages
from rxagent.testing._strategies_messages import text_blocks as text_blocks
from rxagent.testing._strategies_output import output_models as output_models
from rxagent.testing._strategies_schema import tool_args as tool_args
from rxagent.testing._strategies_teams import TeamKind as TeamKind
from rxagent.testing._strategies_teams import TeamSpec as TeamSpec
from rxagent.testing._strategies_teams import build_team as build_team
from rxagent.testing._strategies_teams import team_sessions as team_sessions
from rxagent.testing._strategies_teams import team_specs as team_specs
from rxagent.tools import Tool

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from rxagent.messages import Block

__all__ = [
    "DEFAULT_TOOL_NAMES",
    "HookAction",
    "HookChainSpec",
    "HookSpec",
    "TeamKind",
    "TeamSpec",
    "UnsupportedSchemaError",
    "blocks",
    "build_team",
    "conversations",
    "events",
    "hook_chains",
    "hook_specs",
    "json_values",
    "messages",
    "model_options",
    "output_models",
    "scripts",
    "team_sessions",
    "team_specs",
    "text_blocks",
    "tool_args",
    "tool_schemas",
    "usages",
]

_HOOK_NAMES: Final = ("alpha", "beta", "gamma", "delta")
_PRIORITIES: Final = (-10, 0, 10, 10, 100, 100, 1000)


# -- hooks ---------------------------------------------------------------------------------


def hook_specs(tag: str | None = None) -> SearchStrategy[HookSpec]:
    """Draw one PreReasoning hook as data (see `HookSpec`): name, priority, action, sync or async.

    Names come from a small set and priorities from a few values, so duplicates and ties are
    common.

    Args:
        tag: The hook's tag (random when None; `hook_chains()` numbers them).

    Example:
        ```python
        import asyncio
        from hypothesis import given, settings
        from rxagent.events import PreReasoningEvent
        from rxagent.hooks import HookChain
        from rxagent.testing.strategies import hook_specs


        @settings(max_examples=10)
        @given(hook_specs())
        def test_one_hook(spec) -> None:
            event = PreReasoningEvent(messages=[])
            out = asyncio.run(HookChain([spec.build()]).dispatch(event))
            assert out.modified_by == ((spec.name,) if spec.modifies else ())


        test_one_hook()
        ```
    """
    actions: tuple[HookAction, ...] = ("append_system", "append_tool", "observe")
    return st.builds(
        HookSpec,
        name=st.sampled_from(_HOOK_NAMES),
        priority=st.sampled_from(_PRIORITIES),
        action=st.sampled_from(actions),
        is_async=st.booleans(),
        tag=st.just(tag) if tag is not None else hex_ids.map(lambda h: h[:8]),
    )


def hook_chains(*, min_size: int = 0, max_size: int = 6) -> SearchStrategy[HookChainSpec]:
    """Draw a chain of PreReasoning hooks whose result a test can predict (see `HookChainSpec`).

    Tags are `h0`, `h1`, ... in registration order.

    Example:
        ```python
        import asyncio
        from hypothesis import given, settings
        from rxagent.events import PreReasoningEvent
        from rxagent.hooks import HookChain
        from rxagent.messages import Msg
        from rxagent.testing.strategies import hook_chains


        @settings(max_examples=10)
        @given(hook_chains())
        def test_chain_composes(spec) -> None:
            hooks, log = spec.build()
            event = PreReasoningEvent(messages=[Msg.user("hi")])
            assert asyncio.run(HookChain(hooks).dispatch(event)) == spec.expected(event)
            assert log == spec.expected_log()


        test_chain_composes()
        ```
    """
    return st.lists(hook_specs(tag=""), min_size=min_size, max_size=max_size).map(
        lambda specs: HookChainSpec(
            tuple(dataclasses.replace(s, tag=f"h{i}") for i, s in enumerate(specs))
        )
    )


# -- scripts -------------------------------------------------------------------------------


@st.composite
def _scripts(
    draw: Draw,
    arguments: tuple[tuple[str, SearchStrategy[dict[str, Any]]], ...],
    max_tool_turns: int,
    max_parallel: int,
    explicit_ids: bool,
) -> list[Turn]:
    script: list[Turn] = []
    calls = 0
    for _ in range(draw(st.integers(min_value=0, max_value=max_tool_turns))):
        turn: list[str | Block] = []
        if draw(st.booleans()):
            turn.append(thinking(draw(st.text(max_size=30)), signature=draw(st.none() | hex_ids)))
        if draw(st.booleans()):
            turn.append(draw(words))
        for _ in range(draw(st.integers(min_value=1, max_value=max_parallel))):
            calls += 1
            name, args = draw(st.sampled_from(arguments))
            call_id = f"tc_{calls}" if explicit_ids else ""
            turn.append(ToolUseBlock(id=call_id, name=name, input=draw(args)))
        script.append(turn)
    answer = draw(words)
    endings: tuple[Turn, ...] = (answer, [text(answer)])
    script.append(draw(st.sampled_from(endings)))
    return script


def _arguments_by_tool(
    tools: Iterable[Tool[..., Any] | ToolSchema] | None, tool_names: Sequence[str] | None
) -> tuple[tuple[str, SearchStrategy[dict[str, Any]]], ...]:
    """Each tool's name with the strategy for its arguments, checked now rather than mid-draw."""
    if tools is None:
        names = DEFAULT_TOOL_NAMES if tool_names is None else tuple(tool_names)
        return tuple((name, tool_args(name)) for name in dict.fromkeys(names))
    if tool_names is not None:
        raise ValueError("scripts() takes tools= or tool_names=, not both")
    arguments: dict[str, SearchStrategy[dict[str, Any]]] = {}
    for item in tools:
        if not isinstance(item, Tool | ToolSchema):
            raise TypeError(
                f"scripts(tools=...) takes Tools (from @tool) or ToolSchemas; got {item!r}"
            )
        name = item.name
        if name in arguments:
            raise ValueError(f"scripts(tools=...) has two tools named {name!r}")
        arguments[name] = tool_args(item)
    return tuple(arguments.items())


def scripts(
    *,
    tools: Iterable[Tool[..., Any] | ToolSchema] | None = None,
    tool_names: Sequence[str] | None = None,
    max_tool_turns: int = 3,
    max_parallel: int = 3,
    explicit_ids: bool = False,
) -> SearchStrategy[list[Turn]]:
    """Draw `ScriptedModel` scripts: tool-calling turns, then one text-only answer.

    Each tool turn may start with thinking and text, then calls one to `max_parallel` tools in
    parallel, with arguments drawn by `tool_args()`. By default the scripts call the kit's `add`
    and `echo` (`rxagent.testing.tools`): give your agent `tools=[add, echo]`. To call your own
    tools, pass them as `tools=`: the arguments are drawn from each tool's JSON schema, so every
    call validates.

    Args:
        tools: The tools the script calls (`Tool`s from `@tool`, or `ToolSchema`s), with
            arguments valid under their schemas. Give the agent the same tools.
        tool_names: The tools the script calls, by name, instead (`add` and `echo` get their
            arguments, other names one JSON `value`); default `DEFAULT_TOOL_NAMES`.
        max_tool_turns: The most tool-calling turns before the answer.
        max_parallel: The most calls in one turn.
        explicit_ids: Give calls the ids `tc_1`, `tc_2`, ...; by default the agent assigns them.

    Raises:
        ValueError: For no tools, both `tools` and `tool_names`, two tools with one name, or
            `max_tool_turns < 0` or `max_parallel < 1`.
        UnsupportedSchemaError: For a tool whose schema the arguments cannot be drawn from (a
            `ValueError`; see `tool_args()`).
        TypeError: For a `tools` item that is not a `Tool` or a `ToolSchema`.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent import tool
        from rxagent.testing import ScriptedModel
        from rxagent.testing.strategies import scripts


        @tool
        def lookup(city: str, days: int = 1) -> str:
            \"\"\"Look up the weather.\"\"\"
            return f"Sunny in {city}"


        @settings(max_examples=10)
        @given(scripts(tools=[lookup]))
        def test_script_plays(script) -> None:
            model = ScriptedModel(script)
            assert len(model.turns) == len(script)
            assert all(b.type == "text" for b in model.turns[-1])
            calls = [b for turn in model.turns for b in turn if b.type == "tool_use"]
            assert all(c.name == "lookup" and "city" in c.input for c in calls)


        test_script_plays()
        ```
    """
    if max_tool_turns < 0 or max_parallel < 1:
        raise ValueError("scripts() needs max_tool_turns >= 0 and max_parallel >= 1")
    arguments = _arguments_by_tool(tools, tool_names)
    if not arguments:
        raise ValueError(
            "scripts() needs at least one tool to call: give tools=[...] or tool_names"
        )
    return _scripts(arguments, max_tool_turns, max_parallel, explicit_ids)
