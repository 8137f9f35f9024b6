"""Entities taken from tool results: what working memory keeps.

`extract_entities` is the default extractor. A JSON result is walked: a string or number under a
key named `id` or ending in `_id` / `Id` is an id, one under `name` or `title` a name, and a
string that is a URL a URL. A text result is searched with regexes for URLs, UUIDs, ticket-style
ids (`OPS-1234`) and `id: value` / `name: value` pairs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

__all__ = ["MAX_ENTITY_CHARS", "Entity", "extract_entities"]

MAX_ENTITY_CHARS: Final = 200
"""Longer values are not entities (a paragraph under `title` is not a name)."""

_MAX_JSON_NODES: Final = 2_000  # a huge result is not walked to its end
_URL: Final = re.compile(r"https?://[^\s<>\"'`)\]}]+")
_UUID: Final = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
_TICKET: Final = re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,9}\b")
_PAIR: Final = re.compile(
    r"\b(?P<key>[A-Za-z][A-Za-z0-9]*[_ ]?(?:id|ID|Id)|id|ID|name|Name|title|Title)\s*[:=]\s*"
    r"(?:\"(?P<double>[^\"\n]+)\"|'(?P<single>[^'\n]+)'|(?P<bare>[^\s,;\"'<>]+))"
)
_ID_KEY: Final = re.compile(r"^(?:id|.+_id|.+Id|.+ID)$")


@dataclass(frozen=True, slots=True)
class Entity:
    """Something a tool result named that later steps may need: an id, a name, a URL.

    Example:
        ```python
        from rxagent.memory import Entity

        page = Entity("page_id", "p_42", tool="create_page")
        assert page.render() == "page_id: p_42 (from create_page)"
        ```
    """

    kind: str
    """What it is: `"id"`, `"name"`, `"url"`, or a key such as `"order_id"`."""
    value: str
    """The value, as the tool returned it."""
    tool: str = ""
    """The tool whose result named it."""

    def render(self) -> str:
        """The line the system prompt shows."""
        source = f" (from {self.tool})" if self.tool else ""
        return f"{self.kind}: {self.value}{source}"


def _scalar(value: object) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | str):
        text = str(value).strip()
        return text if text and len(text) <= MAX_ENTITY_CHARS else None
    return None


def _walk(data: object, tool: str) -> Iterator[Entity]:
    stack: list[object] = [data]
    seen = 0
    while stack and seen < _MAX_JSON_NODES:
        node = stack.pop()
        seen += 1
        if isinstance(node, dict):
            for key, value in node.items():
                text = _scalar(value)
                if text is not None and isinstance(key, str):
                    if _ID_KEY.match(key):
                        yield Entity(key, text, tool)
                    elif key.lower() in ("name", "title"):
                        yield Entity(key.lower(), text, tool)
                    elif isinstance(value, str) and _URL.fullmatch(text):
                        yield Entity("url", text, tool)
                elif isinstance(value, dict | list):
                    stack.append(value)
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, str) and _URL.fullmatch(node):
            yield Entity("url", node, tool)


def _scan(text: str, tool: str) -> Iterator[Entity]:
    named: set[str] = set()  # values a pair already named: not again as a bare id
    for match in _PAIR.finditer(text):
        kind = match["key"].replace(" ", "_")
        kind = kind[:-2] + "id" if kind.endswith("ID") else kind
        kind = kind.lower() if kind.lower() in ("id", "name", "title") else kind
        value = (match["double"] or match["single"] or match["bare"].rstrip(".")).strip()
        if value and len(value) <= MAX_ENTITY_CHARS and not _URL.match(value):
            named.add(value)
            yield Entity(kind, value, tool)
    for match in _URL.finditer(text):
        yield Entity("url", match.group().rstrip(".,;:!?"), tool)
    for pattern in (_UUID, _TICKET):
        for match in pattern.finditer(text):
            if match.group() not in named:
                yield Entity("id", match.group(), tool)


def extract_entities(tool_name: str, result_text: str) -> Iterable[Entity]:
    """The ids, names and URLs in a tool's result, without repeats.

    Example:
        ```python
        from rxagent.memory import extract_entities

        found = extract_entities("create_page", '{"page": {"id": "p_42", "title": "About us"}}')
        assert [e.render() for e in found] == [
            "id: p_42 (from create_page)",
            "title: About us (from create_page)",
        ]
        text = "Opened OPS-7 for ann, see https://example.com/t/7."
        assert [(e.kind, e.value) for e in extract_entities("ticket", text)] == [
            ("url", "https://example.com/t/7"),
            ("id", "OPS-7"),
        ]
        ```
    """
    data: Any = None
    stripped = result_text.strip()
    if stripped[:1] in ("{", "["):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
    found = _walk(data, tool_name) if data is not None else _scan(result_text, tool_name)
    return list(dict.fromkeys(found))
