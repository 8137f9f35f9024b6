"""A cache of values computed per object, for frozen messages and schemas.

Also the read-only JSON containers a cached value is shared as (`readonly_json`), so that a
caller who is handed the value cannot change it for the next one.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, NoReturn, SupportsIndex, TypeVar

from rxagent.messages import FrozenDict

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["IdentityCache", "ReadOnlyList", "readonly_json"]

K = TypeVar("K")
V = TypeVar("V")


class _Strong(Generic[K]):
    """A strong reference with the call of a weak one, for objects that take no weak reference."""

    __slots__ = ("obj",)

    def __init__(self, obj: K) -> None:
        self.obj = obj

    def __call__(self) -> K:
        return self.obj


class IdentityCache(Generic[K, V]):
    """Values computed once per object, looked up by identity.

    An entry lives as long as its object: it holds the object by a weak reference, so the cache
    never keeps a message (or a schema) alive, and the entry goes when the object does (an
    object that takes no weak reference is held until the cache starts over). Objects that
    compare equal but are different objects get entries of their own (a `model_copy` keeps a
    message's `id` field but may change its content). When `limit` entries are reached the
    cache starts over.

    Example:
        ```python
        import gc
        from rxagent._cache import IdentityCache
        from rxagent.messages import Msg

        lengths = IdentityCache(lambda msg: len(msg.text), limit=100)
        message = Msg.user("hello")
        assert lengths(message) == 5 and len(lengths) == 1
        del message
        gc.collect()
        assert len(lengths) == 0  # the entry went with its message
        ```
    """

    __slots__ = ("__weakref__", "_compute", "_entries", "_forget", "_limit")

    def __init__(self, compute: Callable[[K], V], limit: int) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[Callable[[], K | None], V]] = {}
        self._limit = limit
        cache = weakref.ref(self)

        def forget(ref: weakref.KeyedRef[int, K]) -> None:  # the object is gone: so is its entry
            alive = cache()
            if alive is None:
                return
            entry = alive._entries.get(ref.key)
            if entry is not None and entry[0] is ref:
                alive._entries.pop(ref.key, None)

        self._forget = forget

    def __len__(self) -> int:
        return len(self._entries)

    def __call__(self, obj: K) -> V:
        """Return the value for `obj`, computing it the first time."""
        key = id(obj)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is obj:
            return entry[1]
        if len(self._entries) >= self._limit:
            self._entries.clear()
        value = self._compute(obj)
        ref: Callable[[], K | None]
        try:
            ref = weakref.KeyedRef(obj, self._forget, key)
        except TypeError:  # no weak reference to it (a tuple, say): held until the cache clears
            ref = _Strong(obj)
        self._entries[key] = (ref, value)
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
