"""`LongTermMemory`: facts kept across sessions in a knowledge base, scoped by user or session.

It is a hook and a source of tools, so it plugs into the agent's existing extension points:

- `mode="static"`: register it as a hook (`hooks=[memory]`). Before the first reasoning step
  of a run it searches the store with the user's latest message and adds the best facts to the
  request's system prompt as a `[Memory]` section (within `max_tokens`); later steps of the run
  reuse them. The section is in the request only, never in the session's history.
- `mode="tools"`: give the model `memory.tools()`, `remember(fact)` and `recall(query)`.
- `mode="both"`: both.

The scope comes from the run: `scope="user"` reads `RunContext.principal.user_id` (or what the
`user_id=` function returns), `scope="session"` the agent's name and the session id. A user
scope without a user id raises `MemoryScopeError`: before reasoning it fails the run
(`INVALID_REQUEST`), in a tool it is the tool's error result.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from rxagent._validate import check_int
from rxagent.context import RunContext, current_run
from rxagent.errors import ConfigurationError, MemoryScopeError
from rxagent.events import BaseEvent, PreReasoningEvent
from rxagent.guards import AGENT_GUARDS, RetrievedScreen
from rxagent.hooks import BaseHook, OnError
from rxagent.memory._scope import MemoryScope, MemoryStore, Scope
from rxagent.memory._sections import with_section
from rxagent.tokens import counter_for
from rxagent.tools import Tool, latest_user_text, tool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.guards import RetrievedGuards
    from rxagent.memory._scope import MemoryHit

__all__ = ["MEMORY_TITLE", "LongTermMemory", "MemoryMode", "UserIdOf"]

MemoryMode: TypeAlias = Literal["static", "tools", "both"]
"""How the model gets its memories: recalled before reasoning, as tools, or both."""

UserIdOf: TypeAlias = Callable[[RunContext], "str | None"]
"""Reads the user id of a run, e.g. `lambda ctx: ctx.dep(Account).user_id`."""

MEMORY_TITLE: Final = "[Memory]"
"""The first line of the section added to the system prompt."""

_INTRO: Final = "Facts remembered from earlier conversations (they may be out of date):"
_MODES: Final = ("static", "tools", "both")
_SCOPES: Final = ("user", "session")


def _principal_user(ctx: RunContext) -> str | None:
    return ctx.principal.user_id


class LongTermMemory(BaseHook):
    """Facts the agent keeps across sessions, in a `KnowledgeBase`, per user or per session.

    Args:
        kb: Where facts live: an `rxagent.rag.KnowledgeBase`, or any `MemoryStore`.
        mode: `"static"` recalls before reasoning (register it in `hooks=`), `"tools"` gives
            the model `remember` and `recall` (pass `tools=memory.tools()`), `"both"` both.
        scope: `"user"`: a user's facts, in all their sessions; `"session"`: one session's.
        k: The most facts recalled per search.
        max_tokens: The most tokens the `[Memory]` section may take (the best facts first).
        user_id: Reads a run's user id; default: `RunContext.principal.user_id`.
        min_score: Facts that match worse than this are left out (None: keep all `k`).
        on_error: `"propagate"` (default): a failing store or a missing user id fails the run;
            `"isolate"`: it is an `ErrorEvent` and the run goes on without memories.
        guards: Screen each recalled fact like a tool result, before reasoning and in
            `recall`: a rejected fact is left out, a quarantined one goes in quarantined, and
            each verdict is a `GuardEvent(target="retrieved")`. A fact the model stored may
            carry text a page or a tool result planted. `"agent"` (the default) uses the
            running agent's guards (`rxagent.guards.retrieved_stages`: its
            `InjectionDetection` stages and those that check tool results); pass stages of your
            own instead, or None for no screening.
        priority: Before `ContextWindow` (1000), so the trimmer counts the section.

    Raises:
        ConfigurationError: A bad mode, scope, number, or a `kb` without `add_texts`/`search`.

    Example:
        ```python
        import asyncio
        from rxagent import Principal, ReActAgent
        from rxagent.memory import LongTermMemory, MemoryScope
        from rxagent.rag import KnowledgeBase
        from rxagent.testing import ScriptedModel


        async def main() -> str:
            async with KnowledgeBase(":memory:", embedder=None) as kb:
                memory = LongTermMemory(kb, mode="static", scope="user")
                await memory.save("Ann drinks her tea without sugar.", MemoryScope.user("ann"))
                model = ScriptedModel(["No sugar, as usual."])
                agent = ReActAgent("barista", "You serve tea.", model, hooks=[memory])
                await agent.call("A tea with sugar?", principal=Principal(user_id="ann"))
                return model.requests[0].messages[0].text

        system = asyncio.run(main())
        assert "[Memory]" in system and "- Ann drinks her tea without sugar." in system
        ```
    """

    events: frozenset[type[BaseEvent]] | None = frozenset((PreReasoningEvent,))

    def __init__(
        self,
        kb: MemoryStore,
        *,
        mode: MemoryMode = "static",
        scope: Scope = "user",
        k: int = 5,
        max_tokens: int = 500,
        user_id: UserIdOf | None = None,
        min_score: float | None = None,
        on_error: OnError = "propagate",
        priority: int = 800,
        guards: RetrievedGuards = AGENT_GUARDS,
    ) -> None:
        if not (callable(getattr(kb, "add_texts", None)) and callable(getattr(kb, "search", None))):
            raise ConfigurationError(
                "LongTermMemory needs a store with add_texts() and search(), such as "
                f"rxagent.rag.KnowledgeBase(...); got {kb!r}"
            )
        if mode not in _MODES:
            raise ConfigurationError(
                f"LongTermMemory(mode=...) must be 'static', 'tools' or 'both', got {mode!r}"
            )
        if scope not in _SCOPES:
            raise ConfigurationError(
                f"LongTermMemory(scope=...) must be 'user' or 'session', got {scope!r}"
            )
        check_int("LongTermMemory(k=...)", k, optional=False)
        check_int("LongTermMemory(max_tokens=...)", max_tokens, optional=False)
        if user_id is not None and not callable(user_id):
            raise ConfigurationError(
                "LongTermMemory(user_id=...) takes a function of the RunContext, e.g. "
                f"user_id=lambda ctx: ctx.principal.user_id; got {user_id!r}"
            )
        self.kb = kb
        self.mode: MemoryMode = mode
        self.scope: Scope = scope
        self.k = k
        self.max_tokens = max_tokens
        self.min_score = min_score
        self.user_id: UserIdOf = user_id or _principal_user
        self.on_error = on_error
        self.priority = priority
        self.screen = RetrievedScreen(guards)
        # a run's recalled section, by its context: later steps of the run reuse it
        self._recalled: weakref.WeakKeyDictionary[RunContext, tuple[str, str]] = (
            weakref.WeakKeyDictionary()
        )

    # -- scope, storing, searching ---------------------------------------------------------------

    def scope_of(self, ctx: RunContext) -> MemoryScope:
        """The scope of a run's memories.

        Raises:
            MemoryScopeError: `scope="user"` and the run has no user id.
        """
        if self.scope == "session":
            return MemoryScope.session(ctx.agent, ctx.session_id)
        user = self.user_id(ctx)
        if not isinstance(user, str) or not user.strip():
            raise MemoryScopeError(
                "LongTermMemory(scope='user') needs the run's user id: pass "
                "principal=Principal(user_id=...) to the call, give LongTermMemory a "
                "user_id=lambda ctx: ... function, or use scope='session'",
                source=f"hook:{self.name}",
            )
        return MemoryScope.user(user)

    async def save(self, fact: str, scope: MemoryScope) -> str:
        """Store `fact` in `scope` (the same fact again replaces itself); return its id.

        Raises:
            ValueError: An empty fact.
        """
        fact = fact.strip()
        if not fact:
            raise ValueError("a memory needs some text; say what to remember")
        (stored,) = await self.kb.add_texts(
            [fact], metadatas=[scope.filter()], ids=[scope.fact_id(fact)]
        )
        return stored

    async def search(self, query: str, scope: MemoryScope) -> list[MemoryHit]:
        """The facts of `scope` that best match `query` (at most `k`; only `scope`'s, always)."""
        hits = await self.kb.search(query, k=self.k, filter=scope.filter())
        minimum = self.min_score
        return [
            hit
            for hit in hits
            if scope.holds(hit.metadata) and (minimum is None or hit.score >= minimum)
        ][: self.k]

    async def recall(self, query: str, ctx: RunContext) -> list[str]:
        """The facts of the run's scope that match `query`, screened by `guards` when given.

        Raises:
            MemoryScopeError: `scope="user"` and the run has no user id.
        """
        hits = await self.search(query, self.scope_of(ctx)) if query.strip() else []
        facts = [hit.text for hit in hits]
        screened = await self.screen.screen(facts, ctx)
        return [fact for fact in screened if fact is not None]

    # -- static recall ---------------------------------------------------------------------------

    def render(self, facts: Sequence[str], model: str | None = None) -> str:
        """The `[Memory]` section of `facts`, best first, each that still fits `max_tokens`.

        An empty string when not one fact fits (or there are none).
        """
        counter = counter_for(model)
        lines = [MEMORY_TITLE, _INTRO]
        used = counter.count_text("\n".join(lines))
        kept = 0
        for fact in facts:
            line = f"- {' '.join(fact.split())}"
            size = counter.count_text(line) + 1
            if used + size > self.max_tokens:
                continue  # a long fact does not crowd out the shorter ones after it
            lines.append(line)
            used += size
            kept += 1
        return "\n".join(lines) if kept else ""

    async def on_event(self, event: BaseEvent) -> BaseEvent | None:
        """Before reasoning (static modes): add the recalled facts to the request."""
        if self.mode == "tools" or not isinstance(event, PreReasoningEvent):
            return None
        ctx = current_run()
        query = latest_user_text(ctx.memory)
        cached = self._recalled.get(ctx)
        if cached is not None and cached[0] == query:
            section = cached[1]
        else:
            section = self.render(await self.recall(query, ctx), ctx.model.name)
            self._recalled[ctx] = (query, section)
        if not section:
            return None
        return event.replace(messages=with_section(event.messages, section))

    # -- tools -----------------------------------------------------------------------------------

    def tools(self) -> list[Tool[..., Any]]:
        """The `remember(fact)` and `recall(query)` tools, for `ReActAgent(tools=...)`.

        Raises:
            ConfigurationError: With `mode="static"`, which gives the model no tools.
        """
        if self.mode == "static":
            raise ConfigurationError(
                "LongTermMemory(mode='static') gives the model no tools; use mode='tools' or "
                "mode='both' to pass memory.tools()"
            )
        memory = self

        @tool
        async def remember(fact: str) -> str:
            """Remember a fact for later conversations (a preference, a decision, a detail).

            Args:
                fact: The fact, as one self-contained sentence.
            """
            await memory.save(fact, memory.scope_of(current_run()))
            return "Remembered."

        @tool
        async def recall(query: str) -> str:
            """Search the facts remembered from earlier conversations.

            Args:
                query: What to look for.
            """
            facts = await memory.recall(query, current_run())
            if not facts:
                return "No memories match."
            return "\n".join(f"- {fact}" for fact in facts)

        return [remember, recall]

    def __repr__(self) -> str:
        return f"LongTermMemory(mode={self.mode!r}, scope={self.scope!r}, k={self.k})"
