"""`WorkingMemory`: entities from tool results, kept with the session, shown in the system prompt.

A hook on two events:

- `PostActingEvent`: the entities of each successful tool result (`extract(tool_name, text)`)
  go into `RunContext.extra[key]`, newest last; one seen again moves to the end, and past
  `max_entities` the least recently seen go first (LRU). `extra` is saved with the session
  (`AgentState.extra`), so the entities survive the run, a restart, and `save`/`load`.
- `PreReasoningEvent`: the entities are added to the system prompt of the request as a
  `[Working Memory]` section. Only the request changes, never the session's memory, and the
  section is not history, so trimming the context (which drops old tool results) keeps it.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from rxagent._validate import check_int
from rxagent.context import current_run
from rxagent.errors import ConfigurationError
from rxagent.events import BaseEvent, PostActingEvent, PreReasoningEvent
from rxagent.hooks import BaseHook
from rxagent.memory._entities import Entity, extract_entities
from rxagent.memory._sections import with_section

if TYPE_CHECKING:
    from collections.abc import MutableMapping

__all__ = ["WORKING_MEMORY_KEY", "WORKING_MEMORY_TITLE", "EntityExtractor", "WorkingMemory"]

WORKING_MEMORY_KEY: Final = "working_memory.entities"
"""Where the entities live in `RunContext.extra` / `AgentState.extra` (by default)."""

WORKING_MEMORY_TITLE: Final = "[Working Memory]"
"""The first line of the section added to the system prompt."""

EntityExtractor: TypeAlias = Callable[[str, str], "Iterable[Entity] | Awaitable[Iterable[Entity]]"]
"""`extract(tool_name, result_text)`: the entities of one tool result (sync or async)."""

_INTRO: Final = "Entities from earlier tool results (the most recent last):"


class WorkingMemory(BaseHook):
    """Keeps the ids, names and URLs tools returned, and shows them to the model every step.

    Args:
        extract: `extract(tool_name, result_text) -> Iterable[Entity]` (sync or async); the
            default, `extract_entities`, finds ids, names and URLs in JSON and in text.
        max_entities: The most entities kept per session (the least recently seen go first).
        key: Where they live in `RunContext.extra` (change it for two working memories).
        title: The first line of the system-prompt section.
        priority: Before `ContextWindow` (1000), so the trimmer counts the section.

    Raises:
        ConfigurationError: A bad `max_entities`, or an `extract` that is not callable.

    Example:
        ```python
        from rxagent import ReActAgent, tool
        from rxagent.memory import WorkingMemory
        from rxagent.testing import ScriptedModel, tool_call


        @tool
        def create_page(title: str) -> dict[str, str]:
            \"\"\"Create a page.

            Args:
                title: The page's title.
            \"\"\"
            return {"page_id": "p_42", "title": title}


        model = ScriptedModel([tool_call("create_page", title="About"), "Created."])
        agent = ReActAgent("cms", "You edit the site.", model, tools=[create_page],
                           hooks=[WorkingMemory()])
        agent.call_sync("Create an About page")
        system = model.requests[1].messages[0].text
        assert "[Working Memory]" in system and "page_id: p_42 (from create_page)" in system
        ```
    """  # noqa: D214 - the example tool's docstring has its own Args section

    events: frozenset[type[BaseEvent]] | None = frozenset((PostActingEvent, PreReasoningEvent))

    def __init__(
        self,
        extract: EntityExtractor | None = None,
        *,
        max_entities: int = 50,
        key: str = WORKING_MEMORY_KEY,
        title: str = WORKING_MEMORY_TITLE,
        priority: int = 900,
    ) -> None:
        check_int("WorkingMemory(max_entities=...)", max_entities, optional=False)
        if extract is not None and not callable(extract):
            raise ConfigurationError(
                "WorkingMemory(extract=...) takes a function (tool_name, result_text) -> "
                f"Iterable[Entity], got {extract!r}"
            )
        self.extract: EntityExtractor = extract if extract is not None else extract_entities
        self.max_entities = max_entities
        self.key = key
        self.title = title
        self.priority = priority

    def entities(self, extra: MutableMapping[str, Any]) -> list[Entity]:
        """The entities kept in `extra` (a run's `RunContext.extra`), the oldest first.

        Example:
            ```python
            from rxagent.memory import Entity, WorkingMemory

            memory = WorkingMemory(max_entities=2)
            extra: dict[str, object] = {}
            memory.remember(extra, [Entity("id", "1"), Entity("id", "2"), Entity("id", "1")])
            memory.remember(extra, [Entity("id", "3")])
            assert [e.value for e in memory.entities(extra)] == ["1", "3"]
            ```
        """
        stored = extra.get(self.key)
        if not isinstance(stored, list):
            return []
        return [
            Entity(str(item.get("kind", "")), item["value"], str(item.get("tool", "")))
            for item in stored
            if isinstance(item, dict) and isinstance(item.get("value"), str)
        ]

    def remember(self, extra: MutableMapping[str, Any], entities: Iterable[Entity]) -> None:
        """Add `entities` to those in `extra`: seen again moves last; the oldest go past the cap.

        `extra` gets a new list (copy-on-write: the old one may be shared with saved state).
        """
        kept = {(e.kind, e.value): e for e in self.entities(extra)}
        for entity in entities:
            if not isinstance(entity, Entity):
                raise TypeError(
                    f"WorkingMemory's extract returned {entity!r}; return rxagent.memory.Entity "
                    "objects, e.g. Entity('order_id', 'A-17')"
                )
            kept.pop((entity.kind, entity.value), None)
            kept[(entity.kind, entity.value)] = entity
        newest = list(kept.values())[-self.max_entities :]
        extra[self.key] = [{"kind": e.kind, "value": e.value, "tool": e.tool} for e in newest]

    def render(self, entities: Iterable[Entity]) -> str:
        """The system-prompt section for `entities` (empty when there are none)."""
        lines = [f"- {e.render()}" for e in entities]
        return "\n".join([self.title, _INTRO, *lines]) if lines else ""

    async def on_event(self, event: BaseEvent) -> BaseEvent | None:
        """Take entities from a tool result; add the section to a request."""
        extra = current_run().extra
        if isinstance(event, PostActingEvent):
            result = event.result
            if not result.is_error:
                found = self.extract(event.tool_call.name, result.text)
                if inspect.isawaitable(found):
                    found = await found
                self.remember(extra, found)
            return None
        if isinstance(event, PreReasoningEvent):
            section = self.render(self.entities(extra))
            if section:
                return event.replace(messages=with_section(event.messages, section))
        return None

    def __repr__(self) -> str:
        return f"WorkingMemory(max_entities={self.max_entities}, key={self.key!r})"
