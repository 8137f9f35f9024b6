"""`InputValidation`: size, empty input, invalid Unicode, control and bidirectional characters."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

from rxagent.guards._pipeline import Guard

if TYPE_CHECKING:
    from rxagent.events import GuardVerdict
    from rxagent.guards._pipeline import GuardContext

__all__ = ["InputValidation"]

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# U+FDD0..U+FDEF and the last two code points of every plane (U+FFFE, U+FFFF, U+1FFFE, ...).
_NONCHARACTER: Final = re.compile(
    "[\ufdd0-\ufdef"
    + "".join(
        f"{chr(plane * 0x10000 + 0xFFFE)}{chr(plane * 0x10000 + 0xFFFF)}" for plane in range(17)
    )
    + "]"
)
# C0 except tab, newline and carriage return; DEL; C1.
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Embeddings, overrides and isolates: the characters of Trojan-source attacks.
_BIDI: Final = re.compile("[\u202a-\u202e\u2066-\u2069]")


class _Hidden(NamedTuple):
    """Characters input must not carry, and how a reason names them."""

    pattern: re.Pattern[str]
    what: str
    fix: str
    ascii: bool
    """Whether ASCII text can hold them (the others are looked for in non-ASCII text only)."""
    control: bool
    """Whether `control_characters="allow"` lets them through."""


_ALLOW: Final = "remove it or pass control_characters='allow'"
_HIDDEN: Final = (
    _Hidden(
        _SURROGATE,
        "invalid Unicode: lone surrogate",
        "decode the text properly (it is not valid UTF-8 as is)",
        ascii=False,
        control=False,
    ),
    _Hidden(
        _NONCHARACTER, "invalid Unicode: noncharacter", "remove it", ascii=False, control=False
    ),
    _Hidden(_CONTROL, "control character", _ALLOW, ascii=True, control=True),
    _Hidden(
        _BIDI,
        "bidirectional control",
        f"(it can make text read differently from what it says); {_ALLOW}",
        ascii=False,
        control=True,
    ),
)


class InputValidation(Guard):
    r"""Reject input that is empty, too long, not valid Unicode, or carries hidden characters.

    Every problem found is a reason of the verdict; each names what was found, where (the
    index of the first offending character) and the fix.

    Args:
        max_chars: The longest input accepted, in characters (code points).
        allow_empty: Accept empty and whitespace-only input.
        control_characters: `"reject"` (the default) refuses C0 control characters other
            than tab, newline and carriage return, DEL, C1 controls, and the bidirectional
            embedding, override and isolate characters (U+202A..U+202E, U+2066..U+2069) that
            Trojan-source attacks use; `"allow"` lets them through.
        max_messages: The most input messages a run may bring (`GuardContext.messages`);
            None for no limit.

    Raises:
        ValueError: An argument out of range (a `max_chars` below 1, an unknown
            `control_characters`, a negative `max_messages`).

    Example:
        ```python
        import asyncio
        from rxagent.guards import GuardContext, InputValidation

        stage = InputValidation(max_chars=10)
        verdict = asyncio.run(stage.check("hello\x07", GuardContext("input")))
        assert verdict.flagged and "U+0007 at index 5" in verdict.reasons[0]
        assert not asyncio.run(stage.check("hello", GuardContext("input"))).flagged
        ```
    """

    name = "input_validation"
    targets = frozenset({"input"})

    def __init__(
        self,
        max_chars: int = 10_000,
        *,
        allow_empty: bool = False,
        control_characters: Literal["reject", "allow"] = "reject",
        max_messages: int | None = None,
    ) -> None:
        if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 1:
            raise ValueError(
                "InputValidation(max_chars=) must be a whole number of at least 1, "
                f"got {max_chars!r}"
            )
        if control_characters not in ("reject", "allow"):
            raise ValueError(
                "InputValidation(control_characters=) must be 'reject' or 'allow', "
                f"got {control_characters!r}"
            )
        if max_messages is not None and (
            isinstance(max_messages, bool) or not isinstance(max_messages, int) or max_messages < 1
        ):
            raise ValueError(
                "InputValidation(max_messages=) must be None or a whole number of at least 1, "
                f"got {max_messages!r}"
            )
        self.max_chars = max_chars
        self.allow_empty = allow_empty
        self.control_characters = control_characters
        self.max_messages = max_messages

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        """Flag the input when any check fails; every failure is a reason."""
        reasons = self.problems(text, len(ctx.messages))
        return self.verdict(bool(reasons), None, *reasons)

    def problems(self, text: str, messages: int = 0) -> list[str]:
        """What is wrong with `text` (and a run of `messages` input messages), in check order.

        Args:
            text: The input.
            messages: How many input messages the run brings.

        Returns:
            One reason per failed check; empty when the input is valid.

        Example:
            ```python
            from rxagent.guards import InputValidation

            assert InputValidation().problems("fine") == []
            assert InputValidation().problems("  ")[0].startswith("empty input")
            ```
        """
        reasons: list[str] = []
        if not self.allow_empty and not text.strip():
            reasons.append("empty input (only whitespace); send some text or pass allow_empty=True")
        if len(text) > self.max_chars:
            reasons.append(
                f"input is {len(text)} characters, over the limit of {self.max_chars}; "
                "shorten it or raise max_chars"
            )
        if self.max_messages is not None and messages > self.max_messages:
            reasons.append(
                f"{messages} input messages, over the limit of {self.max_messages}; "
                "send fewer or raise max_messages"
            )
        wide = not text.isascii()
        allow_control = self.control_characters == "allow"
        for hidden in _HIDDEN:
            if (hidden.control and allow_control) or not (wide or hidden.ascii):
                continue
            match = hidden.pattern.search(text)
            if match is not None:
                where = f"U+{ord(match.group()):04X} at index {match.start()}"
                separator = " " if hidden.fix.startswith("(") else "; "
                reasons.append(f"{hidden.what} {where}{separator}{hidden.fix}")
        return reasons
