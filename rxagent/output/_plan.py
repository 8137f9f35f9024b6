"""`OutputPlan`: how one run asks for structured output, and what that changes in a request.

`resolve_output` (in `_resolve`) builds the plan; the loop applies it to every request
(`OutputPlan.request`, `OutputPlan.system_prompt`) and reads answers with its `OutputReader`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, final, get_args

from rxagent.messages import FrozenDict, Msg, TextBlock, ToolUseBlock

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.models.base import ModelOptions, OutputMode, ToolSchema
    from rxagent.output._partial_type import PartialOutput
    from rxagent.output._read import OutputFailure, OutputReader
    from rxagent.output._schema import ProviderSchema

__all__ = [
    "FINAL_ANSWER_TOOL",
    "OUTPUT_STRATEGIES",
    "REPAIR_METADATA",
    "RESPONSE_FORMAT_HEADER",
    "OutputPlan",
    "OutputStrategy",
]

OutputStrategy: TypeAlias = Literal["auto", "native", "tool", "prompted"]
"""How to ask for structured output: `"auto"` lets the model's capabilities decide."""

OUTPUT_STRATEGIES: Final[tuple[str, ...]] = get_args(OutputStrategy)
"""Every `OutputStrategy` value."""

FINAL_ANSWER_TOOL: Final = "final_answer"
"""The name of the final-answer tool (`final_answer_2`, ... when a tool of the run has it)."""

RESPONSE_FORMAT_HEADER: Final = "[Response Format]"
"""The heading of the system prompt section the prompted strategy adds."""

REPAIR_METADATA: Final = "rxagent_output_repair"
"""The `Msg.metadata` key that marks the user message asking the model to fix its answer."""


@final
@dataclass(frozen=True, slots=True, kw_only=True)
class OutputPlan:
    """How one run asks for and reads its structured output (see `resolve_output`).

    Example:
        ```python
        from pydantic import BaseModel

        from rxagent.models import ModelOptions
        from rxagent.output import resolve_output


        class City(BaseModel):
            name: str


        plan = resolve_output(City, strategy="tool")
        tools, options = plan.request((), ModelOptions())
        assert [t.name for t in tools] == ["final_answer"]
        assert options.tool_choice == "final_answer"  # nothing else to call: name the tool
        ```
    """

    output_type: Any
    """The output type."""
    strategy: OutputMode
    """The strategy used: `"native"`, `"tool"` or `"prompted"`."""
    requested: OutputStrategy
    """The strategy asked for."""
    reason: str
    """Why this strategy, in a sentence (for logs and debugging)."""
    schema: dict[str, Any]
    """The output's JSON schema as pydantic writes it."""
    provider_schema: ProviderSchema
    """What is sent: the `response_format` schema, the tool's parameters or the prompt's schema."""
    reader: OutputReader
    """Reads and validates answers."""
    response_format: FrozenDict | None = None
    """The `ModelOptions.response_format` of the native strategy."""
    tool: ToolSchema | None = None
    """The final-answer tool of the tool strategy."""
    choice_alone: str | None = None
    """The tool choice when the final-answer tool is the only tool offered (None: auto)."""
    choice_with_tools: str | None = None
    """The tool choice when other tools are offered too (None: auto)."""
    instructions: str | None = None
    """The `[Response Format]` section added to the system prompt, if any."""
    partial: PartialOutput = field(repr=False, compare=False)
    """Validates partial values while the answer streams."""

    def request(
        self, tools: Sequence[ToolSchema], options: ModelOptions
    ) -> tuple[tuple[ToolSchema, ...], ModelOptions]:
        """Return a request's tools and options with what the strategy adds.

        Native sets `response_format`; tool appends the final-answer tool and sets the tool
        choice, unless the run's options already set one; prompted changes nothing here (its
        part is in the system prompt).
        """
        if self.strategy == "native" and options.response_format is None:
            return tuple(tools), options.model_copy(
                update={"response_format": self.response_format}
            )
        if self.tool is None:
            return tuple(tools), options
        offered = (*tools, self.tool)
        choice = self.choice_with_tools if tools else self.choice_alone
        if choice is not None and options.tool_choice is None:
            options = options.model_copy(update={"tool_choice": choice})
        return offered, options

    def system_prompt(self, prompt: str) -> str:
        """Return the system prompt with the strategy's `[Response Format]` section, if any."""
        if self.instructions is None:
            return prompt
        return f"{prompt}\n\n{self.instructions}" if prompt else self.instructions

    def final_calls(self, response: Msg) -> tuple[ToolUseBlock, ...]:
        """The calls of the final-answer tool in a response."""
        if self.tool is None:
            return ()
        name = self.tool.name
        return tuple(call for call in response.tool_calls if call.name == name)

    def remembered(self, response: Msg) -> Msg:
        """The response as memory keeps it: each final-answer call becomes its answer's JSON text.

        Later requests (of this run, or of later runs on the session, with or without an output
        type, on any provider) then read a plain assistant answer, and no call is left without a
        result.
        """
        if isinstance(response.content, str) or self.tool is None:
            return response
        name = self.tool.name
        blocks = tuple(
            TextBlock(text=_call_json(block, self.reader.wrapped))
            if isinstance(block, ToolUseBlock) and block.name == name
            else block
            for block in response.content
        )
        return response.model_copy(update={"content": blocks})

    def repair_message(self, failure: OutputFailure, *, called: bool) -> Msg:
        """The user message that sends the validation errors back to the model."""
        if self.tool is not None:
            fix = (
                f"Call the `{self.tool.name}` tool again with corrected arguments."
                if called
                else f"Give your final answer by calling the `{self.tool.name}` tool with it as "
                "the arguments; do not answer in plain text."
            )
        else:
            fix = "Answer again with only the corrected JSON value, and no other text."
        text = f"Your answer is not valid:\n{failure.summary()}\n{fix}"
        return Msg(role="user", content=text, metadata={REPAIR_METADATA: True})


def _call_json(call: ToolUseBlock, wrapped: bool) -> str:
    if call.raw_input is not None:
        return call.raw_input
    value: Any = call.input
    if wrapped and isinstance(value, dict) and "value" in value:
        value = value["value"]
    return json.dumps(value, ensure_ascii=False)
