"""Files to text for the knowledge base: Markdown, text, reStructuredText, HTML, Python.

HTML loses its tags (the standard library's `html.parser`; `script` and `style` dropped), and
its `h1`..`h6` become Markdown headings, so the chunker keeps sections together as it does for
Markdown and reStructuredText. Other kinds are read as they are.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Final

from rxagent.errors import ConfigurationError

__all__ = ["SUFFIXES", "html_to_text", "read_document"]

SUFFIXES: Final = frozenset({".md", ".markdown", ".txt", ".text", ".rst", ".html", ".htm", ".py"})
"""The file suffixes `read_document` reads."""

_SKIPPED: Final = frozenset({"script", "style", "template", "noscript", "head"})
_BLOCKS: Final = frozenset(
    {"p", "div", "br", "li", "tr", "pre", "section", "article", "blockquote", "table", "ul", "ol"}
)
_HEADINGS: Final = {f"h{n}": "#" * n for n in range(1, 7)}
_BLANKS: Final = re.compile(r"\n[ \t]*\n(?:[ \t]*\n)+")


class _TextOf(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED:
            self._skipping += 1
        elif tag in _HEADINGS:
            self.parts.append(f"\n\n{_HEADINGS[tag]} ")
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self._skipping = max(0, self._skipping - 1)
        elif tag in _HEADINGS or tag in _BLOCKS:
            self.parts.append("\n\n" if tag in _HEADINGS or tag == "p" else "\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_to_text(html: str) -> str:
    r"""The readable text of an HTML page, headings as Markdown `#` lines.

    Example:
        ```python
        from rxagent.rag import html_to_text

        page = "<h1>Tides</h1><p>The moon <b>pulls</b>.</p><script>x()</script>"
        assert html_to_text(page) == "# Tides\n\nThe moon pulls."
        ```
    """
    parser = _TextOf()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts)
    lines = "\n".join(line.rstrip() for line in text.splitlines())
    return _BLANKS.sub("\n\n", lines).strip()


def read_document(path: str | Path) -> str:
    """The text of a file `SUFFIXES` lists (UTF-8; undecodable bytes replaced).

    Raises:
        ConfigurationError: For a suffix not in `SUFFIXES`.
    """
    file = Path(path)
    suffix = file.suffix.lower()
    if suffix not in SUFFIXES:
        raise ConfigurationError(
            f"{file}: cannot read {suffix or 'files without a suffix'}; readable: "
            f"{', '.join(sorted(SUFFIXES))}"
        )
    text = file.read_bytes().decode("utf-8", errors="replace")
    return html_to_text(text) if suffix in (".html", ".htm") else text
