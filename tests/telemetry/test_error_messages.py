"""ErrorMessages: the text a user reads when a run fails, per code, overridable and localizable."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import pytest

from rxagent import (
    ErrorCode,
    ErrorInfo,
    ErrorMessages,
    PreCallEvent,
    ReActAgent,
    Reject,
    RunContext,
    hook,
    tool,
)
from rxagent.error_messages import DEFAULT_ERROR_MESSAGES, TEMPLATE_FIELDS
from rxagent.errors import ConfigurationError
from rxagent.testing import FunctionModel, ScriptedModel, tool_call


def _broken(*_: object) -> str:
    raise ConnectionError("upstream said: Bearer sk-proj-abcdefghijklmnopqrstuv")


def test_every_code_has_an_english_default() -> None:
    assert set(DEFAULT_ERROR_MESSAGES) == set(ErrorCode)
    defaults = ErrorMessages()
    for code in ErrorCode:
        text = defaults.text(ErrorInfo(code=code, message="internal detail"))
        assert text == DEFAULT_ERROR_MESSAGES[code]
        assert text.strip()
        assert "internal detail" not in text  # the error itself is for developers
        assert text[0].isupper()
        assert text.endswith(".")
    assert len(set(DEFAULT_ERROR_MESSAGES.values())) == len(ErrorCode)  # each says its own


def test_a_failed_run_replies_with_the_default_text_not_the_error() -> None:
    agent = ReActAgent("a", "", FunctionModel(_broken))
    result = agent.call_sync("hi")
    assert result.error is not None
    assert result.error.code is ErrorCode.PROVIDER_ERROR
    assert result.text == DEFAULT_ERROR_MESSAGES[ErrorCode.PROVIDER_ERROR]
    assert "sk-proj" not in result.text
    assert "sk-proj" not in result.reply.text
    assert "sk-proj" in result.error.message  # developers still see everything


def test_an_agent_overrides_some_codes_and_keeps_the_rest() -> None:
    messages = {
        ErrorCode.PROVIDER_ERROR: "Der Dienst ist gerade gestört ({code}).",
        "HOOK_REJECTED": "Das ist nicht erlaubt.",
    }
    agent = ReActAgent("a", "", FunctionModel(_broken), error_messages=messages)
    assert agent.call_sync("hi").text == "Der Dienst ist gerade gestört (PROVIDER_ERROR)."

    @hook(PreCallEvent)
    def refuse(event: PreCallEvent) -> None:
        raise Reject("no")

    strict = ReActAgent("b", "", ScriptedModel(["x"]), hooks=[refuse], error_messages=messages)
    assert strict.call_sync("hi").text == "Das ist nicht erlaubt."
    assert (
        ErrorMessages(messages).template(ErrorCode.AUTH) == DEFAULT_ERROR_MESSAGES[ErrorCode.AUTH]
    )


@dataclass(frozen=True)
class Locale:
    language: str


FRENCH = {
    ErrorCode.PROVIDER_ERROR: "Le fournisseur du modèle a rencontré un problème.",
    ErrorCode.INTERRUPTED: "L'exécution a été interrompue.",
}


def localized(error: ErrorInfo, ctx: RunContext) -> str | None:
    """French for runs given `deps=[Locale("fr")]`; None: the English default."""
    try:
        locale = ctx.dep(Locale)
    except LookupError:
        return None
    return FRENCH.get(error.code) if locale.language == "fr" else None


def test_a_resolver_localizes_per_run() -> None:
    agent = ReActAgent(
        "a", "", FunctionModel(_broken), error_messages=ErrorMessages(resolve=localized)
    )
    french = agent.call_sync("salut", deps=[Locale("fr")], session_id="fr")
    english = agent.call_sync("hi", session_id="en")
    german = agent.call_sync("hallo", deps=[Locale("de")], session_id="de")
    assert french.text == "Le fournisseur du modèle a rencontré un problème."
    assert english.text == german.text == DEFAULT_ERROR_MESSAGES[ErrorCode.PROVIDER_ERROR]


def test_an_interrupt_without_a_message_reads_the_interrupted_text() -> None:
    started = asyncio.Event()

    @tool
    async def wait() -> str:
        """Wait."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    async def run(agent: ReActAgent, message: str | None) -> str:
        task = asyncio.create_task(agent.call("go", deps=[Locale("fr")]))
        await started.wait()
        started.clear()
        agent.interrupt(msg=message)
        return (await task).text

    async def main() -> tuple[str, str]:
        model = ScriptedModel([tool_call("wait"), tool_call("wait")])
        agent = ReActAgent("a", "", model, tools=[wait], error_messages=localized)
        return await run(agent, None), await run(agent, "Stopped by the operator.")

    quiet, explained = asyncio.run(main())
    assert quiet == "L'exécution a été interrompue."
    assert explained == "Stopped by the operator."  # the caller's own message wins


def test_the_detailed_messages_quote_the_error() -> None:
    agent = ReActAgent("a", "", FunctionModel(_broken), error_messages=ErrorMessages.detailed())
    result = agent.call_sync("hi")
    assert result.error is not None
    assert result.text == result.error.failure_text()
    assert result.text.startswith("The run failed (PROVIDER_ERROR): the model 'function' failed")


def test_a_broken_resolver_falls_back_to_the_defaults(caplog: pytest.LogCaptureFixture) -> None:
    def raising(error: ErrorInfo, ctx: RunContext) -> str | None:
        raise KeyError("oops")

    def wrong_type(error: ErrorInfo, ctx: RunContext) -> str | None:
        return 42  # type: ignore[return-value]

    for resolver in (raising, wrong_type):
        agent = ReActAgent("a", "", FunctionModel(_broken), error_messages=resolver)
        with caplog.at_level(logging.ERROR, logger="rxagent.agent"):
            text = agent.call_sync("hi").text
        assert text == DEFAULT_ERROR_MESSAGES[ErrorCode.PROVIDER_ERROR]
    assert "resolver failed for PROVIDER_ERROR" in caplog.text
    assert "resolver returned int for PROVIDER_ERROR" in caplog.text


def test_a_resolver_is_not_called_without_a_run() -> None:
    calls: list[ErrorInfo] = []

    def record(error: ErrorInfo, ctx: RunContext) -> str:
        calls.append(error)
        return "x"

    messages = ErrorMessages(resolve=record)
    assert messages.text(ErrorInfo(code=ErrorCode.AUTH, message="m")).startswith("The assistant")
    assert calls == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"NOT_A_CODE": "x"}, "'NOT_A_CODE', which is not an ErrorCode; use one of RATE_LIMITED"),
        ({ErrorCode.AUTH: 3}, r"ErrorMessages\[AUTH\] must be a str template, not int"),
        ({ErrorCode.AUTH: "{user}"}, r"uses the field\(s\) \['user'\]"),
        ({ErrorCode.AUTH: "{}"}, r"uses the field\(s\) \[''\]"),
        ({ErrorCode.AUTH: "oops {"}, "is not a valid template"),
        (42, "error_messages must be an ErrorMessages, a {ErrorCode: template} mapping or a"),
    ],
)
def test_bad_messages_are_refused_when_the_agent_is_made(value: object, problem: str) -> None:
    with pytest.raises(ConfigurationError, match=problem):
        ReActAgent("a", "", ScriptedModel(["x"]), error_messages=value)  # type: ignore[arg-type]


def test_a_resolver_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="takes a function"):
        ErrorMessages(resolve="fr")  # type: ignore[arg-type]


def test_templates_use_the_documented_fields() -> None:
    template = "{code} at {source}: {message} {{literal}}"
    messages = ErrorMessages({ErrorCode.TOOL_ERROR: template})
    error = ErrorInfo(code=ErrorCode.TOOL_ERROR, message="disk full", source="tool:save")
    assert messages.text(error) == "TOOL_ERROR at tool:save: disk full {literal}"
    assert {"code", "message", "source"} == TEMPLATE_FIELDS
    assert ErrorMessages.of(None) is ErrorMessages.of(None)
    assert ErrorMessages.of(messages) is messages
    assert repr(messages) == "ErrorMessages(changed=['TOOL_ERROR'], resolve=False)"
