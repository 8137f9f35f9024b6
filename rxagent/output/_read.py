"""Reading a final answer: JSON out of a reply's text or a tool call, validated as the output type.

An answer is read in three stages, and each failure is reported as data (`OutputFailure`) with
the raw answer and pydantic-style errors, never as an exception:

1. **decode**: the reply's text must be one JSON value, optionally in a Markdown fence (as
   `PartialJSON` accepts it); failing that, the first ```json fence inside the text is tried. A
   tool call's arguments are already decoded.
2. **unwrap**: when the provider schema wrapped a non-object output in `{"value": ...}`, the
   value is taken out. A text answer may also come unwrapped.
3. **validate**: optional properties a strict schema made nullable and the model sent as `null`
   are dropped first (so defaults apply), then the value is validated as the output type.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, final

from pydantic import TypeAdapter, ValidationError

from rxagent.messages import thaw
from rxagent.output._partial import PartialJSON
from rxagent.output._schema import WRAPPED_VALUE_KEY

if TYPE_CHECKING:
    from rxagent.messages import ToolUseBlock

__all__ = ["OutputFailure", "OutputReader", "ParsedOutput", "decode_answer"]

_FENCED: Final = re.compile(r"```[ \t]*(?:json)?[ \t]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_SUMMARY_ERRORS: Final = 8


@final
@dataclass(frozen=True, slots=True)
class ParsedOutput:
    """A valid answer.

    Example:
        ```python
        from rxagent.output import OutputReader

        parsed = OutputReader(list[int]).read_text("[1, 2]")
        assert parsed.value == [1, 2] and parsed.json_text == "[1, 2]"
        ```
    """

    value: Any
    """The validated output."""
    json_text: str
    """The answer's JSON, unwrapped (what a reply carrying it says)."""


@final
@dataclass(frozen=True, slots=True)
class OutputFailure:
    """An answer that does not validate.

    Example:
        ```python
        from rxagent.output import OutputFailure, OutputReader

        failure = OutputReader(int).read_text("forty-two")
        assert isinstance(failure, OutputFailure) and failure.raw == "forty-two"
        assert failure.errors[0]["type"] == "json_invalid"
        assert failure.summary().startswith("(root): ")
        ```
    """

    raw: str
    """The answer as the model sent it."""
    errors: tuple[dict[str, Any], ...]
    """One dict per problem: `type`, `loc` (a list) and `msg`."""

    def summary(self) -> str:
        """The problems on one line each (the first few), for the model and for logs."""
        lines = [
            f"{'.'.join(str(part) for part in error['loc']) or '(root)'}: {error['msg']}"
            for error in self.errors[:_SUMMARY_ERRORS]
        ]
        more = len(self.errors) - _SUMMARY_ERRORS
        if more > 0:
            lines.append(f"... and {more} more")
        return "\n".join(lines)


def decode_answer(text: str) -> Any:
    r"""Decode the JSON value of a reply's text.

    The text must be one JSON value, optionally fenced (three backticks and `json`); failing
    that, the first fenced block inside the text is decoded.

    Raises:
        json.JSONDecodeError: No JSON value could be read (the error of the whole text).

    Example:
        ```python
        from rxagent.output import decode_answer

        assert decode_answer('```json\n{"a": 1}\n```') == {"a": 1}
        assert decode_answer('Here it is:\n```json\n[1]\n```\nDone.') == [1]
        ```
    """
    parser = PartialJSON()
    try:
        parser.feed(text)
        parser.finish()
    except json.JSONDecodeError as exc:
        for match in _FENCED.finditer(text):
            try:
                return json.loads(match.group(1))
            except ValueError:
                continue
        raise exc from None
    return parser.value


@final
class OutputReader:
    """Reads and validates answers of one output type.

    Args:
        output_type: The output type.
        schema: Its JSON schema as pydantic writes it (`json_schema_for`); needed with
            `strict_nulls`.
        wrapped: Whether the provider schema wraps the output in `{"value": ...}`.
        strict_nulls: Whether the provider schema made optional properties nullable (OpenAI
            strict mode), so a `null` for a property that does not admit it is dropped.

    Example:
        ```python
        from pydantic import BaseModel

        from rxagent.output import OutputReader, ParsedOutput, json_schema_for


        class City(BaseModel):
            name: str
            population: int = 0


        reader = OutputReader(City, json_schema_for(City), strict_nulls=True)
        parsed = reader.read_text('{"name": "Oslo", "population": null}')
        assert isinstance(parsed, ParsedOutput) and parsed.value == City(name="Oslo")
        ```
    """

    __slots__ = ("_adapter", "_defs", "_schema", "strict_nulls", "type", "wrapped")

    def __init__(
        self,
        output_type: Any,
        schema: dict[str, Any] | None = None,
        *,
        wrapped: bool = False,
        strict_nulls: bool = False,
    ) -> None:
        self.type = output_type
        self.wrapped = wrapped
        self.strict_nulls = strict_nulls and schema is not None
        self._schema = schema or {}
        self._defs: dict[str, Any] = self._schema.get("$defs", {})
        self._adapter: TypeAdapter[Any] = TypeAdapter(output_type)

    def read_text(self, text: str) -> ParsedOutput | OutputFailure:
        """Read an answer given as a reply's text.

        A wrapped output may come wrapped (`{"value": ...}`) or as the bare value.
        """
        try:
            data = decode_answer(text)
        except json.JSONDecodeError as exc:
            message = f"the answer is not JSON ({exc.msg} at character {exc.pos})"
            return OutputFailure(text, ({"type": "json_invalid", "loc": [], "msg": message},))
        if self.wrapped and isinstance(data, dict) and set(data) == {WRAPPED_VALUE_KEY}:
            first = self.read_value(data[WRAPPED_VALUE_KEY], text)
            if isinstance(first, ParsedOutput):
                return first
            second = self.read_value(data, text)
            return second if isinstance(second, ParsedOutput) else first
        return self.read_value(data, text)

    def read_call(self, call: ToolUseBlock) -> ParsedOutput | OutputFailure:
        """Read an answer given as the arguments of a final-answer tool call."""
        if call.raw_input is not None:  # the arguments were not a JSON object
            message = "the arguments are not a JSON object"
            return OutputFailure(
                call.raw_input, ({"type": "json_invalid", "loc": [], "msg": message},)
            )
        data = thaw(call.input)
        raw = json.dumps(data, ensure_ascii=False)
        if self.wrapped:
            if WRAPPED_VALUE_KEY not in data:
                message = f"the arguments need the answer under {WRAPPED_VALUE_KEY!r}"
                error = {"type": "missing", "loc": [WRAPPED_VALUE_KEY], "msg": message}
                return OutputFailure(raw, (error,))
            data = data[WRAPPED_VALUE_KEY]
        return self.read_value(data, raw)

    def read_value(self, data: Any, raw: str) -> ParsedOutput | OutputFailure:
        """Validate a decoded, unwrapped answer; `raw` is what the model sent."""
        if self.strict_nulls:
            _strip_nulls(data, self._schema, self._defs)
        try:
            value = self._adapter.validate_python(data)
        except ValidationError as exc:
            return OutputFailure(raw, _errors(exc))
        return ParsedOutput(value, json.dumps(data, ensure_ascii=False))


def _errors(exc: ValidationError) -> tuple[dict[str, Any], ...]:
    return tuple(
        {"type": error["type"], "loc": list(error["loc"]), "msg": error["msg"]}
        for error in exc.errors(include_url=False)
    )


def _resolve(node: Any, defs: dict[str, Any]) -> dict[str, Any]:
    """Follow `$ref`s into `$defs` (a bad reference resolves to an empty schema)."""
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
        node = defs.get(node["$ref"].rpartition("/")[2], {})
        seen += 1
    return node if isinstance(node, dict) else {}


def _admits_null(node: dict[str, Any], defs: dict[str, Any]) -> bool:
    kind = node.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in node.get("enum", ()) or ("const" in node and node["const"] is None):
        return True
    return any(_admits_null(_resolve(b, defs), defs) for b in node.get("anyOf", ()))


def _strip_nulls(value: Any, schema: Any, defs: dict[str, Any]) -> None:
    """Drop `null`s the schema's optional properties do not admit (OpenAI strict sends them)."""
    node = _resolve(schema, defs)
    if isinstance(value, dict):
        properties = node.get("properties")
        if isinstance(properties, dict):
            required = set(node.get("required", ()))
            for key in list(value):
                sub = properties.get(key)
                if sub is None:
                    continue
                if (
                    value[key] is None
                    and key not in required
                    and not _admits_null(_resolve(sub, defs), defs)
                ):
                    del value[key]
                else:
                    _strip_nulls(value[key], sub, defs)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for item in value:
            _strip_nulls(item, node["items"], defs)
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(key, ()):
            _strip_nulls(value, branch, defs)
