"""Memory beyond the session's history: long-term facts and working-memory entities.

`WorkingMemory` keeps the ids, names and URLs that tool results named, with the session, and
shows them in the system prompt of every request, so they outlive context trimming.
`LongTermMemory` stores facts in a knowledge base, scoped by user or session, and recalls the
relevant ones into a `[Memory]` section before reasoning, or gives the model `remember` and
`recall` tools. Its store is an `rxagent.rag.KnowledgeBase`, or `KeywordStore` (in process, by
keywords) for tests and examples. See the memory guide in the docs.
"""

from rxagent.memory._entities import Entity as Entity
from rxagent.memory._entities import extract_entities as extract_entities
from rxagent.memory._keyword_store import KeywordHit as KeywordHit
from rxagent.memory._keyword_store import KeywordStore as KeywordStore
from rxagent.memory._long_term import MEMORY_TITLE as MEMORY_TITLE
from rxagent.memory._long_term import LongTermMemory as LongTermMemory
from rxagent.memory._long_term import MemoryMode as MemoryMode
from rxagent.memory._long_term import UserIdOf as UserIdOf
from rxagent.memory._scope import SCOPE_KEY as SCOPE_KEY
from rxagent.memory._scope import MemoryHit as MemoryHit
from rxagent.memory._scope import MemoryScope as MemoryScope
from rxagent.memory._scope import MemoryStore as MemoryStore
from rxagent.memory._scope import Scope as Scope
from rxagent.memory._working import WORKING_MEMORY_KEY as WORKING_MEMORY_KEY
from rxagent.memory._working import WORKING_MEMORY_TITLE as WORKING_MEMORY_TITLE
from rxagent.memory._working import EntityExtractor as EntityExtractor
from rxagent.memory._working import WorkingMemory as WorkingMemory

__all__ = [
    "MEMORY_TITLE",
    "SCOPE_KEY",
    "WORKING_MEMORY_KEY",
    "WORKING_MEMORY_TITLE",
    "Entity",
    "EntityExtractor",
    "KeywordHit",
    "KeywordStore",
    "LongTermMemory",
    "MemoryHit",
    "MemoryMode",
    "MemoryScope",
    "MemoryStore",
    "Scope",
    "UserIdOf",
    "WorkingMemory",
    "extract_entities",
]
