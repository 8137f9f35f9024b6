"""What only OllamaChatModel does, against FakeOllamaServer.

What every provider client does is in `test_client_conformance*.py`.
"""

from __future__ import annotations

from typing import Any

import pytest

from rxagent.errors import ConfigurationError, ProviderError
from rxagent.messages import Msg, ToolResultBlock
from rxagent.models import (
    ModelDelta,
    ModelOptions,
    OllamaChatModel,
    TextDelta,
    ToolCallDelta,
    ToolSchema,
    resolve,
)
from rxagent.models.ollama import normalize_ollama_host
from rxagent.testing import Turn, text, thinking, tool_call
from rxagent.testing.providers import FakeOllamaServer, Reply


def client(server: FakeOllamaServer, **kwargs: Any) -> OllamaChatModel:
    return OllamaChatModel("llama3.2", base_url=server.base_url, **kwargs)


async def collect(model: OllamaChatModel, *messages: Msg) -> list[ModelDelta]:
    return [d async for d in model.stream(list(messages), [], ModelOptions())]


ADD = ToolSchema(name="add", description="Add.", parameters={"type": "object"})


@pytest.fixture(autouse=True)
def _no_ollama_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)


# -- requests and responses ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_requests_go_to_api_chat_with_the_stream_flag(stream: bool) -> None:
    async with FakeOllamaServer(["ok"]) as server, client(server, stream=stream) as model:
        await model.complete([Msg.user("1 + 2?")], [ADD])
    [request] = server.requests
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert request.body["stream"] is stream
    assert request.body["model"] == "llama3.2"


async def test_streamed_deltas_carry_no_tool_call_id_so_the_agent_assigns_one() -> None:
    turn: Turn = [text("Both."), tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)]
    async with FakeOllamaServer([turn], chunk_size=2) as server, client(server) as model:
        deltas = await collect(model, Msg.user("go"))
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert [(c.index, c.id, c.name) for c in calls] == [(1, None, "add"), (2, None, "add")]
    assert [c.args for c in calls] == ['{"a": 1, "b": 2}', '{"a": 3, "b": 4}']
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Both."
    assert server.stream_content_type == "application/x-ndjson"


async def test_tool_call_ids_from_newer_servers_are_kept() -> None:
    turn = [tool_call("add", id="call_srv", a=1, b=2)]
    async with FakeOllamaServer([turn], tool_call_ids=True) as server, client(server) as model:
        deltas = await collect(model, Msg.user("go"))
    [call] = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert call.id == "call_srv"


async def test_the_conversation_goes_out_in_ollama_shape() -> None:
    history = [
        Msg.system("Be brief."),
        Msg.user("1 + 2?"),
        Msg.assistant([thinking("sum"), tool_call("add", id="call_1", a=1, b=2)]),
        Msg.tool(ToolResultBlock(id="call_1", name="add", output="3")),
    ]
    async with FakeOllamaServer(["3"]) as server, client(server) as model:
        await model.complete(history, [ADD], ModelOptions(temperature=0, max_output_tokens=9))
    body = server.requests[0].body
    assert body["messages"][2] == {
        "role": "assistant",
        "content": "",
        "thinking": "sum",
        "tool_calls": [
            {"id": "call_1", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}
        ],
    }
    assert body["messages"][3] == {
        "role": "tool",
        "content": "3",
        "tool_name": "add",
        "tool_call_id": "call_1",
    }
    assert body["options"] == {"temperature": 0.0, "num_predict": 9}


async def test_keep_alive_and_think_are_sent() -> None:
    async with FakeOllamaServer(["ok"]) as server:
        async with client(server, keep_alive="10m", think=True) as model:
            await model.complete([Msg.user("hi")])
    assert server.requests[0].body["keep_alive"] == "10m"
    assert server.requests[0].body["think"] is True


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"keep_alive": True}, "keep_alive"),
        ({"keep_alive": [1]}, "keep_alive"),
        ({"think": 1}, "think"),
    ],
)
def test_bad_ollama_arguments(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigurationError, match=match):
        OllamaChatModel("llama3.2", **kwargs)


def test_default_base_url() -> None:
    model = OllamaChatModel("llama3.2")
    assert model.base_url == "http://localhost:11434"
    assert model._url(stream=True) == "http://localhost:11434/api/chat"


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("0.0.0.0", "http://127.0.0.1:11434"),
        ("0.0.0.0:9999", "http://127.0.0.1:9999"),
        ("gpu-box", "http://gpu-box:11434"),
        ("gpu-box:8080", "http://gpu-box:8080"),
        ("http://gpu-box", "http://gpu-box:80"),
        ("https://ollama.example.com/", "https://ollama.example.com:443"),
        ("https://proxy.example.com:8443/ollama/", "https://proxy.example.com:8443/ollama"),
        ("::1", "http://[::1]:11434"),
        ("[::]:1234", "http://[::1]:1234"),
        (" 127.0.0.1:5 ", "http://127.0.0.1:5"),
    ],
)
def test_ollama_host_forms(host: str, expected: str) -> None:
    assert normalize_ollama_host(host) == expected


def test_an_unreadable_host_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match="Ollama host"):
        OllamaChatModel("llama3.2", base_url="host:port")


async def test_ollama_host_without_a_scheme_reaches_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with FakeOllamaServer(["one", "two"]) as server:
        monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{server.port}")
        async with OllamaChatModel("llama3.2") as model:
            assert (await model.complete([Msg.user("hi")])).message.text == "one"
        monkeypatch.setenv("OLLAMA_HOST", f"0.0.0.0:{server.port}")  # a bind address
        async with OllamaChatModel("llama3.2") as model:
            assert model.base_url == f"http://127.0.0.1:{server.port}"
            assert (await model.complete([Msg.user("hi")])).message.text == "two"


async def test_resolve_ollama_keeps_the_tag_in_the_model_name() -> None:
    model = resolve("ollama:llama3.2:3b", base_url="127.0.0.1:1")
    assert isinstance(model, OllamaChatModel)
    assert model.model == "llama3.2:3b"
    assert model.base_url == "http://127.0.0.1:1"


async def test_an_unknown_done_reason_is_a_provider_error() -> None:
    async with FakeOllamaServer([Reply("x", finish="odd")]) as server:
        async with client(server, max_retries=0) as model:
            with pytest.raises(ProviderError, match="unknown done_reason 'odd'"):
                await model.complete([Msg.user("hi")])
