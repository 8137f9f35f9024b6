"""Test configuration: hypothesis profiles and a guard against real network access."""

from __future__ import annotations

import ipaddress
import os
import socket
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from service_helpers import require_minilm  # type: ignore[import-not-found]

settings.register_profile(
    "dev", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "ci",
    max_examples=60,
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "nightly", max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") == "true" else "dev")
)

_real_connect = socket.socket.connect


def _is_local(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    if not _is_local(address):
        raise RuntimeError(f"tests may not reach the network: connect({address!r}) refused")
    return _real_connect(self, address)


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


# -- local services ------------------------------------------------------------------------------
# Tests that need PostgreSQL, Redis or Node use the real local servers. Where one is absent they
# skip with the reason, except under CI=true, where a missing service is a failure.

POSTGRES_DSN = os.environ.get("RXAGENT_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
REDIS_URL = os.environ.get("RXAGENT_TEST_REDIS", "redis://127.0.0.1:6379/15")


def _reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Skip (or, under CI=true, fail) unless `host:port` accepts connections."""
    if _reachable(host, port):
        return
    reason = f"{name} is not reachable at {host}:{port}; start it to run this test"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true needs {name}: {reason}")
    pytest.skip(reason)


@pytest.fixture
def minilm() -> None:
    """For tests that run LocalEmbedder: skip (fail under CI=true) without its weights."""
    require_minilm()


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """The DSN of the local PostgreSQL test database (db `test`, trust auth)."""
    require_service("PostgreSQL", "127.0.0.1", 5432)
    return POSTGRES_DSN


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The URL of the local Redis server (database 15, kept for tests)."""
    require_service("Redis", "127.0.0.1", 6379)
    return REDIS_URL
