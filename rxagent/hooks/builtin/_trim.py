"""The trimming algorithm of `ContextWindow`: a pure function of messages, a budget and a counter.

It knows nothing of runs, hooks or models, so it can be property-tested on its own. The request
is read as

```text
[system prompt] [history ...] [current user message] [after it: tool interactions, ...]
```

- The system prompt is the leading system messages. It is never changed and not counted against
  the budget (the caller subtracted it already).
- The current user message is the last user message. It, the system prompt and every later system
  message are never dropped.
- A turn is a user message and everything up to the next user message.
- A tool unit is an assistant message with tool calls and all the tool messages answering it.

Tool results are shortened by `rxagent.hooks.builtin._truncate`. The budget is what the window
leaves after the system prompt, the tool schemas and the reply's reserve (`reply_reserve`).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import TYPE_CHECKING, Final

from rxagent.errors import ConfigurationError, ContextTooLongError
from rxagent.hooks.builtin._truncate import (
    MIN_TOOL_RESULT_TOKENS,
    share_out,
    truncate_tool_message,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.messages import Msg
    from rxagent.tokens import TokenCounter

__all__ = [
    "DEFAULT_MAX_OUTPUT_TOKENS",
    "TrimResult",
    "reply_reserve",
    "system_prompt_length",
    "trim_to_budget",
]

DEFAULT_MAX_OUTPUT_TOKENS: Final = 4096
"""The most tokens kept free for the reply when nobody set `max_output_tokens`.

A smaller window keeps a quarter of itself instead (1,024 of 4,096; 2,048 of 8,192), so small
local models work out of the box.
"""


@dataclass(frozen=True, slots=True)
class TrimResult:
    """What `trim_to_budget` did.

    Token numbers count the messages after the system prompt, the part the budget is for.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.hooks.builtin import trim_to_budget
        from rxagent.tokens import counter_for

        request = (Msg.system("Be brief."), Msg.user("hi"))
        result = trim_to_budget(request, 1_000, counter_for("gpt-4o"))
        assert not result.changed and result.messages is request and result.system == 1
        assert result.tokens_before == result.tokens_after <= result.budget == 1_000
        ```
    """

    messages: tuple[Msg, ...]
    """The request's messages after trimming (the input itself when nothing changed)."""
    dropped: tuple[str, ...]
    """Ids of the messages left out, in request order."""
    truncated: tuple[str, ...]
    """Ids of the (input) messages whose tool results were shortened with the marker."""
    history: tuple[Msg, ...]
    """The history left out by `max_turns` and phase 1, in order: what a summary replaces."""
    system: int
    """How many leading system messages form the system prompt."""
    tokens_before: int
    """Tokens of the messages after the system prompt, before trimming."""
    tokens_after: int
    """The same after trimming; at most `budget`."""
    budget: int
    """The budget the messages were trimmed to."""

    @property
    def changed(self) -> bool:
        """True when anything was dropped or shortened."""
        return bool(self.dropped or self.truncated)


def system_prompt_length(messages: Sequence[Msg]) -> int:
    """Return how many leading system messages `messages` has: the system prompt.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.hooks.builtin._trim import system_prompt_length

        msgs = [Msg.system("Be brief."), Msg.system("Today is Monday."), Msg.user("hi"),
                Msg.system("Answer in French.")]
        assert system_prompt_length(msgs) == 2
        ```
    """
    length = 0
    for message in messages:
        if message.role != "system":
            break
        length += 1
    return length


def reply_reserve(window: int, max_output_tokens: int | None = None) -> int:
    """Return the tokens a request to a model with this window keeps free for the reply.

    That is `max_output_tokens` when it is set; else a quarter of the window, at most
    `DEFAULT_MAX_OUTPUT_TOKENS`, so three quarters of any window are left for the request.

    Example:
        ```python
        from rxagent.hooks.builtin._trim import reply_reserve

        assert [reply_reserve(w) for w in (4_096, 8_192, 128_000)] == [1_024, 2_048, 4_096]
        assert reply_reserve(4_096, max_output_tokens=500) == 500
        ```
    """
    if max_output_tokens is not None:
        return max_output_tokens
    return max(1, min(DEFAULT_MAX_OUTPUT_TOKENS, window // 4))


# -- the algorithm -------------------------------------------------------------------------


def _turn_count(messages: Sequence[Msg], start: int, current: int) -> int:
    """Turns of history in `messages[start:current]` (a leading partial turn counts)."""
    turns = 0
    partial = False
    for i in range(start, current):
        role = messages[i].role
        if role == "user":
            turns += 1
        elif turns == 0 and role != "system":
            partial = True
    return turns + partial


def _turns(body: Sequence[Msg], current: int) -> list[tuple[int, int]]:
    """The history turns of `body[:current]` as `(start, end)`, oldest first."""
    starts = [i for i in range(current) if body[i].role == "user"]
    first = starts[0] if starts else current
    turns = []
    if any(body[i].role != "system" for i in range(first)):
        turns.append((0, first))
    turns.extend(zip(starts, [*starts[1:], current], strict=False))
    return turns


def _tool_units(body: Sequence[Msg], after: int) -> list[list[int]]:
    """The tool units of `body[after:]`, in order: each an assistant message and its results.

    A tool message that answers no call there forms a unit of its own.
    """
    units: list[list[int]] = []
    owner: dict[str, int] = {}
    for i in range(after, len(body)):
        message = body[i]
        if message.role == "assistant":
            calls = message.tool_calls
            if calls:
                for call in calls:
                    owner[call.id] = len(units)
                units.append([i])
        elif message.role == "tool":
            results = message.tool_results
            unit = owner.get(results[0].id) if results else None
            if unit is None:
                units.append([i])
            else:
                units[unit].append(i)
    return units


def _oversized(
    messages: Sequence[Msg], start: int, limit: int | None, counter: TokenCounter
) -> bool:
    if limit is None:
        return False
    count = counter.count_message
    for i in range(start, len(messages)):
        message = messages[i]
        if message.role == "tool" and count(message) > limit:
            return True
    return False


def _too_long(needed: int, budget: int, what: str) -> ContextTooLongError:
    return ContextTooLongError(
        f"{what} need {needed:,} tokens but the messages' budget is {budget:,}",
        source="hook:context_window",
    )


def trim_to_budget(
    messages: Sequence[Msg],
    budget: int,
    counter: TokenCounter,
    *,
    max_turns: int | None = None,
    max_tool_result_tokens: int | None = None,
) -> TrimResult:
    """Cut a request's messages to `budget` tokens without breaking the conversation.

    In order:

    1. Tool results longer than `max_tool_result_tokens` are shortened, with a visible marker.
    2. `max_turns` keeps the last N turns of history (the current turn comes on top).
    3. Phase 1 drops the oldest history, in whole turns, until the messages fit.
    4. Phase 2 drops tool units after the current user message, oldest first, keeping the
       newest unit; if that is still too much, the newest unit's results are shortened.

    The system prompt, the current user message and later system messages are never dropped.
    Costs O(messages) with the counter's cached counts; nothing is copied when nothing changes.

    Args:
        messages: The request's messages, system prompt first.
        budget: The tokens the messages after the system prompt may use.
        counter: Counts message tokens (payload plus per-message overhead).
        max_turns: Keep at most this many turns of history; None keeps all.
        max_tool_result_tokens: Shorten tool messages counting more; None for no limit.

    Returns:
        The trimmed request and what was done to it.

    Raises:
        ContextTooLongError: When what must be kept does not fit the budget.
        ConfigurationError: For a `max_turns` or `max_tool_result_tokens` out of range.

    Example:
        ```python
        from rxagent import Msg
        from rxagent.hooks.builtin import trim_to_budget
        from rxagent.tokens import counter_for

        counter = counter_for("gpt-4o")
        old = [Msg.user("tell me a story " * 50), Msg.assistant("once upon a time " * 50)]
        request = [Msg.system("Be brief."), *old, Msg.user("and now?")]
        result = trim_to_budget(request, 100, counter)
        assert [m.text for m in result.messages] == ["Be brief.", "and now?"]
        assert result.dropped == tuple(m.id for m in old) and result.tokens_after <= 100
        ```
    """
    if max_turns is not None and max_turns < 1:
        raise ConfigurationError(f"max_turns must be at least 1, got {max_turns}")
    if max_tool_result_tokens is not None and max_tool_result_tokens < MIN_TOOL_RESULT_TOKENS:
        raise ConfigurationError(
            f"max_tool_result_tokens must be at least {MIN_TOOL_RESULT_TOKENS} (room for the "
            f"truncation marker), got {max_tool_result_tokens}"
        )
    start = system_prompt_length(messages)
    # count_messages adds the reply priming, once: take it off
    total = counter.count_messages(islice(messages, start, None)) - counter.count_messages(())
    current = len(messages) - 1  # the current user message: the last one, usually near the end
    while current >= start and messages[current].role != "user":
        current -= 1
    has_user = current >= start
    if not has_user:
        current = start
    if (
        total <= budget
        and (max_turns is None or _turn_count(messages, start, current) <= max_turns)
        and not _oversized(messages, start, max_tool_result_tokens, counter)
    ):
        request = messages if isinstance(messages, tuple) else tuple(messages)
        return TrimResult(request, (), (), (), start, total, total, budget)
    return _trim(
        messages,
        budget,
        counter,
        start,
        current - start,
        has_user,
        max_turns,
        max_tool_result_tokens,
        total,
    )


def _trim(
    messages: Sequence[Msg],
    budget: int,
    counter: TokenCounter,
    start: int,
    current: int,
    has_user: bool,
    max_turns: int | None,
    max_tool_result_tokens: int | None,
    tokens_before: int,
) -> TrimResult:
    """The slow path of `trim_to_budget`; `current` is relative to the body."""
    original = messages[start:]
    body = list(original)
    tokens = [counter.count_message(m) for m in body]
    keep = [True] * len(body)
    truncated: dict[int, None] = {}  # body positions, in order
    if max_tool_result_tokens is not None:
        for i, message in enumerate(body):
            if message.role == "tool" and tokens[i] > max_tool_result_tokens:
                cut = truncate_tool_message(message, max_tool_result_tokens, counter)
                if cut is None:  # pragma: no cover - its framing alone is over the limit: keep it
                    continue
                body[i] = cut
                tokens[i] = counter.count_message(cut)
                truncated[i] = None
    total = sum(tokens)

    # max_turns, then phase 1: the oldest history turns go first
    history: list[Msg] = []
    turns = _turns(body, current)
    excess_turns = len(turns) - max_turns if max_turns is not None else 0
    for number, (first, end) in enumerate(turns):
        if number >= excess_turns and total <= budget:
            break
        for i in range(first, end):
            if body[i].role != "system":
                keep[i] = False
                total -= tokens[i]
                history.append(original[i])

    # phase 2: tool units after the current user message, oldest first; the newest stays
    if total > budget:
        units = _tool_units(body, current + 1 if has_user else 0)
        for unit in units[:-1]:
            if total <= budget:
                break
            for i in unit:
                keep[i] = False
                total -= tokens[i]
        if total > budget and units:
            total = _shorten_unit(body, tokens, truncated, units[-1], total, budget, counter)
    if total > budget:
        raise _too_long(
            total, budget, "the current user message and the messages that must be kept"
        )
    kept = tuple(body[i] for i in range(len(body)) if keep[i])
    return TrimResult(
        messages=(*messages[:start], *kept),
        dropped=tuple(original[i].id for i in range(len(body)) if not keep[i]),
        truncated=tuple(original[i].id for i in truncated if keep[i]),
        history=tuple(history),
        system=start,
        tokens_before=tokens_before,
        tokens_after=total,
        budget=budget,
    )


def _shorten_unit(
    body: list[Msg],
    tokens: list[int],
    truncated: dict[int, None],
    unit: list[int],
    total: int,
    budget: int,
    counter: TokenCounter,
) -> int:
    """Cut the results of the newest tool unit so the request fits; return the new total."""
    results = [i for i in unit if body[i].role == "tool"]
    if not results:
        return total
    sizes = [tokens[i] for i in results]
    room = budget - (total - sum(sizes))
    if room <= 0:
        return total
    for i, size, share in zip(results, sizes, share_out(sizes, room), strict=True):
        if size <= share:
            continue
        cut = truncate_tool_message(body[i], share, counter)
        if cut is None:
            return total
        body[i] = cut
        tokens[i] = counter.count_message(cut)
        total += tokens[i] - size
        truncated[i] = None
    return total
