"""Fixtures for the knowledge-base tests."""

from __future__ import annotations

import pytest
from rag_fakes import HashEmbedder  # type: ignore[import-not-found]


@pytest.fixture
def embedder() -> HashEmbedder:
    return HashEmbedder()
