"""A small keyword search over rxagent's own documentation: the demo's `search_docs` tool.

The corpus is split into sections:

- the Markdown guides, one section per heading, when a docs folder is found: packaged with
  rxagent (`importlib.resources`), or the `docs/` folder of a source checkout;
- always, the docstrings of rxagent's public modules and of the names in `rxagent.__all__`, so
  the search works from an installed wheel too.

Ranking is BM25 over lower-cased words (a trailing plural "s" is dropped), with matches in a
section's heading or source name weighted up.
"""

from __future__ import annotations

import functools
import importlib
import importlib.resources
import inspect
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TypedDict

from rxagent.tools import tool

__all__ = [
    "DocHit",
    "DocSection",
    "find_docs_dir",
    "load_corpus",
    "search_docs",
    "search_sections",
]

PUBLIC_MODULES: Final = (
    "rxagent",
    "rxagent.messages",
    "rxagent.events",
    "rxagent.errors",
    "rxagent.result",
    "rxagent.agent",
    "rxagent.hooks",
    "rxagent.models",
    "rxagent.tools",
    "rxagent.state",
    "rxagent.testing",
)
"""Modules whose docstrings are searched."""

MAX_LIMIT: Final = 10
"""The most hits `search_docs` returns."""

_WORD: Final = re.compile(r"[a-z0-9_]+")
_HEADING: Final = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE: Final = re.compile(r"^\s*(```|~~~)")
_STOPWORDS: Final = frozenset(
    "a an and are as at be by can do does for from how i in is it of on or that the this to "
    "what when where which who why with you your".split()
)
_SNIPPET_CHARS: Final = 180
_K1: Final = 1.2
_B: Final = 0.5
_HEADING_WEIGHT: Final = 3


class DocHit(TypedDict):
    """One search result."""

    source: str
    """Where it comes from: a docs file (`docs/hooks.md`) or a Python name (`rxagent.hook`)."""
    heading: str
    """The section's heading (or the docstring's first line)."""
    snippet: str
    """Up to about 180 characters around the first match."""


@dataclass(frozen=True, slots=True)
class DocSection:
    """A searchable piece of documentation."""

    source: str
    """A docs file path or a Python name."""
    heading: str
    """The section heading."""
    body: str
    """The section text."""


def _normalize(word: str) -> str:
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _terms(text: str) -> list[str]:
    return [_normalize(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS]


def _is_rxagent_checkout(root: Path) -> bool:
    try:
        return 'name = "rxagent"' in (root / "pyproject.toml").read_text(encoding="utf-8")
    except OSError:
        return False


def find_docs_dir() -> Path | None:
    """Return the folder of rxagent's Markdown docs, or None when there is none.

    It looks for docs packaged with rxagent first, then for the `docs/` folder of the source
    checkout rxagent is imported from (recognised by its `pyproject.toml`).
    """
    packaged = importlib.resources.files("rxagent").joinpath("docs")
    if isinstance(packaged, Path) and any(packaged.rglob("*.md")):
        return packaged
    package_dir = Path(inspect.getfile(importlib.import_module("rxagent"))).resolve().parent
    root = package_dir.parent
    docs = root / "docs"
    if docs.is_dir() and _is_rxagent_checkout(root) and any(docs.rglob("*.md")):
        return docs
    return None


def split_markdown(source: str, text: str) -> list[DocSection]:
    """Split Markdown into one section per heading (headings inside code fences don't count)."""
    sections: list[DocSection] = []
    lines: list[str] = []
    heading, in_fence = source, False
    for line in text.splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        found = None if in_fence else _HEADING.match(line)
        if found is None:
            lines.append(line)
            continue
        if "\n".join(lines).strip():
            sections.append(DocSection(source, heading, "\n".join(lines).strip()))
        heading, lines = found.group(2).strip(), []
    if "\n".join(lines).strip():
        sections.append(DocSection(source, heading, "\n".join(lines).strip()))
    return sections


def _markdown_sections(docs: Path) -> list[DocSection]:
    sections: list[DocSection] = []
    for path in sorted(docs.rglob("*.md")):
        source = f"docs/{path.relative_to(docs).as_posix()}"
        try:
            sections.extend(split_markdown(source, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            continue
    return sections


def _docstring_section(source: str, doc: str) -> DocSection:
    summary, _, rest = doc.partition("\n")
    return DocSection(source, summary.strip(), rest.strip() or summary.strip())


def _docstring_sections() -> list[DocSection]:
    sections: list[DocSection] = []
    seen: set[int] = set()
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        doc = inspect.cleandoc(module.__doc__ or "")
        if doc:
            sections.append(_docstring_section(module_name, doc))
    package = importlib.import_module("rxagent")
    for name in sorted(getattr(package, "__all__", ())):
        obj = getattr(package, name, None)
        own_doc = getattr(obj, "__doc__", None)
        if not (inspect.isclass(obj) or callable(obj)) or not own_doc or id(obj) in seen:
            continue
        if inspect.isclass(obj) and "__doc__" not in vars(obj):
            continue  # an inherited docstring says nothing about this class
        seen.add(id(obj))
        sections.append(_docstring_section(f"rxagent.{name}", inspect.cleandoc(own_doc)))
    return sections


@functools.cache
def load_corpus(docs_dir: Path | None = None) -> tuple[DocSection, ...]:
    """Return the sections searched: the Markdown guides in `docs_dir`, then the docstrings."""
    found = _markdown_sections(docs_dir) if docs_dir is not None else []
    return (*found, *_docstring_sections())


def _snippet(body: str, terms: set[str]) -> str:
    flat = " ".join(body.split())
    position = 0
    for match in _WORD.finditer(flat.lower()):
        if _normalize(match.group()) in terms:
            position = match.start()
            break
    start = max(0, position - 60)
    if start:
        space = flat.find(" ", start)
        start = space + 1 if 0 <= space < position else start
    end = min(len(flat), start + _SNIPPET_CHARS)
    if end < len(flat):
        space = flat.rfind(" ", start, end)
        end = space if space > position else end
    prefix = "…" if start else ""
    suffix = "…" if end < len(flat) else ""
    return f"{prefix}{flat[start:end]}{suffix}"


@functools.lru_cache(maxsize=8)
def _index(
    sections: tuple[DocSection, ...],
) -> tuple[tuple[tuple[Counter[str], Counter[str], int], ...], float]:
    """Each section's heading and body term counts and length, and the average length.

    Cached per corpus, so a search costs one pass over the counts, not a re-tokenizing.
    """
    documents = tuple(
        (Counter(_terms(f"{s.source} {s.heading}")), Counter(body), len(body) or 1)
        for s in sections
        for body in (_terms(s.body),)
    )
    return documents, sum(length for _, _, length in documents) / len(documents)


def search_sections(query: str, sections: tuple[DocSection, ...], limit: int = 3) -> list[DocHit]:
    """Rank `sections` for `query` (BM25, headings weighted up) and return the best `limit`.

    Example:
        ```python
        from rxagent._demo import DocSection, search_sections

        sections = (
            DocSection("docs/a.md", "Hooks", "Hooks run in priority order."),
            DocSection("docs/b.md", "Tools", "Tools are typed functions."),
        )
        hits = search_sections("hook priority", sections)
        assert [h["source"] for h in hits] == ["docs/a.md"]
        ```
    """
    wanted = set(_terms(query))
    if not wanted or not sections:
        return []
    documents, average = _index(sections)
    count = len(documents)
    idf: dict[str, float] = {}
    for term in wanted:
        found_in = sum(1 for head, body, _ in documents if term in head or term in body)
        idf[term] = math.log(1 + (count - found_in + 0.5) / (found_in + 0.5))
    scored: list[tuple[float, int]] = []
    for position, (head, body, length) in enumerate(documents):
        score = 0.0
        for term in wanted:
            frequency = body[term] + _HEADING_WEIGHT * head[term]
            if not frequency:
                continue
            norm = _K1 * (1 - _B + _B * length / average)
            score += idf[term] * frequency * (_K1 + 1) / (frequency + norm)
        if score > 0:
            scored.append((score, position))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [
        DocHit(
            source=sections[i].source,
            heading=sections[i].heading,
            snippet=_snippet(sections[i].body, wanted),
        )
        for _, i in scored[:limit]
    ]


@tool
def search_docs(query: str, limit: int = 3) -> list[DocHit]:
    """Search rxagent's documentation by keywords.

    Returns the best-matching sections, each with its source file (or Python name), heading and
    a short snippet around the first match.

    Args:
        query: Keywords, for example "hooks priority".
        limit: How many hits to return (1 to 10).
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit must be between 1 and {MAX_LIMIT}, got {limit}")
    if not _terms(query):
        raise ValueError(f"the query {query!r} has no keywords to search for")
    return search_sections(query, load_corpus(find_docs_dir()), limit)
