"""A reply cut by the model's token limit says so: on PostReasoning, and on every route."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai import AsyncOpenAI
from server_helpers import serving  # type: ignore[import-not-found]

from rxagent import PostReasoningEvent, ReActAgent
from rxagent.models.openai import OpenAIChatModel
from rxagent.server import create_app
from rxagent.testing.providers import FakeOpenAIServer, Reply


def agent(server: FakeOpenAIServer) -> ReActAgent:
    model = OpenAIChatModel("gpt-4o-mini", api_key="k", base_url=server.base_url)
    return ReActAgent("bot", "", model)


@pytest.mark.parametrize(("finish", "expected"), [("length", "length"), ("stop", "stop")])
async def test_post_reasoning_carries_the_providers_finish_reason(finish: str, expected: str):
    async with FakeOpenAIServer([Reply("The answer is", finish=finish)]) as server:
        async with agent(server) as bot:
            events = [e async for e in bot.events("What is it?")]
    (post,) = [e for e in events if isinstance(e, PostReasoningEvent)]
    assert post.finish_reason == expected


async def test_the_openai_route_answers_length_for_a_cut_reply():
    replies = [Reply("The answer is", finish="length") for _ in range(2)]
    async with (
        FakeOpenAIServer([*replies, "Complete."]) as provider,
        serving(create_app(agent(provider))) as client,
    ):
        base = str(client.make_url("/v1"))
        sdk = AsyncOpenAI(base_url=base, api_key="unused", max_retries=0)
        messages: Any = [{"role": "user", "content": "What is it?"}]
        whole = await sdk.chat.completions.create(model="bot", messages=messages)
        chunks = [
            c
            async for c in await sdk.chat.completions.create(
                model="bot", messages=messages, stream=True
            )
        ]
        done = await sdk.chat.completions.create(model="bot", messages=messages)
        await sdk.close()
    assert whole.choices[0].finish_reason == "length"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "length"
    assert done.choices[0].finish_reason == "stop"


async def test_the_ui_stream_finishes_with_length_for_a_cut_reply():
    body = {
        "id": "chat-1",
        "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "hi"}]}],
        "trigger": "submit-message",
    }
    async with (
        FakeOpenAIServer([Reply("The answer is", finish="length")]) as provider,
        serving(create_app(agent(provider))) as client,
    ):
        response = await client.post("/v1/agents/bot/ui", json=body)
        text = await response.text()
    chunks = [json.loads(f[6:]) for f in text.split("\n\n") if f.startswith("data: {")]
    assert chunks[-1]["type"] == "finish"
    assert chunks[-1]["finishReason"] == "length"
