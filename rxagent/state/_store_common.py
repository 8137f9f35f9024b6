"""What the persistent session stores share: argument checks, state coding, error messages."""

from __future__ import annotations

import asyncio
import importlib
import json
import math
import re
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Final, Self, TypeVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import ValidationError

from rxagent.errors import ConcurrentModificationError, ConfigurationError, StateVersionError
from rxagent.errors import StoreUnavailableError as StoreUnavailableError
from rxagent.state import _state
from rxagent.state._state import AgentState, migrate_state

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from types import ModuleType, TracebackType

    from rxagent.state._control import ControlChannel

__all__ = ["CONNECT_TIMEOUT_S", "ConnectedStore", "unavailable"]

T = TypeVar("T")

CONNECT_TIMEOUT_S: Final = 10.0
"""How long a store or control channel waits for its server to accept a connection, by default."""


def unavailable(store: object, exc: BaseException) -> StoreUnavailableError:
    """The `StoreUnavailableError` of `store` (its repr hides passwords) failing with `exc`."""
    return StoreUnavailableError(
        f"{store!r} is unavailable ({type(exc).__name__}: {exc}); check that its server is "
        "running and reachable, then retry"
    )


def check_key(agent: object, session_id: object) -> None:
    """Raise `ConfigurationError` unless both names are non-empty strings without NUL."""
    for field, value in (("agent", agent), ("session_id", session_id)):
        if not isinstance(value, str) or not value:
            raise ConfigurationError(
                f"{field} must be a non-empty str, got {value!r}; pass the agent's name and "
                "the session id as strings"
            )
        if "\x00" in value:
            raise ConfigurationError(
                f"{field} {value!r} contains a NUL character, which stores cannot keep; "
                "use printable session ids"
            )
        if not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                raise ConfigurationError(
                    f"{field} {value!r} is not valid Unicode text (a lone surrogate); "
                    "decode ids properly before passing them"
                ) from None


def check_agent(agent: object) -> None:
    """Raise `ConfigurationError` unless `agent` is a non-empty string without NUL."""
    check_key(agent, "-")


def check_owner(owner: object) -> None:
    """Raise `ConfigurationError` unless `owner` is a non-empty string."""
    if not isinstance(owner, str) or not owner or "\x00" in owner:
        raise ConfigurationError(
            f"lease owner must be a non-empty str without NUL, got {owner!r}; pass the run id"
        )


def check_ttl(ttl_s: object) -> float:
    """Return `ttl_s` as a float, or raise `ConfigurationError` unless it is finite and > 0."""
    if (
        isinstance(ttl_s, bool)
        or not isinstance(ttl_s, int | float)
        or not math.isfinite(ttl_s)
        or ttl_s <= 0
    ):
        raise ConfigurationError(
            f"ttl_s must be a positive number of seconds, got {ttl_s!r}; "
            "pass e.g. agent.lease_ttl_s (30.0)"
        )
    return float(ttl_s)


def check_expected(expected_version: object) -> int | None:
    """Return `expected_version`, or raise `ConfigurationError` unless it is None or an int >= 0."""
    if expected_version is None:
        return None
    if (
        isinstance(expected_version, bool)
        or not isinstance(expected_version, int)
        or expected_version < 0
    ):
        raise ConfigurationError(
            f"expected_version must be None or an int >= 0, got {expected_version!r}; "
            "pass the version load() returned (0: the session must not exist yet)"
        )
    return expected_version


def check_state(state: object) -> AgentState:
    """Return `state`, or raise `ConfigurationError` unless it is an `AgentState`."""
    if not isinstance(state, AgentState):
        raise ConfigurationError(
            f"state must be an AgentState, got {type(state).__name__}; "
            "build one with AgentState(...) or rxagent.state.migrate_state(data)"
        )
    return state


def conflict(
    agent: str, session_id: str, version: int, expected: int
) -> ConcurrentModificationError:
    """The error of a save whose `expected_version` is not the stored version."""
    return ConcurrentModificationError(
        f"session {session_id!r} of agent {agent!r} is at version {version}, "
        f"not {expected}: someone else saved it; load it again and retry"
    )


def encode_state(state: AgentState) -> str:
    """The JSON text a store keeps for `state`."""
    return state.model_dump_json()


def decode_state(text: str | bytes, agent: str, session_id: str) -> AgentState:
    """Read stored JSON back into an `AgentState`, migrating older `schema_version`s.

    Raises:
        StateVersionError: When the data is from a newer rxagent, or is not state at all.
    """
    if isinstance(text, bytes | bytearray):
        text = text.decode("utf-8")
    try:
        # the common case, current data, in one pass without a dict in between
        if text.startswith(f'{{"schema_version":{_state.SCHEMA_VERSION},'):
            return AgentState.model_validate_json(text)
        data: Any = json.loads(text)
        if not isinstance(data, dict):
            raise TypeError(f"expected a JSON object, got {type(data).__name__}")
        return migrate_state(data)
    except StateVersionError as exc:
        raise StateVersionError(f"session {session_id!r} of agent {agent!r}: {exc}") from exc
    except (ValueError, TypeError, ValidationError) as exc:
        raise StateVersionError(
            f"session {session_id!r} of agent {agent!r} holds data that is not an AgentState "
            f"({type(exc).__name__}: {str(exc)[:200]}); it was written by something else than "
            "rxagent: delete the session or restore it from a backup"
        ) from exc


def check_layout(found: int, supported: int, where: str) -> None:
    """Raise `StateVersionError` when the storage layout is newer than this rxagent knows."""
    if found > supported:
        raise StateVersionError(
            f"the session store at {where} has storage layout version {found}, newer than this "
            f"rxagent supports ({supported}); upgrade rxagent (pip install -U rxagent) or use "
            "another database, file or prefix"
        )


def import_extra(module: str, extra: str, store: str) -> ModuleType:
    """Import an optional dependency, or raise `ConfigurationError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ConfigurationError(
            f"{store} needs the {module!r} package: pip install 'rxagent[{extra}]'"
        ) from exc


def redact(url: str) -> str:
    """`url` without its password, for reprs and error messages."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        netloc = parts.netloc.rsplit("@", 1)
        user = parts.username or ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc[-1]}"))
    except ValueError:
        return "<unparsable url>"


_PREFIX: Final = re.compile(r"[a-z_][a-z0-9_]{0,39}")


def check_table_prefix(prefix: object) -> str:
    """Return `prefix`, or raise `ConfigurationError` unless it is a safe SQL identifier start."""
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise ConfigurationError(
            f"table_prefix must be lowercase letters, digits and '_' (at most 40, not starting "
            f"with a digit), got {prefix!r}; e.g. table_prefix='rxagent_'"
        )
    return prefix


class LoopBound:
    """Remembers the event loop a store's connections belong to, and refuses any other loop."""

    def __init__(self, store: str) -> None:
        self._store = store
        self.loop: asyncio.AbstractEventLoop | None = None

    def check(self) -> None:
        """Bind to the running loop on first use; raise `ConfigurationError` on another loop."""
        loop = asyncio.get_running_loop()
        if self.loop is None:
            self.loop = loop
        elif self.loop is not loop and not self.loop.is_closed():
            raise ConfigurationError(
                f"{self._store} was opened on another event loop, which still runs; "
                "create one store per event loop"
            )
        elif self.loop is not loop:
            raise ConfigurationError(
                f"{self._store} was opened on an event loop that has ended (an earlier "
                "asyncio.run); create the store inside the asyncio.run that uses it, and "
                "close it with `async with` or aclose()"
            )


class ConnectedStore(ABC):
    """What the stores with a database server share: one lazily opened client, on one loop.

    The client opens on first use (on the running loop, which the store is then bound to); an
    error of `unreachable` (a refused connection, a dropped one, a server shutting down), while
    opening or in an operation run through `_run`, is a `StoreUnavailableError`. The control
    channel is made on demand; `aclose()` closes both, once.
    """

    persistent = True

    def __init__(self, unreachable: tuple[type[BaseException], ...]) -> None:
        self._unreachable = unreachable
        self._client: Any = None
        self._opening: asyncio.Lock | None = None
        self._loop = LoopBound(repr(self))
        self._control: ControlChannel | None = None
        self._closed = False

    @abstractmethod
    async def _open_client(self) -> Any:
        """Connect, migrate the layout, and return the client (closing it on failure)."""

    @abstractmethod
    async def _close_client(self, client: Any) -> None:
        """Close a client `_open_client` returned."""

    @abstractmethod
    def _new_control(self) -> ControlChannel:
        """The control channel of processes sharing this store."""

    async def _connected(self) -> Any:
        """The client, opened (and the tables migrated) on first use."""
        if self._client is not None:
            self._loop.check()
            return self._client
        if self._closed:
            raise ConfigurationError(f"{self!r} is closed; create a new store to use it again")
        self._loop.check()
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._client is None:
                try:
                    client = await self._open_client()
                except self._unreachable as exc:
                    raise unavailable(self, exc) from exc
                if self._was_closed():  # closed while connecting: keep nothing open
                    await self._close_client(client)
                    raise ConfigurationError(f"{self!r} was closed while it connected")
                self._client = client
        return self._client

    def _was_closed(self) -> bool:
        """Whether `aclose()` ran (read again after an `await`)."""
        return self._closed

    async def _run(self, operation: Callable[[Any], Awaitable[T]]) -> T:
        """Run `operation(client)`; a lost or refused connection is a `StoreUnavailableError`."""
        client = await self._connected()
        try:
            return await operation(client)
        except self._unreachable as exc:
            raise unavailable(self, exc) from exc

    def control(self) -> ControlChannel:
        """See `SessionStore.control`: one channel per store, made on first use."""
        if self._control is None:
            self._control = self._new_control()
        return self._control

    async def aclose(self) -> None:
        """See `SessionStore.aclose`: close the channel and the client (idempotent)."""
        self._closed = True
        control, self._control = self._control, None
        client, self._client = self._client, None
        try:
            if control is not None:
                await control.aclose()
        finally:
            if client is not None:
                await self._close_client(client)

    async def __aenter__(self) -> Self:
        await self._connected()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
