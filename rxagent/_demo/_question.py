"""Reading a question the way the demo model does: its arithmetic and its keywords.

Both are deterministic and offline. `find_arithmetic` finds the expressions in a question
("17 * 23", "2 plus 3", "(1 + 2) ** 3") with a tokenizer and the `ast` parser; nothing is
evaluated here, that is the calculator's job. `docs_query` keeps the words worth searching the
docs for: not stop words, not numbers, not the arithmetic.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Final

__all__ = ["MAX_EXPRESSIONS", "MAX_QUERY_WORDS", "Question", "docs_query", "find_arithmetic"]

MAX_EXPRESSIONS: Final = 3
"""The most expressions one question sends to the calculator."""
MAX_QUERY_WORDS: Final = 8
"""The most keywords one docs query has."""

_TOKEN: Final = re.compile(
    r"""
    (?P<number>(?<![\w.])[0-9]+(?:\.[0-9]+)?(?!\w|\.[0-9]))
    | (?P<op>\*\*|//|[-+*/%^\u00d7\u00f7\u2212])
    | (?P<paren>[()])
    | (?P<space>\s+)
    | (?P<word>\w+)
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_SYMBOLS: Final = {"^": "**", "\u00d7": "*", "\u00f7": "/", "\u2212": "-"}
"""`^`, and the multiplication, division and minus signs, as the calculator writes them."""
_OPERATOR_WORDS: Final = {"plus": "+", "minus": "-", "times": "*", "x": "*"}
_WORDS_BEFORE_BY: Final = {"multiplied": "*", "divided": "/"}
_ALLOWED_NODES: Final = (
    ast.Expression,
    ast.BinOp,
    ast.UnaryOp,
    ast.Constant,
    ast.operator,
    ast.UAdd,
    ast.USub,
)
_BINARY_ONLY: Final = ("*", "/", "**", "//", "%")

_WORD: Final = re.compile(r"[a-z][a-z0-9_]*")
_STOPWORDS: Final = frozenset(
    """
    a about after all also am an and any are as at be because been before being but by can
    could did do does doing done each else even ever every explain for from get gets give go
    had has have having he her here him his how i if in into is it its just know let like
    many may me might more most much must my need no not now of off ok okay on once one only
    or other our out over please really say says see shall she should show so some such tell
    than thank thanks that the their them then there these they thing things this those to too
    try under up us use used uses using very want was way we well were what when where which
    while who whom whose why will with work works would yes you your hello hi hey bye
    calculate compute computed equal equals result
    """.split()
)
"""Words that say nothing about what to look up in the docs."""


@dataclass(frozen=True, slots=True)
class _Part:
    kind: str
    value: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Question:
    """What the demo model reads in a question."""

    text: str
    """The question."""
    expressions: tuple[str, ...]
    """Arithmetic for the calculator, in the calculator's syntax."""
    query: str
    """Keywords for the docs search; empty when there are none."""

    @classmethod
    def read(cls, text: str) -> Question:
        """Read `text`: its arithmetic and, from the rest of it, the docs query.

        Example:
            ```python
            from rxagent._demo._question import Question

            question = Question.read("How do hooks work, and what is 17 x 23 + 4?")
            assert question.expressions == ("17 * 23 + 4",) and question.query == "hooks"
            assert Question.read("What is 17 * 23?").query == ""
            assert Question.read("Hello!").expressions == () and not Question.read("Hi").query
            ```
        """
        found = _find(text)
        rest = text
        for start, end, _ in reversed(found):
            rest = f"{rest[:start]} {rest[end:]}"
        return cls(text, tuple(expression for _, _, expression in found), docs_query(rest))


def _is_arithmetic(expression: str) -> bool:
    """True for numbers, operators and parentheses with at least one binary operation."""
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError):
        return False
    nodes = list(ast.walk(tree))  # constants are numbers: the runs hold no words or quotes
    if not all(isinstance(node, _ALLOWED_NODES) for node in nodes):
        return False
    return any(isinstance(node, ast.BinOp) for node in nodes)


def _runs(text: str) -> list[list[_Part]]:
    """Maximal runs of numbers, operators and parentheses (spaces between them are skipped)."""
    runs: list[list[_Part]] = [[]]
    by_may_follow = False
    for match in _TOKEN.finditer(text):
        kind, value = match.lastgroup or "other", match.group()
        lowered = value.lower()
        if kind == "space":
            continue
        if kind == "word" and lowered == "by" and by_may_follow:
            by_may_follow = False
            continue
        by_may_follow = kind == "word" and lowered in _WORDS_BEFORE_BY
        if kind == "word" and lowered in _OPERATOR_WORDS:
            kind, value = "op", _OPERATOR_WORDS[lowered]
        elif by_may_follow:
            kind, value = "op", _WORDS_BEFORE_BY[lowered]
        elif kind == "op":
            value = _SYMBOLS.get(value, value)
        if kind in ("word", "other"):
            runs.append([])
        else:
            runs[-1].append(_Part(kind, value, match.start(), match.end()))
    return runs


def _trim(parts: list[_Part]) -> list[_Part]:
    """Drop what cannot start or end an expression: dangling operators and stray parentheses."""
    while parts and parts[0].value in (*_BINARY_ONLY, ")"):
        parts = parts[1:]
    while parts and (parts[-1].kind == "op" or parts[-1].value == "("):
        parts = parts[:-1]
    opened = sum(p.value == "(" for p in parts) - sum(p.value == ")" for p in parts)
    if opened > 0 and parts and parts[0].value == "(":  # "(see 3 + 4" -> "3 + 4"
        return _trim(parts[1:])
    if opened < 0 and parts and parts[-1].value == ")":  # "3 + 4)" -> "3 + 4"
        return _trim(parts[:-1])
    return parts


def _format(parts: list[_Part]) -> str:
    """Write the parts as the calculator reads them: `17 * 23 + 4`, `-(2 + 3) ** -1`."""
    out = ""
    previous: _Part | None = None
    for part in parts:
        if part.kind == "op":
            unary = previous is None or previous.kind == "op" or previous.value == "("
            if not unary:
                out += f" {part.value} "
            else:
                out += (" " if out and out[-1] not in " (" else "") + part.value
        elif out and (out[-1].isdigit() or out[-1] == ")"):
            out += f" {part.value}" if part.value != ")" else ")"
        else:
            out += part.value
        previous = part
    return out


def _find(text: str) -> list[tuple[int, int, str]]:
    """The arithmetic in `text`: `(start, end, expression)`, at most `MAX_EXPRESSIONS`."""
    found: list[tuple[int, int, str]] = []
    for run in _runs(text):
        parts = _trim(run)
        expression = _format(parts)
        if any(p.kind == "number" for p in parts) and _is_arithmetic(expression):
            found.append((parts[0].start, parts[-1].end, expression))
            if len(found) == MAX_EXPRESSIONS:
                break
    return found


def find_arithmetic(text: str) -> tuple[str, ...]:
    """Return the arithmetic expressions in `text`, in the calculator's syntax.

    An expression is numbers, `+ - * / // % **` (also `^`, the multiplication, division and minus
    signs, and the words plus, minus, times, x, multiplied by, divided by) and parentheses, with
    at least one binary operation.
    A number glued to letters (`gpt-4o`) is not arithmetic. Nothing is evaluated.

    Example:
        ```python
        from rxagent._demo._question import find_arithmetic

        assert find_arithmetic("What is 17 * 23?") == ("17 * 23",)
        assert find_arithmetic("2 plus 2, then 10 divided by 4") == ("2 + 2", "10 / 4")
        assert find_arithmetic("Is gpt-4o-mini better than version 3?") == ()
        ```
    """
    return tuple(expression for _, _, expression in _find(text))


def docs_query(text: str) -> str:
    """Return the words of `text` worth searching the docs for, in order, without repeats.

    Stop words, numbers and single letters are left out, and so is "rxagent" unless it is the
    only word (every docs section is about rxagent).

    Example:
        ```python
        from rxagent._demo._question import docs_query

        assert docs_query("How do hooks work in rxagent?") == "hooks"
        assert docs_query("What is rxagent?") == "rxagent"
        assert docs_query("Hello, how are you?") == ""
        ```
    """
    words: list[str] = []
    for word in _WORD.findall(text.lower()):
        if len(word) > 1 and word not in _STOPWORDS and word not in words:
            words.append(word)
    if len(words) > 1 and "rxagent" in words:
        words.remove("rxagent")
    return " ".join(words[:MAX_QUERY_WORDS])
