"""The `provider` fixture: each client conformance scenario runs once per provider."""

from __future__ import annotations

import pytest
from client_providers import PROVIDERS, Provider  # type: ignore[import-not-found]


@pytest.fixture(params=PROVIDERS, ids=lambda p: p.name)
def provider(request: pytest.FixtureRequest) -> Provider:
    """One provider's adapter (see `client_providers.Provider`)."""
    return request.param
