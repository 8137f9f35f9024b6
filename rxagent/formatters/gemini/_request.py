"""`GeminiFormatter.format`: rxagent messages, tools and options → a `generateContent` body.

Also where thought signatures are placed: a signature-only `ThinkingBlock` lends its signature to
the next text, function-call or image part, or is sent as a part of its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias

from rxagent.formatters.base import unsupported
from rxagent.messages import (
    Block,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    thaw,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.errors import InvalidRequestError
    from rxagent.formatters.gemini._formatter import GeminiFormatter
    from rxagent.messages import Msg
    from rxagent.models.base import ModelOptions, ToolSchema

__all__ = ["AGENT_CALL_ID", "CALLING_MODES", "JSON_MIME", "CallIds", "build_body", "model_parts"]

CallIds: TypeAlias = Literal["model", "always", "never"]
"""Which tool-call ids `format` sends (see `GeminiFormatter`)."""

AGENT_CALL_ID: Final = re.compile(r"call_\d+")
"""The ids rxagent's agent assigns to calls that came without one (`call_<n>`)."""

CALLING_MODES: Final[Mapping[str, str]] = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
"""`ModelOptions.tool_choice` keywords → `functionCallingConfig.mode`."""

JSON_MIME: Final = "application/json"
"""The `responseMimeType` a JSON `response_format` sets."""

_DATA_URL: Final = re.compile(r"data:([^;,]+);base64,(.*)", re.DOTALL)
_RESERVED_EXTRA: Final = frozenset(("contents", "systemInstruction"))


def build_body(
    fmt: GeminiFormatter,
    messages: Sequence[Msg],
    tools: Sequence[ToolSchema],
    options: ModelOptions,
) -> dict[str, Any]:
    """Build the `generateContent` request body (see `GeminiFormatter.format`)."""
    provider = fmt.provider
    system, contents = _contents(fmt, messages)
    body: dict[str, Any] = {"contents": contents}
    if system:
        body["systemInstruction"] = {"parts": system}
    if tools:
        body["tools"] = [{"functionDeclarations": [_declaration(t) for t in tools]}]
        choice = options.tool_choice
        if choice is not None:
            body["toolConfig"] = {"functionCallingConfig": _calling_config(choice)}
    if options.parallel_tool_calls is False:
        raise unsupported(
            provider,
            "parallel_tool_calls=False",
            "Gemini has no switch to turn parallel function calls off; leave it unset "
            "(ReActAgent(parallel_tool_calls=False) runs the calls one by one instead)",
        )
    generation = _generation_config(provider, options)
    if generation:
        body["generationConfig"] = generation
    if options.extra:
        _merge_extra(provider, body, options.extra)
    return body


# -- tools and options -----------------------------------------------------------------------------


def _declaration(tool: ToolSchema) -> dict[str, Any]:
    wire: dict[str, Any] = {"name": tool.name}
    if tool.description:
        wire["description"] = tool.description
    wire["parametersJsonSchema"] = thaw(tool.parameters)
    return wire


def _calling_config(choice: str) -> dict[str, Any]:
    mode = CALLING_MODES.get(choice)
    if mode is not None:
        return {"mode": mode}
    return {"mode": "ANY", "allowedFunctionNames": [choice]}


def _generation_config(provider: str, options: ModelOptions) -> dict[str, Any]:
    config: dict[str, Any] = {}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    if options.max_output_tokens is not None:
        config["maxOutputTokens"] = options.max_output_tokens
    if options.stop:
        config["stopSequences"] = list(options.stop)
    if options.seed is not None:
        config["seed"] = options.seed
    fmt = options.response_format
    if fmt is not None:
        kind = fmt.get("type")
        spec = fmt.get("json_schema")
        if kind == "json_object":
            config["responseMimeType"] = JSON_MIME
        elif kind == "json_schema" and isinstance(spec, Mapping) and "schema" in spec:
            config["responseMimeType"] = JSON_MIME
            config["responseJsonSchema"] = thaw(spec["schema"])
        elif kind != "text":
            raise unsupported(
                provider,
                f"response_format {thaw(fmt)!r}",
                'use {"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}} '
                'or {"type": "json_object"}',
            )
    return config


def _merge_extra(provider: str, body: dict[str, Any], extra: Mapping[str, Any]) -> None:
    for key, value in extra.items():
        if key in _RESERVED_EXTRA:
            raise unsupported(
                provider,
                f"ModelOptions.extra[{key!r}]",
                f"{key} is built from the messages; pass messages instead",
            )
        if key in ("generationConfig", "toolConfig"):
            if not isinstance(value, Mapping):
                raise unsupported(
                    provider, f"ModelOptions.extra[{key!r}]={value!r}", "give an object"
                )
            body[key] = {**body.get(key, {}), **thaw(value)}
        elif key == "tools":
            if not isinstance(value, list | tuple):
                raise unsupported(
                    provider,
                    f"ModelOptions.extra['tools']={value!r}",
                    'give a list of Gemini tools, e.g. [{"googleSearch": {}}]',
                )
            body["tools"] = [*body.get("tools", ()), *thaw(value)]
        else:
            body[key] = thaw(value)


# -- messages --------------------------------------------------------------------------------------


def _contents(
    fmt: GeminiFormatter, messages: Sequence[Msg]
) -> tuple[list[Any], list[dict[str, Any]]]:
    provider = fmt.provider
    system: list[Any] = []
    contents: list[dict[str, Any]] = []
    results: list[Any] | None = None  # the parts of the current run of tool messages
    for msg in messages:
        role = msg.role
        if role == "tool":
            parts = _tool_parts(fmt, msg)
            if results is None:
                results = parts
                contents.append({"role": "user", "parts": parts})
            else:
                results.extend(parts)
            continue
        results = None
        content = msg.content
        if isinstance(content, str):
            parts = [{"text": content}] if content else []
        elif role == "assistant":
            parts = model_parts(fmt, content)
        elif role == "user":
            parts = _user_parts(provider, content)
        else:
            parts = _system_parts(provider, content)
        if msg.name is not None:
            parts.insert(0, {"text": f"{msg.name}: "})
        if role == "system":
            system.extend(parts)
        elif parts:
            contents.append({"role": "model" if role == "assistant" else "user", "parts": parts})
    return system, contents


def _system_parts(provider: str, content: tuple[Block, ...]) -> list[Any]:
    parts: list[Any] = []
    for block in content:
        if type(block) is not TextBlock:
            raise _misplaced(provider, block, "a system message", "system messages hold text only")
        parts.append({"text": block.text})
    return parts


def _user_parts(provider: str, content: tuple[Block, ...]) -> list[Any]:
    parts: list[Any] = []
    for block in content:
        kind = type(block)
        if kind is TextBlock:
            parts.append({"text": block.text})  # type: ignore[union-attr]
        elif kind is ImageBlock:
            parts.append(_media_part(provider, block))  # type: ignore[arg-type]
        else:
            raise _misplaced(
                provider,
                block,
                "a user message",
                "user messages hold text and images; put tool results in role='tool' "
                "messages (Msg.tool(...))",
            )
    return parts


def model_parts(fmt: GeminiFormatter, content: tuple[Block, ...]) -> list[Any]:
    """The parts of an assistant message's blocks, each signature on the part it belongs to."""
    parts: list[Any] = []
    carried: str | None = None  # a signature waiting for the part it belongs to
    for block in content:
        kind = type(block)
        part: dict[str, Any]
        if kind is TextBlock:
            part = {"text": block.text}  # type: ignore[union-attr]
        elif kind is ToolUseBlock:
            part = {"functionCall": _function_call(fmt, block)}  # type: ignore[arg-type]
        elif kind is ThinkingBlock:
            thinking: str = block.thinking  # type: ignore[union-attr]
            signature: str | None = block.signature  # type: ignore[union-attr]
            if carried is not None:
                parts.append(_signature_part(carried))
                carried = None
            if not thinking and signature is not None:
                carried = signature
                continue
            part = {"text": thinking, "thought": True}
            if signature is not None:
                part["thoughtSignature"] = signature
            parts.append(part)
            continue
        elif kind is ImageBlock:
            part = _media_part(fmt.provider, block)  # type: ignore[arg-type]
        else:
            raise _misplaced(
                fmt.provider,
                block,
                "an assistant message",
                "assistant messages hold text, thinking, tool calls and images",
            )
        if carried is not None:
            part["thoughtSignature"] = carried
            carried = None
        parts.append(part)
    if carried is not None:
        parts.append(_signature_part(carried))
    return parts


def _signature_part(signature: str) -> dict[str, Any]:
    """A part that only carries a signature (no text, function-call or image part to hold it)."""
    return {"text": "", "thoughtSignature": signature}


def _tool_parts(fmt: GeminiFormatter, msg: Msg) -> list[Any]:
    provider = fmt.provider
    content = msg.content
    if isinstance(content, str) or not content:
        raise unsupported(
            provider,
            "a tool message without a ToolResultBlock",
            "build tool messages with Msg.tool(ToolResultBlock(id=..., name=..., output=...))",
        )
    if msg.name is not None:
        raise unsupported(
            provider,
            f"a tool message with name={msg.name!r}",
            "leave Msg.name unset on tool messages; the functionResponse carries the tool name",
        )
    parts: list[Any] = []
    for block in content:
        if type(block) is not ToolResultBlock:
            raise _misplaced(
                provider, block, "a tool message", "tool messages hold ToolResultBlocks only"
            )
        parts.append({"functionResponse": _function_response(fmt, block)})
    return parts


def _misplaced(provider: str, block: Block, where: str, fix: str) -> InvalidRequestError:
    """The error for a block that a message (or tool result) of its kind cannot hold."""
    return unsupported(provider, f"a {block.type} block in {where}", fix)


# -- parts -----------------------------------------------------------------------------------------


def _sends_id(fmt: GeminiFormatter, call_id: str) -> bool:
    """Whether a call or result id goes on the wire (see `GeminiFormatter.call_ids`)."""
    if not call_id or fmt.call_ids == "never":
        return False
    return fmt.call_ids == "always" or AGENT_CALL_ID.fullmatch(call_id) is None


def _call_wire(fmt: GeminiFormatter, call_id: str, name: str) -> dict[str, Any]:
    """The `{id?, name}` a `functionCall` and a `functionResponse` both start with."""
    wire: dict[str, Any] = {"id": call_id} if _sends_id(fmt, call_id) else {}
    wire["name"] = name
    return wire


def _function_call(fmt: GeminiFormatter, block: ToolUseBlock) -> dict[str, Any]:
    wire = _call_wire(fmt, block.id, block.name)
    wire["args"] = thaw(block.input)
    return wire


def _function_response(fmt: GeminiFormatter, block: ToolResultBlock) -> dict[str, Any]:
    key = "error" if block.is_error else "result"
    wire = _call_wire(fmt, block.id, block.name)
    output = block.output
    if isinstance(output, str):
        wire["response"] = {key: output}
        return wire
    texts: list[str] = []
    media: list[Any] = []
    for item in output:
        if type(item) is TextBlock:
            texts.append(item.text)
        elif type(item) is ImageBlock:
            media.append(_media_part(fmt.provider, item))
        else:
            raise _misplaced(
                fmt.provider, item, "a tool result", "tool results hold text and images"
            )
    wire["response"] = {key: "\n".join(texts)}
    if media:
        wire["parts"] = media
    return wire


def _media_part(provider: str, block: ImageBlock) -> dict[str, Any]:
    if block.data is not None:
        return {"inlineData": {"mimeType": block.media_type, "data": block.data}}
    url = block.url or ""
    if url.startswith("data:"):
        match = _DATA_URL.fullmatch(url)
        if match is None:
            raise unsupported(
                provider,
                "an image data: URL that is not base64",
                "use data:<mime type>;base64,<data> or ImageBlock(data=..., media_type=...)",
            )
        return {"inlineData": {"mimeType": match.group(1), "data": match.group(2)}}
    file_data = {"fileUri": url}
    if block.media_type is not None:
        file_data["mimeType"] = block.media_type
    return {"fileData": file_data}
