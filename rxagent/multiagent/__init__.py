"""Multi-agent orchestration: agents as tools, handoffs, pipelines, supervisors, group chat.

Every team is a run of its own with the agent's interface (`call`, `call_sync`, `stream`,
`events`, `interrupt`, `state_dict` / `load_state_dict`, `as_tool`): its stream starts with
its own PreCall and ends with its own PostCall at `path == (name,)`, and its members' events
are nested at `(name, member, ...)`, as they happen. The streams are composed with Rx:
`concat` for `SequentialPipeline` and `MsgHub`, `merge` for `ParallelPipeline`.

Example:
    ```python
    from rxagent import ReActAgent
    from rxagent.multiagent import SequentialPipeline
    from rxagent.testing import ScriptedModel, assert_event_protocol

    a = ReActAgent("a", "", ScriptedModel(["one"]))
    b = ReActAgent("b", "", ScriptedModel(["two"]))
    team = SequentialPipeline([a, b], name="team")
    result = team.call_sync("go")
    assert result.text == "two" and result.steps == 2
    ```
"""

from __future__ import annotations

from rxagent.agent import AgentLike as AgentLike
from rxagent.agent import ToolOutput as ToolOutput
from rxagent.agent import child_session as child_session
from rxagent.multiagent._base import Orchestrator as Orchestrator
from rxagent.multiagent._handoff import handoff as handoff
from rxagent.multiagent._hub import MsgHub as MsgHub
from rxagent.multiagent._pipelines import InputBuilder as InputBuilder
from rxagent.multiagent._pipelines import Merger as Merger
from rxagent.multiagent._pipelines import ParallelPipeline as ParallelPipeline
from rxagent.multiagent._pipelines import SequentialPipeline as SequentialPipeline
from rxagent.multiagent._supervisor import Supervisor as Supervisor
from rxagent.multiagent._supervisor import default_supervisor_prompt as default_supervisor_prompt
from rxagent.multiagent._team_run import TeamRun as TeamRun

__all__ = [
    "AgentLike",
    "InputBuilder",
    "Merger",
    "MsgHub",
    "Orchestrator",
    "ParallelPipeline",
    "SequentialPipeline",
    "Supervisor",
    "TeamRun",
    "ToolOutput",
    "child_session",
    "default_supervisor_prompt",
    "handoff",
]
