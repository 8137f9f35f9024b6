"""Session state: the versioned `AgentState` and the stores that keep it."""

from typing import TYPE_CHECKING

from rxagent._lazy import lazy_exports, read_exports

# imported on first use (`rxagent._lazy`): a run imports only the parts it uses
if TYPE_CHECKING:
    from rxagent.errors import ControlMessageTooLargeError as ControlMessageTooLargeError
    from rxagent.errors import StoreUnavailableError as StoreUnavailableError
    from rxagent.state._control import ControlChannel as ControlChannel
    from rxagent.state._control import ControlHandler as ControlHandler
    from rxagent.state._control import ControlMessage as ControlMessage
    from rxagent.state._control import InProcessControl as InProcessControl
    from rxagent.state._control import Subscription as Subscription
    from rxagent.state._control_pg import PostgresControl as PostgresControl
    from rxagent.state._control_redis import RedisControl as RedisControl
    from rxagent.state._control_sqlite import SQLiteControl as SQLiteControl
    from rxagent.state._open import STORE_SCHEMES as STORE_SCHEMES
    from rxagent.state._open import open_store as open_store
    from rxagent.state._postgres import PostgresStore as PostgresStore
    from rxagent.state._redis import RedisStore as RedisStore
    from rxagent.state._sqlite import DEFAULT_SQLITE_PATH as DEFAULT_SQLITE_PATH
    from rxagent.state._sqlite import SQLiteStore as SQLiteStore
    from rxagent.state._state import OWNER_KEY as OWNER_KEY
    from rxagent.state._state import SCHEMA_VERSION as SCHEMA_VERSION
    from rxagent.state._state import AgentState as AgentState
    from rxagent.state._state import ParkedBatch as ParkedBatch
    from rxagent.state._state import PendingApproval as PendingApproval
    from rxagent.state._state import consistent_state as consistent_state
    from rxagent.state._state import migrate_state as migrate_state
    from rxagent.state._state import owned_state as owned_state
    from rxagent.state._state import owner_of as owner_of
    from rxagent.state._state import pair_tool_calls as pair_tool_calls
    from rxagent.state._state import register_migration as register_migration
    from rxagent.state._store import InMemoryStore as InMemoryStore
    from rxagent.state._store import SessionStore as SessionStore
    from rxagent.state._store import StoredState as StoredState


__all__ = [
    "DEFAULT_SQLITE_PATH",
    "OWNER_KEY",
    "SCHEMA_VERSION",
    "STORE_SCHEMES",
    "AgentState",
    "ControlChannel",
    "ControlHandler",
    "ControlMessage",
    "ControlMessageTooLargeError",
    "InMemoryStore",
    "InProcessControl",
    "ParkedBatch",
    "PendingApproval",
    "PostgresControl",
    "PostgresStore",
    "RedisControl",
    "RedisStore",
    "SQLiteControl",
    "SQLiteStore",
    "SessionStore",
    "StoreUnavailableError",
    "StoredState",
    "Subscription",
    "consistent_state",
    "migrate_state",
    "open_store",
    "owned_state",
    "owner_of",
    "pair_tool_calls",
    "register_migration",
]

_EXPORTS, _ = read_exports(__file__)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
del TYPE_CHECKING, lazy_exports, read_exports  # the namespace holds the exports only
