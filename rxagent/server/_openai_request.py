"""Reading a Chat Completions request: its parameters checked, its messages and `ModelOptions`.

Everything here is pure. Bad input raises `ApiError` naming the parameter the way OpenAI does
(`messages[2].content`): a wrong type or value is a 422 (`invalid_type`, `invalid_value`,
`missing_required_parameter`), a valid OpenAI request this server cannot honour (client-side
`tools`, `n > 1`, audio, ...) a 400 `unsupported_parameter`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from rxagent.models.base import ModelOptions
from rxagent.server._openai_errors import (
    invalid,
    missing,
    read_object,
    read_text,
    type_name,
    unsupported,
    wrong_type,
)
from rxagent.server._openai_messages import read_messages

if TYPE_CHECKING:
    from rxagent.messages import Msg

__all__ = ["IGNORED_PARAMS", "MAX_OUTPUT_TOKENS", "ChatRequest", "read_chat_request"]

MAX_OUTPUT_TOKENS: Final = 2**31 - 1
"""The largest `max_tokens` / `max_completion_tokens` read (a model's own window may be less)."""

IGNORED_PARAMS: Final = frozenset(
    (
        "frequency_penalty",
        "logit_bias",
        "metadata",
        "parallel_tool_calls",
        "prediction",
        "presence_penalty",
        "reasoning_effort",
        "service_tier",
        "store",
        "top_p",
        "user",
        "verbosity",
        "web_search_options",
    )
)
"""Accepted and ignored: they have no provider-neutral `ModelOptions` field, or only concern
client-side tools (unknown top-level fields are ignored as well)."""


@dataclass(frozen=True, slots=True)
class ChatRequest:
    """A checked Chat Completions request."""

    model: str
    """The agent's name."""
    messages: tuple[Msg, ...]
    """The request's messages, converted (system and developer messages as system messages)."""
    options: ModelOptions
    """What the request sets of temperature, max output tokens, stop, seed and response format."""
    stream: bool
    """Whether the answer is a `chat.completion.chunk` stream."""
    include_usage: bool
    """`stream_options.include_usage`: a last chunk with the usage and no choices."""


def _number(body: Mapping[str, Any], key: str, low: float, high: float) -> float | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise wrong_type(key, "a number", value)
    if not low <= value <= high:
        raise invalid(
            key, f"Invalid '{key}': {value} is out of range; expected a value from {low} to {high}."
        )
    return float(value)


def _integer(
    body: Mapping[str, Any], key: str, low: int | None = None, high: int | None = None
) -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # JSON has one number type: 5.0 is the integer 5
    if isinstance(value, bool) or not isinstance(value, int):
        raise wrong_type(key, "an integer", value)
    if low is not None and value < low:
        raise invalid(key, f"Invalid '{key}': {value}; expected at least {low}.")
    if high is not None and value > high:
        raise invalid(key, f"Invalid '{key}': {value}; expected at most {high}.")
    return value


def _stop(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise wrong_type("stop", "a string or an array of strings", value)
    return tuple(value)


def _response_format(value: object) -> Mapping[str, Any] | None:
    if value is None:
        return None
    fmt = read_object(value, "response_format")
    kind = read_text(fmt, "type", "response_format")
    if kind == "text":
        return None
    if kind == "json_schema":
        schema = read_object(fmt.get("json_schema"), "response_format.json_schema")
        read_text(schema, "name", "response_format.json_schema")
        if schema.get("schema") is not None:
            read_object(schema["schema"], "response_format.json_schema.schema")
    elif kind != "json_object":
        raise invalid(
            "response_format.type",
            f"Invalid value: '{kind}'. Supported values are: 'text', 'json_object' and "
            "'json_schema'.",
        )
    return fmt


def _refuse_client_features(body: Mapping[str, Any], model: str) -> None:
    """400 for what asks the server to hand tool calls, audio or several choices to the client."""
    for key in ("tools", "functions"):
        value = body.get(key)
        if value is not None and value != []:
            raise unsupported(
                key,
                f"Client-side tools are not supported: the agent '{model}' runs its own tools on "
                f"the server and never returns tool_calls. Remove '{key}' from the request.",
            )
    for key in ("tool_choice", "function_call"):
        value = body.get(key)
        if value is not None and value not in ("auto", "none"):
            raise unsupported(
                key,
                f"'{key}' can only be 'auto' or 'none' here: the request has no tools (the "
                f"agent '{model}' runs its own tools on the server).",
            )
    n = _integer(body, "n", 1)
    if n is not None and n != 1:
        raise unsupported(
            "n", f"Only one choice is supported ('n': {n}); send n=1 or leave it out."
        )
    logprobs = body.get("logprobs")
    if logprobs is not None and not isinstance(logprobs, bool):
        raise wrong_type("logprobs", "a boolean", logprobs)
    if logprobs or body.get("top_logprobs") is not None:
        key = "logprobs" if logprobs else "top_logprobs"
        raise unsupported(
            key, f"'{key}' is not supported: an agent's reply has no log probabilities."
        )
    modalities = body.get("modalities")
    if body.get("audio") is not None or (modalities is not None and modalities != ["text"]):
        key = "audio" if body.get("audio") is not None else "modalities"
        raise unsupported(key, f"'{key}': only text output is supported.")


def _options(body: Mapping[str, Any]) -> ModelOptions:
    fields: dict[str, Any] = {}
    temperature = _number(body, "temperature", 0.0, 2.0)
    if temperature is not None:
        fields["temperature"] = temperature
    max_tokens = _integer(body, "max_tokens", 1, MAX_OUTPUT_TOKENS)
    max_completion_tokens = _integer(body, "max_completion_tokens", 1, MAX_OUTPUT_TOKENS)
    limit = max_completion_tokens if max_completion_tokens is not None else max_tokens
    if limit is not None:
        fields["max_output_tokens"] = limit
    stop = _stop(body.get("stop"))
    if stop is not None:
        fields["stop"] = stop
    seed = _integer(body, "seed")
    if seed is not None:
        fields["seed"] = seed
    response_format = _response_format(body.get("response_format"))
    if response_format is not None:
        fields["response_format"] = response_format
    return ModelOptions(**fields)


def _stream_flags(body: Mapping[str, Any]) -> tuple[bool, bool]:
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise wrong_type("stream", "a boolean", stream)
    include_usage = False
    raw = body.get("stream_options")
    if raw is not None:
        stream_options = read_object(raw, "stream_options")
        usage = stream_options.get("include_usage")
        if usage is not None and not isinstance(usage, bool):
            raise wrong_type("stream_options.include_usage", "a boolean", usage)
        include_usage = bool(usage)
    return bool(stream), include_usage


def read_chat_request(body: object) -> ChatRequest:
    """Check a Chat Completions body and read it.

    Raises:
        ApiError: 422 naming the parameter for a wrong type or value; 400
            `unsupported_parameter` for a feature this server cannot honour.

    Example:
        ```python
        import pytest
        from rxagent.server import ApiError
        from rxagent.server._openai_request import read_chat_request

        chat = read_chat_request({
            "model": "calc",
            "messages": [{"role": "developer", "content": "Be brief."},
                         {"role": "user", "content": "2 + 3?"}],
            "max_tokens": 50, "temperature": 0.2, "top_p": 0.9, "stream": True,
        })
        assert [m.role for m in chat.messages] == ["system", "user"]
        assert (chat.options.max_output_tokens, chat.options.temperature) == (50, 0.2)
        with pytest.raises(ApiError) as info:
            read_chat_request({"model": "calc", "messages": [], "tools": [{"type": "function"}]})
        assert (info.value.status, info.value.field) == (400, "tools")
        ```
    """
    if not isinstance(body, Mapping):
        raise invalid(
            "body",
            f"The request body must be a JSON object, not {type_name(body)}.",
            "invalid_type",
        )
    model = body.get("model")
    if model is None:
        raise missing("model")
    if not isinstance(model, str):
        raise wrong_type("model", "a string", model)
    if not model:
        raise invalid("model", "Invalid 'model': empty string. Name one of the server's agents.")
    _refuse_client_features(body, model)
    stream, include_usage = _stream_flags(body)
    options = _options(body)
    messages = read_messages(body.get("messages"))
    return ChatRequest(
        model=model,
        messages=messages,
        options=options,
        stream=stream,
        include_usage=include_usage,
    )
