"""DashScope (Alibaba Cloud Model Studio, Qwen) native API: request bodies, responses and streams.

The native protocol wraps OpenAI-like chat messages in `{"model", "input": {"messages"},
"parameters"}` and streams Server-Sent Events whose `data:` carries the whole response shape
(`output.choices[0].message`, `finish_reason` as the string `"null"` until the last frame,
cumulative `usage`). Text models use the text-generation endpoint with string contents; Qwen-VL
models use the multimodal endpoint, where every content is a list of `{"text": ...}` /
`{"image": ...}` items. `DashScopeFormatter(multimodal=True)` speaks the second form.

Conversion rules (also in `docs/providers/dashscope.md`):

- several text blocks of one message are joined without a separator (as `Msg.text` does);
- thinking blocks are sent as the assistant message's `reasoning_content` (joined); a thinking
  block's `signature` is not sent, since DashScope has none;
- a tool result is sent as a `tool` message with `tool_call_id` and `name` (the tool's name, so
  the speaker name of a tool message is not sent); block outputs are joined with newlines; an
  error result is prefixed with `TOOL_ERROR_PREFIX`; an image in a tool result becomes the
  text `TOOL_IMAGE_NOTE` (tool messages carry text only);
- images in user messages are sent only in multimodal mode, as `{"image": url}` (base64 data as
  a data URL); in text mode they raise `InvalidRequestError`;
- `tool_choice="required"` raises `InvalidRequestError` (DashScope takes `"auto"`, `"none"` or a
  named function);
- `options.extra` is merged into `parameters` (`enable_thinking`, `thinking_budget`, `top_p`,
  ...), except the keys in `TOP_LEVEL_EXTRA`, which go to the top of the body.

Example:
    ```python
    from rxagent.formatters.dashscope import DashScopeFormatter
    from rxagent.messages import Msg
    from rxagent.models import ModelOptions

    body = DashScopeFormatter().format(
        [Msg.user("Hi")], [], ModelOptions(max_output_tokens=50), model="qwen-plus", stream=True
    )
    assert body["input"] == {"messages": [{"role": "user", "content": "Hi"}]}
    assert body["parameters"] == {
        "result_format": "message", "incremental_output": True, "max_tokens": 50
    }
    ```
"""

from rxagent.formatters.dashscope._errors import CONTEXT_LENGTH_MARKERS as CONTEXT_LENGTH_MARKERS
from rxagent.formatters.dashscope._formatter import DashScopeFormatter as DashScopeFormatter
from rxagent.formatters.dashscope._formatter import is_multimodal_model as is_multimodal_model
from rxagent.formatters.dashscope._request import TOOL_ERROR_PREFIX as TOOL_ERROR_PREFIX
from rxagent.formatters.dashscope._request import TOOL_IMAGE_NOTE as TOOL_IMAGE_NOTE
from rxagent.formatters.dashscope._request import TOP_LEVEL_EXTRA as TOP_LEVEL_EXTRA
from rxagent.formatters.dashscope._response import DashScopeStreamParser as DashScopeStreamParser

__all__ = [
    "CONTEXT_LENGTH_MARKERS",
    "TOOL_ERROR_PREFIX",
    "TOOL_IMAGE_NOTE",
    "TOP_LEVEL_EXTRA",
    "DashScopeFormatter",
    "DashScopeStreamParser",
    "is_multimodal_model",
]
