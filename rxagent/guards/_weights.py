"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7745
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1243,
    "persona": 3.7752,
    "extraction": 4.5866,
    "authority": 2.5148,
    "output_control": 2.5224,
    "evasion": 3.1401,
    "stealth": 2.5161,
    "pre_approval": 2.1056,
    "task_hijack": 1.9760,
    "ai_address": 1.4467,
    "addressed_directive": 2.9573,
    "action_demand": 1.2594,
    "secret_access": 1.9197,
    "secret_to_asker": 2.0416,
    "exfiltration": 1.3743,
    "addressed_action": 3.0074,
    "role_tag": 4.0559,
    "fake_turn": 1.8968,
    "delimiter": 3.0044,
    "hidden_instruction": 3.0790,
    "in_data": 1.5255,
    "markdown_exfiltration": 5.1008,
    "payload": 5.2574,
    "obfuscation": 0.9809,
    "mention": -2.8468,
    "discussion": -0.6550,
    "multiple": 2.1913,
}
FITTED_ON: Final = 1898
"""Tuning rows the weights were fitted on."""
