"""How the demo model reads a question: the arithmetic for the calculator, the docs keywords."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent._demo import Question, docs_query, evaluate_arithmetic, find_arithmetic
from rxagent._demo._question import MAX_EXPRESSIONS, MAX_QUERY_WORDS


@pytest.mark.parametrize(
    ("text", "expressions"),
    [
        ("What is 17 * 23?", ("17 * 23",)),
        ("What is 2 + 2?", ("2 + 2",)),
        ("How do hooks work in rxagent, and what is 17 * 23 + 4?", ("17 * 23 + 4",)),
        ("17*23", ("17 * 23",)),
        ("what is 17 x 23", ("17 * 23",)),
        ("17 \u00d7 23 \u00f7 2 and 3 \u2212 1", ("17 * 23 / 2", "3 - 1")),
        ("what is 2^10?", ("2 ** 10",)),
        ("2 ** -1", ("2 ** -1",)),
        ("What is -(3 + 4) * 2?", ("-(3 + 4) * 2",)),
        ("what is 5 - -3?", ("5 - -3",)),
        ("What is 3.5 * 2.", ("3.5 * 2",)),
        ("7 // 2 and 7 % 3", ("7 // 2", "7 % 3")),
        ("2 plus 2, then 10 divided by 4", ("2 + 2", "10 / 4")),
        ("What is 12 divided by 4 times 3?", ("12 / 4 * 3",)),
        ("10 multiplied by 3", ("10 * 3",)),
        ("Compute (see 3 + 4)", ("3 + 4",)),
        ("(3 + 4 is what?", ("3 + 4",)),
        ("is it 3 + 4)?", ("3 + 4",)),
        ("((2+3))*4", ("((2 + 3)) * 4",)),
        ("1 / 0, please", ("1 / 0",)),  # found: the calculator reports the error
        ("a, b, c: 1+1, 2+2, 3+3, 4+4", ("1 + 1", "2 + 2", "3 + 3")),  # at most three
    ],
)
def test_arithmetic_is_found_in_the_calculators_syntax(
    text: str, expressions: tuple[str, ...]
) -> None:
    assert find_arithmetic(text) == expressions
    assert len(expressions) <= MAX_EXPRESSIONS


@pytest.mark.parametrize(
    "text",
    [
        "What are hooks?",
        "Is gpt-4o-mini better than version 3?",  # numbers glued to letters
        "What is 42?",  # a number, no operation
        "What is -3?",
        "50% of 80",
        "x + 1",
        "2024-06-01",  # leading zeros: not Python numbers
        "(2)(3)",  # a call, not arithmetic
        "1e5 + 2",  # exponent notation is a word here
        "v1.2.3",
        "divided we stand",
        "",
    ],
)
def test_text_without_arithmetic_has_none(text: str) -> None:
    assert find_arithmetic(text) == ()


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("What are hooks?", "hooks"),
        ("How do hooks work in rxagent?", "hooks"),
        ("What is rxagent?", "rxagent"),
        ("How are tools run in parallel?", "tools run parallel"),
        ("Tell me about SESSION stores, session stores!", "session stores"),
        ("Hello, how are you?", ""),
        ("Thanks!", ""),
        ("What is 17 * 23?", ""),  # no numbers
        ("a b c", ""),
    ],
)
def test_docs_query_keeps_the_words_worth_searching(text: str, query: str) -> None:
    assert docs_query(text) == query


def test_a_docs_query_has_at_most_eight_words() -> None:
    words = [f"topic{i}" for i in range(20)]
    assert docs_query(" ".join(words)).split() == words[:MAX_QUERY_WORDS]


@pytest.mark.parametrize(
    ("text", "expressions", "query"),
    [
        ("How do hooks work, and what is 17 * 23 + 4?", ("17 * 23 + 4",), "hooks"),
        ("What is 17 times 23?", ("17 * 23",), ""),  # the operator word is the arithmetic's
        ("What are hooks?", (), "hooks"),
        ("Hello!", (), ""),
    ],
)
def test_a_question_is_its_arithmetic_and_the_keywords_of_the_rest(
    text: str, expressions: tuple[str, ...], query: str
) -> None:
    question = Question.read(text)
    assert (question.text, question.expressions, question.query) == (text, expressions, query)


# -- properties ------------------------------------------------------------------------------

NUMBERS = st.one_of(
    st.integers(min_value=0, max_value=10**6).map(str),
    st.builds(
        lambda whole, fraction: f"{whole}.{fraction}",
        st.integers(min_value=0, max_value=999),
        st.integers(min_value=0, max_value=99),
    ),
)
OPERATORS = st.sampled_from(["+", "-", "*", "/", "//", "%", "**"])
SPACES = st.sampled_from(["", " "])


def _operand(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(inner.map(lambda e: f"({e})"), inner.map(lambda e: f"-({e})"))


def _binary(operand: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda left, space, op, right: f"{left}{space}{op}{space}{right}",
        operand,
        SPACES,
        OPERATORS,
        operand,
    )


LEAVES = st.one_of(NUMBERS, NUMBERS.map(lambda n: f"-{n}"))
EXPRESSIONS = st.recursive(
    _binary(LEAVES), lambda inner: _binary(st.one_of(LEAVES, _operand(inner))), max_leaves=6
)
"""Arithmetic as people type it: numbers, the calculator's operators, signs, parentheses."""


def accepted_by_calculator(expression: str) -> bool:
    """True when the demo's calculator evaluates `expression` (False when it refuses it)."""
    try:
        evaluate_arithmetic(expression)
    except ValueError:
        return False
    return True


@given(expression=EXPRESSIONS, before=st.sampled_from(["What is ", "Compute ", "", "so, "]))
def test_any_expression_in_a_question_is_found_whole(expression: str, before: str) -> None:
    (found,) = find_arithmetic(f"{before}{expression}?")
    # the same tokens, spaced the calculator's way: the same value, or the same error
    assert found.replace(" ", "") == expression.replace(" ", "")
    if accepted_by_calculator(expression):
        assert evaluate_arithmetic(found) == evaluate_arithmetic(expression)


@given(st.text(max_size=200))
def test_reading_any_text_never_raises(text: str) -> None:
    question = Question.read(text)
    assert len(question.expressions) <= MAX_EXPRESSIONS
    assert len(question.query.split()) <= MAX_QUERY_WORDS
    for expression in question.expressions:
        assert expression
        assert expression.strip() == expression
