"""`default_guards()`: the stages an agent that faces the public starts with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from rxagent.guards._injection import InjectionDetection
from rxagent.guards._leak import SystemPromptLeak
from rxagent.guards._pii import PIIRedaction
from rxagent.guards._rate_limit import RateLimit
from rxagent.guards._validation import InputValidation

if TYPE_CHECKING:
    from rxagent.guards._pipeline import Guard

__all__ = ["default_guards"]


def default_guards(
    rate: str | None = "30/minute",
    *,
    per: Literal["user", "session", "key"] = "user",
    backend: Any = None,
    max_chars: int = 10_000,
) -> list[Guard]:
    """The recommended pipeline, each stage with its defaults; a list you may extend.

    In order: `RateLimit(rate, per=per, backend=backend)` (left out when `rate` is None),
    `InputValidation(max_chars)`, `InjectionDetection()` (on the input), `PIIRedaction()`
    (redacts the reply) and `SystemPromptLeak()` (rejects a reply that recites the prompt).

    Args:
        rate: The rate limit (`"30/minute"`), or None for none.
        per: Whose bucket a run takes from: `"user"`, `"session"` or `"key"`.
        backend: None for buckets in this process, or a Redis URL or client.
        max_chars: The longest input accepted.

    Example:
        ```python
        from rxagent import ReActAgent
        from rxagent.guards import Permission, default_guards
        from rxagent.testing import ScriptedModel

        guards = [*default_guards(rate="10/minute"), Permission({"*": ["search"]})]
        agent = ReActAgent("support", "Be brief.", ScriptedModel(["Hi!"]), guards=guards)
        assert [stage.name for stage in agent.guards.stages] == [
            "rate_limit", "input_validation", "injection", "pii", "system_prompt_leak",
            "permission",
        ]
        ```
    """
    stages: list[Guard] = [] if rate is None else [RateLimit(rate, per=per, backend=backend)]
    stages += [InputValidation(max_chars), InjectionDetection(), PIIRedaction(), SystemPromptLeak()]
    return stages
