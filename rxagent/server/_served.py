"""`ServedAgent`: what the server needs of what it serves, a `ReActAgent` or a team."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Container, Sequence

    from rxagent.context import Principal
    from rxagent.events import BaseEvent
    from rxagent.guards import GuardPipeline
    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions
    from rxagent.result import AgentResult
    from rxagent.state import SessionStore

__all__ = ["ServedAgent"]


class ServedAgent(Protocol):
    """An agent or a team (`rxagent.multiagent`) the server runs: both have these members."""

    name: str
    store: SessionStore
    lease_ttl_s: float

    @property
    def toolkit(self) -> Container[str]:
        """The agent's own tools (metrics label calls by their names)."""
        ...

    @property
    def guards(self) -> GuardPipeline | None:
        """The input guards, if any."""
        ...

    def events(
        self,
        msg: str | Msg | Sequence[Msg] | None = None,
        *,
        session_id: str = "default",
        options: ModelOptions | None = None,
        principal: Principal | None = None,
    ) -> AsyncIterator[BaseEvent]:
        """A run's events."""
        ...

    def interrupt(self, session_id: str = "default", msg: str | Msg | None = None) -> bool:
        """Stop the session's run at its next checkpoint."""
        ...

    def interrupt_all(self, msg: str | Msg | None = None) -> int:
        """Interrupt every run in progress."""
        ...

    def is_running(self, session_id: str = "default") -> bool:
        """Whether the session has a run in progress."""
        ...

    async def wait_idle(
        self,
        timeout: float | None = None,  # noqa: ASYNC109 - a bool, not a raise
        *,
        session_id: str | None = None,
    ) -> bool:
        """Wait until no run (of `session_id`) is in progress."""
        ...

    async def approve(
        self, approval_id: str, *, session_id: str = "default", principal: Principal | None = None
    ) -> AgentResult[Any] | None:
        """Approve a parked tool call."""
        ...

    async def reject(
        self,
        approval_id: str,
        reason: str | None = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
    ) -> AgentResult[Any] | None:
        """Reject a parked tool call."""
        ...

    async def aclose(self) -> None:
        """Close the connections it holds."""
        ...
