"""Ollama's native chat API (`POST /api/chat`): request bodies, responses, NDJSON lines, errors.

The formatter is pure: the client (`rxagent.models.ollama`) does the HTTP and the NDJSON framing,
and hands `OllamaFormatter` each decoded line (a JSON value).

The conversion rules are listed on `OllamaFormatter` and in `docs/providers/ollama.md`.

Example:
    ```python
    from rxagent.formatters.ollama import OllamaFormatter
    from rxagent.messages import Msg
    from rxagent.models import ModelOptions

    fmt = OllamaFormatter()
    body = fmt.format([Msg.user("Hi")], [], ModelOptions(max_output_tokens=64), model="llama3.2",
                      stream=True)
    assert body["options"] == {"num_predict": 64} and body["messages"][0]["content"] == "Hi"
    deltas = fmt.parse_stream([
        {"message": {"role": "assistant", "content": "Hello"}, "done": False},
        {"message": {"role": "assistant", "content": ""}, "done": True, "done_reason": "stop",
         "prompt_eval_count": 9, "eval_count": 2},
    ])
    assert [d.type for d in deltas] == ["text_delta", "usage_delta", "finish_delta"]
    ```
"""

from rxagent.formatters.ollama._formatter import OllamaFormatter as OllamaFormatter
from rxagent.formatters.ollama._response import OllamaStreamParser as OllamaStreamParser
from rxagent.formatters.ollama._shared import TOOL_ERROR_PREFIX as TOOL_ERROR_PREFIX

__all__ = ["TOOL_ERROR_PREFIX", "OllamaFormatter", "OllamaStreamParser"]
