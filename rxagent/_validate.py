"""Checks of configuration values, shared by the agent and the built-in hooks."""

from __future__ import annotations

from rxagent.errors import ConfigurationError

__all__ = ["check_int"]


def check_int(what: str, value: object, *, optional: bool, minimum: int = 1) -> None:
    """Raise `ConfigurationError` unless `value` is an int of at least `minimum` (or None).

    Args:
        what: How the caller names the setting, for example `"max_iters"`.
        value: The value given.
        optional: Whether None is allowed.
        minimum: The smallest allowed value.
    """
    if value is None and optional:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        unset = " or None" if optional else ""
        raise ConfigurationError(f"{what} must be an int >= {minimum}{unset}, got {value!r}")
