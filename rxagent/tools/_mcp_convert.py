"""MCP tools as rxagent tools: names, argument checks against the server's schema, results.

Pure functions over the SDK's types: which server tools are offered and under what name, how
the model's arguments are checked against a tool's JSON schema (every violation, by field), and
how a `CallToolResult` becomes a `ToolResult` (text, structured content as JSON, images as
content blocks, `isError` as an error result).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

import mcp.types as mcp_types
from pydantic_core import to_json

from rxagent.errors import ToolDefinitionError
from rxagent.messages import ImageBlock, TextBlock
from rxagent.tools._result import ToolResult

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Mapping, Sequence

__all__ = ["argument_checker", "offered_names", "to_tool_result"]

_INVALID_CHARS: Final = re.compile(r"[^A-Za-z0-9_-]")
_MAX_NAME: Final = 64
_PROBLEMS_SHOWN: Final = 10


def offered_names(
    label: str,
    tools: Sequence[mcp_types.Tool],
    *,
    allow: Collection[str] | None,
    deny: Collection[str],
    prefix: str | None,
) -> dict[str, mcp_types.Tool]:
    """Return the tools to offer, by the name the model will call them.

    `allow` and `deny` name the server's tools (without the prefix); a name the server does not
    have is an error, since it is most likely a typo that would expose or hide the wrong tool.
    A name is `prefix_name`, with characters providers refuse replaced by `_`.

    Raises:
        ToolDefinitionError: For an unknown name in `allow` or `deny`, or names that are too
            long or clash once made valid.
    """
    by_name = {t.name: t for t in tools}
    for option, names in (("allow", allow or ()), ("deny", deny)):
        unknown = sorted(n for n in names if n not in by_name)
        if unknown:
            raise ToolDefinitionError(
                f"{label} has no tool {', '.join(map(repr, unknown))} (in {option}=); "
                f"its tools: {', '.join(by_name) or 'none'}"
            )
    offered: dict[str, mcp_types.Tool] = {}
    for tool in tools:
        if (allow is not None and tool.name not in allow) or tool.name in deny:
            continue
        name = _INVALID_CHARS.sub("_", f"{prefix}_{tool.name}" if prefix else tool.name)
        if len(name) > _MAX_NAME or not name:
            raise ToolDefinitionError(
                f"{label}: tool {tool.name!r} would be called {name!r}, longer than the "
                f"{_MAX_NAME} characters providers accept; use a shorter prefix= or "
                f"deny=[{tool.name!r}]"
            )
        if name in offered:
            raise ToolDefinitionError(
                f"{label}: tools {offered[name].name!r} and {tool.name!r} would both be called "
                f"{name!r}; deny one of them with deny=[...]"
            )
        offered[name] = tool
    return offered


def argument_checker(schema: Mapping[str, Any]) -> Callable[[dict[str, Any]], list[str]]:
    """Return a function listing how arguments violate `schema` (empty when they fit).

    Each problem reads `field: message`, with nested fields joined by dots. A schema that is
    not valid JSON schema checks nothing: the server still validates what it receives.
    """
    from jsonschema import exceptions, validators  # type: ignore[import-untyped]

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError:
        return _nothing_wrong
    validator = cls(schema)

    def problems(arguments: dict[str, Any]) -> list[str]:
        found: list[str] = []
        for error in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
            path = [str(part) for part in error.absolute_path]
            if error.validator == "required":
                missing = re.match(r"'(.+)' is a required property", error.message)
                if missing:
                    found.append(".".join([*path, missing.group(1)]) + ": Field required")
                    continue
            found.append(f"{'.'.join(path) or '(arguments)'}: {error.message}")
        if len(found) > _PROBLEMS_SHOWN:
            found[_PROBLEMS_SHOWN:] = [f"... and {len(found) - _PROBLEMS_SHOWN} more"]
        return found

    return problems


def _nothing_wrong(arguments: dict[str, Any]) -> list[str]:
    del arguments
    return []


def to_tool_result(result: mcp_types.CallToolResult) -> ToolResult:
    """Map a tool's result: text, structured content (JSON), images, and `isError`.

    - `isError` gives an error result with the text the server sent.
    - Text is what the server meant the model to read, so it wins over structured content
      (servers send both, the text a rendering of the same data, as the MCP spec recommends);
      structured content without text is given as JSON.
    - Text alone is joined into one string; with images, the output is content blocks.
    - Audio, resource links and embedded resources become text (images stay images).
    """
    blocks = [_to_block(item) for item in result.content]
    texts = [b.text for b in blocks if isinstance(b, TextBlock)]
    if result.is_error:
        return ToolResult("\n".join(texts) or "the tool failed without saying why", is_error=True)
    if not texts and result.structured_content is not None:
        if not blocks:
            return ToolResult(result.structured_content)
        structured = to_json(result.structured_content).decode()
        blocks.insert(0, TextBlock(text=structured))
    if len(texts) == len(blocks):
        return ToolResult("\n".join(texts))
    return ToolResult(tuple(blocks))


def _to_block(item: mcp_types.ContentBlock) -> TextBlock | ImageBlock:
    if isinstance(item, mcp_types.TextContent):
        return TextBlock(text=item.text)
    if isinstance(item, mcp_types.ImageContent):
        return ImageBlock(data=item.data, media_type=item.mime_type)
    if isinstance(item, mcp_types.ResourceLink):
        line = f"[resource {item.name}: {item.uri}]"
        return TextBlock(text=f"{line} {item.description}" if item.description else line)
    if isinstance(item, mcp_types.EmbeddedResource):
        return _resource_block(item.resource)
    mime = getattr(item, "mime_type", None) or "unknown type"
    return TextBlock(
        text=f"[{item.type} content ({mime}) omitted: only text and images are passed on]"
    )


def _resource_block(
    resource: mcp_types.TextResourceContents | mcp_types.BlobResourceContents,
) -> TextBlock | ImageBlock:
    if isinstance(resource, mcp_types.TextResourceContents):
        return TextBlock(text=f"[resource {resource.uri}]\n{resource.text}")
    mime = resource.mime_type
    if mime is not None and mime.startswith("image/"):
        return ImageBlock(data=resource.blob, media_type=mime)
    return TextBlock(text=f"[resource {resource.uri} ({mime or 'binary'}) omitted: binary content]")
