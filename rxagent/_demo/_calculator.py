"""A safe arithmetic evaluator: the demo's `calculator` tool.

The expression is parsed with `ast` and walked with a whitelist (number literals, `+ - * / // % **`,
unary `+`/`-` and parentheses), so names, calls, attributes and everything else are refused
before anything runs. `eval` is never used.
"""

from __future__ import annotations

import ast
import math
import operator
from typing import TYPE_CHECKING, Final, TypeAlias

from rxagent.tools import tool

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["MAX_EXPRESSION_CHARS", "calculator", "evaluate_arithmetic", "format_number"]

Number: TypeAlias = int | float

MAX_EXPRESSION_CHARS: Final = 200
"""The longest expression `calculator` accepts."""

_MAX_RESULT_BITS: Final = 4096  # keeps `9 ** 9 ** 9` from eating the CPU and memory

_BINARY: Final[dict[type[ast.operator], Callable[[Number, Number], Number]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY: Final[dict[type[ast.unaryop], Callable[[Number], Number]]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_REFUSED: Final[dict[type[ast.AST], str]] = {
    ast.Call: "function calls are",
    ast.Name: "names are",
    ast.Attribute: "attribute access is",
    ast.Subscript: "subscripts are",
    ast.Lambda: "lambdas are",
    ast.Compare: "comparisons are",
    ast.BoolOp: "boolean operators are",
}


def _refuse(node: ast.AST) -> ValueError:
    what = _REFUSED.get(type(node), f"'{type(node).__name__}' expressions are")
    return ValueError(
        f"{what} not allowed: the calculator accepts only numbers, + - * / // % ** and parentheses"
    )


def _check_power(base: Number, exponent: Number) -> None:
    if abs(base) <= 1:
        return
    if abs(exponent) * math.log2(abs(base)) > _MAX_RESULT_BITS:
        raise ValueError(f"{base} ** {exponent} is too large to compute")


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Expression):
        return _eval(node.body)
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int | float) and not isinstance(value, bool):
            return value
        raise ValueError(f"only numbers are allowed, not {value!r}")
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        try:
            value = _BINARY[type(node.op)](left, right)
        except ZeroDivisionError:
            raise ValueError("division by zero") from None
        except OverflowError:
            raise ValueError("the result is too large") from None
        if isinstance(value, complex):  # a negative number to a fractional power
            raise ValueError(f"({left}) ** {right} is not a real number")
        return value
    raise _refuse(node)


def evaluate_arithmetic(expression: str) -> Number:
    """Evaluate an arithmetic expression safely (no names, calls or attributes).

    Args:
        expression: For example `"17 * 23 + 4"` or `"(2 ** 10) / 4"`.

    Returns:
        The value, an `int` or a `float`.

    Raises:
        ValueError: For a syntax error, a refused element, division by zero or a result that is
            too large. The message says which.

    Example:
        ```python
        from rxagent._demo import evaluate_arithmetic

        assert evaluate_arithmetic("17 * 23 + 4") == 395
        assert evaluate_arithmetic("-(7 // 2) ** 2") == -9
        ```
    """
    text = expression.strip()
    if not text:
        raise ValueError("the expression is empty")
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"invalid expression {text!r}: {exc.msg}") from None
    return _eval(tree)


def format_number(value: Number) -> str:
    """Format a result: integers exactly, floats to 12 significant digits.

    Example:
        ```python
        from rxagent._demo import format_number

        assert format_number(395) == "395"
        assert format_number(10 / 4) == "2.5" and format_number(6 / 3) == "2"
        ```
    """
    if isinstance(value, int):
        return str(value)
    if math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".12g")


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression exactly and return the result.

    Supports numbers, + - * / // % ** and parentheses. Use it for any arithmetic instead of
    computing in your head.

    Args:
        expression: The expression, for example "17 * 23 + 4".
    """
    return format_number(evaluate_arithmetic(expression))
