"""The shared HTTP engine (`HTTPChatModel`) and the fake-server base, with a toy provider.

The toy provider speaks a minimal SSE dialect, so these tests pin down what every provider client
inherits: retries before the first delta only, held usage, timeouts, dropped connections,
content-type checks, one pooled session per loop, and the fake server's fault injection.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pytest
from aiohttp import web

from rxagent import ReActAgent, tool
from rxagent.errors import (
    AgentRunError,
    AuthenticationError,
    ConfigurationError,
    ErrorCode,
    ProviderError,
    RateLimitedError,
)
from rxagent.events import ErrorEvent, PostCallEvent, ReasoningChunkEvent, RetryEvent
from rxagent.formatters.base import (
    BaseFormatter,
    Capabilities,
    malformed,
    provider_error,
    status_error,
)
from rxagent.formatters.framing import SSEEvent
from rxagent.messages import Msg
from rxagent.models import ModelOptions, ModelResponse, ToolSchema, Usage
from rxagent.models._http import HTTPChatModel
from rxagent.models.base import (
    FinishDelta,
    ModelDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
)
from rxagent.models.retry import RetryPolicy
from rxagent.testing import RecordingSleep, tool_call
from rxagent.testing.providers import FakeProviderServer, Fault, Reply
from rxagent.testing.providers._base import RecordedRequest, ScriptedResponse


class ToyParser:
    def __init__(self) -> None:
        self.done = False

    def feed(self, event: SSEEvent) -> list[ModelDelta]:
        data = json.loads(event.data)
        if event.event == "error":
            raise status_error("toy", data["status"], event.data, message=data["message"])
        if "usage" in data:
            return [UsageDelta(usage=Usage(input_tokens=data["usage"], requests=1))]
        if "finish" in data:
            self.done = True
            return [FinishDelta(reason=data["finish"])]
        if "call" in data:
            name, args = data["call"]
            return [ToolCallDelta(index=data["i"], id=f"t{data['i']}", name=name, args=args)]
        return [TextDelta(index=data["i"], text=data["t"])]

    def close(self) -> list[ModelDelta]:
        if not self.done:
            raise provider_error(
                ErrorCode.PROVIDER_ERROR, "the stream ended early", provider="toy", recoverable=True
            )
        return []


class ToyFormatter(BaseFormatter[SSEEvent]):
    provider = "toy"
    capabilities = Capabilities()

    def format(
        self,
        messages: Sequence[Msg],
        tools: Sequence[ToolSchema],
        options: ModelOptions,
        *,
        model: str,
        stream: bool,
    ) -> dict[str, Any]:
        return {
            "model": model,
            "stream": stream,
            "messages": [m.text for m in messages],
            "tools": [t.name for t in tools],
            **options.extra,
        }

    def parse(self, body: Any) -> ModelResponse:
        if not isinstance(body, dict) or "text" not in body:
            raise malformed("toy", "no text", body)
        return ModelResponse(
            message=Msg.assistant(body["text"]),
            usage=Usage(input_tokens=1, requests=1),
            finish_reason="stop",
        )

    def stream_parser(self) -> ToyParser:
        return ToyParser()

    def error_from_response(
        self, status: int, body: bytes, headers: Mapping[str, str]
    ) -> AgentRunError:
        return status_error("toy", status, body, headers=headers)


class ToyModel(HTTPChatModel):
    provider = "toy"
    default_base_url = "http://127.0.0.1:9"
    api_key_env = ("TOY_API_KEY",)

    def _make_formatter(self) -> ToyFormatter:
        return ToyFormatter()

    def _url(self, *, stream: bool) -> str:
        return f"{self.base_url}/chat"


class FakeToyServer(FakeProviderServer):
    provider = "toy"

    def routes(self) -> list[web.RouteDef]:
        async def chat(request: web.Request) -> web.StreamResponse:
            body = json.loads(await request.read())
            return await self.handle(request, stream=bool(body.get("stream")))

        return [web.post("/chat", chat)]

    def render(self, response: ScriptedResponse, request: RecordedRequest) -> Any:
        return {"text": response.message.text}

    def render_stream(
        self, response: ScriptedResponse, request: RecordedRequest
    ) -> Iterator[bytes]:
        yield _frame({"usage": response.usage.input_tokens})
        for i, block in enumerate(response.message.blocks):
            if block.type == "text":
                for start in range(0, len(block.text), self.chunk_size):
                    yield _frame({"i": i, "t": block.text[start : start + self.chunk_size]})
            elif block.type == "tool_use":
                yield _frame({"i": i, "call": [block.name, json.dumps(dict(block.input))]})
        yield _frame({"finish": response.finish})

    def render_error(self, fault: Fault) -> tuple[int, Any]:
        return fault.status or 500, {"error": fault.message}

    def render_stream_error(self, fault: Fault) -> bytes:
        return (
            b"event: error\ndata: "
            + json.dumps({"status": 529, "message": fault.message}).encode()
            + b"\n\n"
        )


def _frame(data: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(data).encode() + b"\n\n"


def toy(server: FakeProviderServer, **kw: Any) -> ToyModel:
    kw.setdefault("api_key", "k")
    return ToyModel("toy-1", base_url=server.base_url, **kw)


async def collect(model: HTTPChatModel, text: str = "hi") -> list[ModelDelta]:
    return [d async for d in model.stream([Msg.user(text)], [], ModelOptions())]


# -- streaming and whole responses -----------------------------------------------------------------


async def test_streams_text_in_fragments_and_holds_usage_until_content() -> None:
    async with FakeToyServer(["Hello world"], chunk_size=4) as server, toy(server) as model:
        deltas = await collect(model)
    kinds = [type(d).__name__ for d in deltas]
    # usage arrived first on the wire; it is held until content started, so a retry stays possible
    assert kinds[0] == "TextDelta"
    assert "UsageDelta" in kinds
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "Hello world"
    assert server.requests[0].headers["Authorization"] == "Bearer k"
    assert server.requests[0].body["stream"] is True


async def test_non_streaming_is_the_same_iterator_drained() -> None:
    async with FakeToyServer(["whole"]) as server, toy(server, stream=False) as model:
        response = await model.complete([Msg.user("hi")])
    assert response.message.text == "whole"
    assert response.finish_reason == "stop"
    assert server.requests[0].body["stream"] is False


async def test_options_are_merged_under_the_request() -> None:
    defaults = ModelOptions(extra={"a": 1, "b": 1})
    async with FakeToyServer(["x"]) as server, toy(server, options=defaults) as model:
        body = model.request_body([Msg.user("q")], [], ModelOptions(extra={"b": 2}))
        await model.complete([Msg.user("q")], [], ModelOptions(extra={"b": 2}))
    assert body["a"] == 1
    assert body["b"] == 2
    assert server.requests[0].body["b"] == 2


class OptionsSpy(ToyFormatter):
    """Records the options each body is built with."""

    def __init__(self) -> None:
        self.seen: list[ModelOptions] = []

    def format(self, messages: Any, tools: Any, options: ModelOptions, **kw: Any) -> dict[str, Any]:
        self.seen.append(options)
        return super().format(messages, tools, options, **kw)


SET = ModelOptions(temperature=0.5, extra={"a": 1})


@pytest.mark.parametrize(
    ("defaults", "request_options", "expected"),
    [
        (None, ModelOptions(), ModelOptions()),
        (None, SET, SET),
        (SET, ModelOptions(), SET),
        (SET, ModelOptions(extra={"b": 2}), ModelOptions(temperature=0.5, extra={"a": 1, "b": 2})),
        (SET, ModelOptions(temperature=None), ModelOptions(extra={"a": 1})),
    ],
)
def test_request_options_merge_over_the_models_as_merged_does(
    defaults: ModelOptions | None, request_options: ModelOptions, expected: ModelOptions
) -> None:
    model = ToyModel("toy-1", api_key="k", options=defaults)
    spy = model.formatter = OptionsSpy()
    model.request_body([], [], request_options)
    assert spy.seen == [expected]
    assert spy.seen[0] == model.options.merged(request_options)


class FastToyFormatter(ToyFormatter):
    """A toy formatter with the `parse_deltas` fast path; it counts its uses."""

    fast_reads = 0

    def parse_deltas(self, body: Any) -> list[ModelDelta]:
        FastToyFormatter.fast_reads += 1
        return [
            TextDelta(index=0, text=f"fast {body['text']}"),
            UsageDelta(usage=Usage(requests=1)),
            FinishDelta(reason="stop"),
        ]


class OverridingToyFormatter(FastToyFormatter):
    """Overrides `parse` below the class that has `parse_deltas`: its `parse` must be used."""

    def parse(self, body: Any) -> ModelResponse:
        return ModelResponse(message=Msg.assistant(f"override {body['text']}"))


async def test_whole_responses_use_parse_deltas_when_the_formatter_has_it() -> None:
    FastToyFormatter.fast_reads = 0
    async with FakeToyServer(["a", "b", "c", "d"]) as server, toy(server, stream=False) as model:
        assert (await model.complete([Msg.user("hi")])).message.text == "a"  # no fast path
        model.formatter = FastToyFormatter()  # replaced: looked up again
        assert (await model.complete([Msg.user("hi")])).message.text == "fast b"
        assert FastToyFormatter.fast_reads == 1
        model.formatter = OverridingToyFormatter()
        assert (await model.complete([Msg.user("hi")])).message.text == "override c"
        assert FastToyFormatter.fast_reads == 1
        model.formatter = ToyFormatter()
        assert (await model.complete([Msg.user("hi")])).message.text == "d"


# -- retries ---------------------------------------------------------------------------------------


async def test_429_is_retried_with_the_providers_wait_then_succeeds() -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer(["ok"]) as server:
        server.fail(1, status=429, headers={"retry-after-ms": "1500"})
        server.fail(2, status=503)
        policy = RetryPolicy(max_retries=3, initial_delay_s=0.5, jitter=0.0, sleep=sleeps)
        async with toy(server, max_retries=policy) as model:
            response = await model.complete([Msg.user("hi")])
    assert response.message.text == "ok"
    assert sleeps.delays == [1.5, 1.0]  # the provider's wait, then the second backoff step
    assert len(server.requests) == 3
    assert response.usage.requests == 3  # each attempt is a request


@pytest.mark.parametrize(
    ("status", "error"), [(400, "INVALID_REQUEST"), (401, "AUTH"), (403, "AUTH")]
)
async def test_client_errors_are_never_retried(status: int, error: str) -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer(["never"]) as server:
        server.fail(1, status=status)
        async with toy(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            with pytest.raises(AgentRunError) as info:
                await collect(model)
    assert info.value.code == error
    assert info.value.status == status
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_retries_run_out_and_the_last_error_is_raised() -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer(["never"]) as server:
        for n in (1, 2, 3):
            server.fail(n, status=500, message=f"boom {n}")
        async with toy(server, max_retries=RetryPolicy(max_retries=2, sleep=sleeps)) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    assert "boom 3" in str(info.value)
    assert info.value.recoverable
    assert len(sleeps.delays) == 2
    assert len(server.requests) == 3


async def test_a_retry_after_beyond_the_cap_is_not_waited_for() -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer(["never"]) as server:
        server.fail(1, status=429, headers={"Retry-After": "3600"})
        async with toy(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            with pytest.raises(RateLimitedError) as info:
                await collect(model)
    assert info.value.retry_after == 3600
    assert sleeps.delays == []


async def test_an_error_before_the_first_delta_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer(["fine"]) as server:
        server.fail(1, mid_stream_error=1)  # after the usage frame: nothing reached the caller
        async with toy(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            deltas = await collect(model)
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta)) == "fine"
    assert len(sleeps.delays) == 1


async def test_an_error_after_the_first_delta_is_raised_recoverable_not_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer(["a long enough reply"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=3)
        async with toy(server, max_retries=RetryPolicy(sleep=sleeps)) as model:
            got: list[ModelDelta] = []

            async def consume() -> None:
                async for delta in model.stream([Msg.user("hi")], [], ModelOptions()):
                    got.append(delta)

            with pytest.raises(AgentRunError) as info:
                await consume()
    assert info.value.recoverable
    assert info.value.status == 529
    assert any(isinstance(d, TextDelta) for d in got)
    assert sleeps.delays == []
    assert len(server.requests) == 1


async def test_a_dropped_connection_is_a_recoverable_provider_error() -> None:
    async with FakeToyServer(["abcdefghijkl"], chunk_size=2) as server:
        server.fail(1, drop_after=3)
        async with toy(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    assert info.value.recoverable
    assert info.value.provider == "toy"


async def test_a_stream_without_its_end_is_a_recoverable_error() -> None:
    class NoFinish(FakeToyServer):
        def render_stream(
            self, response: ScriptedResponse, request: RecordedRequest
        ) -> Iterator[bytes]:
            yield _frame({"i": 0, "t": "cut"})

    async with NoFinish(["x"]) as server, toy(server, max_retries=0) as model:
        with pytest.raises(ProviderError, match="ended early") as info:
            await collect(model)
    assert info.value.recoverable


async def test_a_slow_first_byte_times_out_and_is_retried() -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer(["late but fine"]) as server:
        server.fail(1, first_byte_delay=0.6)
        model = toy(server, timeout=0.2, max_retries=RetryPolicy(sleep=sleeps))
        async with model:
            deltas = await collect(model)
    assert sleeps.delays
    assert "".join(d.text for d in deltas if isinstance(d, TextDelta))


async def test_a_timeout_with_no_retries_left_says_so() -> None:
    async with FakeToyServer(["late"]) as server:
        server.fail(1, first_byte_delay=0.3)
        async with toy(server, timeout=0.1, max_retries=0) as model:
            with pytest.raises(ProviderError, match="timeout") as info:
                await collect(model)
    assert info.value.recoverable


async def test_an_html_page_from_a_proxy_is_typed_with_an_excerpt() -> None:
    page = b"<html><body><h1>502 Bad Gateway</h1>" + b"x" * 2000 + b"</body></html>"
    async with FakeToyServer(["x"]) as server:
        server.fail(1, body=page, status=502, content_type="text/html")
        async with toy(server, max_retries=0) as model:
            with pytest.raises(ProviderError) as info:
                await collect(model)
    err = info.value
    assert err.status == 502
    assert err.provider == "toy"
    assert err.excerpt is not None
    assert err.excerpt.startswith("<html>")
    assert len(err.excerpt) <= 300


async def test_a_200_html_page_instead_of_a_stream_is_typed() -> None:
    async with FakeToyServer(["x"]) as server:
        server.fail(1, body=b"<html>login</html>", status=200, content_type="text/html")
        async with toy(server, max_retries=0) as model:
            with pytest.raises(ProviderError, match="expected a stream") as info:
                await collect(model)
    assert info.value.excerpt == "<html>login</html>"


async def test_a_200_html_page_instead_of_json_is_typed() -> None:
    async with FakeToyServer(["x"]) as server:
        server.fail(1, body=b"<html>login</html>", status=200, content_type="text/html")
        async with toy(server, max_retries=0, stream=False) as model:
            with pytest.raises(ProviderError, match="not JSON"):
                await collect(model)


async def test_an_unreachable_server_is_a_recoverable_connection_error() -> None:
    sleeps = RecordingSleep()
    model = ToyModel(
        "toy-1", base_url="http://127.0.0.1:9", api_key="k", max_retries=RetryPolicy(sleep=sleeps)
    )
    async with model:
        with pytest.raises(ProviderError, match="connection failed") as info:
            await collect(model)
    assert info.value.recoverable
    assert len(sleeps.delays) == 2


# -- construction ----------------------------------------------------------------------------------


def test_a_missing_api_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOY_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="TOY_API_KEY"):
        ToyModel("toy-1")
    monkeypatch.setenv("TOY_API_KEY", "from-env")
    assert ToyModel("toy-1").api_key == "from-env"


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"timeout": 0}, "timeout"),
        ({"timeout": "1"}, "timeout"),
        ({"max_retries": -1}, "max_retries"),
    ],
)
def test_bad_arguments_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigurationError, match=field):
        ToyModel("toy-1", api_key="k", **kwargs)


def test_an_empty_model_name_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="model"):
        ToyModel("", api_key="k")


async def test_one_pooled_session_per_loop_and_aclose_keeps_the_model_usable() -> None:
    async with FakeToyServer(["a", "b", "c"]) as server:
        model = toy(server)
        await model.complete([Msg.user("1")])
        first = model._session()
        await model.complete([Msg.user("2")])
        assert model._session() is first
        await model.aclose()
        assert first.closed
        await model.complete([Msg.user("3")])  # a new session on demand
        await model.aclose()


def test_a_threaded_fake_server_serves_synchronous_clients() -> None:
    with FakeToyServer(["sync ok"]) as server:

        async def main() -> str:
            async with toy(server, stream=False) as model:
                return (await model.complete([Msg.user("x")])).message.text

        assert asyncio.run(main()) == "sync ok"
    assert len(server.requests) == 1


async def test_the_fake_server_reports_an_exhausted_script() -> None:
    async with FakeToyServer(["only one"]) as server, toy(server, max_retries=0) as model:
        await collect(model)
        with pytest.raises(ProviderError, match="exhausted"):
            await collect(model)
    assert server.remaining == 0


async def test_a_function_script_sees_the_request() -> None:
    def answer(request: RecordedRequest) -> Reply:
        return Reply(f"you said {request.body['messages'][-1]}", finish="length")

    async with FakeToyServer(answer) as server, toy(server, stream=False) as model:
        response = await model.complete([Msg.user("ping")])
    assert response.message.text == "you said ping"


def test_bad_scripts_fail_when_the_server_is_built() -> None:
    with pytest.raises(TypeError, match="list of turns"):
        FakeToyServer("not a list")
    with pytest.raises(ValueError, match="chunk_size"):
        FakeToyServer([], chunk_size=0)
    with pytest.raises(ValueError, match="start at 1"):
        FakeToyServer([]).fail(0, status=500)


# -- through an agent ------------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


async def test_retries_are_run_events_delivered_before_the_first_chunk() -> None:
    sleeps = RecordingSleep()
    async with FakeToyServer([tool_call("add", a=1, b=2), "3"]) as server:
        server.fail(1, status=429, headers={"retry-after": "2"})
        model = toy(server, max_retries=RetryPolicy(sleep=sleeps))
        agent = ReActAgent("toy", model=model, tools=[add])
        async with model:
            events = [e async for e in agent.events("1 + 2?")]
    retries = [e for e in events if isinstance(e, RetryEvent)]
    assert len(retries) == 1
    assert (retries[0].attempt, retries[0].delay_s, retries[0].code) == (2, 2.0, "RATE_LIMITED")
    first_chunk = next(i for i, e in enumerate(events) if isinstance(e, ReasoningChunkEvent))
    assert events.index(retries[0]) < first_chunk
    assert events[-1].type == "post_call"
    assert sleeps.delays == [2.0]


async def test_a_stream_broken_after_chunks_restarts_the_step() -> None:
    async with FakeToyServer(["a fairly long answer"], chunk_size=2) as server:
        server.fail(1, mid_stream_error=3)
        model = toy(server, max_retries=0)
        agent = ReActAgent("toy", model=model)
        async with model:
            events = [e async for e in agent.events("go")]
            result = await agent.call("again")  # the script is used up now
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert len(errors) == 1
    assert errors[0].recoverable
    assert errors[0].code == "PROVIDER_ERROR"
    last = events[-1]
    assert isinstance(last, PostCallEvent)
    assert last.reply.text == "a fairly long answer"
    starts = [e for e in events if e.type == "pre_reasoning"]
    assert len(starts) == 2  # the step started again
    assert result.error is not None
    assert result.error.code == "PROVIDER_ERROR"


async def test_an_auth_failure_fails_the_run_with_its_code() -> None:
    async with FakeToyServer(["x"]) as server:
        server.fail(1, status=401, message="bad key")
        model = toy(server)
        async with model:
            result = await ReActAgent("toy", model=model).call("hi")
    assert result.error is not None
    assert result.error.code == "AUTH"
    with pytest.raises(AuthenticationError):
        result.raise_for_error()


def test_call_sync_closes_the_models_connections_with_its_loop() -> None:
    with FakeToyServer(["one", "two"]) as server:
        model = toy(server)
        agent = ReActAgent("toy", model=model)
        assert agent.call_sync("a").text == "one"
        assert not model._sessions  # closed and forgotten when the call's loop ended
        assert agent.call_sync("b").text == "two"


async def test_an_agent_closes_its_model_on_exit() -> None:
    async with FakeToyServer(["x"]) as server:
        model = toy(server)
        async with ReActAgent("toy", model=model) as agent:
            await agent.call("hi")
            session = model._session()
        assert session.closed


async def test_a_retry_past_the_elapsed_budget_is_not_made() -> None:
    sleep = RecordingSleep()  # virtual time: the clock moves by what is slept
    policy = RetryPolicy(
        max_retries=5,
        initial_delay_s=4.0,
        jitter=0.0,
        max_elapsed_s=10.0,
        sleep=sleep,
        clock=sleep.clock,
    )
    async with FakeToyServer(["never"]) as server:
        for n in range(1, 7):
            server.fail(n, status=503)
        async with toy(server, max_retries=policy) as model:
            with pytest.raises(ProviderError):
                await collect(model)
    # waits of 4 and 8 would end at 4 and 12: only the first fits the 10 s budget
    assert sleep.clock() == 4.0
    assert len(server.requests) == 2


async def test_a_per_call_model_string_is_resolved_once_and_closed_with_the_agent() -> None:
    from rxagent.models import registry

    async with FakeToyServer(["one", "two"]) as server:
        built: list[ToyModel] = []

        def factory(name: str, **kw: Any) -> ToyModel:
            built.append(toy(server))
            return built[-1]

        registry.register("toyreg", factory, replace=True)
        try:
            async with ReActAgent("toy", model=toy(server)) as agent:
                assert (await agent.call("a", model="toyreg:x")).text == "one"
                assert (await agent.call("b", model="toyreg:x")).text == "two"
                session = built[0]._session()
            assert len(built) == 1
            assert session.closed
        finally:
            registry._custom.pop("toyreg", None)
