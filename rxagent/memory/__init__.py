"""Memory beyond the session's history: long-term facts and working-memory entities.

`WorkingMemory` keeps the ids, names and URLs that tool results named, with the session, and
shows them in the system prompt of every request, so they outlive context trimming.
`LongTermMemory` stores facts in a knowledge base, scoped by user or session, and recalls the
relevant ones into a `[Memory]` section before reasoning, or gives the model `remember` and
`recall` tools. See the memory guide in the docs.
"""

from rxagent.memory._entities import Entity as Entity
from rxagent.memory._entities import extract_entities as extract_entities
from rxagent.memory._working import WORKING_MEMORY_KEY as WORKING_MEMORY_KEY
from rxagent.memory._working import WORKING_MEMORY_TITLE as WORKING_MEMORY_TITLE
from rxagent.memory._working import EntityExtractor as EntityExtractor
from rxagent.memory._working import WorkingMemory as WorkingMemory

__all__ = [
    "WORKING_MEMORY_KEY",
    "WORKING_MEMORY_TITLE",
    "Entity",
    "EntityExtractor",
    "WorkingMemory",
    "extract_entities",
]
