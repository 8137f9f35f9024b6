"""`Supervisor`: a ReActAgent whose workers are its tools."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rxagent.agent import AgentLike, ReActAgent
from rxagent.agent._nesting import agent_tool
from rxagent.multiagent._team_run import check_members
from rxagent.tools import Tool, Toolkit, Toolset

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from rxagent.agent._agent import SystemPrompt
    from rxagent.models.base import ChatModel

__all__ = ["Supervisor", "default_supervisor_prompt"]


def default_supervisor_prompt(workers: Sequence[AgentLike]) -> str:
    """The system prompt a `Supervisor` gets when it is given none: its workers, listed.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.multiagent import default_supervisor_prompt
        from rxagent.testing import ScriptedModel

        coder = ReActAgent("coder", "Writes Python.", ScriptedModel([]))
        assert "- coder: Writes Python." in default_supervisor_prompt([coder])
        ```
    """
    lines = [
        "You are a supervisor. Delegate each part of the task to the worker that fits it by "
        "calling the tool named after the worker, then answer the user with their results.",
        "Workers:",
    ]
    lines.extend(f"- {w.name}: {_about(w)}" for w in workers)
    return "\n".join(lines)


def _about(worker: AgentLike) -> str:
    prompt = getattr(worker, "sys_prompt", None)
    if isinstance(prompt, str) and prompt.strip():
        return prompt.strip().splitlines()[0]
    return f"the agent {worker.name!r}"


class Supervisor(ReActAgent):
    """A ReActAgent whose workers are its tools (`worker.as_tool()`), run nested in its runs.

    It takes every argument of `ReActAgent` plus `workers`; the workers' events appear in its
    stream at `(name, worker, ...)`. `sys_prompt` defaults to `default_supervisor_prompt`.

    Args:
        name: The supervisor's name.
        sys_prompt: Its system prompt (default: one that lists the workers).
        model: Its model.
        workers: Agents or teams, each offered as a tool named after it.
        tools: Tools of its own, besides the workers.
        **kwargs: Any other `ReActAgent` argument.

    Example:
        ```python
        from rxagent.multiagent import Supervisor
        from rxagent import ReActAgent
        from rxagent.testing import ScriptedModel, tool_call

        math = ReActAgent("math", "Computes.", ScriptedModel(["4"]))
        boss = Supervisor(
            "boss",
            model=ScriptedModel([tool_call("math", input="2+2"), "It is 4."]),
            workers=[math],
        )
        assert boss.call_sync("2+2?").text == "It is 4."
        ```
    """

    def __init__(
        self,
        name: str,
        sys_prompt: SystemPrompt | None = None,
        model: ChatModel | str | None = None,
        *,
        workers: Sequence[AgentLike],
        tools: Iterable[Tool[..., Any] | Toolset | Callable[..., Any]] | Toolkit = (),
        **kwargs: Any,
    ) -> None:
        self.workers = check_members("Supervisor", workers)
        worker_tools = [
            agent_tool(w, description=f"Delegate to {w.name}: {_about(w)}") for w in self.workers
        ]
        if isinstance(tools, Toolkit):
            for t in worker_tools:
                tools.add(t)
            all_tools: Iterable[Any] | Toolkit = tools
        else:
            all_tools = [*tools, *worker_tools]
        prompt = default_supervisor_prompt(self.workers) if sys_prompt is None else sys_prompt
        super().__init__(name, prompt, model, tools=all_tools, **kwargs)
