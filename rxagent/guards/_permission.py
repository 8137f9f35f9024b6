"""`Permission`: which caller may call which tools."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Final, TypeAlias

from rxagent.guards._pipeline import Guard

if TYPE_CHECKING:
    from rxagent.context import Principal
    from rxagent.events import GuardVerdict
    from rxagent.guards._pipeline import GuardContext

__all__ = ["Permission", "PermissionPolicy"]

PermissionPolicy: TypeAlias = "Mapping[str, Collection[str]] | Callable[[Principal, str], bool]"
"""Who may call what: a table of grants, or a function `(principal, tool_name) -> bool`."""

_KINDS: Final = ("user:", "key:", "role:")


class Permission(Guard):
    """Let each caller use only the tools granted to them.

    A tool a caller may not use is not offered to the model in their runs, and a call to it
    (a hook put it back, or the model invented the name) gets an error result instead of
    running, with a `GuardEvent` (`target="tool_call"`) saying so. The run goes on.

    Args:
        policy: Either a table from grantees to tool names, or a function
            `(principal, tool_name) -> bool`. In a table, a grantee is `"user:<user id>"`,
            `"key:<API key id>"`, `"role:<role>"` or `"*"` (everybody, anonymous callers
            included), and tool names may be shell-style patterns (`"read_*"`, `"*"`). A
            caller may use a tool when any grantee that matches them grants it.

    Raises:
        ValueError: A grantee that is not `"*"` or `"user:"`, `"key:"`, `"role:"` with a name,
            or grants given as one string instead of a collection.

    Example:
        ```python
        from rxagent import Principal
        from rxagent.guards import Permission

        policy = Permission({
            "*": ["search"],
            "role:ops": ["restart_*"],
            "user:ann": ["*"],
        })
        bob = Principal(user_id="bob", roles=frozenset({"ops"}))
        assert policy.permits(bob, "restart_web") and not policy.permits(bob, "drop_table")
        assert policy.permits(Principal(user_id="ann"), "drop_table")
        assert not policy.permits(Principal(), "restart_web")
        ```
    """

    name = "permission"
    targets = frozenset({"tool_call"})

    def __init__(self, policy: PermissionPolicy) -> None:
        if callable(policy):
            self._allows: Callable[[Principal, str], bool] = policy
            return
        if not isinstance(policy, Mapping):
            raise TypeError(
                "Permission(policy) takes a mapping of grantees to tool names or a function "
                f"(principal, tool) -> bool, got {type(policy).__name__}"
            )
        table: dict[str, tuple[str, ...]] = {}
        for grantee, tools in policy.items():
            if grantee != "*" and not (
                grantee.startswith(_KINDS) and grantee.split(":", 1)[1].strip()
            ):
                raise ValueError(
                    f"Permission: grantee {grantee!r} must be '*', 'user:<id>', 'key:<id>' or "
                    "'role:<name>'"
                )
            if isinstance(tools, str):
                raise ValueError(
                    f"Permission: the grants of {grantee!r} must be a collection of tool names; "
                    f"write [{tools!r}]"
                )
            table[grantee] = tuple(tools)
        self._table = table
        self._allows = self._by_table

    def permits(self, principal: Principal, tool: str) -> bool:
        """Whether `principal` may call `tool`."""
        return bool(self._allows(principal, tool))

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        """Pass a call the caller may make; flag any other."""
        tool = ctx.tool_call.name if ctx.tool_call is not None else ""
        if self.permits(ctx.principal, tool):
            return self.verdict(False)
        return self.verdict(True, 1.0, f"{ctx.principal.id!r} may not call {tool!r}")

    def _by_table(self, principal: Principal, tool: str) -> bool:
        grantees = ["*"]
        if principal.user_id is not None:
            grantees.append(f"user:{principal.user_id}")
        if principal.key_id is not None:
            grantees.append(f"key:{principal.key_id}")
        grantees.extend(f"role:{role}" for role in principal.roles)
        for grantee in grantees:
            for pattern in self._table.get(grantee, ()):
                if pattern == tool or fnmatch.fnmatchcase(tool, pattern):
                    return True
        return False
