"""Guards: checks on the text that enters an agent, each returning a `GuardVerdict`.

`InjectionDetector` is the prompt-injection stage: offline, pure Python, measured in the guards
guide of the docs.
"""

from rxagent.guards._detector import DEFAULT_THRESHOLD as DEFAULT_THRESHOLD
from rxagent.guards._detector import InjectionDetector as InjectionDetector
from rxagent.guards._verdict import GuardVerdict as GuardVerdict

__all__ = ["DEFAULT_THRESHOLD", "GuardVerdict", "InjectionDetector"]
