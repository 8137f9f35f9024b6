"""A real rxagent server on 127.0.0.1 for the playground's browser tests and screenshots.

`PlaygroundServer` serves `create_app(...)` on a free port from a background thread with its own
event loop; `playground_agents()` builds the agents the tests drive: the demo agent, an agent
whose tool needs approval, a slow streaming agent and a small team (an agent that calls another
one as a tool). `browser_or_skip()` finds playwright and Debian's chromium, or skips (under
`CI=true` it fails instead).
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from rxagent import ReActAgent, tool
from rxagent._demo import DemoModel, calculator, cite_tool_results, search_docs, word_count
from rxagent._demo._agent import SYSTEM_PROMPT
from rxagent.demo import build_demo_agent
from rxagent.interceptors import ModelPrice, Prices, price_key
from rxagent.messages import Msg
from rxagent.multiagent import SequentialPipeline
from rxagent.server import create_app
from rxagent.testing import FunctionModel, text, tool_call

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.models import ModelOptions, ToolSchema

__all__ = [
    "CHROMIUM",
    "PlaygroundServer",
    "browser_or_skip",
    "chromium_args",
    "playground_agents",
]

CHROMIUM = "/usr/bin/chromium"
"""Debian's chromium: the browser the tests drive (playwright's own builds are not used)."""


def chromium_args() -> list[str]:
    """Flags for headless chromium in a container (no sandbox as root, no GPU, small /dev/shm)."""
    return ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def browser_or_skip() -> None:
    """Skip the module when playwright or chromium is missing; under `CI=true`, fail instead."""
    import pytest

    reason = ""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        reason = "playwright is not installed: pip install playwright"
    if not reason and not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} is missing: apt-get install chromium"
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true needs the browser tests: {reason}", pytrace=False)
        pytest.skip(reason, allow_module_level=True)


@tool(needs_approval=True)
def deploy(version: str) -> str:
    """Deploy a version of the service.

    Args:
        version: The version to deploy.
    """
    return f"deployed {version}"


def _ops_model(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
    last = messages[-1]
    if last.role == "tool":
        result = last.content[0] if not isinstance(last.content, str) else None
        said = getattr(result, "text", "") or last.text
        return f"The deploy tool answered: {said}"
    return [text("I will deploy version 1.2."), tool_call("deploy", version="1.2")]


def _helper_model(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
    return f"Helper here: I looked into '{messages[-1].text}'."


def _lead_model(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
    if messages[-1].role == "tool":
        return "The helper has answered; all done."
    return tool_call("helper", input=messages[-1].text)


def _writer_model(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
    return f"Draft: {messages[-1].text}"


def _editor_model(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Any:
    return f"Edited. {messages[-1].text}"


def playground_agents(*, delay: float = 0.2) -> list[ReActAgent | SequentialPipeline]:
    """The served agents: `demo`, `ops` (approval), `slow` (paced demo model), `lead` (an agent
    calling another as a tool) and `crew` (a pipeline of two agents)."""
    demo = build_demo_agent()
    ops = ReActAgent(
        "ops", "You deploy services.", FunctionModel(_ops_model, name="ops-model"), tools=[deploy]
    )
    slow = ReActAgent(
        "slow",
        SYSTEM_PROMPT,
        DemoModel(delay=delay),
        tools=[search_docs, calculator, word_count],
        hooks=[cite_tool_results],
    )
    helper = ReActAgent("helper", "You help.", FunctionModel(_helper_model, name="helper-model"))
    lead = ReActAgent(
        "lead",
        "You lead a team.",
        FunctionModel(_lead_model, name="lead-model"),
        tools=[helper.as_tool(description="Ask the helper.")],
    )
    crew = SequentialPipeline(
        [
            ReActAgent("writer", "You write.", FunctionModel(_writer_model, name="writer-model")),
            ReActAgent("editor", "You edit.", FunctionModel(_editor_model, name="editor-model")),
        ],
        name="crew",
    )
    priced(demo, ops, slow, lead, helper)
    return [demo, ops, slow, lead, crew]


PRICE = ModelPrice(input=2.5, output=10.0)
"""What the harness's models cost per million tokens, so the page shows costs."""


def priced(*agents: ReActAgent) -> None:
    """Give each agent's model `PRICE`."""
    for agent in agents:
        agent.prices = Prices.default().with_prices({price_key(agent.model): PRICE})


class PlaygroundServer:
    """`create_app(agents, auth=...)` served on 127.0.0.1 at a free port, from its own thread.

    Use it as a context manager; `url` is the base URL (no trailing slash).
    """

    def __init__(
        self, agents: Sequence[ReActAgent | SequentialPipeline], *, auth: list[str] | None = None
    ) -> None:
        self.app = create_app(list(agents), auth=auth)
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _start(self) -> int:
        self._runner = web.AppRunner(self.app, handle_signals=False)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        sockets: list[Any] = list(getattr(server, "sockets", None) or [])
        return int(sockets[0].getsockname()[1])

    async def _stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    def start(self) -> PlaygroundServer:
        self._thread.start()
        self.port = asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    def stop(self) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(30)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    def __enter__(self) -> PlaygroundServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


WATCH_SCRIPT = """
window.__problems = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__problems.push(`CSP ${e.violatedDirective} blocked ${e.blockedURI}`);
});
"""
"""An init script that records Content-Security-Policy violations in `window.__problems`."""


class PageWatch:
    """What went wrong in a page: console errors, uncaught errors, failed requests, CSP reports."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _console(self, message: Any) -> None:
        if message.type == "error":
            self.problems.append(f"console error: {message.text}")

    def _failed(self, request: Any) -> None:
        self.problems.append(f"request failed: {request.url} {request.failure}")

    def _response(self, response: Any) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def all(self) -> list[str]:
        """Every problem so far, CSP violations included."""
        return [*self.problems, *self.page.evaluate("window.__problems || []")]
