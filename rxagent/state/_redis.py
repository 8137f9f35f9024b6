"""`RedisStore`: sessions in Redis (redis.asyncio), shared by processes and machines."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

from rxagent._validate import check_int
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
    check_ttl,
    conflict,
    decode_state,
    encode_state,
    import_extra,
    redact,
)

if TYPE_CHECKING:
    from types import ModuleType

    from rxagent.state._control import ControlChannel
    from rxagent.state._state import AgentState

__all__ = ["RedisStore"]

_COMMAND_TIMEOUT_S: Final = 30.0
"""How long a command waits for Redis to answer, by default (every command here is quick)."""

MIGRATIONS: list[str] = [
    "-- layout 0 -> 1: keys are created on demand; nothing to change",
]
"""The storage layout's migrations, in order: entry `n` upgrades layout `n` to `n + 1`.

Each is the body of a Lua script that runs atomically with the layout bump in `<prefix>meta`
(`ARGV[2]` is the prefix). Redis does not roll a script back, so a migration checks before it
writes. The layout the code writes is `len(MIGRATIONS)`.
"""

_MIGRATE: Final = """
local found = tonumber(redis.call('HGET', KEYS[1], 'layout') or '0')
if found ~= tonumber(ARGV[1]) then return found end
{body}
redis.call('HSET', KEYS[1], 'layout', found + 1)
return found + 1
"""

# KEYS: state, the agent's session set, the agent set; ARGV: json, expected ('' = any), id, agent
_SAVE: Final = """
local version = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if ARGV[2] ~= '' and tonumber(ARGV[2]) ~= version then return {0, version} end
redis.call('HSET', KEYS[1], 'v', version + 1, 's', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('SADD', KEYS[3], ARGV[4])
return {1, version + 1}
"""

# KEYS: state, lease, the agent's session set, the agent set; ARGV: session id, agent
_DELETE: Final = """
local existed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
if redis.call('SCARD', KEYS[3]) == 0 then redis.call('SREM', KEYS[4], ARGV[2]) end
return existed
"""

# KEYS: lease; ARGV: owner, ttl in ms
_ACQUIRE: Final = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

_RENEW: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
"""

_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class RedisStore(ConnectedStore):
    """Sessions in Redis: for several processes or machines, with pub/sub control beside them.

    Each write is one Lua script (one `EVALSHA` round trip), atomic in Redis, that checks the
    optimistic version and writes the state, so a crashed writer never leaves half a state.
    Leases are keys set with `SET NX PX` and renewed or released by their owner only; they expire
    by the Redis server's clock. Keys start with `prefix`; `<prefix>meta` records the layout.
    A server that cannot be reached raises `StoreUnavailableError`; a wrong password is a
    `ConfigurationError`.

    Needs the `redis` extra: `pip install 'rxagent[redis]'`. Configure Redis persistence
    (AOF or RDB) for state to survive a Redis restart.

    Args:
        url: A Redis URL, e.g. `redis://127.0.0.1:6379/0` (or `rediss://` for TLS).
        prefix: Starts every key this store writes.
        max_connections: The most connections the store opens. An operation holds one for a
            round trip only, so a few dozen serve hundreds of concurrent runs; when all are in
            use, an operation waits for one (see `pool_timeout_s`) instead of failing.
        pool_timeout_s: How long an operation waits for a free connection before the store
            counts as unavailable.
        client_kwargs: Passed to the connection pool (`redis.asyncio.BlockingConnectionPool`);
            `socket_connect_timeout` defaults to 10 seconds and `socket_timeout` to 30.

    Example:
        ```python
        from rxagent.state import RedisStore, SessionStore

        store = RedisStore("redis://cache.internal:6379/0", prefix="chat:")
        assert isinstance(store, SessionStore) and store.persistent
        assert store.prefix == "chat:"  # no connection until first use
        ```
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "rxagent:",
        max_connections: int = 100,
        pool_timeout_s: float = CONNECT_TIMEOUT_S,
        **client_kwargs: Any,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("redis://", "rediss://", "unix://")):
            raise ConfigurationError(
                f"RedisStore url must be a redis:// or rediss:// URL, got {url!r}; "
                "e.g. redis://127.0.0.1:6379/0"
            )
        if not isinstance(prefix, str) or not prefix:
            raise ConfigurationError(
                f"RedisStore prefix must be a non-empty str, got {prefix!r}; e.g. 'rxagent:'"
            )
        if client_kwargs.get("decode_responses"):
            raise ConfigurationError(
                "RedisStore reads raw bytes: leave out decode_responses=True (the store decodes "
                "state itself)"
            )
        self._redis: ModuleType = import_extra("redis.asyncio", "redis", "RedisStore")
        self._url = url
        self._prefix = prefix
        errors = import_extra("redis.exceptions", "redis", "RedisStore")
        super().__init__((OSError, errors.ConnectionError, errors.TimeoutError))
        self._auth_error: type[Exception] = errors.AuthenticationError
        check_int("max_connections", max_connections, optional=False)
        self._client_kwargs = {
            "socket_connect_timeout": CONNECT_TIMEOUT_S,
            "socket_timeout": _COMMAND_TIMEOUT_S,
            "max_connections": max_connections,
            "timeout": check_ttl(pool_timeout_s),
            **client_kwargs,
        }
        self._scripts: dict[str, Any] = {}

    @property
    def prefix(self) -> str:
        """Starts every key this store writes."""
        return self._prefix

    def __repr__(self) -> str:
        return f"RedisStore({redact(self._url)!r}, prefix={self._prefix!r})"

    # -- keys ---------------------------------------------------------------------------------

    def _session_key(self, kind: str, agent: str, session_id: str) -> str:
        # the agent's length makes the key unambiguous whatever characters the names hold
        return f"{self._prefix}{kind}:{len(agent)}:{agent}:{session_id}"

    def _sessions_key(self, agent: str) -> str:
        return f"{self._prefix}sessions:{agent}"

    # -- connection ---------------------------------------------------------------------------

    async def _open_client(self) -> Any:
        try:
            pool = self._redis.BlockingConnectionPool.from_url(self._url, **self._client_kwargs)
            client = self._redis.Redis.from_pool(pool)  # the client closes the pool
        except (ValueError, TypeError) as exc:
            raise ConfigurationError(
                f"cannot use {self!r}: {exc}; check the URL and the store's keyword arguments"
            ) from exc
        try:
            await self._migrate(client)
        except self._auth_error as exc:
            await client.aclose()
            raise ConfigurationError(
                f"cannot connect {self!r}: {exc}; check the password (or user) in the URL"
            ) from exc
        except BaseException:
            await client.aclose()
            raise
        for name, script in (
            ("save", _SAVE),
            ("delete", _DELETE),
            ("acquire", _ACQUIRE),
            ("renew", _RENEW),
            ("release", _RELEASE),
        ):
            self._scripts[name] = client.register_script(script)
        return client

    async def _close_client(self, client: Any) -> None:
        await client.aclose()

    def _new_control(self) -> ControlChannel:
        """Pub/sub on the channel `<prefix>control`."""
        from rxagent.state._control_redis import RedisControl

        return RedisControl(self._url, channel=f"{self._prefix}control")

    async def _script(self, name: str, keys: list[str], args: list[str | int]) -> Any:
        """Run the atomic script `name`."""
        return await self._run(lambda _client: self._scripts[name](keys=keys, args=args))

    async def _migrate(self, client: Any) -> None:
        """Bring the layout in `<prefix>meta` to this code's, one atomic script per step."""
        meta, target = f"{self._prefix}meta", len(MIGRATIONS)
        found = int(await client.hget(meta, "layout") or 0)
        check_layout(found, target, repr(self))
        while found < target:
            script = _MIGRATE.format(body=MIGRATIONS[found])
            found = int(await client.eval(script, 1, meta, found, self._prefix))
            check_layout(found, target, repr(self))

    # -- state --------------------------------------------------------------------------------

    async def load(self, agent: str, session_id: str) -> StoredState | None:
        """See `SessionStore.load`."""
        check_key(agent, session_id)
        key = self._session_key("state", agent, session_id)
        version, text = await self._run(lambda client: client.hmget(key, "v", "s"))
        if version is None or text is None:
            return None
        return StoredState(decode_state(text, agent, session_id), int(version))

    async def save(
        self,
        agent: str,
        session_id: str,
        state: AgentState,
        *,
        expected_version: int | None = None,
    ) -> int:
        """See `SessionStore.save`: one atomic script, one round trip."""
        check_key(agent, session_id)
        expected = check_expected(expected_version)
        text = encode_state(check_state(state))
        saved, version = await complete_despite_cancel(
            self._script(
                "save",
                [
                    self._session_key("state", agent, session_id),
                    self._sessions_key(agent),
                    f"{self._prefix}agents",
                ],
                [text, "" if expected is None else expected, session_id, agent],
            )
        )
        if not saved:
            raise conflict(agent, session_id, int(version), expected or 0)
        return int(version)

    async def delete(self, agent: str, session_id: str) -> bool:
        """See `SessionStore.delete`: the state, the lease and the indexes in one script."""
        check_key(agent, session_id)
        existed = await self._script(
            "delete",
            [
                self._session_key("state", agent, session_id),
                self._session_key("lease", agent, session_id),
                self._sessions_key(agent),
                f"{self._prefix}agents",
            ],
            [session_id, agent],
        )
        return bool(existed)

    async def _members(self, key: str) -> list[str]:
        members = await self._run(lambda client: client.smembers(key))
        return sorted(bytes(m).decode() for m in members)

    async def list_sessions(self, agent: str) -> list[str]:
        """See `SessionStore.list_sessions`."""
        check_agent(agent)
        return await self._members(self._sessions_key(agent))

    async def list_agents(self) -> list[str]:
        """See `SessionStore.list_agents`."""
        return await self._members(f"{self._prefix}agents")

    # -- leases -------------------------------------------------------------------------------

    async def _lease_script(
        self, name: str, agent: str, session_id: str, owner: str, ttl_s: float | None
    ) -> bool:
        check_key(agent, session_id)
        check_owner(owner)
        args: list[str | int] = [owner]
        if ttl_s is not None:
            args.append(max(1, math.ceil(check_ttl(ttl_s) * 1000)))
        key = self._session_key("lease", agent, session_id)
        return bool(await complete_despite_cancel(self._script(name, [key], args)))

    async def acquire_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.acquire_lease`: `SET NX PX`, or a renewal by the same owner."""
        return await self._lease_script("acquire", agent, session_id, owner, ttl_s)

    async def renew_lease(self, agent: str, session_id: str, owner: str, ttl_s: float) -> bool:
        """See `SessionStore.renew_lease`: False once the lease expired or changed hands."""
        return await self._lease_script("renew", agent, session_id, owner, ttl_s)

    async def release_lease(self, agent: str, session_id: str, owner: str) -> None:
        """See `SessionStore.release_lease`."""
        await self._lease_script("release", agent, session_id, owner, None)

    async def lease_holder(self, agent: str, session_id: str) -> str | None:
        """See `SessionStore.lease_holder`."""
        check_key(agent, session_id)
        key = self._session_key("lease", agent, session_id)
        owner = await self._run(lambda client: client.get(key))
        return None if owner is None else bytes(owner).decode()
