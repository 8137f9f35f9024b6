"""Guards: checks on the text that enters an agent, each returning a `GuardVerdict`.

`InjectionDetector` is the prompt-injection stage: offline, pure Python, measured in the guards
guide of the docs. Its optional judge (`ModelJudge` or any callable) gives a second opinion on
borderline scores in `acheck`.
"""

from rxagent.guards._detector import DEFAULT_JUDGE_BAND as DEFAULT_JUDGE_BAND
from rxagent.guards._detector import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from rxagent.guards._detector import InjectionDetector as InjectionDetector
from rxagent.guards._judge import Judge as Judge
from rxagent.guards._judge import ModelJudge as ModelJudge
from rxagent.guards._judge import ask_judge as ask_judge
from rxagent.guards._verdict import GuardVerdict as GuardVerdict

__all__ = [
    "DEFAULT_JUDGE_BAND",
    "DEFAULT_THRESHOLD",
    "GuardVerdict",
    "InjectionDetector",
    "Judge",
    "ModelJudge",
    "ask_judge",
]
