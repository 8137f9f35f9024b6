"""`ServerConfig`: the limits and settings of a server."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from rxagent._validate import check_int
from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["ServerConfig"]

_TOKEN: Final = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
"""An HTTP header name (RFC 9110 token)."""


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """Settings of `create_app` (all have production-minded defaults).

    Example:
        ```python
        from rxagent.server import ServerConfig

        config = ServerConfig(max_body_bytes=64_000, cors_origins=["https://app.example"])
        assert config.max_runs_per_key == 16 and config.keepalive_s == 15.0
        ```
    """

    max_body_bytes: int = 1 << 20
    """Largest request body accepted (413 above)."""
    max_runs_per_key: int = 16
    """Concurrent runs one API key may hold (429 above)."""
    keepalive_s: float = 15.0
    """Seconds between SSE keep-alive comments (a client that left is noticed by then)."""
    cors_origins: Sequence[str] = ()
    """Origins allowed by CORS; empty (the default) turns CORS off."""
    shutdown_timeout_s: float = 10.0
    """Seconds graceful shutdown waits for interrupted runs to save and finish."""
    idle_timeout_s: float = 75.0
    """Seconds `serve` / `run_server` keep a connection that is idle: no request sent on it (a
    new connection, or one kept alive between requests), or an answer whose client stopped
    reading (its writes wait that long without progress). The server then closes it; a run it
    was streaming is cancelled, its state saved and its session freed."""
    lease_ttl_s: float | None = 5.0
    """The session-lease TTL of every agent served (None: each agent's own `lease_ttl_s`).

    A run renews its lease every third of it, so a session whose server process died (kill -9,
    a lost machine) is free again, for a run on another or a restarted server, within it."""
    public_metrics: bool = False
    """Serve `/metrics` without a bearer token even when auth is on."""
    user_header: str | None = "X-RxAgent-User"
    """The request header that names the end user (`Principal.user_id` of the run), or None to
    ignore it. The server does not authenticate users: the value is the assertion of whoever
    holds the API key, as when an application that signs its users in calls with one key."""

    playground: bool = True
    """Serve the playground page at `/playground`, and make every served agent record what its
    hooks change (`record_changes`), which the page shows as diffs. False serves no page and
    leaves the agents' settings alone."""

    def __post_init__(self) -> None:
        check_int("max_body_bytes", self.max_body_bytes, optional=False)
        check_int("max_runs_per_key", self.max_runs_per_key, optional=False)
        for name in ("keepalive_s", "lease_ttl_s", "idle_timeout_s"):
            value = getattr(self, name)
            if not (value is None and name == "lease_ttl_s") and not (
                isinstance(value, int | float) and value > 0
            ):
                raise ConfigurationError(f"ServerConfig.{name} must be a number > 0, got {value!r}")
        if not (isinstance(self.shutdown_timeout_s, int | float) and self.shutdown_timeout_s >= 0):
            raise ConfigurationError(
                f"ServerConfig.shutdown_timeout_s must be >= 0, got {self.shutdown_timeout_s!r}"
            )
        header = self.user_header
        if header is not None and (not isinstance(header, str) or not _TOKEN.fullmatch(header)):
            raise ConfigurationError(
                f"ServerConfig.user_header must be an HTTP header name or None, got {header!r}"
            )
        if not isinstance(self.playground, bool):
            raise ConfigurationError(
                f"ServerConfig.playground must be True or False, got {self.playground!r}"
            )
        origins = self.cors_origins
        if isinstance(origins, str) or not all(isinstance(o, str) for o in origins):
            raise ConfigurationError(
                "ServerConfig.cors_origins takes a list of origins, e.g. ['https://app.example']"
            )
