"""Google Gemini `generateContent`: the wire format of the Gemini Developer API (`v1beta`).

`GeminiFormatter` builds `models/{model}:generateContent` and `:streamGenerateContent` bodies,
reads whole `GenerateContentResponse`s and their streamed chunks (decoded SSE events, each a full
response object), and classifies Google API error bodies. It is pure: no I/O, no globals. The
model name goes in the URL, not in the body.

Conversion rules (what cannot be carried one to one):

- **Roles.** User messages are `"user"` contents, assistant messages `"model"` contents. A run of
  consecutive tool messages becomes one `"user"` content with one `functionResponse` part per
  result (Gemini's turn structure); `parse_request` splits it back into one tool message each.
- **System messages** all go into `systemInstruction`, one text part per text block, in order,
  wherever they stand in the conversation (Gemini has one system instruction per request).
  `parse_request` returns them as one system message at the front.
- **`Msg.name`** has no field in Gemini. A named user, assistant or system message starts with
  the text part `"<name>: "` (the multi-agent convention); `parse_request` cannot tell it from
  text, so it comes back as a text block. A name on a tool message is refused (the
  `functionResponse` already carries the tool's name).
- **Empty messages** (an empty string or no blocks) are not sent: Gemini rejects a content
  without parts.
- **Thinking.** A thinking block with text is a `{"text": ..., "thought": true}` part (a thought
  summary) carrying its `thoughtSignature`, if any. Gemini also attaches a `thoughtSignature` to
  a part that is not a thought (a `functionCall`, often the first text part), and it must come
  back unchanged on that same part. rxagent keeps it as a signature-only
  `ThinkingBlock(thinking="", signature=sig)` placed right before the block of that part, and
  `format` attaches such a block's signature to the next text, function-call or image part. With
  no such part after it (the end of the message, or a thought next), it is sent as
  `{"text": "", "thoughtSignature": sig}`, which Gemini itself sends at the end of some streams.
- **Tool calls** are `functionCall {id?, name, args}` parts. By default (`call_ids="model"`) an
  `id` is sent only when it came from the model: Gemini 2.5 sends calls without ids, the agent
  then numbers them `call_<n>` (`AGENT_CALL_ID`), and those are not sent back, so the history
  reads as Gemini wrote it (calls and results pair by order and name); some Gemini endpoints
  (Vertex AI, proxies) reject an `id` they did not issue. `call_ids="always"` sends every id,
  `"never"` none. `args` must be an object: a call whose arguments were not a JSON object
  (`raw_input`) is sent with its parsed `input` (`{}`).
- **Tool results** are `functionResponse {id?, name, response}` parts (the same `id` rule). A
  text output becomes `response: {"result": output}`, or `{"error": output}` when `is_error`.
  An output of blocks
  sends its text blocks joined with newlines the same way and its images as
  `functionResponse.parts` (`inlineData` / `fileData`; multimodal function responses need a
  Gemini 3 model). `parse_request` reads a `response` of another shape as its JSON text.
- **Images** with `data` are `inlineData {mimeType, data}` parts (a `data:` URL is sent the same
  way); with an http(s) or `gs://` URL they are `fileData {mimeType?, fileUri}` parts (set
  `media_type` when Gemini cannot infer it from the URL). An image with both `url` and `data`
  is sent by its `data`.
- **Tools** are one `{"functionDeclarations": [...]}` tool; each schema goes as
  `parametersJsonSchema` (plain JSON Schema, accepted by `v1beta` and by the google-genai types)
  rather than the OpenAPI-subset `parameters`.
- **Options.** `tool_choice` becomes `toolConfig.functionCallingConfig`: `"auto"` → `AUTO`,
  `"none"` → `NONE`, `"required"` → `ANY`, a tool name → `ANY` with `allowedFunctionNames`; it is
  sent only with tools (without tools no call is possible anyway). `parallel_tool_calls=True` is
  Gemini's behaviour and needs no field; `False` is refused (Gemini has no switch).
  `temperature`, `max_output_tokens` (`maxOutputTokens`), `stop` (`stopSequences`) and `seed` go
  into `generationConfig`. `response_format` `{"type": "json_object"}` sets `responseMimeType`
  `"application/json"`; `{"type": "json_schema", ...}` also sets `responseJsonSchema` to the schema
  (its `name` and `strict` are not sent: Gemini always constrains output to the schema and has no
  schema name; `parse_request` names it `"response"`).
- **`extra`** is merged into the body: `generationConfig` and `toolConfig` key by key over what
  the options built (so `{"generationConfig": {"thinkingConfig": {"includeThoughts": True}}}`
  adds thinking and keeps `temperature`), `tools` is appended after the function declarations
  (`[{"googleSearch": {}}]`), and any other key is set at the top level (`safetySettings`,
  `cachedContent`, ...). `contents` and `systemInstruction` are refused: they come from messages.
- **Responses.** Only candidate 0 is read. Consecutive text parts (across stream chunks too)
  extend one text block, unless a part of another kind or a signature comes between them.
  `functionCall.id` may be absent: the call then gets `id=None` in its delta, so the agent
  assigns its deterministic `call_<n>`. Image, code-execution and other non-text output parts
  are refused with a `ProviderError` rather than dropped.
- **Usage** is cumulative in each chunk, so only the last one is reported: input =
  `promptTokenCount` + `toolUsePromptTokenCount`, output = `candidatesTokenCount` +
  `thoughtsTokenCount`, cached read = `cachedContentTokenCount` (Gemini reports no cache writes).
- **Finish reasons** (`FINISH_REASON_MAP`): `STOP` is `"stop"`, or `"tool_calls"` when the reply
  has function calls (also for `FINISH_REASON_UNSPECIFIED`); `MAX_TOKENS` and `CONTINUATION` are
  `"length"`; the safety, recitation, blocklist, language, `OTHER` and image outcomes are
  `"content_filter"`; a prompt blocked by `promptFeedback.blockReason` (no candidates) is
  `"content_filter"` with no content. `MALFORMED_FUNCTION_CALL`, `UNEXPECTED_TOOL_CALL`,
  `TOO_MANY_TOOL_CALLS` and `MALFORMED_RESPONSE` raise a recoverable `ProviderError` (the step is
  tried again); `MISSING_THOUGHT_SIGNATURE` raises `InvalidRequestError`. Any other value is a
  malformed response. A stream is complete once a chunk with a `finishReason` (or a
  `blockReason`) arrived; there is no `[DONE]`.
- **Errors** (`{"error": {"code", "message", "status"}}`, also inside a stream) are classified by
  the gRPC `status` (`STATUS_CODES`), then the HTTP status: `INVALID_ARGUMENT` whose message says
  `"input token count ... exceeds the maximum number of tokens allowed"` is `CONTEXT_TOO_LONG`;
  an `ErrorInfo` reason `API_KEY_INVALID` is `AUTH` (Gemini sends it with status 400). A
  `google.rpc.RetryInfo` `retryDelay` is read as `retry_after` when no header says.

Example:
    ```python
    from rxagent import Msg
    from rxagent.formatters.gemini import GeminiFormatter
    from rxagent.models import ModelOptions, ToolSchema

    fmt = GeminiFormatter()
    body = fmt.format(
        [Msg.system("Be brief."), Msg.user("1 + 2?")],
        [ToolSchema(name="add", description="Add two numbers.")],
        ModelOptions(tool_choice="add", max_output_tokens=50),
        model="gemini-2.5-flash",
        stream=True,
    )
    assert body["systemInstruction"] == {"parts": [{"text": "Be brief."}]}
    assert body["contents"] == [{"role": "user", "parts": [{"text": "1 + 2?"}]}]
    assert body["toolConfig"]["functionCallingConfig"] == {
        "mode": "ANY", "allowedFunctionNames": ["add"]
    }
    assert body["generationConfig"] == {"maxOutputTokens": 50}
    messages, tools, options = fmt.parse_request(body)
    assert messages[1].text == "1 + 2?" and tools[0].name == "add"
    assert options.tool_choice == "add"
    ```
"""

from rxagent.formatters.gemini._errors import GRPC_HTTP_STATUS as GRPC_HTTP_STATUS
from rxagent.formatters.gemini._errors import STATUS_CODES as STATUS_CODES
from rxagent.formatters.gemini._formatter import GeminiFormatter as GeminiFormatter
from rxagent.formatters.gemini._request import AGENT_CALL_ID as AGENT_CALL_ID
from rxagent.formatters.gemini._request import CallIds as CallIds
from rxagent.formatters.gemini._response import FINISH_ERRORS as FINISH_ERRORS
from rxagent.formatters.gemini._response import FINISH_REASON_MAP as FINISH_REASON_MAP
from rxagent.formatters.gemini._response import GeminiStreamParser as GeminiStreamParser

__all__ = [
    "AGENT_CALL_ID",
    "FINISH_ERRORS",
    "FINISH_REASON_MAP",
    "GRPC_HTTP_STATUS",
    "STATUS_CODES",
    "CallIds",
    "GeminiFormatter",
    "GeminiStreamParser",
]
