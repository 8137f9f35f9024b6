from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from rxagent.events import PreCallEvent
from rxagent.hooks import HookChain
from rxagent.messages import Msg
from rxagent.testing import EventRecorder, ScriptedModel, tool_call

if TYPE_CHECKING:
    import pytest

    from rxagent.testing.pytest_plugin import ScriptedModelFactory


def test_scripted_model_fixture_builds_models(scripted_model: ScriptedModelFactory) -> None:
    model = scripted_model([tool_call("add", a=1), "done"], chunk_size=2, name="m")
    assert isinstance(model, ScriptedModel)
    assert model.name == "m"
    assert model.chunk_size == 2
    assert model.remaining == 2


def test_event_recorder_fixture_is_fresh(event_recorder: EventRecorder) -> None:
    assert isinstance(event_recorder, EventRecorder)
    assert event_recorder.recorded == []
    asyncio.run(HookChain([event_recorder]).dispatch(PreCallEvent(input=[Msg.user("hi")])))
    assert event_recorder.types() == ["pre_call"]


def test_the_plugin_is_registered_by_its_entry_point(pytestconfig: pytest.Config) -> None:
    plugin = pytestconfig.pluginmanager.get_plugin("rxagent")
    assert plugin is not None
    assert plugin.__name__ == "rxagent.testing.pytest_plugin"
