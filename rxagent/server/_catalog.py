"""`GET /v1/agents`: what the server serves, for a client's agent picker."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web

from rxagent.server._core import SERVER_KEY
from rxagent.server._schemas import AgentInfo, AgentList
from rxagent.server._served import leaves, served_kinds

if TYPE_CHECKING:
    from rxagent.server._served import ServedAgent

__all__ = ["describe", "list_agents"]

_DESCRIPTION_CHARS = 500


def describe(route: str, agent: ServedAgent) -> AgentInfo:
    """What `GET /v1/agents` says of one agent or team, served under `route`.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.server._catalog import describe
        from rxagent.testing import ScriptedModel

        info = describe("bot", ReActAgent("bot", "Be brief.", ScriptedModel(["hi"])))
        assert info.kind == "agent" and info.description == "Be brief."
        ```
    """
    agent_kind, team_kind = served_kinds()
    if isinstance(agent, agent_kind):
        prompt = agent.sys_prompt if isinstance(agent.sys_prompt, str) else ""
        return AgentInfo(
            name=route,
            kind="agent",
            description=prompt[:_DESCRIPTION_CHARS],
            model=agent.model.name,
            tools=agent.toolkit.names(),
            members=(),
            record_changes=agent.record_changes,
        )
    assert isinstance(agent, team_kind)
    members = tuple(m.name for m in agent.members)
    return AgentInfo(
        name=route,
        kind="team",
        description=f"{type(agent).__name__} of {', '.join(members)}",
        model=None,
        tools=(),
        members=members,
        record_changes=all(isinstance(a, agent_kind) and a.record_changes for a in leaves(agent)),
    )


async def list_agents(request: web.Request) -> web.Response:
    """`GET /v1/agents`: the served agents and teams, by route name."""
    ctx = request.app[SERVER_KEY]
    ctx.authenticate(request)
    listed = AgentList(agents=tuple(describe(n, a) for n, a in sorted(ctx.agents.items())))
    return web.json_response(text=listed.model_dump_json())
