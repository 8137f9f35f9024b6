"""`GeminiFormatter.parse_request`: a `generateContent` body → messages, tools and options."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

from rxagent.formatters.base import malformed
from rxagent.formatters.gemini._request import CALLING_MODES, JSON_MIME
from rxagent.messages import (
    Block,
    ImageBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from rxagent.models.base import ModelOptions, ToolSchema

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["read_request"]

_CHOICES: Final[Mapping[str, str]] = {"AUTO": "auto", "NONE": "none"}
_BODY_KEYS: Final = ("contents", "systemInstruction", "tools", "toolConfig", "generationConfig")


def read_request(
    body: Mapping[str, Any], provider: str
) -> tuple[list[Msg], list[ToolSchema], ModelOptions]:
    """Read a request body back (see `GeminiFormatter.parse_request`).

    Raises:
        ProviderError: The body is not a `generateContent` request.
    """
    try:
        messages = _read_contents(body)
        tools, extra_tools = _read_tools(body.get("tools"))
        options = _read_options(body, extra_tools)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise malformed(provider, f"not a generateContent request ({exc!r})", body) from exc
    return messages, tools, options


def _read_contents(body: Mapping[str, Any]) -> list[Msg]:
    messages: list[Msg] = []
    system = body.get("systemInstruction")
    if system:
        blocks = tuple(TextBlock(text=part["text"]) for part in system.get("parts") or ())
        if blocks:
            messages.append(Msg(role="system", content=blocks))
    for content in body.get("contents") or ():
        parts = content.get("parts") or ()
        if content.get("role") == "model":
            messages.append(Msg(role="assistant", content=_model_blocks(parts)))
            continue
        pending: list[Block] = []
        for part in parts:
            response = part.get("functionResponse")
            if response is None:
                pending.append(_user_block(part))
                continue
            if pending:
                messages.append(Msg(role="user", content=tuple(pending)))
                pending = []
            messages.append(Msg.tool(_read_function_response(response)))
        if pending:
            messages.append(Msg(role="user", content=tuple(pending)))
    return messages


def _read_options(body: Mapping[str, Any], extra_tools: list[Any]) -> ModelOptions:
    fields: dict[str, Any] = {}
    extra: dict[str, Any] = {k: v for k, v in body.items() if k not in _BODY_KEYS}
    if extra_tools:
        extra["tools"] = extra_tools
    tool_config = dict(body.get("toolConfig") or {})
    calling = tool_config.pop("functionCallingConfig", None)
    if calling is not None:
        choice = _read_calling_config(calling)
        if choice is None:
            tool_config["functionCallingConfig"] = calling
        else:
            fields["tool_choice"] = choice
    if tool_config:
        extra["toolConfig"] = tool_config
    config = dict(body.get("generationConfig") or {})
    for wire, name in (
        ("temperature", "temperature"),
        ("maxOutputTokens", "max_output_tokens"),
        ("seed", "seed"),
    ):
        if config.get(wire) is not None:
            fields[name] = config.pop(wire)
    if config.get("stopSequences") is not None:
        fields["stop"] = tuple(config.pop("stopSequences"))
    if config.get("responseMimeType") == JSON_MIME:
        del config["responseMimeType"]
        schema = config.pop("responseJsonSchema", None)
        fields["response_format"] = (
            {"type": "json_object"}
            if schema is None
            else {"type": "json_schema", "json_schema": {"name": "response", "schema": schema}}
        )
    if config:
        extra["generationConfig"] = config
    if extra:
        fields["extra"] = extra
    return ModelOptions(**fields)


def _read_calling_config(config: Mapping[str, Any]) -> str | None:
    """The `tool_choice` a `functionCallingConfig` says, or None when it says something else."""
    mode = config.get("mode")
    names = config.get("allowedFunctionNames")
    if set(config) - {"mode", "allowedFunctionNames"}:
        return None
    if mode == "ANY":
        if not names:
            return "required"
        return names[0] if len(names) == 1 and names[0] not in CALLING_MODES else None
    return _CHOICES.get(mode) if isinstance(mode, str) and not names else None


def _read_tools(tools: Any) -> tuple[list[ToolSchema], list[Any]]:
    schemas: list[ToolSchema] = []
    others: list[Any] = []
    for i, tool in enumerate(tools or ()):
        if i == 0 and set(tool) == {"functionDeclarations"}:
            schemas.extend(
                ToolSchema(
                    name=d["name"],
                    description=d.get("description") or "",
                    parameters=d.get("parametersJsonSchema")
                    or d.get("parameters_json_schema")  # proto JSON also takes field names
                    or d.get("parameters")
                    or {"type": "object", "properties": {}},
                )
                for d in tool["functionDeclarations"]
            )
        else:
            others.append(tool)
    return schemas, others


def _read_media(part: Mapping[str, Any]) -> ImageBlock | None:
    inline = part.get("inlineData")
    if inline is not None:
        return ImageBlock(data=inline["data"], media_type=inline["mimeType"])
    file_data = part.get("fileData")
    if file_data is not None:
        return ImageBlock(url=file_data["fileUri"], media_type=file_data.get("mimeType"))
    return None


def _user_block(part: Mapping[str, Any]) -> Block:
    if "text" in part:
        return TextBlock(text=part["text"])
    image = _read_media(part)
    if image is None:
        raise ValueError(f"a user part rxagent cannot read: {sorted(part)}")
    return image


def _model_blocks(parts: Sequence[Mapping[str, Any]]) -> tuple[Block, ...]:
    blocks: list[Block] = []
    for part in parts:
        signature = part.get("thoughtSignature")
        if part.get("thought"):
            blocks.append(ThinkingBlock(thinking=part.get("text", ""), signature=signature))
            continue
        if signature is not None:
            blocks.append(ThinkingBlock(thinking="", signature=signature))
        if "text" in part:
            if part["text"] or signature is None:
                blocks.append(TextBlock(text=part["text"]))
            continue
        call = part.get("functionCall")
        if call is not None:
            blocks.append(
                ToolUseBlock(
                    id=call.get("id") or "", name=call["name"], input=call.get("args") or {}
                )
            )
            continue
        image = _read_media(part)
        if image is not None:
            blocks.append(image)
        elif signature is None:
            raise ValueError(f"a model part rxagent cannot read: {sorted(part)}")
    return tuple(blocks)


def _read_function_response(wire: Mapping[str, Any]) -> ToolResultBlock:
    response = wire.get("response") or {}
    is_error = False
    if set(response) == {"result"} and isinstance(response["result"], str):
        text = response["result"]
    elif set(response) == {"error"} and isinstance(response["error"], str):
        text, is_error = response["error"], True
    else:
        text = json.dumps(response)
    images = [_read_media(part) for part in wire.get("parts") or ()]
    output: str | tuple[Block, ...] = text
    if images:
        lead: list[Block] = [TextBlock(text=text)] if text else []
        output = (*lead, *(image for image in images if image is not None))
    return ToolResultBlock(
        id=wire.get("id") or "", name=wire.get("name") or "", output=output, is_error=is_error
    )
