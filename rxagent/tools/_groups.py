"""Tool groups: which groups are active, and the group tool the model switches them with.

A tool with a `group` is offered to the model only while its group is active. Which groups are
active is per session (`AgentState.active_groups`; None means the toolkit's defaults). With
`Toolkit(group_tool=True)` the model gets `manage_tool_groups`, which activates and deactivates
groups; its outcome carries a `GroupChange` that the agent applies to the session.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Final

from rxagent.models.base import ToolSchema

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from rxagent.tools._tool import Tool

__all__ = ["GROUP_TOOL_NAME", "GroupChange", "GroupedTools", "group_tool_schema", "run_group_tool"]

GROUP_TOOL_NAME: Final = "manage_tool_groups"
"""The name of the tool the model switches tool groups with."""

_CACHED_SCHEMA_SETS: Final = 64


@dataclass(frozen=True, slots=True)
class GroupChange:
    """Tool groups to activate and deactivate, as the model asked with `manage_tool_groups`.

    Example:
        ```python
        from rxagent.tools import GroupChange

        change = GroupChange(activate=("web",), deactivate=("git",))
        assert change.apply(("git", "math")) == ("math", "web")
        ```
    """

    activate: tuple[str, ...] = ()
    """Groups to activate."""
    deactivate: tuple[str, ...] = ()
    """Groups to deactivate."""

    def apply(self, active: Iterable[str]) -> tuple[str, ...]:
        """Return `active` with this change applied (kept groups first, then new ones)."""
        result = [g for g in active if g not in self.deactivate]
        result += [g for g in self.activate if g not in result]
        return tuple(result)


def group_tool_schema(groups: Mapping[str, str], active: Iterable[str]) -> ToolSchema:
    """The schema of `manage_tool_groups`: it lists the groups and which are active."""
    active = set(active)
    lines = []
    for name, about in groups.items():
        state = " (active)" if name in active else ""
        lines.append(f"- {name}{state}" + (f": {about}" if about else ""))
    description = (
        "Activate or deactivate groups of tools. The tools of an active group are offered from "
        "your next step on; deactivate groups you no longer need.\nGroups:\n" + "\n".join(lines)
    )
    names = {"type": "array", "items": {"type": "string", "enum": list(groups)}}
    parameters = {
        "type": "object",
        "properties": {
            "activate": {**names, "description": "Groups to activate."},
            "deactivate": {**names, "description": "Groups to deactivate."},
        },
        "required": [],
        "additionalProperties": False,
    }
    return ToolSchema(name=GROUP_TOOL_NAME, description=description, parameters=parameters)


def run_group_tool(
    arguments: Mapping[str, Any],
    groups: Sequence[str],
    active: Sequence[str],
    tools_of: Mapping[str, Sequence[str]],
) -> tuple[str, GroupChange | None]:
    """Run a `manage_tool_groups` call: return the text for the model and the change.

    The change is None when the call is invalid; the text then says why.
    """
    problems: list[str] = []
    lists: dict[str, tuple[str, ...]] = {}
    for key in ("activate", "deactivate"):
        value = arguments.get(key, ())
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            problems.append(f"{key}: Input should be a list of group names")
            value = ()
        unknown = [v for v in value if v not in groups]
        if unknown:
            problems.append(
                f"{key}: unknown group {', '.join(map(repr, unknown))}; "
                f"groups: {', '.join(groups) or 'none'}"
            )
        lists[key] = tuple(dict.fromkeys(value))
    extra = [key for key in arguments if key not in lists]
    problems += [f"{key}: Extra inputs are not permitted" for key in extra]
    both = [g for g in lists["activate"] if g in lists["deactivate"]]
    if both:
        problems.append(f"{', '.join(map(repr, both))}: cannot be activated and deactivated")
    if problems:
        return f"Invalid arguments for tool '{GROUP_TOOL_NAME}': " + "; ".join(problems), None
    change = GroupChange(activate=lists["activate"], deactivate=lists["deactivate"])
    now = [g for g in groups if g in change.apply(active)]
    text = f"Active tool groups: {', '.join(now) or 'none'}."
    added = [t for g in change.activate if g not in active for t in tools_of.get(g, ())]
    if added:
        text += f" Tools now available: {', '.join(added)}."
    return text, change


class GroupedTools:
    """The tool-group part of `Toolkit`: which groups exist and are active, and the schemas.

    It has no slots of its own; `Toolkit` holds the attributes annotated here.
    """

    __slots__ = ()

    _tools: dict[str, Tool[..., Any]]
    _schemas: dict[tuple[str, ...], tuple[ToolSchema, ...]]
    _group_info: dict[str, str]
    _group_tool: bool
    _default_groups: tuple[str, ...] | None
    _known_groups: Mapping[str, str]

    def groups(self) -> Mapping[str, str]:
        """Return every tool group, by name, with its description (`""` when none was given)."""
        return self._known_groups

    def _collect_groups(self) -> Mapping[str, str]:
        """The declared groups, then the groups of tools, in order (kept as `_known_groups`)."""
        found = dict(self._group_info)
        for item in self._tools.values():
            if item.group is not None:
                found.setdefault(item.group, "")
        return MappingProxyType(found)

    @property
    def default_groups(self) -> tuple[str, ...]:
        """The groups active in a session that has not switched any: `active_groups=` or all."""
        if self._default_groups is None:
            return tuple(self.groups())
        return self._default_groups

    def active(self, active_groups: Iterable[str] | None = None) -> tuple[str, ...]:
        """Return the active groups: `active_groups` (None: the defaults), known ones only.

        They come in the order the groups are known (`groups()`), so equal sets are equal tuples.

        Example:
            ```python
            from rxagent.tools import Toolkit, tool


            @tool(group="git")
            def git_status() -> str:
                \"\"\"Show the working tree status.\"\"\"
                return "clean"


            kit = Toolkit([git_status], groups={"web": "Browse the web."}, active_groups=())
            assert kit.active() == () and kit.active(["git", "gone"]) == ("git",)
            ```
        """
        wanted = set(self.default_groups if active_groups is None else active_groups)
        return tuple(g for g in self.groups() if g in wanted)

    def switch_groups(
        self, active_groups: Iterable[str] | None, change: GroupChange
    ) -> tuple[str, ...]:
        """Return a session's active groups after `change` (from `ToolOutcome.group_change`).

        Example:
            ```python
            from rxagent.tools import GroupChange, Toolkit

            kit = Toolkit(groups={"git": "", "web": ""}, active_groups=["git"])
            assert kit.switch_groups(None, GroupChange(activate=("web",))) == ("git", "web")
            ```
        """
        return self.active(change.apply(self.active(active_groups)))

    def schemas(self, active_groups: Iterable[str] | None = None) -> tuple[ToolSchema, ...]:
        """Return what the model is told: the tools offered with these groups active.

        Tools without a group always; grouped tools while their group is active (None: the
        defaults); `manage_tool_groups` last, with `group_tool=True` and groups to switch.

        Example:
            ```python
            from rxagent.tools import Toolkit


            def ping() -> str:
                \"\"\"Answer pong.\"\"\"
                return "pong"


            (schema,) = Toolkit([ping]).schemas()
            assert schema.name == "ping" and schema.description == "Answer pong."
            ```
        """
        active = self.active(active_groups)
        found = self._schemas.get(active)
        if found is None:
            found = tuple(
                t.schema for t in self._tools.values() if t.group is None or t.group in active
            )
            groups = self.groups()
            if self._group_tool and groups:
                found += (group_tool_schema(groups, active),)
            if len(self._schemas) >= _CACHED_SCHEMA_SETS:
                self._schemas.clear()
            self._schemas[active] = found
        return found

    def _available(self, active: tuple[str, ...] | None) -> str:
        names = [
            name
            for name, t in self._tools.items()
            if active is None or t.group is None or t.group in active
        ]
        if active is not None and self._group_tool and self.groups():
            names.append(GROUP_TOOL_NAME)
        return ", ".join(names) or "none"
