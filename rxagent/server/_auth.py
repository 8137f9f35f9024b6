"""Bearer-token authentication: API keys, their non-secret ids, a constant-time check."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from rxagent.context import ANONYMOUS as ANONYMOUS  # the key_id of every caller when auth is off
from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from aiohttp import web

    from rxagent.context import Principal

__all__ = ["ANONYMOUS", "AuthSpec", "KeyRing", "key_id_of", "key_of"]


AuthSpec: TypeAlias = Sequence[str] | Mapping[str, str] | None
"""What `create_app(auth=...)` takes: None (off), API keys, or a mapping key → key_id."""


def key_id_of(key: str) -> str:
    """Return the stable, non-secret id of an API key: `key-` and 12 hex digits of its sha256.

    Example:
        ```python
        from rxagent.server import key_id_of

        assert key_id_of("secret") == key_id_of("secret") != key_id_of("other")
        assert key_id_of("secret").startswith("key-") and len(key_id_of("secret")) == 16
        ```
    """
    return "key-" + hashlib.sha256(key.encode()).hexdigest()[:12]


def _digest(key: bytes) -> bytes:
    return hashlib.sha256(key).digest()


@dataclass(frozen=True, slots=True)
class KeyRing:
    """The accepted API keys (as sha256 digests) and their ids; `None` from `of()`: auth is off.

    Comparing fixed-size digests keeps the time a check takes from depending on a key's length;
    the keys themselves are not kept.
    """

    keys: tuple[tuple[bytes, str], ...]

    @classmethod
    def of(cls, auth: AuthSpec) -> KeyRing | None:
        """Build the key ring `create_app(auth=...)` describes (None: auth off).

        Raises:
            ConfigurationError: For an empty key list, a key that is not a non-empty str, or a
                key_id that is not a non-empty str.
        """
        if auth is None:
            return None
        if isinstance(auth, str | bytes):
            raise ConfigurationError(
                "auth takes a list of API keys or a mapping key -> key_id, not a single str: "
                "write auth=[key]"
            )
        pairs = (
            [(k, v) for k, v in auth.items()]
            if isinstance(auth, Mapping)
            else [(k, key_id_of(k) if isinstance(k, str) else "") for k in auth]
        )
        if not pairs:
            raise ConfigurationError("auth has no API keys; pass auth=None to turn auth off")
        for key, key_id in pairs:
            if not isinstance(key, str) or not key.strip():
                got = "a blank str" if isinstance(key, str) else type(key).__name__  # not the key
                raise ConfigurationError(f"every API key must be a non-empty str, got {got}")
            if not isinstance(key_id, str) or not key_id:
                raise ConfigurationError(
                    f"every key_id must be a non-empty str, got {key_id!r} for a key"
                )
        return cls(tuple((_digest(key.encode()), key_id) for key, key_id in pairs))

    def key_id(self, request: web.Request) -> str | None:
        """Return the id of the key the request's `Authorization: Bearer` header carries.

        Every key is compared, in constant time, whatever matches: the time taken does not
        say which key (or how much of one) was right.
        """
        header = request.headers.get("Authorization", "")
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        given = _digest(token.strip().encode("utf-8", "surrogateescape"))
        found: str | None = None
        for key, key_id in self.keys:
            if hmac.compare_digest(given, key) and found is None:
                found = key_id
        return found


def key_of(principal: Principal) -> str:
    """The id of the caller's API key, `"anonymous"` when auth is off (what runs count by)."""
    return principal.key_id or ANONYMOUS
