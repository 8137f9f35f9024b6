"""`AgentSessions`: `ReActAgent`'s methods on one session's approvals, tool groups and state."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, cast

from rxagent.agent._approval import Decision, check_approval_id, streamed_decision
from rxagent.agent._consume import bounded_events
from rxagent.agent._loop import run_observable, run_to_result
from rxagent.agent._start import RunArgs, new_result_run, new_run
from rxagent.errors import ConfigurationError, SessionBusyError
from rxagent.state import AgentState, consistent_state, migrate_state

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterable, Mapping

    from rxagent.agent._agent import ReActAgent
    from rxagent.agent._sessions import SessionRuns
    from rxagent.agent._support import Deps
    from rxagent.context import Principal
    from rxagent.events import BaseEvent
    from rxagent.models.base import ChatModel, ModelOptions
    from rxagent.output import OutputStrategy
    from rxagent.result import AgentResult
    from rxagent.state import SessionStore

__all__ = ["AgentSessions"]


class AgentSessions:
    """The session methods of `ReActAgent` (its base class; see `ReActAgent`)."""

    name: str
    store: SessionStore
    _runs: SessionRuns

    # -- approvals -------------------------------------------------------------------------------

    async def approve(
        self,
        approval_id: str,
        *,
        session_id: str = "default",
        model: ChatModel | str | None = None,
        options: ModelOptions | None = None,
        deps: Deps = None,
        output_type: object | None = None,
        output_strategy: OutputStrategy | None = None,
        queue: bool = False,
        principal: Principal | None = None,
    ) -> AgentResult[Any] | None:
        """Approve a tool call the session is parked on (`result.pending_approvals`).

        The approved arguments are the ones executed. Until the last approval of the batch is
        decided this records the decision and returns None; the last decision resumes the run:
        approved calls run (once: a call that already ran never runs again), rejected ones get
        an error result the model sees, and the run goes on to its end. The other keywords are
        those of `call()`, for the resumed run (tools that need `deps` need them here too).

        Returns:
            The resumed run's result, or None while other approvals of the batch wait.

        Raises:
            ApprovalError: The id is unknown in this session, or was already decided.
            SessionBusyError: The session has a run in progress (and `queue` is False).

        Example:
            ```python
            import asyncio
            from rxagent import ReActAgent, tool
            from rxagent.testing import ScriptedModel, tool_call

            deleted: list[str] = []


            @tool(needs_approval=True)
            def delete_file(path: str) -> str:
                \"\"\"Delete a file.\"\"\"
                deleted.append(path)
                return f"deleted {path}"


            async def main() -> None:
                model = ScriptedModel([tool_call("delete_file", path="a.txt"), "Done."])
                agent = ReActAgent("ops", "", model, tools=[delete_file])
                parked = await agent.call("delete a.txt")
                assert parked.stop_reason == "approval_pending" and deleted == []
                (approval_id,) = parked.pending_approvals
                result = await agent.approve(approval_id)
                assert result is not None and result.text == "Done."
                assert deleted == ["a.txt"]

            asyncio.run(main())
            ```
        """
        decision = Decision(check_approval_id(approval_id), approved=True)
        args = RunArgs(
            None,
            session_id,
            model,
            options,
            deps,
            output_type,
            output_strategy,
            queue,
            principal=principal,
        )
        return await self._run_decision(args, decision)

    async def reject(
        self,
        approval_id: str,
        reason: str | None = None,
        *,
        session_id: str = "default",
        model: ChatModel | str | None = None,
        options: ModelOptions | None = None,
        deps: Deps = None,
        output_type: object | None = None,
        output_strategy: OutputStrategy | None = None,
        queue: bool = False,
        principal: Principal | None = None,
    ) -> AgentResult[Any] | None:
        """Reject a tool call the session is parked on; `reason` is what the model is told.

        As `approve()`: None until the batch's last decision, then the resumed run's result.
        The rejected call never runs; its error result (`"The tool call was rejected: ..."`)
        goes to memory, so the model sees it.

        Raises:
            ApprovalError: The id is unknown in this session, or was already decided.
            SessionBusyError: The session has a run in progress (and `queue` is False).

        Example:
            ```python
            import asyncio
            from rxagent import ReActAgent, tool
            from rxagent.testing import ScriptedModel, tool_call


            @tool(needs_approval=lambda args: args["amount"] > 100)
            def pay(amount: int) -> str:
                \"\"\"Pay an amount.\"\"\"
                return f"paid {amount}"


            async def main() -> None:
                model = ScriptedModel([tool_call("pay", amount=500), "I did not pay."])
                agent = ReActAgent("shop", "", model, tools=[pay])
                parked = await agent.call("pay 500")
                result = await agent.reject(parked.pending_approvals[0], "too much")
                assert result is not None and result.text == "I did not pay."
                seen = model.requests[-1].messages[-1].tool_results[0]
                assert seen.is_error and seen.text == "The tool call was rejected: too much"

            asyncio.run(main())
            ```
        """
        decision = Decision(check_approval_id(approval_id), approved=False, reason=reason)
        args = RunArgs(
            None,
            session_id,
            model,
            options,
            deps,
            output_type,
            output_strategy,
            queue,
            principal=principal,
        )
        return await self._run_decision(args, decision)

    def decision_events(
        self,
        approval_id: str,
        approved: bool,
        reason: str | None = None,
        *,
        session_id: str = "default",
        principal: Principal | None = None,
        buffer: int = 256,
    ) -> AsyncIterator[BaseEvent]:
        """Decide a parked tool call and iterate the events of the run it resumes.

        `approve()` / `reject()` as a stream, read like `events()`: when this decision completes
        the batch, the resumed run's events, from its PreCall to its PostCall; while other
        approvals of the batch wait, the decision is recorded and nothing comes out. A slow
        consumer slows the run; leaving the loop early cancels it.

        Raises:
            ApprovalError: When iteration starts, for an id unknown in this session or already
                decided.
            SessionBusyError: When iteration starts, while the session has a run in progress.

        Example:
            ```python
            import asyncio
            from rxagent import ReActAgent, tool
            from rxagent.testing import ScriptedModel, tool_call


            @tool(needs_approval=True)
            def deploy(version: str) -> str:
                \"\"\"Deploy a version.\"\"\"
                return f"deployed {version}"


            async def main() -> list[str]:
                model = ScriptedModel([tool_call("deploy", version="1.2"), "Deployed."])
                agent = ReActAgent("ops", "", model, tools=[deploy])
                parked = await agent.call("deploy 1.2")
                (approval_id,) = parked.pending_approvals
                return [e.type async for e in agent.decision_events(approval_id, True)]

            kinds = asyncio.run(main())
            assert kinds[0] == "pre_call" and "post_acting" in kinds and kinds[-1] == "post_call"
            ```
        """
        decision = streamed_decision(approval_id, approved, reason, buffer)
        args = RunArgs(
            None, session_id, None, None, None, None, None, False, decision=decision,
            principal=principal,
        )  # fmt: skip
        agent = cast("ReActAgent", self)
        return bounded_events(
            lambda gate: run_observable(lambda: new_run(agent, args, gate)), buffer
        )

    async def _run_decision(self, args: RunArgs, decision: Decision) -> AgentResult[Any] | None:
        if decision.reason is not None and not isinstance(decision.reason, str):
            raise ConfigurationError(
                f"reject(reason=...) takes a str or None, got {decision.reason!r}"
            )
        args = dataclasses.replace(args, decision=decision)
        agent = cast("ReActAgent", self)
        return await run_to_result(lambda: new_result_run(agent, args))

    async def set_active_groups(
        self, groups: Iterable[str] | None, *, session_id: str = "default"
    ) -> tuple[str, ...]:
        """Make exactly `groups` the session's active tool groups (None: the toolkit's defaults).

        The choice is saved in the session's state, so it lasts across runs and processes, as
        the model's own switches through `manage_tool_groups` do.

        Returns:
            The groups now active.

        Raises:
            ConfigurationError: For a group the toolkit does not know.
            SessionBusyError: While the session has a run in progress.

        Example:
            ```python
            import asyncio
            from rxagent import ReActAgent, tool
            from rxagent.testing import ScriptedModel


            @tool(group="git")
            def git_status() -> str:
                \"\"\"Show the working tree status.\"\"\"
                return "clean"


            async def main() -> None:
                agent = ReActAgent("dev", "", ScriptedModel(["ok"]), tools=[git_status])
                assert await agent.active_groups() == ("git",)
                assert await agent.set_active_groups([]) == ()
                await agent.call("hi")
                assert agent.model.requests[0].tools == ()  # git is off for this session


            asyncio.run(main())
            ```
        """
        agent = cast("ReActAgent", self)
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
        stored = await self.store.load(self.name, session_id)
        state = stored.state if stored is not None else AgentState()
        updated = state.model_copy(update={"active_groups": chosen})
        version = stored.version if stored is not None else 0
        await self.store.save(self.name, session_id, updated, expected_version=version)
        return agent.toolkit.active(chosen)

    async def active_groups(self, session_id: str = "default") -> tuple[str, ...]:
        """Return the session's active tool groups (the toolkit's defaults for a new session)."""
        stored = await self.store.load(self.name, session_id)
        chosen = stored.state.active_groups if stored is not None else None
        return cast("ReActAgent", self).toolkit.active(chosen)

    # -- state -----------------------------------------------------------------------------------

    async def state_dict(self, session_id: str = "default") -> dict[str, Any]:
        """Return the session's state as JSON-ready data (an empty state for a new session).

        Example:
            ```python
            import asyncio
            from rxagent import ReActAgent
            from rxagent.testing import ScriptedModel

            async def main() -> None:
                a = ReActAgent("a", "", ScriptedModel(["one", "two"]))
                await a.call("first")
                saved = await a.state_dict()
                b = ReActAgent("a", "", ScriptedModel(["two"]))
                await b.load_state_dict(saved)
                assert (await b.call("second")).text == "two"
                assert len((await b.state_dict())["memory"]) == 4

            asyncio.run(main())
            ```
        """
        stored = await self.store.load(self.name, session_id)
        state = stored.state if stored is not None else AgentState()
        return state.model_dump(mode="json")

    async def load_state_dict(
        self, state: Mapping[str, Any] | AgentState, session_id: str = "default"
    ) -> None:
        """Replace the session's state with `state` (older schema versions are migrated).

        Raises:
            StateVersionError: When the state comes from a newer rxagent.
            SessionBusyError: When the session has a run in progress.
        """
        if session_id in self._runs.tails:
            raise SessionBusyError(self.name, session_id)
        data = state if isinstance(state, AgentState) else dict(state)
        await self.store.save(self.name, session_id, consistent_state(migrate_state(data)))
