"""The rxagent pytest plugin, registered through the `pytest11` entry point.

It provides two fixtures:

- `scripted_model`: a factory, `scripted_model(["Hello!"], chunk_size=4)`, returning a
  `rxagent.testing.ScriptedModel`;
- `event_recorder`: a fresh `rxagent.testing.EventRecorder` hook for each test.

rxagent itself is imported inside the fixtures, so the plugin adds nothing to pytest's start-up.

Example:
    ```python
    from rxagent.testing import ScriptedModel


    def test_greets(scripted_model) -> None:
        model = scripted_model(["Hello!"])
        assert isinstance(model, ScriptedModel) and model.calls == 0
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import pytest

if TYPE_CHECKING:
    from collections.abc import Sequence

    from rxagent.testing import EventRecorder, ScriptedModel, Turn

__all__ = ["ScriptedModelFactory", "event_recorder", "scripted_model"]


class ScriptedModelFactory(Protocol):
    """The `scripted_model` fixture: builds a `ScriptedModel` from turns and its keywords."""

    def __call__(self, turns: Sequence[Turn], /, **kwargs: Any) -> ScriptedModel:
        """Return `ScriptedModel(turns, **kwargs)`."""
        ...


@pytest.fixture
def scripted_model() -> ScriptedModelFactory:
    """A factory for `ScriptedModel`s: `scripted_model(["Hi!"], chunk_size=2)`.

    Example:
        ```python
        from rxagent.testing import tool_call


        def test_script(scripted_model) -> None:
            model = scripted_model([tool_call("add", a=1, b=2), "3"])
            assert model.remaining == 2
        ```
    """
    from rxagent.testing import ScriptedModel

    def make(turns: Sequence[Turn], /, **kwargs: Any) -> ScriptedModel:
        return ScriptedModel(turns, **kwargs)

    return make


@pytest.fixture
def event_recorder() -> EventRecorder:
    """A fresh `EventRecorder` hook: register it on an agent, then read `.recorded`.

    Example:
        ```python
        def test_records(event_recorder) -> None:
            assert event_recorder.recorded == [] and event_recorder.types() == []
        ```
    """
    from rxagent.testing import EventRecorder

    return EventRecorder()
