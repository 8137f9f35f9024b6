"""OllamaChatModel against FakeOllamaServer: requests, NDJSON streams, hosts, retries, agents."""

from __future__ import annotations

from typing import Any

import pytest

from rxagent import ReActAgent, tool
from rxagent.errors import (
    AuthenticationError,
    ConfigurationError,
    ContextTooLongError,
    InvalidRequestError,
    ProviderError,
)
from rxagent.events import ErrorEvent, PostCallEvent, ReasoningChunkEvent, RetryEvent
from rxagent.messages import Msg, ToolResultBlock
from rxagent.models import (
    ModelDelta,
    ModelOptions,
    OllamaChatModel,
    TextDelta,
    ToolCallDelta,
    ToolSchema,
    Usage,
    resolve,
)
from rxagent.models.ollama import normalize_ollama_host
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, Turn, text, thinking, tool_call
from rxagent.testing.providers import FakeOllamaServer, Fault, Reply


def policy(sleeps: RecordingSleep, retries: int = 2) -> RetryPolicy:
    return RetryPolicy(max_retries=retries, sleep=sleeps, random=lambda: 0.5)


def client(server: FakeOllamaServer, **kwargs: Any) -> OllamaChatModel:
    return OllamaChatModel("llama3.2", base_url=server.base_url, **kwargs)


async def collect(model: OllamaChatModel, *messages: Msg) -> list[ModelDelta]:
    return [d async for d in model.stream(list(messages), [], ModelOptions())]


async def consume(model: OllamaChatModel, seen: list[ModelDelta]) -> None:
    async for delta in model.stream([Msg.user("hi")], [], ModelOptions()):
        seen.append(delta)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


ADD = ToolSchema(name="add", description="Add.", parameters={"type": "object"})


@pytest.fixture(autouse=True)
def _no_ollama_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.delenv("OLLAMA_API_KEY", raising=False)


# -- requests and responses ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_text_thinking_tool_calls_and_usage(stream: bool) -> None:
    turn = Reply(
        [thinking("A sum."), text("Adding."), tool_call("add", a=1, b=2)],
        usage=Usage(input_tokens=31, output_tokens=7, requests=1),
    )
    async with FakeOllamaServer([turn]) as server, client(server, stream=stream) as model:
        response = await model.complete([Msg.user("1 + 2?")], [ADD])
    assert [b.type for b in response.message.blocks] == ["thinking", "text", "tool_use"]
    assert response.message.blocks[0].thinking == "A sum."  # type: ignore[union-attr]
    call = response.message.tool_calls[0]
    assert (call.name, dict(call.input)) == ("add", {"a": 1, "b": 2})
    assert call.id  # assigned on our side: Ollama sends none
    assert response.finish_reason == "tool_calls"
    assert response.usage == Usage(input_tokens=31, output_tokens=7, requests=1)
    request = server.requests[0]
    assert (request.method, request.path) == ("POST", "/api/chat")
    assert request.body["stream"] is stream
    assert request.body["model"] == "llama3.2"
    assert request.body["tools"][0]["function"]["name"] == "add"
    assert "Authorization" not in request.headers


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


async def test_an_api_key_is_optional_and_sent_as_bearer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert OllamaChatModel.requires_api_key is False
    async with FakeOllamaServer(["a", "b"]) as server:
        async with client(server, api_key="cloud-key") as model:
            await model.complete([Msg.user("hi")])
        monkeypatch.setenv("OLLAMA_API_KEY", "env-key")
        async with client(server) as model:
            await model.complete([Msg.user("hi")])
    assert server.requests[0].headers["Authorization"] == "Bearer cloud-key"
    assert server.requests[1].headers["Authorization"] == "Bearer env-key"


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


async def test_length_finish_and_unknown_done_reason() -> None:
    async with FakeOllamaServer(
        [Reply("cut", finish="length"), Reply("x", finish="odd")]
    ) as server:
        async with client(server, max_retries=0) as model:
            assert (await model.complete([Msg.user("hi")])).finish_reason == "length"
            with pytest.raises(ProviderError, match="unknown done_reason 'odd'"):
                await model.complete([Msg.user("hi")])


# -- retries and failures --------------------------------------------------------------------------


async def test_429_with_retry_after_is_retried_after_that_delay() -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer(["ok"]) as server:
        server.fail(1, status=429, message="too many requests", headers={"Retry-After": "2"})
        async with client(server, max_retries=policy(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [2.0]
    assert len(server.requests) == 2
    assert response.usage.requests == 2


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (Fault(status=400, message="invalid options"), InvalidRequestError),
        (
            Fault(status=404, message='model "llama9" not found, try pulling it first'),
            InvalidRequestError,
        ),
        (Fault(status=401, message="unauthorized"), AuthenticationError),
        (Fault(status=403, message="forbidden"), AuthenticationError),
        (
            Fault(status=400, message="input length exceeds maximum context length"),
            ContextTooLongError,
        ),
    ],
)
async def test_errors_that_are_never_retried(fault: Fault, error: type[Exception]) -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer(["ok"]) as server:
        server.fail(1, fault)
        async with client(server, max_retries=policy(sleeps)) as model:
            with pytest.raises(error) as info:
                await model.complete([Msg.user("hi")])
    assert type(info.value) is error
    assert fault.message in str(info.value)
    assert info.value.status == fault.status  # type: ignore[attr-defined]
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_server_errors_before_the_first_delta_are_retried_with_backoff() -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer(["ok"]) as server:
        server.fail(1, status=500, message="llama runner process has terminated")
        server.fail(2, status=502, body=b"<html>Bad Gateway</html>", content_type="text/html")
        async with client(server, max_retries=policy(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [0.5, 1.0]


async def test_an_html_page_from_a_proxy_is_a_typed_error() -> None:
    async with FakeOllamaServer(["ok"]) as server:
        server.fail(
            1, status=502, body=b"<html><h1>502 Bad Gateway</h1></html>", content_type="text/html"
        )
        async with client(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await model.complete([Msg.user("hi")])
    assert info.value.provider == "ollama"
    assert info.value.status == 502
    assert info.value.excerpt == "<html><h1>502 Bad Gateway</h1></html>"


async def test_an_error_line_before_the_first_delta_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer(["hello"]) as server:
        server.fail(
            1, mid_stream_error=0, message="an error was encountered while running the model"
        )
        async with client(server, max_retries=policy(sleeps)) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "hello"
    assert len(server.requests) == 2


async def test_a_mid_stream_error_after_the_first_delta_is_recoverable_and_not_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer(["a long enough answer"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=2, message="the runner crashed")
        async with client(server, max_retries=policy(sleeps)) as model:
            seen: list[ModelDelta] = []
            with pytest.raises(ProviderError, match="the runner crashed") as info:
                await consume(model, seen)
    assert seen == [TextDelta(index=0, text="a "), TextDelta(index=0, text="lo")]
    assert info.value.recoverable
    assert len(server.requests) == 1
    assert sleeps.delays == []


async def test_a_stream_without_the_done_line_ends_early() -> None:
    line = b'{"model":"m","message":{"role":"assistant","content":"hi"},"done":false}\n'
    async with FakeOllamaServer(["unused"]) as server:
        server.fail(1, status=200, body=line, content_type="application/x-ndjson")
        async with client(server, max_retries=policy(RecordingSleep())) as model:
            seen: list[ModelDelta] = []
            with pytest.raises(ProviderError, match="ended early") as info:
                await consume(model, seen)
    assert seen == [TextDelta(index=0, text="hi")]
    assert info.value.recoverable
    assert len(server.requests) == 1  # content had reached the caller: not retried


async def test_a_dropped_connection() -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer(["ok", "abcdef"], chunk_size=2) as server:
        server.fail(1, drop_after=0)
        server.fail(3, drop_after=2)
        async with client(server, max_retries=policy(sleeps)) as model:
            assert (await model.complete([Msg.user("hi")])).message.text == "ok"
            with pytest.raises(ProviderError) as info:
                await model.complete([Msg.user("again")])
    assert len(sleeps.delays) == 1  # only the drop before any delta was retried
    assert info.value.recoverable


async def test_a_slow_first_byte_times_out_and_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer(["late"]) as server:
        server.fail(1, first_byte_delay=0.3)
        async with client(server, timeout=0.1, max_retries=0) as model:
            with pytest.raises(ProviderError, match="timeout") as info:
                await model.complete([Msg.user("hi")])
        assert info.value.recoverable
        server.fail(2, first_byte_delay=0.3)
        async with client(server, timeout=0.1, max_retries=policy(sleeps)) as model:
            assert (await model.complete([Msg.user("hi")])).message.text == "late"
    assert len(sleeps.delays) == 1


# -- through an agent ------------------------------------------------------------------------------


async def test_an_agent_run_with_a_tool_call_then_an_answer() -> None:
    async with FakeOllamaServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]) as server:
        async with client(server) as model:
            agent = ReActAgent("calc", "You add numbers.", model, tools=[add])
            events = [e async for e in agent.events("What is 2 + 3?")]
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.reply.text == "2 + 3 = 5"
    kinds = [e.type for e in events]
    assert kinds[0] == "pre_call"
    assert "pre_acting" in kinds
    assert "post_acting" in kinds
    second = server.requests[1].body["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "tool"]
    call = second[2]["tool_calls"][0]
    assert call["function"] == {"name": "add", "arguments": {"a": 2, "b": 3}}
    assert call["id"].startswith("call_")  # the agent's deterministic id, sent back
    assert second[3] == {
        "role": "tool",
        "content": "5",
        "tool_name": "add",
        "tool_call_id": call["id"],
    }


async def test_retries_appear_as_run_events() -> None:
    sleeps = RecordingSleep()
    async with FakeOllamaServer([tool_call("add", a=1, b=2), "3"]) as server:
        server.fail(1, status=503, message="busy", headers={"Retry-After": "1"})
        async with client(server, max_retries=policy(sleeps)) as model:
            agent = ReActAgent("calc", model=model, tools=[add])
            events = [e async for e in agent.events("1 + 2?")]
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert [(r.attempt, r.delay_s, r.code) for r in retries] == [(2, 1.0, "PROVIDER_ERROR")]
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ReasoningChunkEvent))
    assert events.index(retries[0]) < first_chunk
    assert isinstance(events[-1], PostCallEvent)
    assert events[-1].reply.text == "3"


async def test_a_broken_stream_restarts_the_agent_step() -> None:
    async with FakeOllamaServer(["first try", "second try"], chunk_size=3) as server:
        server.fail(1, mid_stream_error=2, message="runner crashed", consume_turn=True)
        async with client(server, max_retries=0) as model:
            events = [e async for e in ReActAgent("a", model=model).events("go")]
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1
    assert errors[0].recoverable
    assert isinstance(events[-1], PostCallEvent)
    assert events[-1].reply.text == "second try"
    assert len(server.requests) == 2
