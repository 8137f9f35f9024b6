"""Finding sessions and their owners in the agents' stores; reaching their runs."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Literal

from rxagent.errors import ApiError, ConcurrentModificationError, ControlMessageTooLargeError
from rxagent.server._auth import ANONYMOUS, key_of
from rxagent.server._errors import busy, no_session
from rxagent.state import OWNER_KEY, AgentState, ControlMessage
from rxagent.state import owner_of as recorded_owner

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rxagent.context import Principal
    from rxagent.server._served import ServedAgent
    from rxagent.state import StoredState

__all__ = ["OWNER_KEY", "SessionLookup", "owner_of"]


def owner_of(state: AgentState) -> str:
    """The `key_id` that owns a session (`"anonymous"` when none was recorded)."""
    return recorded_owner(state) or ANONYMOUS


class SessionLookup:
    """The session half of `ServerContext`: ownership, lookup, and where a run is."""

    agents: Mapping[str, ServedAgent]

    def agent(self, name: str) -> ServedAgent:
        """Return the agent called `name`; ApiError 404 `agent_not_found` otherwise."""
        found = self.agents.get(name)
        if found is None:
            raise ApiError(
                404,
                "agent_not_found",
                f"no agent named {name!r}; this server has {sorted(self.agents)}",
                field="name",
            )
        return found

    async def claim_session(
        self, principal: Principal, agent: ServedAgent, session_id: str | None
    ) -> tuple[str, AgentState | None]:
        """Return `(session_id, state)`: the caller's session, created (owned) if new.

        `state` is the session's saved state, loaded once here; None when it was just created.
        A new session (`session_id=None`) gets a random id of 128 bits and is created at once,
        without a load first: one store call instead of two.

        Raises:
            ApiError: 404 `session_not_found` when another key owns the session.
        """
        fresh = session_id is None  # an id of our own: nobody has it, so nothing to load
        if session_id is None:
            session_id = uuid.uuid4().hex
        store = agent.store
        for _ in range(3):
            stored = None if fresh else await store.load(agent.name, session_id)
            fresh = False  # should the create below find it taken after all, look it up
            if stored is not None:
                if owner_of(stored.state) != key_of(principal):
                    raise no_session(session_id)
                return session_id, stored.state
            state = AgentState(extra={OWNER_KEY: key_of(principal)})
            try:
                await store.save(agent.name, session_id, state, expected_version=0)
            except ConcurrentModificationError:
                continue  # created meanwhile: check its owner
            return session_id, None
        raise busy(session_id)

    async def find_session(
        self, principal: Principal, session_id: str, agent_name: str | None = None
    ) -> tuple[ServedAgent, StoredState]:
        """Find the caller's session among the agents' stores (`agent_name` narrows the search).

        Raises:
            ApiError: 404 when no agent has such a session of this key; 409
                `ambiguous_session` when several agents have one and `agent_name` is None.
        """
        agents = [self.agent(agent_name)] if agent_name is not None else list(self.agents.values())
        found: list[tuple[ServedAgent, StoredState]] = []
        for agent in agents:
            stored = await agent.store.load(agent.name, session_id)
            if stored is not None and owner_of(stored.state) == key_of(principal):
                found.append((agent, stored))
        if not found:
            raise no_session(session_id)
        if len(found) > 1:
            names = sorted(a.name for a, _ in found)
            raise ApiError(
                409,
                "ambiguous_session",
                f"agents {names} each have a session {session_id!r}; add ?agent=<name>",
                field="agent",
            )
        return found[0]

    async def running_where(
        self, agent: ServedAgent, session_id: str
    ) -> Literal["local", "remote"] | None:
        """Where the session's run is: in this process, in another one, or nowhere (None)."""
        if agent.is_running(session_id):
            return "local"
        if await agent.store.lease_holder(agent.name, session_id) is not None:
            return "remote"
        return None

    async def interrupt(
        self, agent: ServedAgent, session_id: str, reason: str | None
    ) -> Literal["local", "remote"] | None:
        """Interrupt the session's run wherever it runs; None when it has no run."""
        if agent.interrupt(session_id, reason):
            return "local"
        if await agent.store.lease_holder(agent.name, session_id) is None:
            return None
        message = ControlMessage(agent=agent.name, session_id=session_id, reason=reason)
        try:
            await agent.store.control().publish(message)
        except ControlMessageTooLargeError as exc:
            raise ApiError(
                422,
                "reason_too_long",
                f"the reason is too long to reach the process that runs the session: {exc}",
                field="reason",
            ) from None
        return "remote"
