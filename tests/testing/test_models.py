from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from rxagent.errors import ErrorCode, ProviderError, RateLimitedError
from rxagent.messages import Msg, ToolResultBlock
from rxagent.models import (
    ChatModel,
    FinishDelta,
    ModelDelta,
    ModelOptions,
    ResponseBuilder,
    TextDelta,
    ToolCallDelta,
    ToolSchema,
    UsageDelta,
)
from rxagent.testing import (
    FunctionModel,
    ModelRequest,
    ScriptedModel,
    ScriptExhaustedError,
    Turn,
    text,
    thinking,
    tool_call,
)
from rxagent.testing._builders import turn_to_deltas

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Sequence

HI = [Msg.user("hi")]
ADD = ToolSchema(name="add")


async def drain(
    model: ChatModel,
    messages: Sequence[Msg] = HI,
    tools: Sequence[ToolSchema] = (),
    options: ModelOptions | None = None,
) -> list[ModelDelta]:
    return [d async for d in model.stream(messages, tools, options or ModelOptions())]


async def reply(model: ChatModel, messages: Sequence[Msg] = HI) -> Msg:
    builder = ResponseBuilder()
    for delta in await drain(model, messages):
        builder.add(delta)
    return builder.build()


# -- ScriptedModel -----------------------------------------------------------------------------


def test_scripted_model_is_a_chat_model() -> None:
    model = ScriptedModel(["hi"], name="m", context_window=123)
    assert isinstance(model, ChatModel)
    assert model.name == "m"
    assert model.context_window == 123
    assert ScriptedModel([]).context_window == 1_000_000


async def test_plays_turns_in_order() -> None:
    model = ScriptedModel([[thinking("t"), tool_call("add", a=1, b=2)], "three"])
    first = await reply(model)
    assert first.tool_calls[0].name == "add"
    assert first.tool_calls[0].id.startswith("call_")
    assert isinstance(first.blocks[0], type(thinking("t")))
    assert (await reply(model)).text == "three"
    assert model.calls == 2
    assert model.remaining == 0


async def test_streams_the_prebuilt_deltas() -> None:
    turn: Turn = ["Hello there", tool_call("echo", id="c1", text="x")]
    model = ScriptedModel([turn], chunk_size=3)
    assert await drain(model) == turn_to_deltas(turn, chunk_size=3, messages=HI)


async def test_records_every_request() -> None:
    model = ScriptedModel(["a", "b"])
    options = ModelOptions(temperature=0.1)
    await drain(model, HI, [ADD], options)
    await drain(model, [*HI, Msg.assistant("a")], [], ModelOptions())
    first, second = model.requests
    assert first == ModelRequest(tuple(HI), (ADD,), options)
    assert first.tool_names == ("add",)
    assert second.tools == ()
    assert len(second.messages) == 2


async def test_the_request_is_recorded_when_stream_is_called() -> None:
    model = ScriptedModel(["a"])
    stream = model.stream(HI, [], ModelOptions())
    assert model.calls == 1
    assert await anext(stream) == TextDelta(index=0, text="a")


async def test_usage_and_finish_end_each_turn() -> None:
    model = ScriptedModel(["x" * 8, tool_call("add")])
    deltas = await drain(model, [Msg.user("y" * 12)])
    assert deltas[-2] == UsageDelta.model_validate(
        {"usage": {"input_tokens": 4, "output_tokens": 3, "requests": 1}}
    )
    assert deltas[-1] == FinishDelta(reason="stop")
    assert (await drain(model))[-1] == FinishDelta(reason="tool_calls")


async def test_tool_call_ids() -> None:
    model = ScriptedModel([[tool_call("add"), tool_call("echo", id="mine")]])
    heads = [d for d in await drain(model) if isinstance(d, ToolCallDelta) and d.name]
    assert [(d.index, d.id) for d in heads] == [(0, None), (1, "mine")]


async def test_exhausted_script_fails_the_stream() -> None:
    model = ScriptedModel(["only"], name="demo")
    await drain(model)
    stream = model.stream(HI, [], ModelOptions())
    with pytest.raises(ScriptExhaustedError) as caught:
        await anext(stream)
    err = caught.value
    assert isinstance(err, ProviderError)
    assert err.code is ErrorCode.PROVIDER_ERROR
    assert not err.recoverable
    assert err.source == "model"
    assert (err.model, err.scripted, err.call) == ("demo", 1, 2)
    assert "'demo' has 1 scripted turn, but model call #2" in str(err)
    assert model.calls == 2
    assert model.remaining == 0


async def test_empty_script_fails_on_the_first_call() -> None:
    with pytest.raises(ScriptExhaustedError, match="has 0 scripted turns, but model call #1"):
        await drain(ScriptedModel([]))


async def test_reset_rewinds() -> None:
    model = ScriptedModel(["a", "b"])
    assert (await reply(model)).text == "a"
    model.reset()
    assert model.calls == 0
    assert model.remaining == 2
    assert (await reply(model)).text == "a"


async def test_delay_sleeps_before_each_delta() -> None:
    slow = ScriptedModel(["abcd"], chunk_size=2, delay=0.001)
    fast = ScriptedModel(["abcd"], chunk_size=2)
    assert await drain(slow) == await drain(fast)


async def test_delay_leaves_room_to_cancel_mid_stream() -> None:
    model = ScriptedModel(["x" * 100], chunk_size=1, delay=0.01)
    seen: list[ModelDelta] = []
    first = asyncio.Event()

    async def consume() -> None:
        async for delta in model.stream(HI, [], ModelOptions()):
            seen.append(delta)
            first.set()

    task = asyncio.create_task(consume())
    await first.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert 0 < len(seen) < 100


def test_turns_property_shows_the_script() -> None:
    model = ScriptedModel(["a", ["", tool_call("add")]])
    assert model.turns == ((text("a"),), (tool_call("add"),))
    assert "turns=2" in repr(model)


def test_a_bare_string_is_not_a_script() -> None:
    with pytest.raises(TypeError, match=r"list of turns, e.g. ScriptedModel\(\['Hello!'\]\)"):
        ScriptedModel("hello")


def test_a_bad_turn_fails_at_construction_naming_it() -> None:
    with pytest.raises(TypeError, match="turn #2 of the script"):
        ScriptedModel(["ok", ToolResultBlock(id="x", name="add", output="3")])
    with pytest.raises(ValueError, match="turn #1 of the script"):
        ScriptedModel([Msg.user("hi")])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"chunk_size": 0}, "chunk_size must be at least 1"), ({"delay": -1.0}, "delay must be")],
)
def test_bad_options(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScriptedModel(["a"], **kwargs)  # type: ignore[arg-type]


# -- FunctionModel -----------------------------------------------------------------------------


def test_function_model_is_a_chat_model() -> None:
    model = FunctionModel(lambda m, t, o: "x", name="fn", context_window=9)
    assert isinstance(model, ChatModel)
    assert model.name == "fn"
    assert model.context_window == 9
    assert "FunctionModel(<lambda>" in repr(model)


async def test_sync_function_gets_lists() -> None:
    seen: list[tuple[list[Msg], list[ToolSchema], ModelOptions]] = []

    def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
        seen.append((messages, tools, options))
        return "sync"

    model = FunctionModel(respond)
    options = ModelOptions(seed=1)
    assert await drain(model, HI, (ADD,), options) == turn_to_deltas("sync", messages=HI)
    messages, tools, got_options = seen[0]
    assert type(messages) is list
    assert type(tools) is list
    assert messages == HI
    assert tools == [ADD]
    assert got_options is options
    assert model.requests == [ModelRequest(tuple(HI), (ADD,), options)]


async def test_withdrawn_tools_arrive_as_an_empty_list() -> None:
    seen: list[list[ToolSchema]] = []

    def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
        seen.append(tools)
        return "no tools"

    await drain(FunctionModel(respond), HI, ())
    assert seen == [[]]


async def test_async_function() -> None:
    async def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
        await asyncio.sleep(0)
        return f"echo: {messages[-1].text}"

    assert (await reply(FunctionModel(respond))).text == "echo: hi"


async def test_parallel_tool_calls_from_a_list() -> None:
    model = FunctionModel(lambda m, t, o: ["Both.", tool_call("add", a=1), tool_call("add", a=2)])
    msg = await reply(model)
    assert msg.text == "Both."
    assert [dict(c.input) for c in msg.tool_calls] == [{"a": 1}, {"a": 2}]
    assert (await drain(model))[-1] == FinishDelta(reason="tool_calls")


@pytest.mark.parametrize(
    "returned",
    [
        Msg.assistant([text("from a msg"), thinking("t", signature="s")]),
        text("from a msg"),
        [Msg.assistant("from a msg")],
    ],
)
async def test_msg_and_block_returns(returned: object) -> None:
    msg = await reply(FunctionModel(lambda m, t, o: returned))  # type: ignore[arg-type,return-value]
    assert msg.text == "from a msg"


async def test_async_iterator_return_is_streamed_as_is() -> None:
    closed: list[bool] = []

    async def custom() -> AsyncIterator[ModelDelta]:
        try:
            yield TextDelta(index=3, text="raw")
            yield FinishDelta(reason="length")
        finally:
            closed.append(True)

    model = FunctionModel(lambda m, t, o: custom())
    assert await drain(model) == [TextDelta(index=3, text="raw"), FinishDelta(reason="length")]
    assert closed == [True]


async def test_closing_early_closes_the_inner_iterator() -> None:
    closed: list[bool] = []

    async def custom() -> AsyncIterator[ModelDelta]:
        try:
            for i in range(10):
                yield TextDelta(text=str(i))
        finally:
            closed.append(True)

    stream = FunctionModel(lambda m, t, o: custom()).stream(HI, [], ModelOptions())
    assert await anext(stream) == TextDelta(text="0")
    await stream.aclose()  # type: ignore[attr-defined]
    assert closed == [True]


async def test_async_generator_function_is_streamed() -> None:
    async def respond(
        messages: list[Msg], tools: list[ToolSchema], options: ModelOptions
    ) -> AsyncIterator[ModelDelta]:
        yield TextDelta(text="gen")

    assert await drain(FunctionModel(respond)) == [TextDelta(text="gen")]


async def test_function_errors_propagate_unchanged() -> None:
    def respond(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> str:
        raise RateLimitedError("slow down", source="model")

    with pytest.raises(RateLimitedError, match="slow down"):
        await drain(FunctionModel(respond))


async def test_bad_return_names_the_model_and_call() -> None:
    model = FunctionModel(lambda m, t, o: None, name="fn")  # type: ignore[arg-type,return-value]
    await drain(FunctionModel(lambda m, t, o: "fine"))
    with pytest.raises(TypeError, match=r"FunctionModel 'fn' \(call #1\).*got NoneType"):
        await drain(model)


def test_function_model_checks_its_arguments() -> None:
    with pytest.raises(TypeError, match="needs a function"):
        FunctionModel("nope")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="chunk_size"):
        FunctionModel(lambda m, t, o: "x", chunk_size=0)
