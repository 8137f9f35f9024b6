"""`"provider:model"` strings: parsing, errors, custom providers, and the agent accepting them."""

from __future__ import annotations

import pytest

from rxagent import ReActAgent
from rxagent.errors import ConfigurationError
from rxagent.models import providers, register, resolve
from rxagent.models import registry as registry_module
from rxagent.testing import ScriptedModel


@pytest.fixture(autouse=True)
def _clean_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "_custom", {})


@pytest.mark.parametrize("spec", ["gpt-4o", ":gpt-4o", "openai:", ""])
def test_a_string_without_provider_and_name_is_refused(spec: str) -> None:
    with pytest.raises(ConfigurationError, match="provider:model-name"):
        resolve(spec)


def test_an_unknown_provider_lists_the_known_ones() -> None:
    with pytest.raises(ConfigurationError, match="unknown provider 'nope'") as info:
        resolve("nope:model")
    assert "openai" in str(info.value)
    assert "register" in str(info.value)
    assert "did you mean" not in str(info.value)  # nothing is close to 'nope'


@pytest.mark.parametrize(
    ("typo", "meant"),
    [
        ("opneai", "openai"),
        ("OpenAI", "openai"),
        ("anthropik", "anthropic"),
        ("olama", "ollama"),
        ("gemni", "gemini"),
        ("deepsek", "deepseek"),
    ],
)
def test_a_misspelt_provider_gets_a_did_you_mean(typo: str, meant: str) -> None:
    with pytest.raises(ConfigurationError) as info:
        resolve(f"{typo}:some-model")
    assert str(info.value).startswith(
        f"model='{typo}:some-model': unknown provider '{typo}'; did you mean '{meant}'? "
        "known providers: anthropic, azure"
    )


def test_a_did_you_mean_includes_registered_providers() -> None:
    register("mycompany", lambda name, **kw: ScriptedModel(["hi"], name=name))
    with pytest.raises(ConfigurationError, match="did you mean 'mycompany'"):
        resolve("mycompnay:x")


@pytest.mark.parametrize(
    ("spec", "example"),
    [
        ("gpt-4o", "openai:gpt-4o"),
        ("claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("gemini-2.5-flash", "gemini:gemini-2.5-flash"),
        ("qwen-plus", "dashscope:qwen-plus"),
        ("llama3.2", "ollama:llama3.2"),
        ("my-model", "openai:gpt-4o-mini"),
        ("openai:", "openai:gpt-4o-mini"),
    ],
)
def test_a_missing_provider_gets_an_example_for_the_name(spec: str, example: str) -> None:
    with pytest.raises(ConfigurationError, match=f"for example '{example}'; known providers"):
        resolve(spec)


def test_not_a_string() -> None:
    with pytest.raises(ConfigurationError, match="must be a str"):
        resolve(42)  # type: ignore[arg-type]


def test_register_and_resolve_a_custom_provider() -> None:
    register("canned", lambda name, **kw: ScriptedModel(["hi"], name=name, **kw))
    model = resolve("canned:greeter:v2", chunk_size=3)
    assert isinstance(model, ScriptedModel)
    assert model.name == "greeter:v2"
    assert model.chunk_size == 3
    assert "canned" in providers()
    with pytest.raises(ConfigurationError, match="already registered"):
        register("canned", lambda name: ScriptedModel([]))
    with pytest.raises(ConfigurationError, match="already registered"):
        register("openai", lambda name: ScriptedModel([]))
    register("openai", lambda name, **kw: ScriptedModel(["override"], name=name), replace=True)
    assert isinstance(resolve("openai:x"), ScriptedModel)


@pytest.mark.parametrize("prefix", ["", "a:b", 3])
def test_bad_prefixes(prefix: object) -> None:
    with pytest.raises(ConfigurationError, match="prefix"):
        register(prefix, lambda name: ScriptedModel([]))  # type: ignore[arg-type]


def test_a_factory_must_be_callable() -> None:
    with pytest.raises(ConfigurationError, match="callable"):
        register("x", "not callable")  # type: ignore[arg-type]


def test_builtin_prefixes() -> None:
    assert {
        "openai",
        "azure",
        "deepseek",
        "anthropic",
        "dashscope",
        "gemini",
        "google",
        "ollama",
    } <= set(providers())


def test_deepseek_needs_its_own_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(ConfigurationError, match="DEEPSEEK_API_KEY"):
        resolve("deepseek:deepseek-chat")


def test_the_agent_accepts_a_registered_string() -> None:
    register("canned", lambda name, **kw: ScriptedModel(["Hello!"], name=name))
    agent = ReActAgent("a", model="canned:greeter")
    assert agent.call_sync("hi").reply.text == "Hello!"
