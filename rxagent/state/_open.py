"""`open_store(url)`: a session store from a URL, as the CLI's and the server's `--store` take."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ConfigurationError
from rxagent.state._sqlite import DEFAULT_SQLITE_PATH
from rxagent.state._store_common import redact

if TYPE_CHECKING:
    from collections.abc import Callable

    from rxagent.state._store import SessionStore

__all__ = ["STORE_SCHEMES", "open_store"]

STORE_SCHEMES: Final = ("memory", "sqlite", "postgresql", "postgres", "redis", "rediss")
"""The URL schemes `open_store` understands."""

_EXAMPLES: Final = (
    "memory://, sqlite:///relative/path.db, sqlite:////absolute/path.db, "
    "postgresql://user@host:5432/db, redis://host:6379/0"
)


def sqlite_path(url: str) -> str:
    """The file a `sqlite://` URL names (`sqlite://` alone: `./.rxagent/sessions.db`)."""
    rest = url[len("sqlite://") :].split("?", 1)[0]
    if rest in ("", "/"):
        return DEFAULT_SQLITE_PATH
    if not rest.startswith("/"):
        raise ConfigurationError(
            f"sqlite URLs have no host, got {url!r}; use sqlite:///relative/path.db or "
            "sqlite:////absolute/path.db (three slashes, then the path)"
        )
    return rest[1:]


def open_store(url: str, **kw: Any) -> SessionStore:
    """Return the session store a URL names; keyword arguments go to the store's constructor.

    | URL | store |
    |---|---|
    | `memory://` | `InMemoryStore()` |
    | `sqlite://` | `SQLiteStore("./.rxagent/sessions.db")` |
    | `sqlite:///sessions.db` | `SQLiteStore("sessions.db")` (relative to the working directory) |
    | `sqlite:////var/lib/app/sessions.db` | `SQLiteStore("/var/lib/app/sessions.db")` |
    | `postgresql://...`, `postgres://...` | `PostgresStore(url)` (extra `postgres`) |
    | `redis://...`, `rediss://...` | `RedisStore(url)` (extra `redis`) |

    Nothing connects until the store is first used.

    Raises:
        ConfigurationError: For an unknown scheme, a malformed URL, an unknown keyword, or a
            missing optional extra (the message names `pip install 'rxagent[...]'`).

    Example:
        ```python
        from rxagent.state import InMemoryStore, SQLiteStore, open_store

        assert isinstance(open_store("memory://"), InMemoryStore)
        store = open_store("sqlite:///.rxagent/sessions.db")
        assert isinstance(store, SQLiteStore) and store.path == ".rxagent/sessions.db"
        ```
    """
    if not isinstance(url, str) or "://" not in url:
        raise ConfigurationError(
            f"store URL must look like scheme://..., got {url!r}; e.g. {_EXAMPLES}"
        )
    scheme = url.split("://", 1)[0].lower()
    factory: Callable[..., SessionStore]
    args: tuple[Any, ...] = (url,)
    if scheme == "memory":
        from rxagent.state._store import InMemoryStore

        if url.lower() != "memory://":
            raise ConfigurationError(f"memory URLs take nothing after memory://, got {url!r}")
        factory, args = InMemoryStore, ()
    elif scheme == "sqlite":
        from rxagent.state._sqlite import SQLiteStore

        factory, args = SQLiteStore, (sqlite_path(url),)
    elif scheme in ("postgresql", "postgres"):
        from rxagent.state._postgres import PostgresStore

        factory = PostgresStore
    elif scheme in ("redis", "rediss"):
        from rxagent.state._redis import RedisStore

        factory = RedisStore
    else:
        raise ConfigurationError(
            f"unknown store URL scheme {scheme!r} in {redact(url)!r}; use one of "
            f"{', '.join(s + '://' for s in STORE_SCHEMES)} (e.g. {_EXAMPLES})"
        )
    try:
        return factory(*args, **kw)
    except TypeError as exc:
        raise ConfigurationError(
            f"open_store({redact(url)!r}) got keyword arguments {sorted(kw)} that "
            f"{getattr(factory, '__name__', factory)} does not take ({exc})"
        ) from exc
