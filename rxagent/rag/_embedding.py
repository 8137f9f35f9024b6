"""The embedder seam: anything that turns texts into dense vectors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Embedder"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into dense vectors of one fixed size.

    `LocalEmbedder` (all-MiniLM-L6-v2, offline) and `OpenAIEmbedder` (the `/v1/embeddings`
    wire format) implement it; so can any object with these members.
    """

    @property
    def name(self) -> str:
        """A stable name of the model, stored with the vectors it made."""
        ...

    @property
    def dimensions(self) -> int | None:
        """The size of every vector, or None until the first `embed` call tells."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order."""
        ...
