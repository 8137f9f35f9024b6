"""Hooks: prioritized observers (and, for modifiable events, editors) of a run's events.

See the hooks guide in the docs. `order_hooks` is the one ordering rule: by priority, ties in
registration order.
"""

from rxagent.hooks._chain import HookChain as HookChain
from rxagent.hooks._chain import HookInfo as HookInfo
from rxagent.hooks._chain import HookReporter as HookReporter
from rxagent.hooks._chain import order_hooks as order_hooks
from rxagent.hooks._hook import DEFAULT_PRIORITY as DEFAULT_PRIORITY
from rxagent.hooks._hook import BaseHook as BaseHook
from rxagent.hooks._hook import FunctionHook as FunctionHook
from rxagent.hooks._hook import Hook as Hook
from rxagent.hooks._hook import HookFunction as HookFunction
from rxagent.hooks._hook import OnError as OnError
from rxagent.hooks._hook import hook as hook

__all__ = [
    "DEFAULT_PRIORITY",
    "BaseHook",
    "FunctionHook",
    "Hook",
    "HookChain",
    "HookFunction",
    "HookInfo",
    "HookReporter",
    "OnError",
    "hook",
    "order_hooks",
]
