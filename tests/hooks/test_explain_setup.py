from rxagent import (
    PostActingEvent,
    PreCallEvent,
    PreReasoningEvent,
    ReActAgent,
    hook,
)
from rxagent.interceptors import ModelCall, ToolCall, UsageLimits, around_model_call
from rxagent.testing import ScriptedModel


@hook(PreCallEvent, PostActingEvent, priority=7)
def audit(event: PreCallEvent | PostActingEvent) -> None: ...


@around_model_call(priority=3)
async def outer(call, call_next):
    return await call_next(call)


def test_explain_without_an_argument_lists_every_chain_in_event_order() -> None:
    agent = ReActAgent(
        "a", "", ScriptedModel(["x"]), hooks=[audit], interceptors=[UsageLimits(), outer]
    )
    whole = agent.hooks.explain()
    assert list(whole) == [
        "PreCallEvent",
        "PreReasoningEvent",
        "PostActingEvent",
        "ModelCall",
        "ToolCall",
    ]
    assert whole["PreCallEvent"] == agent.hooks.explain(PreCallEvent)
    assert [i.name for i in whole["PreReasoningEvent"]] == ["context_window"]
    assert whole["ModelCall"] == agent.hooks.explain(ModelCall)
    assert [i.name for i in whole["ModelCall"]] == ["outer", "usage_limits"]
    assert [i.name for i in whole["ToolCall"]] == ["usage_limits"]


def test_explain_without_interceptors_has_no_call_chains() -> None:
    agent = ReActAgent("a", "", ScriptedModel(["x"]))
    whole = agent.hooks.explain()
    assert "ModelCall" not in whole
    assert "ToolCall" not in whole
    assert whole == {"PreReasoningEvent": agent.hooks.explain(PreReasoningEvent)}
    assert agent.hooks.explain(ToolCall) == []
