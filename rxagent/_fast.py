"""Building frozen pydantic models from trusted values without validation (the hot path)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeVar, cast

from pydantic import BaseModel

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["construct", "plain_defaults", "trusted"]

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_set = object.__setattr__
_MISSING: Final[Any] = object()


class _Template:
    """Per model class: every field in order with its plain default (or a marker)."""

    __slots__ = (
        "defaults",
        "factories",
        "fields_set",
        "plain",
        "required",
        "required_set",
        "shared",
    )

    def __init__(self, cls: type[BaseModel]) -> None:
        self.defaults: dict[str, Any] = {}
        self.factories: list[tuple[str, Callable[[], Any]]] = []
        self.required: list[str] = []
        for name, info in cls.model_fields.items():
            self.defaults[name] = _MISSING
            if info.default_factory is not None:
                self.factories.append((name, cast("Callable[[], Any]", info.default_factory)))
            elif info.is_required():
                self.required.append(name)
            else:
                self.defaults[name] = info.default
        self.required_set = frozenset(self.required)
        self.fields_set = set(cls.model_fields)
        # A frozen model's fields set is never changed in place (pydantic copies it first, in
        # `model_copy` and `copy`), so its instances share one: a set per object is about 40%
        # of what a stored message holds.
        self.shared = bool(cls.model_config.get("frozen"))
        self.plain = {k: v for k, v in self.defaults.items() if v is not _MISSING}


_TEMPLATES: dict[type[BaseModel], _Template] = {}


def _template(cls: type[BaseModel]) -> _Template:
    template = _TEMPLATES.get(cls)
    if template is None:
        template = _TEMPLATES[cls] = _Template(cls)
    return template


def plain_defaults(cls: type[BaseModel]) -> dict[str, Any]:
    """The fields of `cls` that have a plain default (no factory), with it; shared, don't mutate."""
    return _template(cls).plain


def construct(cls: type[M], data: dict[str, Any]) -> M:
    """Make a `cls` whose fields are exactly `data` (every field present, values trusted)."""
    return _build(cls, _TEMPLATES.get(cls) or _template(cls), data)


def _build(cls: type[M], template: _Template, data: dict[str, Any]) -> M:
    obj = _new(cls)
    _set(obj, "__dict__", data)
    fields_set = template.fields_set
    _set(obj, "__pydantic_fields_set__", fields_set if template.shared else set(fields_set))
    _set(obj, "__pydantic_extra__", None)
    _set(obj, "__pydantic_private__", None)
    return obj


def trusted(cls: type[M], /, **fields: Any) -> M:
    """Build `cls` from values that are already valid (right types, tuples, frozen dicts).

    Missing fields take their defaults. Only for values the framework made itself: nothing is
    checked, which is what makes it several times faster than validated construction.
    """
    template = _TEMPLATES.get(cls) or _template(cls)
    data = template.defaults.copy()  # keeps the field order
    data.update(fields)
    for name, factory in template.factories:
        if name not in fields:
            data[name] = factory()
    if not fields.keys() >= template.required_set:
        missing = next(name for name in template.required if name not in fields)
        raise TypeError(f"{cls.__name__}: missing required field {missing!r}")
    return _build(cls, template, data)
