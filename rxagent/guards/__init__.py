"""Guards: checks on what enters and leaves an agent, each returning a `GuardVerdict`.

`ReActAgent(guards=[...])` runs the stages as a `GuardPipeline`: on the input right after
PreCall, on tool calls and tool results, and on the final reply. A stage is a `Guard`:

- `RateLimit`: a token bucket per user, session or API key, in process or on Redis;
- `InputValidation`: size, empty input, invalid Unicode, control characters;
- `InjectionDetection`: `InjectionDetector` on the input and, when asked, on tool results;
- `Classification`: allowed and denied topics, by keywords or by a model;
- `Permission`: which caller may call which tools;
- `PIIRedaction` and `SystemPromptLeak`: output guards on the final reply.

`InjectionDetector` is offline and pure Python, measured in the guards guide of the docs. Its
optional judge (`ModelJudge` or any callable) gives a second opinion on borderline scores.
"""

from typing import TYPE_CHECKING

from rxagent._lazy import lazy_exports, read_exports

# imported on first use (`rxagent._lazy`): a run imports only the parts it uses
if TYPE_CHECKING:
    from rxagent.events import GuardEvent as GuardEvent
    from rxagent.events import GuardVerdict as GuardVerdict
    from rxagent.guards._classification import Classification as Classification
    from rxagent.guards._defaults import default_guards as default_guards
    from rxagent.guards._detector import DEFAULT_JUDGE_BAND as DEFAULT_JUDGE_BAND
    from rxagent.guards._detector import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
    from rxagent.guards._detector import InjectionDetector as InjectionDetector
    from rxagent.guards._injection import InjectionDetection as InjectionDetection
    from rxagent.guards._judge import Judge as Judge
    from rxagent.guards._judge import ModelJudge as ModelJudge
    from rxagent.guards._judge import ask_judge as ask_judge
    from rxagent.guards._leak import SystemPromptLeak as SystemPromptLeak
    from rxagent.guards._permission import Permission as Permission
    from rxagent.guards._permission import PermissionPolicy as PermissionPolicy
    from rxagent.guards._pii import PII_KINDS as PII_KINDS
    from rxagent.guards._pii import PIIMatch as PIIMatch
    from rxagent.guards._pii import PIIRedaction as PIIRedaction
    from rxagent.guards._pii import find_pii as find_pii
    from rxagent.guards._pii import redact_pii as redact_pii
    from rxagent.guards._pipeline import Guard as Guard
    from rxagent.guards._pipeline import GuardContext as GuardContext
    from rxagent.guards._pipeline import GuardPipeline as GuardPipeline
    from rxagent.guards._pipeline import GuardReport as GuardReport
    from rxagent.guards._pipeline import Screened as Screened
    from rxagent.guards._rate_limit import RateLimit as RateLimit
    from rxagent.guards._retrieved import AGENT_GUARDS as AGENT_GUARDS
    from rxagent.guards._retrieved import RetrievedGuards as RetrievedGuards
    from rxagent.guards._retrieved import RetrievedScreen as RetrievedScreen
    from rxagent.guards._retrieved import retrieved_stages as retrieved_stages
    from rxagent.guards._validation import InputValidation as InputValidation


__all__ = [
    "AGENT_GUARDS",
    "DEFAULT_JUDGE_BAND",
    "DEFAULT_THRESHOLD",
    "PII_KINDS",
    "Classification",
    "Guard",
    "GuardContext",
    "GuardEvent",
    "GuardPipeline",
    "GuardReport",
    "GuardVerdict",
    "InjectionDetection",
    "InjectionDetector",
    "InputValidation",
    "Judge",
    "ModelJudge",
    "PIIMatch",
    "PIIRedaction",
    "Permission",
    "PermissionPolicy",
    "RateLimit",
    "RetrievedGuards",
    "RetrievedScreen",
    "Screened",
    "SystemPromptLeak",
    "ask_judge",
    "default_guards",
    "find_pii",
    "redact_pii",
    "retrieved_stages",
]

_EXPORTS, _ = read_exports(__file__)
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)
del TYPE_CHECKING, lazy_exports, read_exports  # the namespace holds the exports only
