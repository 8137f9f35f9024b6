"""A message-list input that would save unpaired or unreadable history is refused at once."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import ImageBlock, InMemoryStore, Msg, ReActAgent, ToolResultBlock, ToolUseBlock
from rxagent.agent._checks import check_input_history
from rxagent.errors import InvalidInputError
from rxagent.testing import ScriptedModel

CALL = ToolUseBlock(id="call_1", name="add", input={"a": 1})
RESULT = ToolResultBlock(id="call_1", name="add", output="2")
IMAGE = ImageBlock(data="aGVsbG8=", media_type="image/png")


def _agent(store: InMemoryStore) -> ReActAgent:
    return ReActAgent("bot", "", ScriptedModel(["ok"] * 4), store=store)


@pytest.mark.parametrize(
    ("messages", "says"),
    [
        ([Msg(role="tool", content="")], "input[0]: a tool message must hold tool_result"),
        ([Msg.user("hi"), Msg(role="tool", content=[RESULT])], "input[1]: the tool result"),
        ([Msg(role="assistant", content=[CALL]), Msg.user("hi")], "input[0]: the tool calls"),
        ([Msg.user("hi"), Msg(role="assistant", content=[CALL])], "input[1]: the tool calls"),
        (
            [
                Msg(
                    role="assistant",
                    content=[CALL.model_copy(update={"input": {"x": float("nan")}})],
                )
            ],
            "input[0]: the arguments of tool call 'call_1' are not JSON",
        ),
        (
            [Msg(role="assistant", content=[CALL.model_copy(update={"raw_input": "{oops"})])],
            "input[0]: the arguments of tool call 'call_1' are not JSON",
        ),
        (
            [Msg(role="user", content=[IMAGE.model_copy(update={"data": "not base64!"})])],
            "input[0]: the image data is not valid base64",
        ),
        (
            [
                Msg(role="assistant", content=[CALL]),
                Msg(
                    role="tool",
                    content=[
                        RESULT.model_copy(
                            update={"output": (IMAGE.model_copy(update={"data": "%%"}),)}
                        )
                    ],
                ),
            ],
            "input[1]: the image data is not valid base64",
        ),
    ],
)
async def test_call_refuses_unpaired_or_unreadable_history_and_saves_nothing(
    messages: list[Msg], says: str
):
    store = InMemoryStore()
    with pytest.raises(InvalidInputError) as caught:
        await _agent(store).call(messages, session_id="s1")
    assert str(caught.value).startswith(says)
    assert await store.load("bot", "s1") is None


async def test_paired_history_with_images_is_taken():
    store = InMemoryStore()
    messages = [
        Msg(role="user", content=[IMAGE]),
        Msg(role="assistant", content=[CALL]),
        Msg(role="tool", content=[RESULT]),
        Msg.user("and now?"),
    ]
    result = await _agent(store).call(messages, session_id="s1")
    assert result.ok
    stored = await store.load("bot", "s1")
    assert stored is not None
    assert [m.role for m in stored.state.memory] == [
        "user",
        "assistant",
        "tool",
        "user",
        "assistant",
    ]


@given(st.lists(st.sampled_from(["user", "assistant+call", "tool", "assistant"]), max_size=8))
def test_the_check_accepts_exactly_the_pair_consistent_lists(roles: list[str]):
    messages: list[Msg] = []
    for i, role in enumerate(roles):
        call_id = f"call_{i}"
        if role == "assistant+call":
            messages.append(
                Msg(role="assistant", content=[CALL.model_copy(update={"id": call_id})])
            )
        elif role == "tool":
            last = next((m for m in reversed(messages) if m.role == "assistant"), None)
            answered = last.tool_calls[0].id if last is not None and last.tool_calls else "none"
            messages.append(Msg(role="tool", content=[RESULT.model_copy(update={"id": answered})]))
        else:
            messages.append(Msg(role=role, content="text"))
    pending: set[str] = set()
    consistent = True
    for message in messages:
        if message.role == "tool":
            (result,) = message.tool_results
            consistent = consistent and result.id in pending
            pending.discard(result.id)
            continue
        consistent = consistent and not pending
        pending = {c.id for c in message.tool_calls}
    consistent = consistent and not pending
    if consistent:
        check_input_history(messages)
    else:
        with pytest.raises(InvalidInputError, match=r"^input\[\d+\]: "):
            check_input_history(messages)
