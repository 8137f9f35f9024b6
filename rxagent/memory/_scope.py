"""Whose memories: `MemoryScope`, and the store long-term memory keeps them in.

Every fact is stored with its scope as metadata (`memory_scope`, `memory_owner`), and every
search passes the same two keys as a filter; hits whose metadata does not match are dropped
too, so a store that ignored the filter still could not leak one scope's facts into another.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeAlias, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["SCOPE_KEY", "MemoryHit", "MemoryScope", "MemoryStore", "Scope"]

Scope: TypeAlias = Literal["user", "session"]
"""Whose memories: one user's, across their sessions, or one session's."""

SCOPE_KEY: Final = "memory_scope"
"""The metadata key of a fact's scope kind (`"user"` or `"session"`)."""
_OWNER_KEY: Final = "memory_owner"
_NAMESPACE: Final = uuid.UUID("6f0f3c1e-2b8a-4f43-9a57-8f1d2b3c4d5e")


@runtime_checkable
class MemoryHit(Protocol):
    """One search result: `rxagent.rag.Hit` is one."""

    @property
    def id(self) -> str:
        """The stored text's id."""
        ...

    @property
    def text(self) -> str:
        """The stored text."""
        ...

    @property
    def score(self) -> float:
        """How well it matched (higher is better)."""
        ...

    @property
    def metadata(self) -> Mapping[str, Any]:
        """The metadata stored with it."""
        ...


@runtime_checkable
class MemoryStore(Protocol):
    """Where long-term memory keeps facts: `rxagent.rag.KnowledgeBase` is one.

    `search` must apply `filter` as equality on metadata keys.
    """

    async def add_texts(
        self,
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]] | None = None,
        ids: Sequence[str] | None = None,
    ) -> list[str]:
        """Store `texts` (an id given again replaces its text); return their ids."""
        ...

    async def search(
        self, query: str, k: int = 5, filter: Mapping[str, Any] | None = None
    ) -> Sequence[MemoryHit]:
        """The `k` best matches of `query` whose metadata has the `filter`'s values."""
        ...


@dataclass(frozen=True, slots=True)
class MemoryScope:
    """The owner of some memories: one user, or one session of one agent.

    Example:
        ```python
        from rxagent.memory import MemoryScope

        ann = MemoryScope.user("ann")
        assert ann.filter() == {"memory_scope": "user", "memory_owner": "ann"}
        assert ann.fact_id("Likes tea") == ann.fact_id("likes  tea ")  # one fact, one id
        assert ann.fact_id("Likes tea") != MemoryScope.user("bob").fact_id("Likes tea")
        assert MemoryScope.session("helper", "s1").owner == '["helper", "s1"]'
        ```
    """

    kind: Scope
    """`"user"` or `"session"`."""
    owner: str
    """The user id, or the agent and session id (as a JSON pair)."""

    @classmethod
    def user(cls, user_id: str) -> MemoryScope:
        """The memories of one user, shared by every session and agent."""
        return cls("user", user_id)

    @classmethod
    def session(cls, agent: str, session_id: str) -> MemoryScope:
        """The memories of one session of one agent."""
        return cls("session", json.dumps([agent, session_id]))

    def filter(self) -> dict[str, str]:
        """The metadata every fact of this scope has, and every search of it asks for."""
        return {SCOPE_KEY: self.kind, _OWNER_KEY: self.owner}

    def holds(self, metadata: Mapping[str, Any]) -> bool:
        """True when `metadata` is this scope's."""
        return metadata.get(SCOPE_KEY) == self.kind and metadata.get(_OWNER_KEY) == self.owner

    def fact_id(self, fact: str) -> str:
        """A stable id of `fact` in this scope (a UUID): the same fact is stored once."""
        normal = " ".join(fact.lower().split())
        return str(uuid.uuid5(_NAMESPACE, json.dumps([self.kind, self.owner, normal])))
