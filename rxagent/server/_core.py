"""The server's shared machinery: agents, auth, run lifecycle, typed API errors.

The route modules (`_runs.py`, `_sessions.py`, `_openai.py`, `_ui.py`) use only what this
module defines: `request.app[SERVER_KEY]` is the application's `ServerContext`.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import uuid
from collections import Counter
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, TypeAlias, TypeVar

from aiohttp import web
from pydantic import BaseModel, ValidationError

from rxagent.agent._checks import check_input_history
from rxagent.agent._support import coerce_input
from rxagent.context import Principal
from rxagent.errors import (
    ApiError,
    ApprovalError,
    ErrorCode,
    InvalidInputError,
    SessionBusyError,
    SessionOwnerError,
)
from rxagent.events import ErrorEvent, GuardEvent, PreCallEvent
from rxagent.messages import Msg
from rxagent.server._auth import ANONYMOUS, KeyRing, key_of
from rxagent.server._config import ServerConfig
from rxagent.server._errors import (
    busy,
    check_json_type,
    invalid_body,
    no_approval,
    no_session,
    too_large,
)
from rxagent.server._metrics import RunObserver, ServerMetrics
from rxagent.server._public import PublicErrors
from rxagent.server._pump import Batches, Heartbeat, RunEvents
from rxagent.server._sessions_lookup import OWNER_KEY, SessionLookup
from rxagent.telemetry import remote_parent

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable, Mapping, Sequence

    from rxagent.events import AgentEvent, BaseEvent
    from rxagent.models.base import ModelOptions
    from rxagent.result import AgentResult
    from rxagent.server._schemas import ApprovalRequest
    from rxagent.server._served import ServedAgent
    from rxagent.state import AgentState

    RunInputs: TypeAlias = str | Msg | Sequence[Msg]

__all__ = [
    "OWNER_KEY",
    "SERVER_KEY",
    "Principal",
    "RunHandle",
    "ServerConfig",
    "ServerContext",
]

ModelT = TypeVar("ModelT", bound=BaseModel)

logger: Final = logging.getLogger("rxagent.server")

MAX_USER_ID: Final = 256
"""The longest user id the user header may carry."""

RUN_LIMIT_RETRY_AFTER_S: Final = "1"
"""The `Retry-After` of a 429 `too_many_runs`: runs end within seconds, so try again soon."""


@dataclass(slots=True)
class RunHandle:
    """A run started by `ServerContext.open_run`: its session and its event stream.

    Example:
        ```python
        import asyncio
        from rxagent import Msg, PreCallEvent
        from rxagent.server import RunHandle

        async def events():
            yield PreCallEvent(input=[Msg.user("hi")])

        async def main() -> None:
            handle = RunHandle("s1", events())
            assert [e.type async for e in handle.events] == ["pre_call"]

        asyncio.run(main())
        ```
    """

    session_id: str
    events: AsyncIterator[AgentEvent]
    """Every event of the run, ending with PostCall; leaving the `open_run` block early cancels it.

    Waiting on it is cancel-safe: `asyncio.wait_for(anext(handle.events), t)` may time out (to
    send a keep-alive) without touching the run."""
    agent: str = ""
    """The agent's name."""
    run_id: str = ""
    """The run's id (from its PreCall)."""
    observer: RunObserver | None = field(default=None, repr=False)
    """What counts the run's events for the metrics; it keeps the run's result."""

    @property
    def result(self) -> AgentResult[Any] | None:
        """The run's result, once its PostCall has passed (None before, or when cancelled)."""
        return None if self.observer is None else self.observer.result

    def batches(self, interval: float) -> AsyncIterator[list[AgentEvent]]:
        """Iterate the run's events in batches: what is queued now, `[]` after `interval` idle.

        A route that writes each batch in one go makes one socket write per batch instead of
        one per event, which is what a busy server needs; `[]` is the keep-alive moment.
        """
        if isinstance(self.events, RunEvents):
            return Batches(self.events, interval)
        return _one_by_one(Heartbeat(self.events, interval))


async def _one_by_one(beats: Heartbeat) -> AsyncIterator[list[AgentEvent]]:
    async for event in beats:
        yield [] if event is None else [event]


SERVER_KEY: web.AppKey[ServerContext] = web.AppKey("rxagent.server", object)  # type: ignore[arg-type]


@dataclass(slots=True)
class _Active:
    agent: ServedAgent
    session_id: str | None  # None until the session is claimed
    key_id: str


class ServerContext(SessionLookup):
    """What every route needs; one per application (`request.app[SERVER_KEY]`).

    Args:
        agents: The agents, by route name.
        config: The settings.
        keys: The accepted API keys, or None when auth is off.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.server import SERVER_KEY, create_app
        from rxagent.testing import ScriptedModel

        agent = ReActAgent("bot", "", ScriptedModel([]))
        ctx = create_app(agent)[SERVER_KEY]
        assert ctx.agent("bot") is agent and ctx.active_sessions() == []
        ```
    """

    agents: Mapping[str, ServedAgent]
    config: ServerConfig

    def __init__(
        self, agents: Mapping[str, ServedAgent], config: ServerConfig, keys: KeyRing | None
    ) -> None:
        self.agents = agents
        self.config = config
        self.keys = keys
        self.metrics = ServerMetrics()
        self.shutting_down = False
        self.interrupted_at_shutdown = 0
        """How many runs `shutdown()` interrupted."""
        self.unfinished_at_shutdown = 0
        """How many of those had not ended (saved) when `shutdown()` stopped waiting."""
        self._active: dict[int, _Active] = {}
        self._runs_by_key: Counter[str] = Counter()
        self._idle = asyncio.Event()
        self._idle.set()
        self._cleanups: set[asyncio.Future[None]] = set()

    # -- requests --------------------------------------------------------------------------------

    def authenticate(self, request: web.Request) -> Principal:
        """Check the bearer token (constant-time); ApiError 401 `unauthorized` otherwise."""
        if self.keys is None:
            return Principal(key_id=ANONYMOUS, user_id=self._user(request))
        key_id = self.keys.key_id(request)
        if key_id is None:
            given = "Authorization" in request.headers
            raise ApiError(
                401,
                "unauthorized",
                "the bearer token is not valid" if given else "send 'Authorization: Bearer <key>'",
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"' if given else "Bearer"},
            )
        return Principal(key_id=key_id, user_id=self._user(request))

    def _user(self, request: web.Request) -> str | None:
        """The end user named by the user header; ApiError 400 for a value that is no id."""
        header = self.config.user_header
        value = request.headers.get(header) if header is not None else None
        if value is None:
            return None
        user = value.strip()
        if not user or len(user) > MAX_USER_ID or not user.isprintable():
            raise ApiError(
                400,
                "invalid_user",
                f"the {header} header must be a printable user id of 1 to {MAX_USER_ID} characters",
                field=header,
            )
        return user

    async def parse_body(self, request: web.Request, model: type[ModelT]) -> ModelT:
        """Read and validate the JSON body (413 over the limit, 415 not JSON, 422 naming the field).

        An empty body is read as `{}`. Validation is strict: `"yes"` or `1` is no boolean, and
        `"3"` no number (a client that sends them has a bug worth hearing about).
        """
        check_json_type(request)
        limit = self.config.max_body_bytes
        if request.content_length is not None and request.content_length > limit:
            raise too_large(limit)
        try:
            raw = await request.read()
        except web.HTTPRequestEntityTooLarge:
            raise too_large(limit) from None
        if len(raw) > limit:
            raise too_large(limit)
        try:
            return model.model_validate_json(raw or b"{}", strict=True)
        except ValidationError as exc:
            raise invalid_body(exc) from None

    def principal_may_run(self, principal: Principal) -> None:
        """Raise ApiError 429 when the key holds `max_runs_per_key` runs, 503 when shutting down."""
        if self.shutting_down:
            raise ApiError(503, "shutting_down", "the server is shutting down; retry elsewhere")
        limit = self.config.max_runs_per_key
        if self._runs_by_key[key_of(principal)] >= limit:
            raise ApiError(
                429,
                "too_many_runs",
                f"this API key already has {limit} runs in progress; wait for one to finish",
                headers={"Retry-After": RUN_LIMIT_RETRY_AFTER_S},
            )

    # -- runs ------------------------------------------------------------------------------------

    @asynccontextmanager
    async def track(
        self, principal: Principal, agent: ServedAgent, session_id: str | None
    ) -> AsyncIterator[_Active]:
        """Count a run against the key's limit and make shutdown interrupt it, for the block.

        Raises:
            ApiError: 429 over the key's limit, 503 while shutting down.
        """
        self.principal_may_run(principal)
        key = key_of(principal)
        active = _Active(agent, session_id, key)
        token = id(active)
        self._active[token] = active
        self._runs_by_key[key] += 1
        self._idle.clear()
        active_runs = self.metrics.child(self.metrics.active, agent.name)
        active_runs.inc()
        try:
            yield active
        finally:
            del self._active[token]
            self._runs_by_key[key] -= 1
            if self._runs_by_key[key] <= 0:
                del self._runs_by_key[key]
            active_runs.dec()
            if not self._active:
                self._idle.set()

    @asynccontextmanager
    async def open_run(
        self,
        request: web.Request,
        principal: Principal,
        agent: ServedAgent,
        inputs: RunInputs | Callable[[AgentState | None], RunInputs],
        session_id: str | None,
        *,
        ephemeral: bool = False,
        options: ModelOptions | None = None,
    ) -> AsyncIterator[RunHandle]:
        """Start a run and yield its handle.

        `inputs` may be a function of the session's saved state (None for a new or throw-away
        session), called once the session is claimed: the route then needs no load of its own.

        - `session_id=None` gets a fresh id; an existing session of another key is a 404;
          a session with a run in progress (here or in another process) is a 409.
        - `ephemeral=True` runs on a throw-away session that is deleted afterwards (the
          stateless `/v1/chat/completions`).
        - `options` are merged over the agent's own `ModelOptions` for this run.
        - Per-key concurrent-run limits (429), metrics, and graceful shutdown are handled here.
        - Leaving the block before PostCall (a client that disconnected) cancels the run; no task
          outlives the block.

        Raises:
            ApiError: 404, 409, 422 (an input that is not str / Msg / list of Msg), 429, 503.
        """
        if ephemeral:
            session_id = f"ephemeral-{uuid.uuid4().hex}"
        if not callable(inputs):  # checks the input at once, before anything is written
            _check_inputs(inputs)
        async with self.track(principal, agent, session_id) as active:  # 429 before any write
            state: AgentState | None = None
            if not ephemeral:
                session_id, state = await self.claim_session(principal, agent, session_id)
                active.session_id = session_id
            assert session_id is not None
            if callable(inputs):  # the input of the claimed session, checked now
                inputs = inputs(state)
                _check_inputs(inputs)
            source = agent.events(
                inputs, session_id=session_id, options=options, principal=principal
            )
            async with self._started(request, agent, session_id, source, ephemeral) as handle:
                assert handle is not None  # a run always starts with its PreCall
                yield handle

    @asynccontextmanager
    async def open_decision(
        self,
        request: web.Request,
        principal: Principal,
        agent: ServedAgent,
        session_id: str,
        decision: ApprovalRequest,
        approval_id: str,
    ) -> AsyncIterator[RunHandle | None]:
        """Decide a parked tool call of a session; yield the handle of the run it resumes.

        The caller has found the session among the principal's (`find_session`). The handle is
        None when other approvals of the batch still wait: the decision is recorded and no run
        starts. Otherwise as `open_run`: limits, metrics, shutdown and a client that leaves.

        Raises:
            ApiError: 404 `approval_not_found`, 409, 429, 503.
        """
        source = agent.decision_events(
            approval_id,
            decision.approved,
            decision.reason,
            session_id=session_id,
            principal=principal,
        )
        async with self.track(principal, agent, session_id):
            try:
                async with self._started(request, agent, session_id, source, False) as handle:
                    yield handle
            except ApprovalError:
                raise no_approval(approval_id) from None

    @asynccontextmanager
    async def _started(
        self,
        request: web.Request,
        agent: ServedAgent,
        session_id: str,
        source: AsyncIterator[BaseEvent],
        ephemeral: bool,
    ) -> AsyncIterator[RunHandle | None]:
        """Start reading `source`; yield its handle (None when it ended without an event)."""
        observer = RunObserver(self.metrics, agent.name, agent.toolkit)
        with remote_parent(request.headers):  # the run continues the caller's trace
            events = RunEvents(source, PublicErrors(observer))
        handle: RunHandle | None = None
        try:
            try:
                first = await events.start()
            except SessionBusyError:
                raise busy(session_id) from None
            except SessionOwnerError:  # deleted and re-created under another key meanwhile
                raise no_session(session_id) from None
            if first is None:
                yield None
                return
            if self.shutting_down:  # shutdown began while the run started
                agent.interrupt(session_id, "the server is shutting down")
            handle = RunHandle(
                session_id, events, agent=agent.name, run_id=first.run_id, observer=observer
            )
            if agent.guards is not None and agent.guards.watches("input"):
                await _refuse_rate_limited(events)
            yield handle
        finally:  # shielded: a cancelled handler still leaves the session consistent
            cleanup = asyncio.ensure_future(
                self._end_run(agent, events, observer, handle, ephemeral=ephemeral)
            )
            self._cleanups.add(cleanup)
            cleanup.add_done_callback(self._cleanups.discard)
            await asyncio.shield(cleanup)

    async def _end_run(
        self,
        agent: ServedAgent,
        events: RunEvents,
        observer: RunObserver,
        handle: RunHandle | None,
        *,
        ephemeral: bool,
    ) -> None:
        """Cancel the run if it is still going, wait until it has saved, count it."""
        await events.aclose()
        if handle is None:  # the run never started
            return
        try:
            if observer.result is None:  # cancelled before its PostCall: wait for its cleanup
                await _run_ended(agent, handle.session_id)
            if ephemeral:
                await _delete_throwaway(agent, handle.session_id)
        finally:
            elapsed = time.perf_counter() - observer.started
            self.metrics.finished(agent.name, observer.result, elapsed)

    # -- shutdown --------------------------------------------------------------------------------

    def active_sessions(self) -> list[tuple[str, str]]:
        """The `(agent name, session_id)` of every run this server has in progress."""
        return [
            (a.agent.name, a.session_id) for a in self._active.values() if a.session_id is not None
        ]

    async def wait_idle(self, timeout: float | None = None) -> bool:  # noqa: ASYNC109 - a bool
        """Wait until this server has no run in progress or cleaning up; False on `timeout`."""
        try:
            async with asyncio.timeout(timeout):
                await self._idle.wait()
                while self._cleanups:
                    await asyncio.wait(set(self._cleanups))
        except TimeoutError:
            return False
        return True

    async def shutdown(self, reason: str = "the server is shutting down") -> bool:
        """Refuse new runs, interrupt every run in progress, and wait for them to save and end.

        Returns:
            False when runs were still going after `config.shutdown_timeout_s`.
        """
        self.shutting_down = True
        self.interrupted_at_shutdown = len(self._active)
        agents = {id(a): a for a in self.agents.values()}.values()
        for agent in agents:
            agent.interrupt_all(reason)
        for active in list(self._active.values()):  # runs still starting
            if active.session_id is not None:
                active.agent.interrupt(active.session_id, reason)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.config.shutdown_timeout_s
        idle = await self.wait_idle(self.config.shutdown_timeout_s)
        for agent in agents:
            idle = await agent.wait_idle(max(0.0, deadline - loop.time())) and idle
        self.unfinished_at_shutdown = len(self._active)
        return idle


def _check_inputs(inputs: RunInputs) -> None:
    """ApiError 422 for an input a run refuses: not str / Msg / list of Msg, or unpaired."""
    try:
        coerce_input(inputs)
        if not isinstance(inputs, str):  # one message is a history of one
            check_input_history([inputs] if isinstance(inputs, Msg) else inputs)
    except InvalidInputError as exc:
        raise ApiError(422, "invalid_input", str(exc), field="input") from None


async def _refuse_rate_limited(events: RunEvents) -> None:
    """Raise ApiError 429 with `Retry-After` when a rate-limit guard refused the run.

    The input guards decide right after PreCall, so the events up to the first one past the
    input's `GuardEvent`s tell; they are kept for the response otherwise. A refused run is read
    to its end (it has ended already: PreCall, GuardEvent, ErrorEvent, PostCall).
    """
    ahead = await events.read_ahead(
        lambda e: isinstance(e, PreCallEvent) or (isinstance(e, GuardEvent) and e.target == "input")
    )
    last = ahead[-1]
    if not (isinstance(last, ErrorEvent) and last.code == ErrorCode.GUARD_REJECTED):
        return
    waits = [
        e.verdict.retry_after
        for e in ahead
        if isinstance(e, GuardEvent) and e.action == "reject" and e.verdict.retry_after is not None
    ]
    if not waits:
        return
    async for _ in events:  # the rest: the PostCall
        pass
    raise ApiError(
        429,
        "rate_limited",
        last.message,
        headers={"Retry-After": str(max(1, math.ceil(waits[-1])))},
    )


async def _run_ended(agent: ServedAgent, session_id: str) -> None:
    """Wait until a cancelled run has cleaned up: state saved, lease released, tasks done."""
    # The run's cleanup task (started when the subscription was disposed) ends it after saving
    # and releasing the lease; a run started on the session since then is waited for as well.
    await agent.wait_idle(session_id=session_id)


async def _delete_throwaway(agent: ServedAgent, session_id: str) -> None:
    """Delete a stateless run's session; a failing store is logged (the answer is out by now)."""
    try:
        await agent.store.delete(agent.name, session_id)
    except Exception as exc:
        logger.warning("could not delete the throw-away session %r: %s", session_id, exc)
