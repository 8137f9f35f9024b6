"""Tool selection: which of many tools one request offers the model.

A `ToolSelector` is given the user's latest message, the tools the request could offer and a
limit, and returns the tools to offer. `ReActAgent(tool_selector=..., max_tools_per_request=N)`
asks it before every request (before `PreReasoningEvent`'s hooks, which see the selection); the
agent keeps only tools it offered it, at most N, in the toolkit's order. A call to a tool that
was not offered gets an error result, as for a tool a hook removed.

The built-in selectors are deterministic: the same message and tools give the same selection.
Ties keep the toolkit's order.
"""

from __future__ import annotations

import math
import operator
import re
from typing import TYPE_CHECKING, Final, Protocol, runtime_checkable

from rxagent.errors import ConfigurationError

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from rxagent.messages import Msg
    from rxagent.models.base import ToolSchema
    from rxagent.rag import Embedder

__all__ = [
    "AllTools",
    "EmbeddingSelector",
    "KeywordSelector",
    "ToolSelector",
    "keywords",
    "latest_user_text",
]

_CACHE_LIMIT: Final = 4096  # cached tool texts per selector: toolkits change rarely
_WORD: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Words too common to tell tools apart: matching them says nothing about a tool.
_STOP_WORDS: Final = frozenset(
    "a an and any are as at be by can do does for from get how i if in into is it its me my "
    "of on or our please should so some than that the their them then there these this to "
    "use using was we what when where which who why will with would you your".split()
)


@runtime_checkable
class ToolSelector(Protocol):
    """Chooses the tools one request offers.

    Example:
        ```python
        import asyncio
        from collections.abc import Sequence

        from rxagent.models.base import ToolSchema
        from rxagent.tools import ToolSelector


        class OnlyReads:
            \"\"\"Offer only the tools whose name starts with `get_`.\"\"\"

            async def select(
                self, query: str, tools: Sequence[ToolSchema], limit: int | None
            ) -> Sequence[ToolSchema]:
                reads = [t for t in tools if t.name.startswith("get_")]
                return reads if limit is None else reads[:limit]


        tools = [ToolSchema(name="get_order"), ToolSchema(name="delete_order")]
        assert isinstance(OnlyReads(), ToolSelector)
        chosen = asyncio.run(OnlyReads().select("show order 7", tools, 5))
        assert [t.name for t in chosen] == ["get_order"]
        ```
    """

    async def select(
        self, query: str, tools: Sequence[ToolSchema], limit: int | None
    ) -> Sequence[ToolSchema]:
        """Return the tools to offer, of `tools`, most relevant first.

        Args:
            query: The text of the user's latest message (`""` when there is none).
            tools: The tools the request could offer, in the toolkit's order.
            limit: The most tools to return (`max_tools_per_request`), or None for no limit.
        """
        ...


def keywords(text: str) -> frozenset[str]:
    """The words of `text` that can tell tools apart: lower case, split at `_`, `-` and case.

    Stop words (`the`, `how`, and `get`, which starts many tool names) are left out, and a
    plural `s` is cut from longer words.

    Example:
        ```python
        from rxagent.tools import keywords

        assert keywords("getWeather for the cities") == {"weather", "city"}
        assert keywords("search_docs") == {"search", "doc"}
        ```
    """
    found: set[str] = set()
    for word in _WORD.findall(text):
        word = word.lower()
        if word in _STOP_WORDS:
            continue
        found.add(_singular(word))
    return frozenset(found)


def latest_user_text(messages: Sequence[Msg]) -> str:
    """The text of the latest user message (`""` when there is none): what selection reads.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.tools import latest_user_text

        history = [Msg.user("weather?"), Msg.assistant("Where?"), Msg.user("in Oslo")]
        assert latest_user_text(history) == "in Oslo"
        assert latest_user_text([]) == ""
        ```
    """
    for message in reversed(messages):
        if message.role == "user":
            return message.text
    return ""


def _singular(word: str) -> str:
    """A crude plural cut, the same for the message and the tools: enough to match them."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _check_always(always: Iterable[str]) -> tuple[str, ...]:
    if isinstance(always, str):
        raise ConfigurationError(
            f"always= takes tool names, not one string; write always=[{always!r}]"
        )
    names = tuple(dict.fromkeys(always))
    for name in names:
        if not isinstance(name, str) or not name:
            raise ConfigurationError(f"always= takes tool names (str), got {name!r}")
    return names


def _best(
    tools: Sequence[ToolSchema], scores: Sequence[float], limit: int | None, always: Sequence[str]
) -> list[ToolSchema]:
    """The `always` tools, then the others by falling score (ties in the tools' order)."""
    pinned = [t for t in tools if t.name in always]
    ranked = sorted(
        (i for i, t in enumerate(tools) if t.name not in always), key=lambda i: (-scores[i], i)
    )
    chosen = pinned + [tools[i] for i in ranked]
    return chosen if limit is None else chosen[:limit]


class AllTools:
    """Offers every tool; with a limit, the first ones in the toolkit's order.

    Example:
        ```python
        import asyncio
        from rxagent.models.base import ToolSchema
        from rxagent.tools import AllTools

        tools = [ToolSchema(name=n) for n in ("a", "b", "c")]
        assert [t.name for t in asyncio.run(AllTools().select("", tools, 2))] == ["a", "b"]
        ```
    """

    async def select(
        self, query: str, tools: Sequence[ToolSchema], limit: int | None
    ) -> Sequence[ToolSchema]:
        """Return the first `limit` tools (all of them without a limit)."""
        return list(tools) if limit is None else list(tools[:limit])

    def __repr__(self) -> str:
        return "AllTools()"


class KeywordSelector:
    """Scores tools by the words they share with the user's message; no model needed.

    A word of the message found in a tool's name counts 2, one found only in its description
    counts 1 (words as `keywords()` reads them). The highest scores are offered; ties, and tools
    that share no word, keep the toolkit's order. It is what `max_tools_per_request` alone uses.

    Args:
        always: Names of tools offered in every request (they count toward the limit).

    Example:
        ```python
        import asyncio
        from rxagent.models.base import ToolSchema
        from rxagent.tools import KeywordSelector

        tools = [
            ToolSchema(name="send_email", description="Send an email message."),
            ToolSchema(name="get_weather", description="Today's weather in a city."),
            ToolSchema(name="convert_currency", description="Convert between currencies."),
        ]
        chosen = asyncio.run(KeywordSelector().select("Weather in Oslo?", tools, 1))
        assert [t.name for t in chosen] == ["get_weather"]
        ```
    """

    def __init__(self, *, always: Iterable[str] = ()) -> None:
        self.always = _check_always(always)
        self._words: dict[tuple[str, str], tuple[frozenset[str], frozenset[str]]] = {}

    def score(self, query: str, tool: ToolSchema) -> int:
        """The score of `tool` for `query`: 2 per shared name word, 1 per description word."""
        return self._score(keywords(query), tool)

    def _score(self, words: frozenset[str], tool: ToolSchema) -> int:
        key = (tool.name, tool.description)
        found = self._words.get(key)
        if found is None:
            if len(self._words) >= _CACHE_LIMIT:
                self._words.clear()
            found = self._words[key] = (keywords(tool.name), keywords(tool.description))
        in_name, in_description = found
        return sum(2 if w in in_name else 1 if w in in_description else 0 for w in words)

    async def select(
        self, query: str, tools: Sequence[ToolSchema], limit: int | None
    ) -> Sequence[ToolSchema]:
        """Return the `always` tools, then the best-scoring others, at most `limit` in all."""
        words = keywords(query)
        return _best(tools, [self._score(words, t) for t in tools], limit, self.always)

    def __repr__(self) -> str:
        return f"KeywordSelector(always={list(self.always)!r})"


class EmbeddingSelector:
    """Scores tools by the cosine similarity of their description to the user's message.

    Each tool's text (its name in words, then its description) is embedded once and cached by
    that text; the message is embedded once per distinct message. Any `rxagent.rag.Embedder`
    works: `LocalEmbedder` offline, or `OpenAIEmbedder` against an embeddings server.

    Args:
        embedder: Turns texts into vectors.
        always: Names of tools offered in every request (they count toward the limit).

    Example:
        ```python
        import asyncio
        from collections.abc import Sequence

        from rxagent.models.base import ToolSchema
        from rxagent.tools import EmbeddingSelector


        class Letters:
            \"\"\"A toy embedder: how often each of a few letters occurs.\"\"\"

            name, dimensions = "letters", 3

            async def embed(self, texts: Sequence[str]) -> list[list[float]]:
                return [[float(t.count(c)) for c in "wxz"] for t in texts]


        tools = [ToolSchema(name="zip_files", description="Zip files."),
                 ToolSchema(name="weather", description="Weather now.")]
        chosen = asyncio.run(EmbeddingSelector(Letters()).select("windy?", tools, 1))
        assert [t.name for t in chosen] == ["weather"]
        ```
    """

    def __init__(self, embedder: Embedder, *, always: Iterable[str] = ()) -> None:
        if not callable(getattr(embedder, "embed", None)):
            raise ConfigurationError(
                f"EmbeddingSelector needs an rxagent.rag.Embedder (with async embed(texts)), "
                f"got {embedder!r}"
            )
        self.embedder = embedder
        self.always = _check_always(always)
        self._vectors: dict[str, list[float]] = {}  # a tool's text -> its unit vector
        self._query: tuple[str, list[float]] | None = None

    @staticmethod
    def tool_text(tool: ToolSchema) -> str:
        """The text embedded for `tool`: its name in words, then its description."""
        name = " ".join(w.lower() for w in _WORD.findall(tool.name)) or tool.name
        return f"{name}: {tool.description}" if tool.description else name

    async def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = await self.embedder.embed(list(texts))
        if len(vectors) != len(texts):
            raise ValueError(f"the embedder returned {len(vectors)} vectors for {len(texts)} texts")
        return [_unit(v) for v in vectors]

    async def similarities(self, query: str, tools: Sequence[ToolSchema]) -> list[float]:
        """The cosine similarity of `query` to each tool's text, in order.

        Raises:
            ValueError: The embedder returned a wrong number of vectors, or vectors of
                different sizes.
        """
        texts = [self.tool_text(t) for t in tools]
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            if len(self._vectors) + len(missing) > _CACHE_LIMIT:  # old descriptions pile up
                self._vectors.clear()
                missing = list(dict.fromkeys(texts))
            self._vectors.update(zip(missing, await self._embed(missing), strict=True))
        if self._query is None or self._query[0] != query:
            (vector,) = await self._embed([query])
            self._query = (query, vector)
        wanted = self._query[1]
        scores = []
        for text in texts:
            vector = self._vectors[text]
            if len(vector) != len(wanted):
                raise ValueError(
                    f"the embedder returned vectors of {len(vector)} and {len(wanted)} "
                    "dimensions; one selector needs one embedder model"
                )
            scores.append(sum(map(operator.mul, vector, wanted)))  # both are unit vectors
        return scores

    async def select(
        self, query: str, tools: Sequence[ToolSchema], limit: int | None
    ) -> Sequence[ToolSchema]:
        """Return the `always` tools, then the most similar others, at most `limit` in all."""
        if not tools:
            return []
        if not query.strip():  # nothing to compare with: the toolkit's order
            return _best(tools, [0.0] * len(tools), limit, self.always)
        return _best(tools, await self.similarities(query, tools), limit, self.always)

    def __repr__(self) -> str:
        return f"EmbeddingSelector({self.embedder!r}, always={list(self.always)!r})"


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [float(x) / norm for x in vector] if norm > 0 else [0.0 for _ in vector]
