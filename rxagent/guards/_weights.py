"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7764
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1702,
    "persona": 3.6809,
    "extraction": 4.6574,
    "authority": 2.5202,
    "output_control": 2.5508,
    "evasion": 3.1884,
    "stealth": 2.5041,
    "pre_approval": 2.0345,
    "task_hijack": 1.9374,
    "ai_address": 1.4258,
    "addressed_directive": 2.9404,
    "action_demand": 1.1548,
    "secret_access": 2.0569,
    "secret_to_asker": 2.0334,
    "exfiltration": 1.3699,
    "addressed_action": 3.0093,
    "role_tag": 4.0480,
    "fake_turn": 1.9227,
    "delimiter": 3.0057,
    "hidden_instruction": 3.0409,
    "in_data": 1.5336,
    "markdown_exfiltration": 5.1223,
    "payload": 5.2796,
    "obfuscation": 0.9738,
    "mention": -2.9001,
    "discussion": -0.6863,
    "multiple": 2.2077,
}
FITTED_ON: Final = 1324
"""Tuning rows the weights were fitted on."""
