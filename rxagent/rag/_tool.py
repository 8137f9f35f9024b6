"""The model's view of retrieval: hits as numbered sources, and `kb.as_tool()`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent.tools import tool

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.events import Hit
    from rxagent.rag._kb import KnowledgeBase
    from rxagent.tools import Tool

__all__ = ["NO_HITS", "format_hit", "format_hits", "search_tool"]

NO_HITS: Final = "No matching documents."
_DESCRIPTION: Final = (
    "Search the knowledge base for passages relevant to a question; returns numbered sources "
    "with their text. Ask in your own words; cite sources by number."
)


def format_hit(number: int, hit: Hit) -> str:
    """One numbered source: `[n] source (heading)` and the chunk's text."""
    source = hit.metadata.get("source", hit.id)
    heading = hit.metadata.get("heading")
    title = f"[{number}] {source}" + (f" ({heading})" if heading else "")
    return f"{title}\n{hit.text}"


def format_hits(hits: Sequence[Hit]) -> str:
    r"""Hits as numbered sources, separated by blank lines.

    Example:
        ```python
        from rxagent.rag import Hit, format_hits

        text = format_hits([Hit(id="a", text="Hello.", score=1.0, metadata={"source": "a.md"})])
        assert text == "[1] a.md\nHello."
        ```
    """
    return "\n\n".join(format_hit(n, hit) for n, hit in enumerate(hits, 1)) or NO_HITS


def search_tool(kb: KnowledgeBase, *, name: str, k: int, description: str | None) -> Tool[..., Any]:
    """A tool that searches `kb` for `k` chunks (see `KnowledgeBase.as_tool`)."""

    async def search_knowledge(query: str) -> str:
        """Search the knowledge base.

        Args:
            query: What to look for: a question or keywords, in your own words.
        """
        return format_hits(await kb.search(query, k=k))

    return tool(search_knowledge, name=name, description=description or _DESCRIPTION)
