"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.8093
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1810,
    "persona": 3.6937,
    "extraction": 4.6660,
    "authority": 2.5286,
    "output_control": 2.5551,
    "evasion": 3.1973,
    "stealth": 2.5057,
    "pre_approval": 2.0373,
    "task_hijack": 1.9376,
    "ai_address": 1.4300,
    "addressed_directive": 2.9436,
    "action_demand": 1.1720,
    "secret_access": 1.9657,
    "secret_to_asker": 1.9704,
    "exfiltration": 1.3713,
    "addressed_action": 3.0088,
    "role_tag": 3.9143,
    "fake_turn": 1.9195,
    "delimiter": 3.0061,
    "hidden_instruction": 3.0430,
    "in_data": 1.5359,
    "markdown_exfiltration": 5.1239,
    "payload": 5.2857,
    "obfuscation": 0.9743,
    "mention": -2.8956,
    "discussion": -0.6700,
    "multiple": 2.1910,
}
FITTED_ON: Final = 1274
"""Tuning rows the weights were fitted on."""
