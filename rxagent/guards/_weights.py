"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7810
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1574,
    "persona": 3.6986,
    "extraction": 4.6560,
    "authority": 2.5297,
    "output_control": 2.5909,
    "evasion": 3.2039,
    "stealth": 2.5423,
    "pre_approval": 2.0356,
    "task_hijack": 1.9513,
    "ai_address": 1.4001,
    "addressed_directive": 2.9097,
    "action_demand": 1.1862,
    "secret_access": 2.9677,
    "exfiltration": 1.3589,
    "addressed_action": 3.0084,
    "role_tag": 3.9842,
    "fake_turn": 1.9090,
    "delimiter": 3.0063,
    "hidden_instruction": 3.0449,
    "in_data": 1.5355,
    "markdown_exfiltration": 5.1195,
    "payload": 5.2856,
    "obfuscation": 0.9680,
    "mention": -2.8890,
    "discussion": -0.7130,
    "multiple": 2.1864,
}
FITTED_ON: Final = 1173
"""Tuning rows the weights were fitted on."""
