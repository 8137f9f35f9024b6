"""Checking what callers pass to an agent, and the private loop for blocking calls."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias, cast

from pydantic import TypeAdapter

from rxagent.errors import ConfigurationError, InvalidInputError
from rxagent.formatters.base import Capabilities, capabilities_for
from rxagent.messages import Msg
from rxagent.models.base import ChatModel, ModelOptions
from rxagent.output import OutputPlan, OutputStrategy, json_schema_for, resolve_output

__all__ = [
    "Deps",
    "LoopThread",
    "check_output_type",
    "coerce_deps",
    "coerce_input",
    "model_capabilities",
    "plan_output",
    "resolve_model",
    "running_loop",
]

Deps: TypeAlias = Sequence[object] | Mapping[type[Any], object] | None
"""Objects injected into tools by type: a list of objects, or a `{type: object}` mapping."""


def coerce_input(msg: object) -> tuple[Msg, ...]:
    """Return a run input as messages.

    Raises:
        InvalidInputError: When `msg` is not a str, a Msg, a list of Msg, or None.
    """
    if msg is None:
        return ()
    if isinstance(msg, str):
        return (Msg.user(msg),)
    if isinstance(msg, Msg):
        return (msg,)
    if isinstance(msg, list | tuple):
        bad = [type(m).__name__ for m in msg if not isinstance(m, Msg)]
        if not bad:
            return tuple(msg)
        raise InvalidInputError(
            f"a run input list must hold only Msg objects, found {', '.join(sorted(set(bad)))}; "
            "wrap text in Msg.user(...)"
        )
    raise InvalidInputError(
        f"a run input must be a str, a Msg or a list of Msg, not {type(msg).__name__}; "
        "pass the user's text as a str or build Msg.user(...)"
    )


def coerce_deps(deps: Deps) -> dict[type[Any], object]:
    if deps is None:
        return {}
    if isinstance(deps, Mapping):
        return dict(deps)
    if isinstance(deps, str | bytes) or not isinstance(deps, Sequence):
        raise ConfigurationError(
            f"deps must be a list of objects (injected by type) or a {{type: object}} mapping, "
            f"not {type(deps).__name__}"
        )
    return {type(d): d for d in deps}


def resolve_model(model: ChatModel | str | None, field: str = "model") -> ChatModel:
    if isinstance(model, str):
        from rxagent.models.registry import resolve  # imports the provider module on demand

        return resolve(model)
    if isinstance(model, ChatModel):
        return model
    raise ConfigurationError(
        f"{field} must be a ChatModel (an object with name, context_window and stream()) or a "
        f"'provider:model' string, not {type(model).__name__}"
    )


class LoopThread:
    """A private event loop on a daemon thread, for `call_sync()` inside a running loop."""

    _lock: Final = threading.Lock()
    _loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def get(cls) -> asyncio.AbstractEventLoop:
        with cls._lock:
            if cls._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(
                    target=loop.run_forever, name="rxagent-call-sync", daemon=True
                ).start()
                cls._loop = loop
            return cls._loop


def check_output_type(output_type: object) -> None:
    """Refuse an `output_type` that cannot be validated from JSON or described as a schema.

    Raises:
        InvalidInputError: Naming the type and what is accepted.
    """
    if output_type is None or output_type is str:
        return
    try:
        TypeAdapter[Any](cast("Any", output_type))
    except Exception as exc:
        raise InvalidInputError(
            f"output_type={output_type!r} cannot be validated from JSON ({type(exc).__name__}); "
            "pass a pydantic model, a dataclass, a TypedDict, list[...], a union, str or int"
        ) from exc
    try:
        json_schema_for(output_type)
    except ConfigurationError as exc:
        raise InvalidInputError(f"bad output_type: {exc}") from exc


def model_capabilities(model: ChatModel, options: ModelOptions) -> Capabilities | None:
    """What `model` can do for a request with `options` (its own default options merged under).

    An HTTP client answers through its formatter; another model may have a `capabilities`
    attribute (the test models do); None when it says nothing.
    """
    defaults = getattr(model, "options", None)
    if isinstance(defaults, ModelOptions):
        options = defaults.merged(options)
    formatter = getattr(model, "formatter", None)
    return capabilities_for(formatter if formatter is not None else model, options)


def plan_output(
    output_type: object,
    strategy: OutputStrategy,
    *,
    model: ChatModel,
    options: ModelOptions,
    tool_names: tuple[str, ...],
    has_tools: bool,
) -> OutputPlan | None:
    """The run's output plan (None without an output type, or for `str`).

    Raises:
        InvalidInputError: The type has no JSON schema, or the strategy does not fit the model
            or the options.
    """
    if output_type is None or output_type is str:
        return None
    check_output_type(output_type)
    capabilities = model_capabilities(model, options)
    key = (output_type, strategy, capabilities, options.response_format is None, has_tools)
    try:
        return _cached_plan(*key, tool_names)
    except TypeError:  # an unhashable output type: no cache
        return _plan(*key, tool_names)


def _plan(
    output_type: object,
    strategy: OutputStrategy,
    capabilities: Capabilities | None,
    no_response_format: bool,
    has_tools: bool,
    tool_names: tuple[str, ...],
) -> OutputPlan:
    options = ModelOptions() if no_response_format else _WITH_RESPONSE_FORMAT
    try:
        return resolve_output(
            output_type,
            strategy=strategy,
            capabilities=capabilities,
            options=options,
            has_tools=has_tools,
            tool_names=tool_names,
        )
    except InvalidInputError:
        raise
    except ConfigurationError as exc:
        raise InvalidInputError(f"output_type={output_type!r}: {exc}") from exc


_cached_plan: Final = functools.lru_cache(maxsize=256)(_plan)
_WITH_RESPONSE_FORMAT: Final = ModelOptions(response_format={"type": "json_object"})


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
