"""A cache of values computed per object, for frozen messages and schemas."""

from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["IdentityCache"]

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
