"""The playground: serve agents, then watch their runs in the browser at /playground.

`create_app` serves a page at `/playground`: a chat with any served agent and a timeline of every
event of each run (steps, tool calls, what each hook changed, approvals, usage). This script
serves the offline demo agent, an ops agent whose `deploy` tool needs approval, and a pipeline
team. By default it makes the calls the page makes (list the agents, stream a run that parks,
approve it and stream the resumed run), prints the link, and stops.

Run it:

    python -m examples.playground            # the page's calls, then exit
    python -m examples.playground --serve    # serve until Ctrl-C; open the printed link
    rxagent chat --web                       # the demo agent alone, the page opened for you
"""

import asyncio
import json
import sys
from typing import Any

import aiohttp

from rxagent import ModelOptions, Msg, ReActAgent, ToolSchema, tool
from rxagent.demo import build_demo_agent
from rxagent.multiagent import SequentialPipeline
from rxagent.server import create_app, serve
from rxagent.testing import FunctionModel, Turn, tool_call

__all__ = ["agents", "main"]


@tool(needs_approval=True)
def deploy(version: str) -> str:
    """Deploy a version to production.

    Args:
        version: The version to deploy.
    """
    return f"deployed {version}"


def operator(messages: list[Msg], tools: list[ToolSchema], options: ModelOptions) -> Turn:
    """Play the model: deploy the version the user names, then report what the tool said."""
    last = messages[-1]
    if last.role == "user":
        return tool_call("deploy", version=last.text.split()[-1])
    return f"Done: {last.tool_results[0].text}."


def agents() -> list[Any]:
    """The served agents: the demo, an agent that asks before it deploys, and a team."""
    ops = ReActAgent("ops", "You deploy releases.", FunctionModel(operator), tools=[deploy])
    writer = ReActAgent("writer", "", FunctionModel(lambda m, t, o: f"Draft: {m[-1].text}"))
    editor = ReActAgent("editor", "", FunctionModel(lambda m, t, o: f"Edited {m[-1].text}"))
    return [build_demo_agent(delay=0.01), ops, SequentialPipeline([writer, editor], name="desk")]


async def sse(response: aiohttp.ClientResponse) -> list[dict[str, Any]]:
    text = await response.text()
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


async def main(serving: bool) -> None:
    """Serve the agents on a free port; make the page's calls, or serve until Ctrl-C."""
    stop = asyncio.Event()
    base = asyncio.get_running_loop().create_future()
    app = create_app(agents())
    server = asyncio.create_task(
        serve(app, port=0, print_url=serving, stop=stop, on_listening=base.set_result)
    )
    url = await base
    print(f"open {url}/playground?agent=ops&q=deploy%201.4.2")
    if serving:
        await server
        return
    async with aiohttp.ClientSession(url) as http:
        listed = await (await http.get("/v1/agents")).json()
        print("agents:", ", ".join(f"{a['name']} ({a['kind']})" for a in listed["agents"]))
        body = {"input": "Please deploy 1.4.2", "session_id": "release"}
        parked = await sse(await http.post("/v1/agents/ops/runs:stream", json=body))
        waiting = next(e for e in parked if e["type"] == "approval_requested")
        print("waiting for approval:", waiting["tool_call"]["name"], waiting["tool_call"]["input"])
        decide = f"/v1/sessions/release/approvals/{waiting['approval_id']}:stream"
        resumed = await sse(await http.post(decide, json={"approved": True}))
        kinds = [e["type"] for e in resumed if not e["type"].endswith("_chunk")]
        print("resumed:", " > ".join(kinds))
        print("reply:", resumed[-1]["reply"]["content"][0]["text"])
    stop.set()
    await server


if __name__ == "__main__":
    asyncio.run(main("--serve" in sys.argv))
