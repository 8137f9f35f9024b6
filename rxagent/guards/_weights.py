"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.8418
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.0338,
    "persona": 3.0807,
    "extraction": 4.0865,
    "authority": 2.5134,
    "output_control": 2.5450,
    "evasion": 3.0349,
    "stealth": 2.5007,
    "pre_approval": 1.9787,
    "task_hijack": 1.9849,
    "ai_address": 1.0463,
    "addressed_directive": 2.5623,
    "action_demand": 1.4639,
    "secret_access": 3.0172,
    "exfiltration": 1.4817,
    "addressed_action": 3.0012,
    "role_tag": 4.0076,
    "fake_turn": 1.9867,
    "delimiter": 3.0006,
    "hidden_instruction": 3.0005,
    "markdown_exfiltration": 5.0125,
    "payload": 5.0435,
    "obfuscation": 0.9910,
    "mention": -2.9861,
    "discussion": -0.9499,
    "multiple": 2.0230,
}
FITTED_ON: Final = 606
"""Tuning rows the weights were fitted on."""
