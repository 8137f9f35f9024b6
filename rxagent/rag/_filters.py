"""Metadata filters: a plain dict, translated to Qdrant's `models.Filter`.

| dict value | matches a chunk whose field |
|---|---|
| `"a"`, `3`, `True` | equals it |
| `["a", "b"]` (list, tuple or set) | equals any of them (or, for a list field, holds any) |
| `{"gte": 1, "lt": 5}` | is in the range (`gt`, `gte`, `lt`, `lte`) |

All fields must match. A `qdrant_client.models.Filter` is used as it is, for anything else
(`should`, `must_not`, nested keys, geo, full text).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from qdrant_client import models

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["MetadataFilter", "to_qdrant_filter"]

MetadataFilter: TypeAlias = Mapping[str, Any] | models.Filter
"""What `search`, `delete` and `count` take as `filter`: a dict of field → value, values or
range, or a Qdrant `models.Filter`."""

_RANGE_KEYS: Final = frozenset({"gt", "gte", "lt", "lte"})


def _condition(field: str, value: object) -> models.FieldCondition:
    if isinstance(value, bool | int | str):
        return models.FieldCondition(key=field, match=models.MatchValue(value=value))
    if isinstance(value, list | tuple | set | frozenset):
        values: Sequence[object] = list(value)
        if values and all(isinstance(v, str) for v in values):
            return models.FieldCondition(key=field, match=models.MatchAny(any=list(value)))
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return models.FieldCondition(key=field, match=models.MatchAny(any=list(value)))
        raise ConfigurationError(
            f"filter[{field!r}] must be a non-empty list of strings or of integers, got {value!r}"
        )
    if isinstance(value, Mapping):
        keys = set(value)
        if not keys or not keys <= _RANGE_KEYS:
            raise ConfigurationError(
                f"filter[{field!r}] as a dict is a range with keys among gt, gte, lt, lte; "
                f"got {sorted(map(str, keys))}"
            )
        return models.FieldCondition(key=field, range=models.Range(**dict(value)))
    raise ConfigurationError(
        f"filter[{field!r}] must be a str, int, bool, a list of them or a range dict, got "
        f"{type(value).__name__}; pass a qdrant_client.models.Filter for anything else"
    )


def to_qdrant_filter(filter: MetadataFilter | None) -> models.Filter | None:
    """Translate a metadata filter to Qdrant's `models.Filter` (None stays None).

    Raises:
        ConfigurationError: For a value the dict form cannot express, naming the field.

    Example:
        ```python
        from qdrant_client import models
        from rxagent.rag import to_qdrant_filter

        translated = to_qdrant_filter({"lang": ["en", "de"], "year": {"gte": 2024}})
        assert isinstance(translated, models.Filter) and len(translated.must) == 2
        ```
    """
    if filter is None or isinstance(filter, models.Filter):
        return filter
    if not isinstance(filter, Mapping):
        raise ConfigurationError(
            f"filter must be a dict of field -> value or a qdrant_client.models.Filter, got "
            f"{type(filter).__name__}"
        )
    return models.Filter(must=[_condition(str(k), v) for k, v in filter.items()])
