"""Retrieval: a knowledge base on Qdrant, embedders, rerankers and the `Retrieve` hook.

`KnowledgeBase` keeps documents in a Qdrant collection (qdrant-client's local mode by default,
or a server) and searches them with a sparse BM25 vector and, with an embedder, a dense one
that leads the ranking. See the retrieval guide in the docs.
"""

from rxagent.errors import EmbedderMismatchError as EmbedderMismatchError
from rxagent.events import Hit as Hit
from rxagent.events import RetrievalEvent as RetrievalEvent
from rxagent.rag._chunking import DEFAULT_CHUNK_OVERLAP as DEFAULT_CHUNK_OVERLAP
from rxagent.rag._chunking import DEFAULT_CHUNK_TOKENS as DEFAULT_CHUNK_TOKENS
from rxagent.rag._chunking import Chunk as Chunk
from rxagent.rag._chunking import chunk_text as chunk_text
from rxagent.rag._defaults import default_embedder as default_embedder
from rxagent.rag._embedding import Embedder as Embedder
from rxagent.rag._filters import MetadataFilter as MetadataFilter
from rxagent.rag._filters import to_qdrant_filter as to_qdrant_filter
from rxagent.rag._kb import DEFAULT_PATH as DEFAULT_PATH
from rxagent.rag._kb import KnowledgeBase as KnowledgeBase
from rxagent.rag._kb import SearchMode as SearchMode
from rxagent.rag._loaders import SUFFIXES as SUFFIXES
from rxagent.rag._loaders import html_to_text as html_to_text
from rxagent.rag._loaders import read_document as read_document
from rxagent.rag._local import LocalEmbedder as LocalEmbedder
from rxagent.rag._openai import AzureOpenAIEmbedder as AzureOpenAIEmbedder
from rxagent.rag._openai import OpenAIEmbedder as OpenAIEmbedder
from rxagent.rag._rerank import LLMReranker as LLMReranker
from rxagent.rag._rerank import MMRReranker as MMRReranker
from rxagent.rag._rerank import Reranker as Reranker
from rxagent.rag._retrieve import CONTEXT_HEADER as CONTEXT_HEADER
from rxagent.rag._retrieve import Retrieve as Retrieve
from rxagent.rag._sparse import SparseEncoder as SparseEncoder
from rxagent.rag._sparse import SparseVector as SparseVector
from rxagent.rag._sparse import terms as terms
from rxagent.rag._tool import format_hits as format_hits

__all__ = [
    "CONTEXT_HEADER",
    "DEFAULT_CHUNK_OVERLAP",
    "DEFAULT_CHUNK_TOKENS",
    "DEFAULT_PATH",
    "SUFFIXES",
    "AzureOpenAIEmbedder",
    "Chunk",
    "Embedder",
    "EmbedderMismatchError",
    "Hit",
    "KnowledgeBase",
    "LLMReranker",
    "LocalEmbedder",
    "MMRReranker",
    "MetadataFilter",
    "OpenAIEmbedder",
    "Reranker",
    "RetrievalEvent",
    "Retrieve",
    "SearchMode",
    "SparseEncoder",
    "SparseVector",
    "chunk_text",
    "default_embedder",
    "format_hits",
    "html_to_text",
    "read_document",
    "terms",
    "to_qdrant_filter",
]
