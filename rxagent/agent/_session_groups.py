"""Choosing a session's active tool groups from code (the model uses `manage_tool_groups`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rxagent.errors import ConfigurationError, SessionBusyError
from rxagent.state import AgentState

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rxagent.agent._agent import ReActAgent

__all__ = ["active_session_groups", "set_session_groups"]


async def set_session_groups(
    agent: ReActAgent, groups: Iterable[str] | None, session_id: str
) -> tuple[str, ...]:
    """Store `groups` as the session's active groups; return the groups now active."""
    if isinstance(groups, str):
        raise ConfigurationError(f"groups must be a list of group names, e.g. [{groups!r}]")
    if agent.is_running(session_id) or session_id in agent._runs.tails:
        raise SessionBusyError(agent.name, session_id)
    await agent.toolkit.open()  # toolsets' tools carry groups too
    chosen = None if groups is None else tuple(dict.fromkeys(groups))
    if chosen is not None:
        known = agent.toolkit.groups()
        unknown = [name for name in chosen if name not in known]
        if unknown:
            raise ConfigurationError(
                f"unknown tool groups {unknown}; the agent's toolkit has {sorted(known)}"
            )
    stored = await agent.store.load(agent.name, session_id)
    state = stored.state if stored is not None else AgentState()
    updated = state.model_copy(update={"active_groups": chosen})
    version = stored.version if stored is not None else 0
    await agent.store.save(agent.name, session_id, updated, expected_version=version)
    return agent.toolkit.active(chosen)


async def active_session_groups(agent: ReActAgent, session_id: str) -> tuple[str, ...]:
    """The session's active groups (the toolkit's defaults for a new session)."""
    stored = await agent.store.load(agent.name, session_id)
    chosen = stored.state.active_groups if stored is not None else None
    return agent.toolkit.active(chosen)
