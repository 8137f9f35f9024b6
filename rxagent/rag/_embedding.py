"""The embedder seam: anything that turns texts into dense vectors."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["Embedder", "text_list"]


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


def text_list(owner: str, texts: Sequence[str]) -> list[str]:
    """`texts` as a list, or a `ConfigurationError` naming `owner` when it is not a list of str.

    A single string is refused rather than embedded character by character.
    """
    if isinstance(texts, str):
        raise ConfigurationError(
            f"{owner}.embed(texts) takes a list of texts, got a single str: wrap it, embed([text])"
        )
    items = list(texts)
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise ConfigurationError(
                f"{owner}.embed(texts): texts[{i}] is a {type(text).__name__}, not a str"
            )
    return items
