"""Injected tool parameters: RunContext, Injected[T] and plain classes, resolved by type."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

from rxagent.context import RunContext
from rxagent.errors import ErrorCode
from rxagent.messages import ToolUseBlock
from rxagent.tools import Injected, Toolkit, tool


class Database:
    def __init__(self, name: str = "main") -> None:
        self.name = name


class ReplicaDatabase(Database):
    pass


FALLBACK = Database("fallback")


@dataclasses.dataclass
class Settings:
    greeting: str


class Clock(Protocol):
    def now(self) -> str: ...


class FixedClock:
    def now(self) -> str:
        return "noon"


def call(tool_name: str, **arguments: Any) -> ToolUseBlock:
    return ToolUseBlock(id="call_1", name=tool_name, input=arguments)


@tool
def which_db(table: str, db: Database) -> str:
    """Name the database a table lives in."""
    return f"{table}@{db.name}"


async def test_plain_class_is_injected_by_exact_type() -> None:
    outcome = await Toolkit([which_db]).execute(
        call("which_db", table="users"), inject={Database: Database("primary"), str: "ignored"}
    )
    assert outcome.result.output == "users@primary"


async def test_value_under_a_subclass_key_is_injected() -> None:
    outcome = await Toolkit([which_db]).execute(
        call("which_db", table="t"), inject={ReplicaDatabase: ReplicaDatabase("replica")}
    )
    assert outcome.result.output == "t@replica"


async def test_instance_under_an_unrelated_key_is_found_by_isinstance() -> None:
    outcome = await Toolkit([which_db]).execute(
        call("which_db", table="t"), inject={object: Database("by-instance")}
    )
    assert outcome.result.output == "t@by-instance"


async def test_subclass_key_wins_over_an_instance_listed_first() -> None:
    outcome = await Toolkit([which_db]).execute(
        call("which_db", table="t"),
        inject={object: Database("instance"), ReplicaDatabase: ReplicaDatabase("subclass-key")},
    )
    assert outcome.result.output == "t@subclass-key"


async def test_exact_key_wins_over_an_instance_listed_first() -> None:
    outcome = await Toolkit([which_db]).execute(
        call("which_db", table="t"),
        inject={ReplicaDatabase: ReplicaDatabase("replica"), Database: Database("exact")},
    )
    assert outcome.result.output == "t@exact"


async def test_injected_marker_injects_a_schema_able_type() -> None:
    @tool
    def greet(name: str, settings: Injected[Settings]) -> str:
        """Greet."""
        return f"{settings.greeting}, {name}"

    assert list(greet.schema.parameters["properties"]) == ["name"]
    outcome = await Toolkit([greet]).execute(
        call("greet", name="Ada"), inject={Settings: Settings("Hi")}
    )
    assert outcome.result.output == "Hi, Ada"


async def test_protocol_annotation_is_injected_by_its_key() -> None:
    @tool
    def tell_time(clock: Injected[Clock]) -> str:
        """Tell the time."""
        return clock.now()

    kit = Toolkit([tell_time])
    # isinstance() against a non-runtime-checkable Protocol raises; the lookup must survive that.
    missing = await kit.execute(call("tell_time"), inject={Database: Database()})
    assert missing.error_code is ErrorCode.TOOL_ERROR
    found = await kit.execute(call("tell_time"), inject={Database: Database(), Clock: FixedClock()})
    assert found.result.output == "noon"


async def test_run_context_is_injected_and_not_in_the_schema() -> None:
    seen: list[object] = []

    @tool
    def whoami(ctx: RunContext, prefix: str = "") -> str:
        """Say which run this is."""
        seen.append(ctx)
        return prefix + "ok"

    assert list(whoami.schema.parameters["properties"]) == ["prefix"]
    assert dict(whoami.injected) == {"ctx": RunContext}
    ctx = object.__new__(RunContext)  # a bare instance: only its identity matters here
    outcome = await Toolkit([whoami]).execute(call("whoami"), inject={RunContext: ctx})
    assert outcome.result.output == "ok"
    assert seen == [ctx]


class StepContext(RunContext):
    """A RunContext subclass, as a framework built on rxagent might declare."""


def test_a_run_context_subclass_is_injected_as_the_run_context() -> None:
    @tool
    def step(ctx: StepContext) -> int:
        """Step."""
        return ctx.step

    assert step.schema.parameters["properties"] == {}
    assert dict(step.injected) == {"ctx": RunContext}


async def test_missing_injection_is_an_error_result_that_says_how_to_fix_it() -> None:
    outcome = await Toolkit([which_db]).execute(call("which_db", table="t"))
    assert outcome.result.is_error
    assert outcome.error_code is ErrorCode.TOOL_ERROR
    assert outcome.result.output == (
        "Tool 'which_db' cannot run: parameter 'db' needs a Database to be injected, and none "
        "was given; pass one to the agent with deps=[...] "
        "(or to Toolkit.execute() with inject={Database: value})"
    )


async def test_missing_run_context_says_the_agent_supplies_it() -> None:
    @tool
    def step(ctx: RunContext) -> int:
        """Step."""
        return 0

    outcome = await Toolkit([step]).execute(call("step"))
    assert outcome.result.is_error
    assert "parameter 'ctx' needs the RunContext, which the agent supplies" in outcome.result.text


async def test_missing_injection_with_a_default_uses_the_default() -> None:
    @tool
    def describe(db: Database | None = None) -> str:
        """Describe."""
        return "none" if db is None else db.name

    @tool
    def describe_marked(db: Injected[Database] = FALLBACK) -> str:
        """Describe."""
        return db.name

    kit = Toolkit([describe, describe_marked])
    assert describe.schema.parameters["properties"] == {}
    assert dict(describe.injected) == {"db": Database}
    assert (await kit.execute(call("describe"))).result.output == "none"
    assert (await kit.execute(call("describe_marked"))).result.output == "fallback"
    given = {Database: Database("given")}
    assert (await kit.execute(call("describe"), inject=given)).result.output == "given"
    assert (await kit.execute(call("describe_marked"), inject=given)).result.output == "given"


async def test_the_model_cannot_set_an_injected_parameter() -> None:
    outcome = await Toolkit([which_db]).execute(
        call("which_db", table="t", db={"name": "evil"}), inject={Database: Database("real")}
    )
    assert outcome.result.output == (
        "Invalid arguments for tool 'which_db': db: Extra inputs are not permitted"
    )
