"""A cache of values computed per object, for frozen messages and schemas.

Also the read-only JSON containers a cached value is shared as (`readonly_json`), so that a
caller who is handed the value cannot change it for the next one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, NoReturn, SupportsIndex, TypeVar

from rxagent.messages import FrozenDict

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["IdentityCache", "ReadOnlyList", "readonly_json"]

K = TypeVar("K")
V = TypeVar("V")


class IdentityCache(Generic[K, V]):
    """Values computed once per object, looked up by identity.

    Each entry holds its object, so the object's `id()` cannot be reused while the entry lives;
    objects that compare equal but are different objects get entries of their own (a
    `model_copy` keeps a message's `id` field but may change its content). When `limit`
    entries are reached the cache starts over.
    """

    __slots__ = ("_compute", "_entries", "_limit")

    def __init__(self, compute: Callable[[K], V], limit: int) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[K, V]] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._entries)

    def __call__(self, obj: K) -> V:
        """Return the value for `obj`, computing it the first time."""
        entry = self._entries.get(id(obj))
        if entry is not None and entry[0] is obj:
            return entry[1]
        if len(self._entries) >= self._limit:
            self._entries.clear()
        value = self._compute(obj)
        self._entries[id(obj)] = (obj, value)
        return value


class ReadOnlyList(list[Any]):
    """A `list` that refuses mutation: a JSON array of a value shared between requests.

    It is still a `list` (it compares, serializes and indexes like one), the counterpart of
    `FrozenDict` where a plain list is expected (`["a", "b"] == ReadOnlyList(["a", "b"])`, where
    a tuple would not be equal). Use `rxagent.messages.thaw()` for a mutable deep copy.
    """

    __slots__ = ()

    def _readonly(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "this list is shared by every request built from the same frozen rxagent object "
            "and cannot be changed; copy it first (for example with rxagent.messages.thaw())"
        )

    append = extend = insert = remove = clear = sort = reverse = _readonly
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _readonly

    def pop(self, index: SupportsIndex = -1) -> NoReturn:
        self._readonly()

    def __reduce__(self) -> tuple[Any, ...]:
        return (ReadOnlyList, (list(self),))

    def __copy__(self) -> ReadOnlyList:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> ReadOnlyList:
        return self


def readonly_json(value: Any) -> Any:
    """Return `value` deeply read-only, with arrays as lists.

    Mappings become `FrozenDict`s and lists and tuples `ReadOnlyList`s; other values (strings,
    numbers, ...) are kept as they are. Encoded with `json`, it gives the same text as
    `rxagent.messages.thaw(value)`, and it compares equal to that copy.
    """
    if isinstance(value, Mapping):
        return FrozenDict({k: readonly_json(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ReadOnlyList(readonly_json(v) for v in value)
    return value
