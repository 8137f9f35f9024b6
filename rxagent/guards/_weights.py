"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7314
WEIGHTS: Final[dict[str, float]] = {
    "override": 4.8604,
    "persona": 3.5986,
    "extraction": 4.5607,
    "authority": 2.4901,
    "output_control": 2.5195,
    "evasion": 3.1539,
    "stealth": 2.5334,
    "pre_approval": 2.0780,
    "task_hijack": 1.9310,
    "ai_address": 1.4429,
    "addressed_directive": 2.9014,
    "action_demand": 1.1446,
    "secret_access": 2.0684,
    "secret_to_asker": 2.0395,
    "exfiltration": 1.3817,
    "addressed_action": 3.0076,
    "role_tag": 4.0008,
    "fake_turn": 1.9374,
    "delimiter": 3.0048,
    "hidden_instruction": 3.0624,
    "in_data": 1.5276,
    "markdown_exfiltration": 5.1080,
    "payload": 5.2560,
    "obfuscation": 0.9771,
    "mention": -2.8681,
    "discussion": -0.6589,
    "multiple": 2.1857,
}
FITTED_ON: Final = 1624
"""Tuning rows the weights were fitted on."""
