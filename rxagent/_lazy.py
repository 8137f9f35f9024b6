"""Module attributes resolved on first use: lazy re-exports, and deprecated aliases that warn.

A package whose import must stay cheap (`rxagent` itself) writes its exports once, as its
`if TYPE_CHECKING:` block, where type checkers and editors read them:

```python
if TYPE_CHECKING:
    from rxagent.result import ErrorInfo as ErrorInfo  # exported, imported on first use
    AgentError = ErrorInfo  # a deprecated alias: reading it warns and gives ErrorInfo
```

At runtime `read_exports` reads that block from the module's source, and `lazy_exports` makes
the module's `__getattr__` and `__dir__` from what it found.
"""

from __future__ import annotations

import _ast
import importlib
import sys
import warnings
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping

__all__ = ["export_order", "lazy_exports", "read_exports"]


def read_exports(path: str) -> tuple[dict[str, str], dict[str, str]]:
    """Read the `if TYPE_CHECKING:` block at the top level of the module at `path`.

    In that block, `from M import N as N` exports `N` from `M`, and `Old = New` makes `Old` a
    deprecated alias of `New`. The source is parsed with the compiler's own parser (importing
    the `ast` module would cost more than the parse).

    Returns:
        Exported name → its module, and deprecated alias → the name that replaces it.

    Raises:
        ImportError: When the block holds anything else, or there is no such block.
    """
    with open(path, encoding="utf-8") as file:
        tree = compile(file.read(), path, "exec", _ast.PyCF_ONLY_AST, dont_inherit=True)
    assert isinstance(tree, _ast.Module)
    blocks = [
        node.body
        for node in tree.body
        if isinstance(node, _ast.If)
        and isinstance(node.test, _ast.Name)
        and node.test.id == "TYPE_CHECKING"
    ]
    if len(blocks) != 1:
        raise ImportError(f"{path} needs exactly one `if TYPE_CHECKING:` block of exports")
    modules: dict[str, str] = {}
    deprecated: dict[str, str] = {}
    for statement in blocks[0]:
        match statement:
            case _ast.ImportFrom(module=str(module), names=names, level=0) if all(
                alias.asname == alias.name for alias in names
            ):
                modules.update((alias.name, module) for alias in names)
            case _ast.Assign(targets=[_ast.Name(id=old)], value=_ast.Name(id=new)):
                deprecated[old] = new
            case _ast.Expr(value=_ast.Constant()):
                pass  # a docstring
            case _:
                raise ImportError(
                    f"{path}, line {statement.lineno}: the TYPE_CHECKING block holds only "
                    "`from module import Name as Name` exports, `Old = New` deprecated aliases "
                    "and docstrings"
                )
    return modules, deprecated


def export_order(names: Iterable[str]) -> list[str]:
    """`names` in `__all__` order: constants, then classes, then the rest (ruff's RUF022)."""

    def key(name: str) -> tuple[int, str]:
        if name.isupper():
            return (0, name)
        return (1, name) if name[:1].isupper() else (2, name)

    return sorted(names, key=key)


def lazy_exports(
    package: str,
    namespace: dict[str, Any],
    exports: Mapping[str, str],
    deprecated: Mapping[str, str] | None = None,
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """Return a module's `__getattr__` and `__dir__` that import `exports` on first use.

    A deprecated alias gives its replacement, and warns (`DeprecationWarning`, naming the
    replacement) each time code outside rxagent reads it; rxagent's own modules read it silently.

    Args:
        package: The module's name, for messages.
        namespace: The module's `globals()`; an imported name is cached there.
        exports: Public name → the module that defines it.
        deprecated: Deprecated alias → the name that replaces it (in `namespace` or `exports`).
    """
    aliases = dict(deprecated or {})

    def __getattr__(name: str) -> object:
        replacement = aliases.get(name)
        if replacement is not None:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            # `from package import name` first probes the name from importlib, then reads it
            if caller.partition(".")[0] not in ("rxagent", "importlib"):
                warnings.warn(
                    f"{package}.{name} is deprecated; use {package}.{replacement}",
                    DeprecationWarning,
                    stacklevel=2,
                )
            name = replacement
            if name in namespace:
                return namespace[name]
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
