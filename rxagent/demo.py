"""The offline demo agent of `rxagent demo`, ready to serve or to call.

`rxagent serve rxagent.demo:build_demo_agent` serves it, and `rxagent chat` and `rxagent run`
talk to it when they are given neither `--agent` nor `--model` (no API key, no network). Its
offline model reads each question: it searches rxagent's docs for the question's keywords and
gives its arithmetic to a calculator, with real tools, then composes the answer from their
results. A question that neither applies to gets an answer saying what the demo can do.

Example:
    ```python
    from rxagent.demo import DEMO_QUESTION, build_demo_agent

    agent = build_demo_agent()
    first = agent.call_sync(DEMO_QUESTION, session_id="one")
    assert first.ok and first.tools_used == ("search_docs", "calculator")
    assert "17 * 23 + 4 = 395" in first.text
    second = agent.call_sync("What is 2 + 2?", session_id="two")
    assert second.tools_used == ("calculator",) and "2 + 2 = 4" in second.text
    ```
"""

from rxagent._demo import DEMO_QUESTION as DEMO_QUESTION
from rxagent._demo import build_demo_agent as build_demo_agent

__all__ = ["DEMO_QUESTION", "build_demo_agent"]
