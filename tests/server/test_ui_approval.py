"""A run parked for a human approval reaches the AI SDK as a `tool-approval-request` part."""

from __future__ import annotations

from typing import Any

from test_ui_node import (  # type: ignore[import-not-found]
    node_reader as node_reader,  # the fixture
)
from test_ui_node import (
    read_with_node,
)

from rxagent import ApprovalRequestedEvent, ReActAgent, tool
from rxagent.server._ui_chunks import UIMessageStreamTranslator
from rxagent.testing import ScriptedModel, tool_call


@tool(needs_approval=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: Which file.
    """
    return f"deleted {path}"


def _agent() -> ReActAgent:
    model = ScriptedModel([tool_call("delete_file", path="/tmp/x"), "done"])
    return ReActAgent("ops", "", model, tools=[delete_file])


async def test_a_parked_call_becomes_an_approval_request_chunk() -> None:
    translator = UIMessageStreamTranslator()
    chunks: list[dict[str, Any]] = []
    approval_ids = []
    async for event in _agent().events("clean up"):
        if isinstance(event, ApprovalRequestedEvent):
            approval_ids.append(event.approval_id)
        chunks += translator.translate(event)
    kinds = [c["type"] for c in chunks]
    (request,) = [c for c in chunks if c["type"] == "tool-approval-request"]
    assert request["approvalId"] == approval_ids[0]
    call_id = request["toolCallId"]
    for_call = [c["type"] for c in chunks if c.get("toolCallId") == call_id]
    assert for_call[0] == "tool-input-start"
    assert "tool-input-available" in for_call
    assert for_call[-1] == "tool-approval-request"  # no output: the call waits for a decision
    assert kinds[-1] == "finish"


async def test_the_ai_sdk_reads_the_parked_call_as_approval_requested(
    node_reader: list[str],
) -> None:
    printed = await read_with_node(node_reader, _agent(), "clean up")
    assert printed["errors"] == []
    parts = printed["message"]["parts"]
    (part,) = [p for p in parts if p["type"] == "tool-delete_file"]
    assert part["state"] == "approval-requested"
    assert part["input"] == {"path": "/tmp/x"}
    assert part["approval"]["id"]
