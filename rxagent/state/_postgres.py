"""`PostgresStore`: sessions in PostgreSQL (asyncpg), shared by processes and machines."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Final

from rxagent.errors import ConfigurationError
from rxagent.state._shield import complete_despite_cancel
from rxagent.state._store import StoredState
from rxagent.state._store_common import (
    CONNECT_TIMEOUT_S,
    ConnectedStore,
    check_agent,
    check_expected,
    check_key,
    check_layout,
    check_owner,
    check_state,
    check_table_prefix,
    check_ttl,
    conflict,
    decode_state,
    encode_state,
    import_extra,
    redact,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    from rxagent.state._control import ControlChannel
    from rxagent.state._state import AgentState

__all__ = ["PostgresStore"]

MIGRATIONS: list[Sequence[str]] = [
    (  # layout 0 -> 1: sessions and leases
        "CREATE TABLE {p}sessions ("
        " agent text NOT NULL, session_id text NOT NULL, version bigint NOT NULL,"
        " state json NOT NULL, updated_at timestamptz NOT NULL DEFAULT now(),"
        " PRIMARY KEY (agent, session_id))",
        "CREATE TABLE {p}leases ("
        " agent text NOT NULL, session_id text NOT NULL, owner text NOT NULL,"
        " expires_at timestamptz NOT NULL, PRIMARY KEY (agent, session_id))",
    ),
]
"""The storage layout's migrations, in order: entry `n` upgrades layout `n` to `n + 1`.

Statements are templates: `{p}` is the store's `table_prefix`. Each migration runs with the layout
bump in one transaction, under an advisory lock so concurrent processes migrate once. The layout
is recorded in the `<table_prefix>meta` table under the key `layout`.
"""

_SAVE_ANY: Final = (
    "INSERT INTO {p}sessions AS s (agent, session_id, version, state) VALUES ($1, $2, 1, $3)"
    " ON CONFLICT (agent, session_id) DO UPDATE SET"
    " version = s.version + 1, state = EXCLUDED.state, updated_at = now() RETURNING version"
)
_SAVE_NEW: Final = (
    "INSERT INTO {p}sessions (agent, session_id, version, state) VALUES ($1, $2, 1, $3)"
    " ON CONFLICT (agent, session_id) DO NOTHING RETURNING version"
)
_SAVE_AT: Final = (
    "UPDATE {p}sessions SET version = version + 1, state = $3, updated_at = now()"
    " WHERE agent = $1 AND session_id = $2 AND version = $4 RETURNING version"
)
_DELETE: Final = (
    "WITH lease AS (DELETE FROM {p}leases WHERE agent = $1 AND session_id = $2)"
    " DELETE FROM {p}sessions WHERE agent = $1 AND session_id = $2 RETURNING version"
)
_ACQUIRE: Final = (
    "INSERT INTO {p}leases AS l (agent, session_id, owner, expires_at)"
    " VALUES ($1, $2, $3, now() + make_interval(secs => $4))"
    " ON CONFLICT (agent, session_id) DO UPDATE SET"
    " owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at"
    " WHERE l.owner = EXCLUDED.owner OR l.expires_at <= now() RETURNING owner"
)
_RENEW: Final = (
    "UPDATE {p}leases SET expires_at = now() + make_interval(secs => $4)"
    " WHERE agent = $1 AND session_id = $2 AND owner = $3 RETURNING owner"
)


class PostgresStore(ConnectedStore):
    """Sessions in PostgreSQL: for several processes or machines serving the same agents.

    A connection pool (asyncpg) is created on first use. Every operation is one statement, so
    each is atomic and a save is one round trip. Leases expire by the database's clock (`now()`),
    so the machines' clocks need not agree. The tables (`<table_prefix>sessions`, `...leases`,
    `...meta`) are created on first use and upgraded in a transaction when the layout changes.
    A server that cannot be reached (down, restarting, out of connections) raises
    `StoreUnavailableError`; the pool reconnects by itself once it is back.

    Needs the `postgres` extra: `pip install 'rxagent[postgres]'`.

    Args:
        dsn: A libpq URL, e.g. `postgresql://user:password@host:5432/db`.
        table_prefix: Starts the name of each table (lowercase letters, digits, `_`).
        min_size: The pool's idle connections.
        max_size: The pool's most connections.
        connect_kwargs: Passed to `asyncpg.create_pool` (e.g. `ssl`, `statement_cache_size=0`
            behind PgBouncer in transaction mode); `timeout`, the seconds a connection attempt
            may take, defaults to 10.

    Example:
        ```python
        from rxagent.state import PostgresStore, SessionStore

        store = PostgresStore("postgresql://app@db.internal/agents", table_prefix="chat_")
        assert isinstance(store, SessionStore) and store.persistent
        assert store.table_prefix == "chat_"  # no connection until first use
        ```
    """

    def __init__(
        self,
        dsn: str,
        *,
        table_prefix: str = "rxagent_",
        min_size: int = 1,
        max_size: int = 10,
        **connect_kwargs: Any,
    ) -> None:
        if not isinstance(dsn, str) or not dsn.startswith(("postgresql://", "postgres://")):
            raise ConfigurationError(
                f"PostgresStore dsn must be a postgresql:// URL, got {dsn!r}; "
                "e.g. postgresql://user@127.0.0.1:5432/db"
            )
        pg: ModuleType = import_extra("asyncpg", "postgres", "PostgresStore")
        self._asyncpg = pg
        self._dsn = dsn
        self._prefix = check_table_prefix(table_prefix)
        super().__init__(unreachable_errors(pg))
        self._pool_kwargs: dict[str, Any] = {
            "min_size": min_size,
            "max_size": max_size,
            "timeout": CONNECT_TIMEOUT_S,
            **connect_kwargs,
        }
        self._sql = {name: sql.format(p=self._prefix) for name, sql in _STATEMENTS.items()}

    @property
    def table_prefix(self) -> str:
        """Starts the name of each table."""
        return self._prefix

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self._dsn)!r}, table_prefix={self._prefix!r})"

    # -- connection ---------------------------------------------------------------------------

    async def _open_client(self) -> Any:
        pg = self._asyncpg
        try:
            pool = await pg.create_pool(self._dsn, **self._pool_kwargs)
        except (
            ValueError,
            TypeError,
            pg.InvalidCatalogNameError,
            pg.InvalidAuthorizationSpecificationError,
        ) as exc:
            raise ConfigurationError(
                f"cannot connect {self!r}: {type(exc).__name__}: {exc}; check the DSN "
                "(user, password, database) and the store's keyword arguments"
            ) from exc
        try:
            await self._migrate(pool)
        except BaseException:
            await pool.close()
            raise
        return pool

    async def _close_client(self, client: Any) -> None:
        await client.close()

    def _new_control(self) -> ControlChannel:
        """LISTEN/NOTIFY on the channel `<table_prefix>control`."""
        from rxagent.state._control_pg import PostgresControl

        return PostgresControl(self._dsn, channel=f"{self._prefix}control")

    async def _migrate(self, pool: Any) -> None:
        """Create or upgrade the tables to the layout of this code, in one transaction."""
        pg, p, target = self._asyncpg, self._prefix, len(MIGRATIONS)
        where = repr(self)
        async with pool.acquire() as conn:
            try:
                found = int(
                    await conn.fetchval(f"SELECT value FROM {p}meta WHERE key = 'layout'") or 0
                )
            except pg.UndefinedTableError:
                found = 0
            check_layout(found, target, where)
            if found == target:
                return
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock($1)", _lock_key(p))
                await conn.execute(
                    f"CREATE TABLE IF NOT EXISTS {p}meta"
                    " (key text PRIMARY KEY, value text NOT NULL)"
                )
                value = await conn.fetchval(f"SELECT value FROM {p}meta WHERE key = 'layout'")
                found = int(value or 0)  # another process may have migrated meanwhile
                check_layout(found, target, where)
                for statements in MIGRATIONS[found:]:
                    for statement in statements:
                        await conn.execute(statement.format(p=p))
                await conn.execute(
                    f"INSERT INTO {p}meta (key, value) VALUES ('layout', $1)"
                    " ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    str(target),
                )

    # -- statements ---------------------------------------------------------------------------

    async def _value(self, name: str, *args: object) -> Any:
        """The first column of the first row of statement `name` (None without a row)."""
        return await self._run(lambda pool: pool.fetchval(self._sql[name], *args))

    async def _rows(self, name: str, *args: object) -> list[Any]:
        """The rows of statement `name`."""
        rows: list[Any] = await self._run(lambda pool: pool.fetch(self._sql[name], *args))
        return rows

    # -- state --------------------------------------------------------------------------------

    async def load(self, agent: str, session_id: str) -> StoredState | None:
        """See `SessionStore.load`."""
        check_key(agent, session_id)
        rows = await self._rows("load", agent, session_id)
        if not rows:
            return None
        return StoredState(decode_state(rows[0][0], agent, session_id), int(rows[0][1]))

    async def save(
        self,
        agent: str,
        session_id: str,
        state: AgentState,
        *,
        expected_version: int | None = None,
    ) -> int:
        """See `SessionStore.save`: one statement, one round trip, seen through if cancelled."""
        check_key(agent, session_id)
        expected = check_expected(expected_version)
        text = encode_state(check_state(state))
        return await complete_despite_cancel(self._save(agent, session_id, text, expected))

    async def _save(self, agent: str, session_id: str, text: str, expected: int | None) -> int:
        if expected is None:
            version = await self._value("save_any", agent, session_id, text)
        elif expected == 0:
            version = await self._value("save_new", agent, session_id, text)
        else:
            version = await self._value("save_at", agent, session_id, text, expected)
        if version is not None:
            return int(version)
        stored = await self._value("version", agent, session_id)
        raise conflict(agent, session_id, int(stored or 0), expected or 0)

    async def delete(self, agent: str, session_id: str) -> bool:
        """See `SessionStore.delete`: the state and the lease go in one statement."""
        check_key(agent, session_id)
        return await self._value("delete", agent, session_id) is not None

    async def list_sessions(self, agent: str) -> list[str]:
        """See `SessionStore.list_sessions`."""
        check_agent(agent)
        return sorted(row[0] for row in await self._rows("sessions", agent))

    async def list_agents(self) -> list[str]:
        """See `SessionStore.list_agents`."""
        return sorted(row[0] for row in await self._rows("agents"))

    # -- leases -------------------------------------------------------------------------------

    async def acquire_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.acquire_lease`: one atomic upsert, timed by the database clock."""
        check_key(agent, session_id)
        check_owner(owner)
        ttl = check_ttl(ttl_s)
        acquired = self._value("acquire", agent, session_id, owner, ttl)
        return await complete_despite_cancel(acquired) is not None

    async def renew_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.renew_lease`."""
        check_key(agent, session_id)
        check_owner(owner)
        ttl = check_ttl(ttl_s)
        return await self._value("renew", agent, session_id, owner, ttl) is not None

    async def release_lease(self, agent: str, session_id: str, owner: str) -> None:
        """See `SessionStore.release_lease`."""
        check_key(agent, session_id)
        check_owner(owner)
        await self._value("release", agent, session_id, owner)

    async def lease_holder(self, agent: str, session_id: str) -> str | None:
        """See `SessionStore.lease_holder`."""
        check_key(agent, session_id)
        owner = await self._value("holder", agent, session_id)
        return None if owner is None else str(owner)


def unreachable_errors(pg: ModuleType) -> tuple[type[BaseException], ...]:
    """The asyncpg errors that mean the server cannot be reached (or is going away) now."""
    return (
        OSError,  # refused, reset, unknown host, a connect timeout
        pg.PostgresConnectionError,  # class 08: the connection failed or was dropped
        pg.exceptions.OperatorInterventionError,  # class 57: shutting down, starting up
        pg.exceptions.InsufficientResourcesError,  # class 53: too many connections, disk full
        # a connection the server dropped mid-operation: "connection is closed", or asyncpg's
        # own "cannot switch to state" (MagicStack/asyncpg#1069); the pool replaces it
        pg.InterfaceError,
        pg.exceptions.InternalClientError,
    )


def _lock_key(prefix: str) -> int:
    """The advisory-lock key that serializes migrations of one table prefix."""
    digest = hashlib.blake2b(f"rxagent-layout:{prefix}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


_STATEMENTS: Final = {
    "load": "SELECT state, version FROM {p}sessions WHERE agent = $1 AND session_id = $2",
    "version": "SELECT version FROM {p}sessions WHERE agent = $1 AND session_id = $2",
    "save_any": _SAVE_ANY,
    "save_new": _SAVE_NEW,
    "save_at": _SAVE_AT,
    "delete": _DELETE,
    "sessions": "SELECT session_id FROM {p}sessions WHERE agent = $1",
    "agents": "SELECT DISTINCT agent FROM {p}sessions",
    "acquire": _ACQUIRE,
    "renew": _RENEW,
    "release": "DELETE FROM {p}leases WHERE agent = $1 AND session_id = $2 AND owner = $3"
    " RETURNING owner",
    "holder": "SELECT owner FROM {p}leases WHERE agent = $1 AND session_id = $2"
    " AND expires_at > now()",
}
