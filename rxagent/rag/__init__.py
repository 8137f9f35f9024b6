"""Retrieval: a knowledge base on Qdrant, embedders, rerankers and the `Retrieve` hook."""

from rxagent.rag._embedding import Embedder as Embedder
from rxagent.rag._local import LocalEmbedder as LocalEmbedder

__all__ = ["Embedder", "LocalEmbedder"]
