"""The `SessionStore` protocol and the in-memory store."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from rxagent.errors import ConcurrentModificationError

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.state._control import ControlChannel
    from rxagent.state._state import AgentState

__all__ = ["InMemoryStore", "SessionStore", "StoredState"]


@dataclass(frozen=True, slots=True)
class StoredState:
    """A loaded state and its optimistic version (incremented by every save)."""

    state: AgentState
    version: int


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live, keyed by `(agent name, session_id)`.

    Implementations store `AgentState` as JSON, make each save atomic, bump an optimistic
    `version` on every save, and keep a lease per session so a session runs in one place at a
    time, even across processes.

    `persistent` says whether state outlives the process: agents checkpoint a persistent store
    after every completed step (`ReActAgent(checkpoint="auto")`).
    """

    persistent: bool
    """Whether saved state survives this process (False only for in-memory stores)."""

    async def load(self, agent: str, session_id: str) -> StoredState | None:
        """Return the session's state and version, or None when it does not exist."""
        ...

    async def save(
        self,
        agent: str,
        session_id: str,
        state: AgentState,
        *,
        expected_version: int | None = None,
    ) -> int:
        """Store `state` atomically and return the new version.

        Args:
            agent: The agent's name.
            session_id: The session.
            state: The state to store.
            expected_version: When given, the save succeeds only if the stored version equals it
                (0: the session must not exist yet).

        Raises:
            ConcurrentModificationError: When `expected_version` does not match.
        """
        ...

    async def delete(self, agent: str, session_id: str) -> bool:
        """Delete the session; return whether it existed."""
        ...

    async def list_sessions(self, agent: str) -> list[str]:
        """Return the agent's session ids."""
        ...

    async def acquire_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """Take the session's lease for `owner` unless someone else holds a live one."""
        ...

    async def renew_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """Extend `owner`'s lease; False when it was lost."""
        ...

    async def release_lease(self, agent: str, session_id: str, owner: str) -> None:
        """Give the lease up (no-op when `owner` does not hold it)."""
        ...

    async def lease_holder(self, agent: str, session_id: str) -> str | None:
        """Return the owner of the session's live lease (a run id), or None when it is free."""
        ...

    async def list_agents(self) -> list[str]:
        """Return the names of the agents that have sessions in this store."""
        ...

    def control(self) -> ControlChannel:
        """Return the channel that carries control messages between processes sharing this store.

        In-memory and SQLite stores return an in-process channel; PostgreSQL uses
        LISTEN/NOTIFY and Redis uses pub/sub.
        """
        ...

    async def aclose(self) -> None:
        """Close the store's connections (the store may not be used afterwards)."""
        ...


class InMemoryStore:
    """Sessions in a dict of this process: the default store of `ReActAgent`.

    Args:
        clock: Returns seconds for lease expiry (injectable for tests).

    Example:
        ```python
        import asyncio
        from rxagent import AgentState, InMemoryStore

        async def main() -> None:
            store = InMemoryStore()
            v1 = await store.save("bot", "s1", AgentState())
            loaded = await store.load("bot", "s1")
            assert loaded is not None and loaded.version == v1 == 1

        asyncio.run(main())
        ```
    """

    persistent = False

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._states: dict[tuple[str, str], StoredState] = {}
        self._leases: dict[tuple[str, str], tuple[str, float]] = {}
        self._clock = clock
        self._control: ControlChannel | None = None

    def __repr__(self) -> str:
        return "InMemoryStore()"

    async def load(self, agent: str, session_id: str) -> StoredState | None:
        """See `SessionStore.load`."""
        return self._states.get((agent, session_id))

    async def save(
        self,
        agent: str,
        session_id: str,
        state: AgentState,
        *,
        expected_version: int | None = None,
    ) -> int:
        """See `SessionStore.save`."""
        key = (agent, session_id)
        current = self._states.get(key)
        version = current.version if current else 0
        if expected_version is not None and expected_version != version:
            raise ConcurrentModificationError(
                f"session {session_id!r} of agent {agent!r} is at version {version}, "
                f"not {expected_version}: someone else saved it; load it again and retry"
            )
        self._states[key] = StoredState(state, version + 1)
        return version + 1

    async def delete(self, agent: str, session_id: str) -> bool:
        """See `SessionStore.delete`."""
        self._leases.pop((agent, session_id), None)
        return self._states.pop((agent, session_id), None) is not None

    async def list_sessions(self, agent: str) -> list[str]:
        """See `SessionStore.list_sessions`."""
        return sorted(s for a, s in self._states if a == agent)

    async def acquire_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.acquire_lease`."""
        key = (agent, session_id)
        now = self._clock()
        held = self._leases.get(key)
        if held is not None and held[0] != owner and held[1] > now:
            return False
        self._leases[key] = (owner, now + ttl_s)
        return True

    async def renew_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.renew_lease`."""
        key = (agent, session_id)
        held = self._leases.get(key)
        if held is None or held[0] != owner:
            return False
        self._leases[key] = (owner, self._clock() + ttl_s)
        return True

    async def release_lease(self, agent: str, session_id: str, owner: str) -> None:
        """See `SessionStore.release_lease`."""
        key = (agent, session_id)
        held = self._leases.get(key)
        if held is not None and held[0] == owner:
            del self._leases[key]

    async def lease_holder(self, agent: str, session_id: str) -> str | None:
        """See `SessionStore.lease_holder`."""
        held = self._leases.get((agent, session_id))
        if held is None or held[1] <= self._clock():
            return None
        return held[0]

    async def list_agents(self) -> list[str]:
        """See `SessionStore.list_agents`."""
        return sorted({a for a, _ in self._states})

    def control(self) -> ControlChannel:
        """See `SessionStore.control`: one in-process channel per store."""
        if self._control is None:
            from rxagent.state._control import InProcessControl

            self._control = InProcessControl()
        return self._control

    async def aclose(self) -> None:
        """See `SessionStore.aclose` (nothing to close)."""
