"""The offline demo agent of `rxagent demo`, ready to serve or to call.

`rxagent serve rxagent.demo:build_demo_agent` serves it (no API key, no network): each run
searches rxagent's docs and does a calculation with real tools, and a scripted model composes
the answer from their results.

Example:
    ```python
    from rxagent.demo import DEMO_QUESTION, build_demo_agent

    agent = build_demo_agent()
    first = agent.call_sync(DEMO_QUESTION, session_id="one")
    second = agent.call_sync(DEMO_QUESTION, session_id="two")
    assert first.ok and second.ok and first.tools_used == second.tools_used
    ```
"""

from rxagent._demo import DEMO_QUESTION as DEMO_QUESTION
from rxagent._demo import build_demo_agent as build_demo_agent

__all__ = ["DEMO_QUESTION", "build_demo_agent"]
