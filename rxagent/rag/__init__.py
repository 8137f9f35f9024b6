"""Retrieval: a knowledge base on Qdrant, embedders, rerankers and the `Retrieve` hook."""

from rxagent.rag._embedding import Embedder as Embedder
from rxagent.rag._local import LocalEmbedder as LocalEmbedder
from rxagent.rag._openai import AzureOpenAIEmbedder as AzureOpenAIEmbedder
from rxagent.rag._openai import OpenAIEmbedder as OpenAIEmbedder

__all__ = ["AzureOpenAIEmbedder", "Embedder", "LocalEmbedder", "OpenAIEmbedder"]
