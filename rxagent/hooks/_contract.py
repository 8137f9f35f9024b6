"""The contract a hook's returned event must keep, and the record of what it changed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from rxagent._fast import construct
from rxagent.errors import HookContractError
from rxagent.events import BaseEvent, FieldChange, PostActingEvent, PreActingEvent

if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["accept"]

E = TypeVar("E", bound=BaseEvent)


def accept(current: E, result: object, hook_name: str, record: bool = False) -> E:
    """Check a hook's returned event against the contract and record the hook in it.

    With `record`, each modifiable field whose value changed is added to `changes`, with its
    old value dumped in JSON mode; without it nothing is compared or copied.
    """
    cls = type(current)
    if type(result) is not cls:
        raise HookContractError(
            f"hook {hook_name!r} returned {type(result).__name__} for a {cls.__name__}; "
            f"return the same event type (use event.replace(...)) or None for no change",
            hook=hook_name,
        )
    assert isinstance(result, cls)
    old, new = current.__dict__, result.__dict__
    for field, value in new.items():
        if field in cls.MODIFIABLE or field == "modified_by":
            continue
        if value is not old[field] and value != old[field]:
            raise HookContractError(
                f"hook {hook_name!r} changed {cls.__name__}.{field}, which is fixed; "
                f"only {', '.join(sorted(cls.MODIFIABLE))} may change (use event.replace(...))",
                hook=hook_name,
                field=field,
            )
    if isinstance(result, PreActingEvent):
        before = old["tool_call"]
        after = result.tool_call
        for field in ("id", "name"):
            if getattr(after, field) != getattr(before, field):
                raise HookContractError(
                    f"hook {hook_name!r} changed tool_call.{field}; a PreActing hook may change "
                    "only tool_call.input (use event.replace(tool_call=call.model_copy("
                    "update={'input': {...}})))",
                    hook=hook_name,
                    field=f"tool_call.{field}",
                )
    elif isinstance(result, PostActingEvent) and result.result.id != result.tool_call.id:
        raise HookContractError(
            f"hook {hook_name!r} returned a result for call {result.result.id!r} in the "
            f"PostActing of call {result.tool_call.id!r}; keep result.id equal to tool_call.id",
            hook=hook_name,
            field="result.id",
        )
    fields = dict(new)
    fields["modified_by"] = (*old["modified_by"], hook_name)
    if record:
        fields["changes"] = (*old["changes"], *_changes(current, new, hook_name))
    return cls._construct(fields)


def _changes(current: BaseEvent, new: dict[str, Any], hook_name: str) -> Iterator[FieldChange]:
    """The modifiable fields of `current` that `new` changes, in declaration order."""
    old = current.__dict__
    modifiable = type(current).MODIFIABLE
    for field in old:
        if field in modifiable and new[field] is not old[field] and new[field] != old[field]:
            # the field's own serializer, in JSON mode: what EVENT_ADAPTER writes for it
            before = current.model_dump(mode="json", include={field})[field]
            # trusted values (a name, a field, JSON-mode data): no validation on this path
            yield construct(FieldChange, {"by": hook_name, "field": field, "before": before})
