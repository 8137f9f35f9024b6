"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7801
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1657,
    "persona": 3.6561,
    "extraction": 4.6510,
    "authority": 2.5294,
    "output_control": 2.5996,
    "evasion": 3.2254,
    "stealth": 2.5266,
    "pre_approval": 2.0340,
    "task_hijack": 1.9460,
    "ai_address": 1.3990,
    "addressed_directive": 2.8921,
    "action_demand": 1.2054,
    "secret_access": 2.9691,
    "exfiltration": 1.3094,
    "addressed_action": 3.0099,
    "role_tag": 3.9794,
    "fake_turn": 1.9172,
    "delimiter": 3.0028,
    "hidden_instruction": 3.0424,
    "in_data": 1.5393,
    "markdown_exfiltration": 5.1176,
    "payload": 5.2903,
    "obfuscation": 0.9645,
    "mention": -2.9041,
    "discussion": -0.7342,
    "multiple": 2.1830,
}
FITTED_ON: Final = 1049
"""Tuning rows the weights were fitted on."""
