"""OpenAI Chat Completions: the wire format of OpenAI, Azure OpenAI and OpenAI-compatible servers.

`OpenAIFormatter` builds `POST /chat/completions` bodies, reads whole responses and
`chat.completion.chunk` streams (decoded SSE events), and classifies OpenAI error bodies. It is
pure: no I/O, no globals. The same wire format serves DeepSeek (`reasoning_content`), vLLM and
Ollama's `/v1` API.

Conversion rules (what cannot be carried one to one):

- **System messages** go out with role `"system"`, or `"developer"` when the formatter is built
  with `system_role="developer"` (o-series models). Block content is sent as its joined text.
- **Thinking blocks** have no request field in Chat Completions. By default they are left out of
  the request (the one documented exception to "never drop"); with `reasoning_content=True`
  (DeepSeek-style servers) an assistant message's thinking is sent as its `reasoning_content`.
  Signatures are never sent (no server of this format has them).
- **Assistant text blocks** are joined (no separator) into one `content` string, then the tool
  calls follow as `tool_calls`; content is `null` when there are tool calls and no text.
- **Tool results** become one `role: "tool"` message each (`tool_call_id`), with the output as
  text (text blocks joined with newlines). A failed result (`is_error`) is prefixed `"Error: "`.
  The tool's name and `Msg.name` are not sent: the message is tied to its call by the id.
- **Images in tool results** cannot go in a tool message. Their text stays in the tool message
  (or a short note when there is none), and after the run of consecutive tool messages one
  user message carries the images, each group introduced by the text part
  `"Images returned by tool call <id>:"`. `parse_request` folds such a message back.
- **User images** are `image_url` parts; base64 data is sent as a `data:` URL.
- **Options**: `max_output_tokens` is sent as `max_completion_tokens` (or `max_tokens` with
  `max_tokens_field="max_tokens"`, for older compatible servers); `tool_choice` and
  `parallel_tool_calls` are sent only with tools (OpenAI rejects them without); a tool name as
  `tool_choice` becomes `{"type": "function", "function": {"name": ...}}`; `extra` is merged
  at the top level last, so it can override any field. `response_format` `json_schema` is sent
  as given (`rxagent.output` builds strict schemas); a `ToolSchema(strict=True)` is sent with
  `"strict": true` in its function.
- **Responses**: `reasoning_content` (or `reasoning`) is read as a thinking block; a `refusal`
  is read as text; only choice 0 is read.
- **Capabilities** are OpenAI's unless `capabilities=` describes a compatible server that
  differs (DeepSeek has no `json_schema` response format). They decide what the agent asks for
  (the structured-output strategy), not how a body is built.

Example:
    ```python
    from rxagent import Msg
    from rxagent.formatters.openai import OpenAIFormatter
    from rxagent.models import ModelOptions, ToolSchema

    fmt = OpenAIFormatter()
    body = fmt.format(
        [Msg.system("Be brief."), Msg.user("1 + 2?")],
        [ToolSchema(name="add", description="Add two numbers.")],
        ModelOptions(tool_choice="add", max_output_tokens=50),
        model="gpt-4o-mini",
        stream=True,
    )
    assert body["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert body["max_completion_tokens"] == 50
    assert body["stream_options"] == {"include_usage": True}
    messages, tools, options = fmt.parse_request(body)
    assert messages[1].text == "1 + 2?" and tools[0].name == "add"
    assert options.tool_choice == "add"
    ```
"""

from rxagent.formatters.openai._formatter import OpenAIFormatter as OpenAIFormatter
from rxagent.formatters.openai._request import ERROR_PREFIX as ERROR_PREFIX
from rxagent.formatters.openai._request import IMAGES_ONLY_NOTE as IMAGES_ONLY_NOTE
from rxagent.formatters.openai._response import FINISH_REASON_MAP as FINISH_REASON_MAP
from rxagent.formatters.openai._response import OpenAIStreamParser as OpenAIStreamParser

__all__ = [
    "ERROR_PREFIX",
    "FINISH_REASON_MAP",
    "IMAGES_ONLY_NOTE",
    "OpenAIFormatter",
    "OpenAIStreamParser",
]
