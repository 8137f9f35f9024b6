"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7709
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1273,
    "persona": 3.7699,
    "extraction": 4.5825,
    "authority": 2.5208,
    "output_control": 2.5483,
    "evasion": 3.1388,
    "stealth": 2.5159,
    "pre_approval": 2.1047,
    "task_hijack": 1.9623,
    "ai_address": 1.4482,
    "addressed_directive": 2.9589,
    "action_demand": 1.2746,
    "secret_access": 1.9207,
    "secret_to_asker": 2.0410,
    "exfiltration": 1.3820,
    "addressed_action": 3.0073,
    "role_tag": 4.0553,
    "fake_turn": 1.8982,
    "delimiter": 3.0043,
    "hidden_instruction": 3.0783,
    "in_data": 1.5246,
    "markdown_exfiltration": 5.0997,
    "payload": 5.2549,
    "obfuscation": 0.9809,
    "mention": -2.8481,
    "discussion": -0.6577,
    "multiple": 2.1969,
}
FITTED_ON: Final = 1920
"""Tuning rows the weights were fitted on."""
