"""Preset arguments: hidden from the model; priority model argument > preset > injected."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from rxagent import ReActAgent, RunContext
from rxagent.errors import ToolDefinitionError
from rxagent.messages import ToolUseBlock
from rxagent.testing import ScriptedModel, tool_call
from rxagent.tools import Injected, SessionId, Tool, Toolkit, tool


@dataclass
class Account:
    owner: str


@tool
def transfer(
    amount: int, currency: str = "EUR", *, api_key: str, account: Injected[Account]
) -> str:
    """Send money.

    Args:
        amount: How much.
        currency: Which currency.
        api_key: The bank's key.
        account: The account to pay from.
    """
    return f"{amount} {currency} from {account.owner} with {api_key}"


def call(name: str = "transfer", **args: Any) -> ToolUseBlock:
    return ToolUseBlock(id="c1", name=name, input=args)


async def run(tool_: Tool[..., Any], block: ToolUseBlock, **inject: Any) -> str:
    deps = {Account: inject["account"]} if "account" in inject else {}
    outcome = await Toolkit([tool_]).execute(block, inject=deps)
    return outcome.result.text


async def test_a_hidden_preset_leaves_the_schema_and_reaches_the_function() -> None:
    hidden = transfer.with_preset(api_key="sk-1")
    assert list(hidden.schema.parameters["properties"]) == ["amount", "currency"]
    assert hidden.schema.parameters["required"] == ("amount",)
    assert dict(hidden.preset) == {"api_key": "sk-1"}
    assert transfer.preset == {}
    assert "api_key" in transfer.schema.parameters["properties"]
    text = await run(hidden, call(amount=5), account=Account("ada"))
    assert text == "5 EUR from ada with sk-1"


async def test_the_model_cannot_send_a_hidden_preset() -> None:
    hidden = transfer.with_preset({"api_key": "sk-1"})
    text = await run(hidden, call(amount=5, api_key="stolen"), account=Account("ada"))
    assert text == "Invalid arguments for tool 'transfer': api_key: Extra inputs are not permitted"


async def test_priority_model_argument_over_visible_preset_over_injected() -> None:
    visible = transfer.with_preset(currency="USD", visible=True).with_preset(api_key="k")
    # visible: in the schema, with the preset as its default; the model's argument wins
    assert visible.schema.parameters["properties"]["currency"]["default"] == "USD"
    assert await run(visible, call(amount=1), account=Account("a")) == "1 USD from a with k"
    sent = await run(visible, call(amount=1, currency="JPY"), account=Account("a"))
    assert sent == "1 JPY from a with k"
    # preset over injected: a preset for an injected parameter wins over the deps
    preset_account = visible.with_preset(account=Account("preset"))
    assert "account" not in preset_account.schema.parameters["properties"]
    text = await run(preset_account, call(amount=1), account=Account("injected"))
    assert text == "1 USD from preset with k"
    # injected when there is no preset
    assert (await run(visible, call(amount=1), account=Account("injected"))).endswith(
        "from injected with k"
    )


async def test_preset_wins_over_the_run_context_in_an_agent() -> None:
    @tool
    def where(ctx: RunContext, label: str = "") -> str:
        """Say which session this is."""
        return f"{label}{ctx.session_id}"

    model = ScriptedModel([[tool_call("where", label="s=")], "ok"])
    kit = Toolkit()
    kit.add(where)
    agent = ReActAgent("p", "", model, tools=kit)
    await agent.call("go", session_id="one")
    stored = await agent.store.load("p", "one")
    assert stored is not None
    assert stored.state.memory[2].content[0].output == "s=one"  # type: ignore[union-attr]


def test_presets_for_unknown_parameters_are_refused() -> None:
    with pytest.raises(ToolDefinitionError, match=r"has no parameter 'apikey' to preset"):
        transfer.with_preset(apikey="x")
    with pytest.raises(ToolDefinitionError, match=r"has no parameter 'x' to preset"):
        Toolkit().add(transfer, preset={"x": 1})


async def test_toolkit_add_with_preset() -> None:
    kit = Toolkit()
    added = kit.add(transfer, preset={"api_key": "k", "account": Account("b")})
    assert kit.get("transfer") is added
    assert added.preset == {"api_key": "k", "account": Account("b")}
    outcome = await kit.execute(call(amount=2))
    assert outcome.result.output == "2 EUR from b with k"


async def test_a_positional_only_parameter_can_be_preset() -> None:
    def scale(factor: int, value: int, /) -> int:
        """Scale a value."""
        return factor * value

    made = tool(scale).with_preset(factor=3)
    outcome = await Toolkit([made]).execute(call("scale", value=2))
    assert outcome.result.output == "6"


async def test_schema_tool_presets_hidden_and_visible() -> None:
    seen: list[dict[str, Any]] = []

    def search(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return "ok"

    schema = {
        "type": "object",
        "properties": {"q": {"type": "string"}, "key": {"type": "string"}},
        "required": ["q", "key"],
    }
    base = Tool.from_schema("search", "Search.", schema, search)
    hidden = base.with_preset(key="secret")
    assert list(hidden.schema.parameters["properties"]) == ["q"]
    assert hidden.schema.parameters["required"] == ("q",)
    kit = Toolkit([hidden])
    assert (await kit.execute(call("search", q="x"))).ok
    refused = await kit.execute(call("search", q="x", key="mine"))
    assert refused.result.text.endswith("key: Extra inputs are not permitted")
    visible = base.with_preset(key="default", visible=True)
    assert visible.schema.parameters["properties"]["key"]["default"] == "default"
    vkit = Toolkit([visible])
    await vkit.execute(call("search", q="y"))
    await vkit.execute(call("search", q="z", key="model"))
    assert seen == [
        {"q": "x", "key": "secret"},
        {"q": "y", "key": "default"},
        {"q": "z", "key": "model"},
    ]


def test_schema_tool_presets_for_unknown_fields_of_a_closed_schema_are_refused() -> None:
    closed = {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "additionalProperties": False,
    }
    made = Tool.from_schema("s", "S.", closed, lambda a: "")
    with pytest.raises(
        ToolDefinitionError, match=r"has no parameter 'k' to preset; its parameters: q"
    ):
        made.with_preset(k=1)
    opened = Tool.from_schema("s", "S.", {"type": "object"}, lambda a: "")
    assert opened.with_preset(k=1).preset == {"k": 1}


async def test_the_session_id_is_injected_by_its_type() -> None:
    @tool
    def whose(item: str, session: SessionId) -> str:
        """Say whose item it is."""
        return f"{item} of {session}"

    assert list(whose.schema.parameters["properties"]) == ["item"]
    assert dict(whose.injected) == {"session": SessionId}
    kit = Toolkit([whose])
    given = await kit.execute(call("whose", item="tea"), inject={SessionId: SessionId("bob")})
    assert given.result.output == "tea of bob"
    missing = await kit.execute(call("whose", item="tea"), inject={Account: Account("x")})
    assert missing.result.text == (
        "Tool 'whose' cannot run: parameter 'session' needs the session id, which the agent "
        "supplies; when calling Toolkit.execute() yourself, pass "
        "inject={SessionId: SessionId('...')}"
    )
    preset = await Toolkit([whose.with_preset(session="fixed")]).execute(call("whose", item="x"))
    assert preset.result.output == "x of fixed"  # preset over injected
    model = ScriptedModel([[tool_call("whose", item="tea")], "ok"])
    agent = ReActAgent("w", "", model, tools=[whose])
    await agent.call("go", session_id="alice")
    stored = await agent.store.load("w", "alice")
    assert stored is not None
    assert stored.state.memory[2].content[0].output == "tea of alice"  # type: ignore[union-attr]
