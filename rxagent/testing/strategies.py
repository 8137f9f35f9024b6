"""Hypothesis strategies for rxagent data, to property-test your own hooks, tools and formatters.

Import this module explicitly (it needs `hypothesis`, a development dependency):

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
from typing import TYPE_CHECKING, Final

from hypothesis import strategies as st

from rxagent.testing._builders import Turn, text, thinking, tool_call
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
from rxagent.testing._strategies_messages import tool_args as tool_args
from rxagent.testing._strategies_output import output_models as output_models

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.messages import Block

__all__ = [
    "DEFAULT_TOOL_NAMES",
    "HookAction",
    "HookChainSpec",
    "HookSpec",
    "blocks",
    "conversations",
    "events",
    "hook_chains",
    "hook_specs",
    "json_values",
    "messages",
    "model_options",
    "output_models",
    "scripts",
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
    tool_names: Sequence[str],
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
            name = draw(st.sampled_from(tool_names))
            call_id = f"tc_{calls}" if explicit_ids else None
            turn.append(tool_call(name, id=call_id, **draw(tool_args(name))))
        script.append(turn)
    answer = draw(words)
    endings: tuple[Turn, ...] = (answer, [text(answer)])
    script.append(draw(st.sampled_from(endings)))
    return script


def scripts(
    *,
    tool_names: Sequence[str] = DEFAULT_TOOL_NAMES,
    max_tool_turns: int = 3,
    max_parallel: int = 3,
    explicit_ids: bool = False,
) -> SearchStrategy[list[Turn]]:
    """Draw `ScriptedModel` scripts: tool-calling turns, then one text-only answer.

    Each tool turn may start with thinking and text, then calls one to `max_parallel` tools in
    parallel (see `tool_args()` for their arguments).

    Args:
        tool_names: The tools the script calls; give your agent tools with these names.
        max_tool_turns: The most tool-calling turns before the answer.
        max_parallel: The most calls in one turn.
        explicit_ids: Give calls the ids `tc_1`, `tc_2`, ...; by default the agent assigns them.

    Example:
        ```python
        from hypothesis import given, settings
        from rxagent.testing import ScriptedModel
        from rxagent.testing.strategies import scripts


        @settings(max_examples=10)
        @given(scripts())
        def test_script_plays(script) -> None:
            model = ScriptedModel(script)
            assert len(model.turns) == len(script)
            assert all(b.type == "text" for b in model.turns[-1])


        test_script_plays()
        ```
    """
    if not tool_names or max_tool_turns < 0 or max_parallel < 1:
        raise ValueError("scripts() needs tool names, max_tool_turns >= 0 and max_parallel >= 1")
    return _scripts(tuple(tool_names), max_tool_turns, max_parallel, explicit_ids)
