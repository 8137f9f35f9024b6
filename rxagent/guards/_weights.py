"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7695
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1639,
    "persona": 3.7084,
    "extraction": 4.6384,
    "authority": 2.5191,
    "output_control": 2.5548,
    "evasion": 3.1758,
    "stealth": 2.5021,
    "pre_approval": 2.0323,
    "task_hijack": 1.9210,
    "ai_address": 1.4456,
    "addressed_directive": 2.9549,
    "action_demand": 1.1805,
    "secret_access": 2.0404,
    "secret_to_asker": 2.0389,
    "exfiltration": 1.3967,
    "addressed_action": 3.0084,
    "role_tag": 4.0566,
    "fake_turn": 1.9282,
    "delimiter": 3.0053,
    "hidden_instruction": 3.0379,
    "in_data": 1.5310,
    "markdown_exfiltration": 5.1248,
    "payload": 5.2753,
    "obfuscation": 0.9749,
    "mention": -2.8473,
    "discussion": -0.6733,
    "multiple": 2.2204,
}
FITTED_ON: Final = 1424
"""Tuning rows the weights were fitted on."""
