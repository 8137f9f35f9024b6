"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.8356
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.0291,
    "persona": 3.0910,
    "extraction": 4.0908,
    "authority": 2.5012,
    "output_control": 2.5331,
    "evasion": 3.0256,
    "stealth": 2.5027,
    "pre_approval": 1.9927,
    "task_hijack": 1.9922,
    "ai_address": 1.0702,
    "addressed_directive": 2.5762,
    "action_demand": 1.4634,
    "secret_access": 3.0133,
    "exfiltration": 1.4791,
    "addressed_action": 3.0012,
    "role_tag": 4.0054,
    "fake_turn": 1.9907,
    "delimiter": 3.0004,
    "hidden_instruction": 3.0007,
    "markdown_exfiltration": 5.0122,
    "payload": 5.0402,
    "obfuscation": 0.9953,
    "mention": -2.9899,
    "discussion": -0.9615,
    "multiple": 2.0266,
}
FITTED_ON: Final = 847
"""Tuning rows the weights were fitted on."""
