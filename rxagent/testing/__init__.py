"""Test doubles and checkers for rxagent: scripted models, an event recorder, protocol checks.

- `ScriptedModel` plays a fixed list of responses; `FunctionModel` asks your function.
- `text()`, `thinking()` and `tool_call()` build the responses.
- `EventRecorder` is a hook that keeps every event it sees.
- `RecordingSleep` is a fake `asyncio.sleep` on a virtual clock, for retry timing.
- `assert_event_protocol()` checks a run's events against the event protocol.
- `add` and `echo` are the tools the strategies' scripts call by default (`rxagent.testing.tools`).

Hypothesis strategies live in `rxagent.testing.strategies` (import it explicitly; it needs
`hypothesis`, which `pip install "rxagent[testing]"` installs). The pytest plugin
(`rxagent.testing.pytest_plugin`) provides the `scripted_model` and `event_recorder` fixtures.

Example:
    ```python
    import asyncio
    from rxagent.messages import Msg
    from rxagent.models import ModelOptions, ResponseBuilder
    from rxagent.testing import ScriptedModel, text, thinking, tool_call

    model = ScriptedModel([[thinking("Add them."), tool_call("add", a=1, b=2)], "3"])


    async def first_reply() -> Msg:
        builder = ResponseBuilder()
        async for delta in model.stream([Msg.user("1 + 2?")], [], ModelOptions()):
            builder.add(delta)
        return builder.build()


    assert asyncio.run(first_reply()).tool_calls[0].name == "add"
    ```
"""

from typing import TYPE_CHECKING, Final

from rxagent._lazy import lazy_exports

if TYPE_CHECKING:
    from rxagent.errors import EventProtocolError as EventProtocolError
    from rxagent.errors import ScriptExhaustedError as ScriptExhaustedError
    from rxagent.testing._builders import Turn as Turn
    from rxagent.testing._builders import text as text
    from rxagent.testing._builders import thinking as thinking
    from rxagent.testing._builders import tool_call as tool_call
    from rxagent.testing._clock import RecordingSleep as RecordingSleep
    from rxagent.testing._models import FunctionModel as FunctionModel
    from rxagent.testing._models import ModelRequest as ModelRequest
    from rxagent.testing._models import ScriptedModel as ScriptedModel
    from rxagent.testing._protocol import assert_event_protocol as assert_event_protocol
    from rxagent.testing._recorder import EventRecorder as EventRecorder
    from rxagent.testing.tools import add as add
    from rxagent.testing.tools import echo as echo

# imported on first use: the pytest plugin lives in this package, and pytest imports it at
# start-up in every project that has rxagent installed
_EXPORTS: Final[dict[str, str]] = {
    "Turn": "rxagent.testing._builders",
    "RecordingSleep": "rxagent.testing._clock",
    "text": "rxagent.testing._builders",
    "thinking": "rxagent.testing._builders",
    "tool_call": "rxagent.testing._builders",
    "FunctionModel": "rxagent.testing._models",
    "ModelRequest": "rxagent.testing._models",
    "ScriptedModel": "rxagent.testing._models",
    "EventProtocolError": "rxagent.errors",
    "ScriptExhaustedError": "rxagent.errors",
    "assert_event_protocol": "rxagent.testing._protocol",
    "EventRecorder": "rxagent.testing._recorder",
    "add": "rxagent.testing.tools",
    "echo": "rxagent.testing.tools",
}

__all__ = [
    "EventProtocolError",
    "EventRecorder",
    "FunctionModel",
    "ModelRequest",
    "RecordingSleep",
    "ScriptExhaustedError",
    "ScriptedModel",
    "Turn",
    "add",
    "assert_event_protocol",
    "echo",
    "text",
    "thinking",
    "tool_call",
]

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
