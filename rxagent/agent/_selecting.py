"""Tool selection in the run: the tools of each request, as the agent's `ToolSelector` chose.

The selector sees the text of the user's latest message and the tools the request could offer
(after tool groups and `Permission`), and the run keeps what it chose: only those tools, at most
`max_tools_per_request`, in the toolkit's order (so the request's tool list stays stable for the
provider's prompt cache). `manage_tool_groups`, the way to the other groups' tools, is always
kept; it counts toward the limit. `PreReasoningEvent` carries the selection; a call to any
other tool gets "Tool 'x' is not available in this step" (`Toolkit.execute(offered=...)`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxagent._validate import check_int
from rxagent.errors import ConfigurationError, UnknownRunError
from rxagent.tools import KeywordSelector, ToolSelector, latest_user_text
from rxagent.tools._groups import GROUP_TOOL_NAME

if TYPE_CHECKING:
    from rxagent.agent._run import Run
    from rxagent.models.base import ToolSchema

__all__ = ["check_tool_selection", "selected_tools"]


def check_tool_selection(
    selector: object, max_tools_per_request: int | None
) -> ToolSelector | None:
    """The agent's selector: the one given, `KeywordSelector()` for a limit alone, or None.

    Raises:
        ConfigurationError: A limit that is not an int >= 1, or a selector without `select`.
    """
    check_int("max_tools_per_request", max_tools_per_request, optional=True)
    if selector is None:
        return KeywordSelector() if max_tools_per_request is not None else None
    if not isinstance(selector, ToolSelector):
        raise ConfigurationError(
            f"tool_selector= takes a ToolSelector (an object with async select(query, tools, "
            f"limit)), such as KeywordSelector() or EmbeddingSelector(embedder); got {selector!r}"
        )
    return selector


async def selected_tools(
    run: Run, selector: ToolSelector, tools: tuple[ToolSchema, ...]
) -> tuple[ToolSchema, ...]:
    """The tools this request offers, of `tools`: the agent's selector decides.

    Raises:
        UnknownRunError: The selector raised (the run fails, as for a failing stop condition).
    """
    if not tools:
        return tools
    limit = run.agent.max_tools_per_request
    pinned = [t.name for t in tools if t.name == GROUP_TOOL_NAME]
    candidates = [t for t in tools if t.name != GROUP_TOOL_NAME]
    room = None if limit is None else limit - len(pinned)
    if not candidates or room == 0:
        return tuple(t for t in tools if t.name in pinned)
    try:
        chosen = await selector.select(latest_user_text(run.memory), candidates, room)
        names = list(dict.fromkeys(t.name for t in chosen))
    except Exception as exc:  # a user's selector (or its embedder) failed
        raise UnknownRunError(
            f"tool_selector {selector!r} raised {type(exc).__name__}: {exc}",
            source="tool_selector",
        ) from exc
    known = {t.name for t in candidates}
    keep = [name for name in names if name in known]  # never a tool the request cannot offer
    wanted = {*(keep if room is None else keep[:room]), *pinned}
    return tuple(t for t in tools if t.name in wanted)
