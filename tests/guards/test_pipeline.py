"""`GuardPipeline` on its own: order, the first rejection, rewrites, failing stages, checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent import Principal
from rxagent.errors import ConfigurationError
from rxagent.events import GuardAction, GuardTarget, GuardVerdict
from rxagent.guards import Guard, GuardContext, GuardPipeline, InjectionDetection, Permission


class Scripted(Guard):
    """Flags when its name is in `flags`; records every call in `seen`."""

    def __init__(
        self,
        name: str,
        *,
        flags: bool = False,
        action: GuardAction = "reject",
        targets: frozenset[GuardTarget] = frozenset({"input"}),
        seen: list[str] | None = None,
    ) -> None:
        self.name = name
        self.flags = flags
        self.action = action
        self.targets = targets
        self.seen = seen if seen is not None else []

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        self.seen.append(self.name)
        return self.verdict(self.flags, None, f"{self.name} saw {text!r}" if self.flags else None)

    def rewrite(self, text: str, verdict: GuardVerdict, ctx: GuardContext) -> str:
        return f"{text}+{self.name}"


class Broken(Guard):
    name = "broken"

    async def check(self, text: str, ctx: GuardContext) -> GuardVerdict:
        raise ConnectionError("backend down")


INPUT = GuardContext("input")


@given(
    st.lists(st.tuples(st.booleans(), st.sampled_from(["reject", "flag"])), min_size=1, max_size=8),
    st.booleans(),
)
async def test_stages_run_in_order_and_the_first_rejection_ends_the_screening(
    plan: list[tuple[bool, str]], report_passes: bool
):
    seen: list[str] = []
    stages = [
        Scripted(f"s{i}", flags=flags, action=action, seen=seen)  # type: ignore[arg-type]
        for i, (flags, action) in enumerate(plan)
    ]
    screened = await GuardPipeline(stages, report_passes=report_passes).screen("t", INPUT)
    first_reject = next(
        (i for i, (flags, action) in enumerate(plan) if flags and action == "reject"), None
    )
    ran = len(plan) if first_reject is None else first_reject + 1
    assert seen == [f"s{i}" for i in range(ran)]
    expected = [
        (f"s{i}", action if flags else "pass")
        for i, (flags, action) in enumerate(plan[:ran])
        if flags or report_passes
    ]
    assert [(r.stage, r.action) for r in screened.reports] == expected
    if first_reject is None:
        assert screened.rejected is None
    else:
        assert screened.rejected is not None
        assert screened.rejected.stage == f"s{first_reject}"
    assert all(r.verdict.flagged == (r.action != "pass") for r in screened.reports)


async def test_rewrites_chain_and_are_reported():
    stages = [
        Scripted("a", flags=True, action="redact", targets=frozenset({"output"})),
        Scripted("b", targets=frozenset({"output"})),
        Scripted("c", flags=True, action="redact", targets=frozenset({"output"})),
    ]
    screened = await GuardPipeline(stages).screen("reply", GuardContext("output"))
    assert screened.text == "reply+a+c"
    assert screened.changed
    assert [r.action for r in screened.reports] == ["redact", "redact"]


async def test_only_the_stages_of_the_target_run():
    seen: list[str] = []
    stages = [
        Scripted("in", seen=seen),
        Scripted("out", targets=frozenset({"output"}), seen=seen),
    ]
    pipeline = GuardPipeline(stages)
    assert pipeline.watches("input")
    assert pipeline.watches("output")
    assert not pipeline.watches("tool_result")
    await pipeline.screen("x", GuardContext("output"))
    assert seen == ["out"]
    unchanged = await pipeline.screen("x", GuardContext("tool_result"))
    assert unchanged.text == "x"
    assert not unchanged.reports


@pytest.mark.parametrize(("on_error", "rejected"), [("reject", True), ("pass", False)])
async def test_a_failing_stage_is_reported_and_decides_by_on_error(on_error: str, rejected: bool):
    after = Scripted("after")
    pipeline = GuardPipeline([Broken(), after], on_error=on_error)  # type: ignore[arg-type]
    screened = await pipeline.screen("x", INPUT)
    report = screened.reports[0]
    assert report.stage == "broken"
    assert report.verdict.reasons == ("stage failed: ConnectionError: backend down",)
    assert (screened.rejected is not None) is rejected
    assert report.action == ("reject" if rejected else "pass")
    assert after.seen == ([] if rejected else ["after"])


def test_bad_pipelines_name_the_problem():
    with pytest.raises(TypeError, match="must be Guard stages"):
        GuardPipeline([object()])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="action 'redact' does not apply to target 'input'"):
        GuardPipeline([Scripted("x", action="redact")])
    with pytest.raises(ValueError, match="on_error"):
        GuardPipeline([], on_error="ignore")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tool_result_action"):
        InjectionDetection(tool_result_action="drop")  # type: ignore[arg-type]
    assert GuardPipeline.of([]) is None
    assert GuardPipeline.of(None) is None


def test_agent_refuses_guards_that_are_not_stages():
    from rxagent import ReActAgent
    from rxagent.testing import ScriptedModel

    with pytest.raises(ConfigurationError, match="guards= takes a list"):
        ReActAgent("a", "", ScriptedModel([]), guards=Scripted("x"))  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="must be Guard stages"):
        ReActAgent("a", "", ScriptedModel([]), guards=["rate"])  # type: ignore[list-item]


def test_principal_ids_and_checks():
    assert Principal(user_id="ann", key_id="k1").id == "ann"
    assert Principal(key_id="k1").id == "key:k1"
    assert Principal().id == "anonymous"
    assert Principal(roles={"ops"}).roles == frozenset({"ops"})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Principal\.user_id must be a non-empty string"):
        Principal(user_id=" ")
    with pytest.raises(TypeError, match="not one string"):
        Principal(roles="admin")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Principal("ann")  # type: ignore[call-arg]


def test_permission_tables_and_functions():
    table = Permission({"*": ["search"], "role:ops": ["restart_*"], "key:k9": ["*"]})
    ops = Principal(user_id="bob", roles=frozenset({"ops"}))
    assert table.permits(ops, "restart_db")
    assert table.permits(ops, "search")
    assert not table.permits(ops, "drop_table")
    assert table.permits(Principal(key_id="k9"), "drop_table")
    by_function = Permission(lambda who, tool: who.user_id == "ann" or tool == "search")
    assert by_function.permits(Principal(user_id="ann"), "anything")
    assert not by_function.permits(Principal(), "anything")
    with pytest.raises(ValueError, match="grantee 'admins'"):
        Permission({"admins": ["*"]})
    with pytest.raises(ValueError, match=r"write \['search'\]"):
        Permission({"*": "search"})
    with pytest.raises(TypeError, match="takes a mapping"):
        Permission(["search"])  # type: ignore[arg-type]


@given(st.text(max_size=200))
def test_quarantine_wraps_any_text_between_matching_random_fences(text: str):
    stage = InjectionDetection(scan_tool_results=True)
    verdict = GuardVerdict(flagged=True, score=0.9, reasons=("role tag",), stage="injection")
    wrapped = stage.rewrite(text, verdict, GuardContext("tool_result"))
    header, fence, *body = wrapped.split("\n")
    assert fence.startswith("UNTRUSTED-")
    assert wrapped.endswith("\n" + fence)
    assert "\n".join(body[:-1]) == text
    assert fence in header
    assert "role tag" in header
