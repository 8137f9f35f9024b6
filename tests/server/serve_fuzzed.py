"""The server the API fuzz test runs against: `python serve_fuzzed.py`.

It serves on a free port of 127.0.0.1, with the API key in $RXAGENT_FUZZ_KEY, and prints its
URL. The models answer any input, so fuzzed inputs never exhaust a script, and declare a context
window that holds any `max_tokens` the document allows:

- "pay" parks every new user message on a tool call that needs approval (`wire_money`), and
  answers "paid" / "not paid" once the call is decided;
- "bot" answers "pong";
- "desk" is a `SequentialPipeline`: "writer" answers "a draft", then "editor" parks on a tool
  call that needs approval (`publish`) and answers once it is decided.
"""

from __future__ import annotations

import os
from typing import Any

from rxagent import Msg, ReActAgent, tool
from rxagent.multiagent import SequentialPipeline
from rxagent.server import ServerConfig, run_server
from rxagent.testing import FunctionModel, tool_call

WINDOW = 2**40


@tool(needs_approval=True)
def wire_money(amount: int) -> str:
    """Send money.

    Args:
        amount: How much.
    """
    return f"sent {amount}"


@tool(needs_approval=True)
def publish(title: str) -> str:
    """Publish a draft.

    Args:
        title: Its title.
    """
    return f"published {title}"


def pay(messages: list[Msg], tools: Any, options: Any) -> Any:
    if messages[-1].role == "user":
        return tool_call("wire_money", amount=5)
    return "paid"


def edit(messages: list[Msg], tools: Any, options: Any) -> Any:
    if messages[-1].role == "user":
        return tool_call("publish", title="A polished draft.")
    return "A polished draft."


def answer(reply: str) -> Any:
    def respond(messages: list[Msg], tools: Any, options: Any) -> Any:
        return reply

    return respond


def main() -> None:
    agents: list[ReActAgent | SequentialPipeline] = [
        ReActAgent(
            "pay",
            "Pay what is asked.",
            FunctionModel(pay, context_window=WINDOW),
            tools=[wire_money],
        ),
        ReActAgent("bot", "Answer briefly.", FunctionModel(answer("pong"), context_window=WINDOW)),
        SequentialPipeline(
            [
                ReActAgent(
                    "writer", "Write.", FunctionModel(answer("a draft"), context_window=WINDOW)
                ),
                ReActAgent(
                    "editor", "Edit.", FunctionModel(edit, context_window=WINDOW), tools=[publish]
                ),
            ],
            name="desk",
        ),
    ]
    config = ServerConfig(shutdown_timeout_s=5.0, keepalive_s=5.0, max_runs_per_key=64)
    run_server(
        agents, host="127.0.0.1", port=0, auth=[os.environ["RXAGENT_FUZZ_KEY"]], config=config
    )


if __name__ == "__main__":
    main()
