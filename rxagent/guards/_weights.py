"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7834
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1609,
    "persona": 3.6677,
    "extraction": 4.6474,
    "authority": 2.4903,
    "output_control": 2.6054,
    "evasion": 3.2392,
    "stealth": 2.5163,
    "pre_approval": 2.0351,
    "task_hijack": 1.9423,
    "ai_address": 1.3592,
    "addressed_directive": 2.9392,
    "action_demand": 1.2029,
    "secret_access": 3.0467,
    "exfiltration": 1.2974,
    "addressed_action": 3.0099,
    "role_tag": 4.0593,
    "fake_turn": 1.9344,
    "delimiter": 3.0030,
    "hidden_instruction": 3.0122,
    "in_data": 1.5414,
    "markdown_exfiltration": 5.1098,
    "payload": 5.2949,
    "obfuscation": 0.9621,
    "mention": -2.8978,
    "discussion": -0.7193,
    "multiple": 2.2077,
}
FITTED_ON: Final = 980
"""Tuning rows the weights were fitted on."""
