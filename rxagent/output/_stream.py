"""Partial outputs while a response streams: what each `OutputChunkEvent` carries."""

from __future__ import annotations

from json import JSONDecodeError
from typing import TYPE_CHECKING, Any, Final, final

from rxagent.models.base import TextDelta, ToolCallDelta
from rxagent.output._partial import PartialJSON, _copy_json
from rxagent.output._partial_type import NO_PARTIAL
from rxagent.output._schema import WRAPPED_VALUE_KEY

if TYPE_CHECKING:
    from rxagent.models.base import ModelDelta
    from rxagent.output._plan import OutputPlan

__all__ = ["OutputStream"]

_SPACING: Final = 64  # a new partial output once the answer grew by this fraction


@final
class OutputStream:
    """Follows one response's answer as it streams and gives its partial output.

    With the native and prompted strategies the answer is the response's text; with the tool
    strategy it is the argument JSON of the first final-answer call. Text that stops being JSON
    (prose around it, say) ends the partial outputs of that response; the whole reply is still
    read, and repaired, when it ends.

    Each partial output costs time in proportion to the answer so far, so for a long answer they
    are spaced out: a new one is made once the answer has grown by a 64th since the last (every
    chunk while it is short, and always when the JSON completes). That keeps the total cost
    linear in the answer's length.

    Args:
        plan: The run's output plan.

    Example:
        ```python
        from pydantic import BaseModel

        from rxagent.models import TextDelta
        from rxagent.output import NO_PARTIAL, OutputStream, resolve_output


        class Trip(BaseModel):
            city: str
            days: int


        stream = OutputStream(resolve_output(Trip))
        first = stream.feed(TextDelta(text='{"city": "Ro'))
        assert first.city == "Ro" and first.days is None
        assert stream.feed(TextDelta(text="me")).city == "Rome"
        assert stream.feed(TextDelta(text='", "days"')) is NO_PARTIAL  # nothing new
        assert stream.feed(TextDelta(text=": 3}")).days == 3
        ```
    """

    __slots__ = (
        "_dead",
        "_fed",
        "_index",
        "_last",
        "_last_data",
        "_parser",
        "_plan",
        "_seen_at",
        "_tool",
    )

    def __init__(self, plan: OutputPlan) -> None:
        self._plan = plan
        self._tool = plan.tool.name if plan.tool is not None else None
        self._parser: PartialJSON | None = PartialJSON() if self._tool is None else None
        self._index: int | None = None
        self._dead = False
        self._last: Any = NO_PARTIAL
        self._last_data: Any = NO_PARTIAL
        self._fed = 0  # characters of JSON read
        self._seen_at = 0  # ... when the last partial output was made

    def feed(self, delta: ModelDelta) -> Any:
        """Read one delta; return the new partial output, or `NO_PARTIAL` when nothing changed."""
        if self._dead:
            return NO_PARTIAL
        if self._tool is None:
            if type(delta) is not TextDelta:
                return NO_PARTIAL
            text = delta.text
        else:
            if type(delta) is not ToolCallDelta:
                return NO_PARTIAL
            if self._index is None:
                if delta.name != self._tool:
                    return NO_PARTIAL
                self._index = delta.index
                self._parser = PartialJSON()
            elif delta.index != self._index:
                return NO_PARTIAL
            text = delta.args
        parser = self._parser
        if not text or parser is None:
            return NO_PARTIAL
        try:
            parser.feed(text)
        except JSONDecodeError:
            self._dead = True
            return NO_PARTIAL
        self._fed += len(text)
        if not parser.done and self._fed - self._seen_at < self._fed // _SPACING:
            return NO_PARTIAL
        self._seen_at = self._fed
        return self._current(parser)

    def close(self) -> Any:
        """The response ended: return the last partial output if that completed it (a number)."""
        parser = self._parser
        if parser is None or self._dead or parser.done:
            return NO_PARTIAL
        try:
            parser.finish()
        except JSONDecodeError:
            return NO_PARTIAL
        return self._current(parser)

    def _current(self, parser: PartialJSON) -> Any:
        data = parser.value
        if data is None and not parser.done:
            return NO_PARTIAL
        if self._plan.reader.wrapped:
            if not isinstance(data, dict) or WRAPPED_VALUE_KEY not in data:
                return NO_PARTIAL
            data = data[WRAPPED_VALUE_KEY]
        if data == self._last_data:
            return NO_PARTIAL
        self._last_data = data
        partial = self._plan.partial.validate(_copy_json(data))
        if partial is NO_PARTIAL or partial == self._last:
            return NO_PARTIAL
        self._last = partial
        return partial
