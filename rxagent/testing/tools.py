"""The tools the testing kit's scripts call by default: `add` and `echo`.

`rxagent.testing.strategies.scripts()` and `conversations()` call tools named `add` and `echo`
(the names in `DEFAULT_TOOL_NAMES`) with the arguments these two take, so an agent given
`tools=[add, echo]` can play any drawn script:

- `add(a: int, b: int) -> int` returns `a + b` (the result's output is its JSON, `"5"`);
- `echo(text: str) -> str` returns `text` unchanged.

They are ordinary `@tool`s, with the schemas `strategies.tool_schemas(["add", "echo"])` draws.

Example:
    ```python
    from rxagent import ReActAgent
    from rxagent.testing import ScriptedModel, tool_call
    from rxagent.testing.tools import add, echo

    model = ScriptedModel([[tool_call("add", a=2, b=3), tool_call("echo", text="hi")], "Done."])
    agent = ReActAgent("a", "", model, tools=[add, echo])
    result = agent.call_sync("go")
    assert result.ok and result.tools_used == ("add", "echo")
    assert [m.tool_results[0].output for m in model.requests[1].messages[-2:]] == ["5", "hi"]
    ```
"""

from __future__ import annotations

from rxagent.tools import tool

__all__ = ["add", "echo"]


@tool
def add(a: int, b: int) -> int:
    """Add two integers.

    Args:
        a: The first number.
        b: The second number.

    Example:
        ```python
        from rxagent.testing.tools import add

        assert add(2, 3) == 5
        assert add.schema.parameters["required"] == ("a", "b")
        ```
    """
    return a + b


@tool
def echo(text: str) -> str:
    """Return the text unchanged.

    Args:
        text: The text to send back.

    Example:
        ```python
        from rxagent.testing.tools import echo

        assert echo("hi") == "hi"
        assert echo.schema.parameters["required"] == ("text",)
        ```
    """
    return text
