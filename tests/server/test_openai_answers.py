"""The OpenAI route's answers: completions, chunks, errors and the OpenAPI paths (pure parts)."""

from __future__ import annotations

from typing import Any

import pytest
from server_helpers import serving  # type: ignore[import-not-found]

from rxagent import InMemoryStore, PostCallEvent, ReActAgent, hook, tool
from rxagent.errors import ApiError, ErrorCode
from rxagent.messages import Msg, TextBlock, ThinkingBlock
from rxagent.models import Usage
from rxagent.result import AgentResult, ErrorInfo
from rxagent.server import create_app
from rxagent.server._openai_errors import error_body, run_error
from rxagent.server._openai_response import ChunkStream, completion_body, finish_reason
from rxagent.testing import ScriptedModel, thinking, tool_call

# -- completions and chunks ------------------------------------------------------------------------


def result_of(reply: Msg, **fields: Any) -> AgentResult[Any]:
    return AgentResult[Any](reply=reply, run_id="r1", **fields)


def test_completion_body_carries_reply_usage_and_extension():
    reply = Msg.assistant([ThinkingBlock(thinking="hmm"), TextBlock(text="Hi!")])
    usage = Usage(input_tokens=10, output_tokens=3, cache_read_tokens=4)
    result = result_of(reply, usage=usage, tools_used=("add",), stop_reason="max_iters")
    out = completion_body(result, model="bot", created=5, session_id="s1", progress=[{"x": 1}])
    assert out["id"] == "chatcmpl-r1"
    assert out["object"] == "chat.completion"
    assert out["choices"][0]["message"] == {
        "role": "assistant",
        "content": "Hi!",
        "reasoning_content": "hmm",
    }
    assert out["choices"][0]["finish_reason"] == "length"
    assert out["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 3,
        "total_tokens": 13,
        "prompt_tokens_details": {"cached_tokens": 4},
    }
    assert out["rxagent"]["session_id"] == "s1"
    assert out["rxagent"]["events"] == [{"x": 1}]
    assert out["rxagent"]["tools_used"] == ["add"]


@pytest.mark.parametrize(
    ("stop_reason", "finish"),
    [
        ("no_tool_calls", "stop"),
        ("max_iters", "length"),
        ("interrupted", "stop"),
        ("hook_stop", "stop"),
        ("final_answer", "stop"),
    ],
)
def test_finish_reason(stop_reason: Any, finish: str):
    assert finish_reason(result_of(Msg.assistant("x"), stop_reason=stop_reason)) == finish


@tool
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: One.
        b: Two.
    """
    return a + b


async def chunks_of(agent: ReActAgent, **kwargs: Any) -> list[dict[str, Any]]:
    stream = ChunkStream("bot", created=1, **kwargs)
    out: list[dict[str, Any]] = []
    async for event in agent.events("go"):
        out += stream.feed(event)
        if event.type == "post_call":
            out += stream.close(event.result, session_id=None)  # type: ignore[attr-defined]
    return out


def content(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


async def test_stream_chunks_of_a_tool_run():
    model = ScriptedModel(
        [[thinking("plan"), "Adding.", tool_call("add", a=1, b=2)], "It is 3."], chunk_size=3
    )
    out = await chunks_of(ReActAgent("bot", "", model, tools=[add]))
    assert all(c["object"] == "chat.completion.chunk" and c["id"] == out[0]["id"] for c in out)
    assert out[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert content(out) == "Adding.\n\nIt is 3."
    reasoning = "".join(
        c["choices"][0]["delta"].get("reasoning_content") or "" for c in out if c["choices"]
    )
    assert reasoning == "plan"
    progress = [c["rxagent"]["event"]["type"] for c in out if "event" in c.get("rxagent", {})]
    assert progress == ["pre_acting", "post_acting"]
    assert all(c["choices"][0]["delta"] == {} for c in out if "event" in c.get("rxagent", {}))
    assert not any("tool_calls" in c["choices"][0]["delta"] for c in out if c["choices"])
    assert out[-1]["choices"][0]["finish_reason"] == "stop"
    assert "usage" not in out[-1]


async def test_a_reply_changed_after_streaming_is_completed_in_the_stream():
    @hook(PostCallEvent)
    def shout(event: PostCallEvent) -> PostCallEvent:
        return event.replace(reply=Msg.assistant(event.reply.text + "!!"))

    agent = ReActAgent("bot", "", ScriptedModel(["Hello"]), hooks=[shout])
    assert content(await chunks_of(agent)) == "Hello!!"


async def test_a_replaced_reply_follows_a_blank_line():
    @hook(PostCallEvent)
    def replace(event: PostCallEvent) -> PostCallEvent:
        return event.replace(reply=Msg.assistant("Other."))

    agent = ReActAgent("bot", "", ScriptedModel(["Hello"]), hooks=[replace])
    out = await chunks_of(agent, include_usage=True)
    assert content(out) == "Hello\n\nOther."
    assert out[-1]["choices"] == []
    assert out[-1]["usage"]["total_tokens"] > 0
    assert all(c["usage"] is None for c in out[:-1])


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (401, "invalid_request_error"),
        (429, "rate_limit_error"),
        (500, "server_error"),
        (503, "server_error"),
    ],
)
def test_error_body_types(status: int, kind: str):
    out = error_body(ApiError(status, "x", "m"))
    assert out == {"error": {"message": "m", "type": kind, "param": None, "code": "x"}}


def test_error_body_translates_core_codes():
    assert error_body(ApiError(401, "unauthorized", "m"))["error"]["code"] == "invalid_api_key"


@pytest.mark.parametrize(
    ("code", "status", "wire"),
    [
        (ErrorCode.RATE_LIMITED, 429, "rate_limit_exceeded"),
        (ErrorCode.CONTEXT_TOO_LONG, 400, "context_length_exceeded"),
        (ErrorCode.GUARD_REJECTED, 400, "guard_rejected"),
        (ErrorCode.PROVIDER_ERROR, 502, "provider_error"),
        (ErrorCode.AUTH, 502, "provider_auth"),
        (ErrorCode.TIMEOUT, 504, "timeout"),
        (ErrorCode.TOOL_ERROR, 500, "tool_error"),
        (ErrorCode.UNKNOWN, 500, "unknown"),
    ],
)
def test_run_errors_map_to_statuses(code: ErrorCode, status: int, wire: str):
    error = run_error(ErrorInfo(code=code, message="boom", source="model"), "bot")
    assert (error.status, error.code) == (status, wire)
    assert "boom" in error.message


# -- the OpenAPI paths and the answer to a finished run --------------------------------------------


def test_the_paths_validate_in_the_servers_document():
    from openapi_spec_validator import validate

    from rxagent.server import openapi_document
    from rxagent.server._openai import openapi_paths

    document = openapi_document(openapi_paths(), version="0", auth=True)
    validate(document)
    operation = document["paths"]["/v1/chat/completions"]["post"]
    assert {"200", "400", "401", "404", "409", "413", "422", "429"} <= set(operation["responses"])


def test_what_a_finished_run_answers_with():
    from rxagent.server._openai import _failure

    ok = result_of(Msg.assistant("hi"))
    assert _failure(ok, "bot", ephemeral=True) is None
    interrupted = result_of(
        Msg.assistant("stop"),
        ok=False,
        interrupted=True,
        stop_reason="interrupted",
        error=ErrorInfo(code=ErrorCode.INTERRUPTED, message="stop"),
    )
    assert _failure(interrupted, "bot", ephemeral=True) is None
    parked = result_of(Msg.assistant(""), pending_approvals=("a1",), stop_reason="approval_pending")
    assert _failure(parked, "bot", ephemeral=False) is None
    error = _failure(parked, "bot", ephemeral=True)
    assert error is not None
    assert (error.status, error.code) == (409, "approval_required")
    assert "X-Session-Id" in error.message


async def test_a_request_with_a_session_loads_it_once_in_the_server():
    """The route reads the history it needs from the claim's load; the run loads it once more."""

    class CountingStore(InMemoryStore):
        loads = 0

        async def load(self, agent: str, session_id: str) -> Any:
            CountingStore.loads += 1
            return await super().load(agent, session_id)

    store = CountingStore()
    agent = ReActAgent("bot", "", ScriptedModel(["Hello!", "Four."]), store=store)
    async with serving(create_app(agent)) as client:
        headers = {"X-Session-Id": "s1"}
        first = [{"role": "user", "content": "hi"}]
        response = await client.post(
            "/v1/chat/completions", json={"model": "bot", "messages": first}, headers=headers
        )
        assert response.status == 200
        CountingStore.loads = 0
        history = [*first, {"role": "assistant", "content": "Hello!"}]
        history.append({"role": "user", "content": "2 + 2?"})
        response = await client.post(
            "/v1/chat/completions", json={"model": "bot", "messages": history}, headers=headers
        )
        body = await response.json()
    assert body["choices"][0]["message"]["content"] == "Four."
    assert CountingStore.loads == 2  # the server's claim, and the run's own load under its lease
    state = await store.load("bot", "s1")
    assert state is not None
    assert [m.text for m in state.state.memory] == ["hi", "Hello!", "2 + 2?", "Four."]
