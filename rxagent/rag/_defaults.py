"""The default embedder: all-MiniLM-L6-v2 when its weights are installed, else sparse only."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Final

from rxagent.rag._local import INSTALL_HINT, LocalEmbedder

if TYPE_CHECKING:
    from rxagent.rag._embedding import Embedder

__all__ = ["default_embedder"]

logger: Final = logging.getLogger("rxagent.rag")

_said: list[bool] = []


def default_embedder() -> Embedder | None:
    """`LocalEmbedder()` when its packages and weights are installed; else None, logged once.

    Example:
        ```python
        from rxagent.rag import Embedder, default_embedder

        embedder = default_embedder()
        assert embedder is None or isinstance(embedder, Embedder)
        ```
    """
    if LocalEmbedder.available():
        return LocalEmbedder()
    if not _said:
        _said.append(True)
        logger.info(
            "KnowledgeBase: sparse (BM25) search only, the MiniLM weights are not installed; "
            "for hybrid search %s",
            INSTALL_HINT,
        )
    return None
