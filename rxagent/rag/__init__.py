"""Retrieval: a knowledge base on Qdrant, embedders, rerankers and the `Retrieve` hook."""

from rxagent.rag._embedding import Embedder as Embedder

__all__ = ["Embedder"]
