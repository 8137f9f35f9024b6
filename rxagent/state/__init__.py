"""Session state: the versioned `AgentState` and the stores that keep it."""

from rxagent.state._control import ControlChannel as ControlChannel
from rxagent.state._control import ControlHandler as ControlHandler
from rxagent.state._control import ControlMessage as ControlMessage
from rxagent.state._control import InProcessControl as InProcessControl
from rxagent.state._control import Subscription as Subscription
from rxagent.state._control import serve_control as serve_control
from rxagent.state._state import SCHEMA_VERSION as SCHEMA_VERSION
from rxagent.state._state import AgentState as AgentState
from rxagent.state._state import PendingApproval as PendingApproval
from rxagent.state._state import consistent_state as consistent_state
from rxagent.state._state import migrate_state as migrate_state
from rxagent.state._state import pair_tool_calls as pair_tool_calls
from rxagent.state._state import register_migration as register_migration
from rxagent.state._store import InMemoryStore as InMemoryStore
from rxagent.state._store import SessionStore as SessionStore
from rxagent.state._store import StoredState as StoredState

__all__ = [
    "SCHEMA_VERSION",
    "AgentState",
    "ControlChannel",
    "ControlHandler",
    "ControlMessage",
    "InMemoryStore",
    "InProcessControl",
    "PendingApproval",
    "SessionStore",
    "StoredState",
    "Subscription",
    "consistent_state",
    "migrate_state",
    "pair_tool_calls",
    "register_migration",
    "serve_control",
]
