"""Structured output: typed, validated results from any provider.

Ask a run for a type with `agent.call(msg, output_type=MyModel)`; `result.output` is then a
validated `MyModel`. This package holds the parts the loop is built from:

- `resolve_output` chooses the strategy (`"native"`, `"tool"` or `"prompted"`) from the model's
  `Capabilities` and the run's settings, and builds an `OutputPlan`: the `response_format`, the
  final-answer tool or the `[Response Format]` system prompt section each request carries;
- `OutputReader` reads an answer (a reply's text, or a final-answer call's arguments) and
  validates it, reporting an invalid one as an `OutputFailure` with the raw answer and errors;
- `OutputStream`, `PartialJSON` and `partial_type` turn JSON that is still streaming into
  typed partial outputs (`OutputChunkEvent`);
- `json_schema_for`, `openai_strict_schema`, `gemini_schema` and `object_root` write the JSON
  schema each provider accepts.

Guide: "Structured output" in the docs.

Example:
    ```python
    from pydantic import BaseModel

    from rxagent import ReActAgent
    from rxagent.testing import ScriptedModel


    class City(BaseModel):
        name: str
        country: str


    agent = ReActAgent("geo", "", ScriptedModel(['{"name": "Oslo", "country": "Norway"}']))
    result = agent.call_sync("Capital of Norway?", output_type=City)
    assert result.output == City(name="Oslo", country="Norway")
    ```
"""

from typing import TYPE_CHECKING

from rxagent._lazy import lazy_exports, read_exports

# imported on first use (`rxagent._lazy`): a run imports only the parts it uses
if TYPE_CHECKING:
    from rxagent.output._partial import PartialJSON as PartialJSON
    from rxagent.output._partial_type import NO_PARTIAL as NO_PARTIAL
    from rxagent.output._partial_type import PartialOutput as PartialOutput
    from rxagent.output._partial_type import partial_type as partial_type
    from rxagent.output._plan import FINAL_ANSWER_TOOL as FINAL_ANSWER_TOOL
    from rxagent.output._plan import OUTPUT_STRATEGIES as OUTPUT_STRATEGIES
    from rxagent.output._plan import REPAIR_METADATA as REPAIR_METADATA
    from rxagent.output._plan import RESPONSE_FORMAT_HEADER as RESPONSE_FORMAT_HEADER
    from rxagent.output._plan import OutputPlan as OutputPlan
    from rxagent.output._plan import OutputStrategy as OutputStrategy
    from rxagent.output._read import OutputFailure as OutputFailure
    from rxagent.output._read import OutputReader as OutputReader
    from rxagent.output._read import ParsedOutput as ParsedOutput
    from rxagent.output._read import decode_answer as decode_answer
    from rxagent.output._resolve import resolve_output as resolve_output
    from rxagent.output._schema import WRAPPED_VALUE_KEY as WRAPPED_VALUE_KEY
    from rxagent.output._schema import ProviderSchema as ProviderSchema
    from rxagent.output._schema import gemini_schema as gemini_schema
    from rxagent.output._schema import json_schema_for as json_schema_for
    from rxagent.output._schema import object_root as object_root
    from rxagent.output._schema import openai_strict_schema as openai_strict_schema
    from rxagent.output._stream import OutputStream as OutputStream


__all__ = [
    "FINAL_ANSWER_TOOL",
    "NO_PARTIAL",
    "OUTPUT_STRATEGIES",
    "REPAIR_METADATA",
    "RESPONSE_FORMAT_HEADER",
    "WRAPPED_VALUE_KEY",
    "OutputFailure",
    "OutputPlan",
    "OutputReader",
    "OutputStrategy",
    "OutputStream",
    "ParsedOutput",
    "PartialJSON",
    "PartialOutput",
    "ProviderSchema",
    "decode_answer",
    "gemini_schema",
    "json_schema_for",
    "object_root",
    "openai_strict_schema",
    "partial_type",
    "resolve_output",
]

_EXPORTS, _ = read_exports(__file__)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
del TYPE_CHECKING, lazy_exports, read_exports  # the namespace holds the exports only
