"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7834
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1664,
    "persona": 3.7862,
    "extraction": 4.6539,
    "authority": 2.5105,
    "output_control": 2.5425,
    "evasion": 3.1428,
    "stealth": 2.5045,
    "pre_approval": 2.0904,
    "task_hijack": 1.9654,
    "ai_address": 1.4502,
    "addressed_directive": 2.9509,
    "action_demand": 1.2179,
    "secret_access": 1.9137,
    "secret_to_asker": 2.0426,
    "exfiltration": 1.3697,
    "addressed_action": 3.0076,
    "role_tag": 4.0572,
    "fake_turn": 1.8918,
    "delimiter": 3.0045,
    "hidden_instruction": 3.0805,
    "in_data": 1.5255,
    "markdown_exfiltration": 5.1031,
    "payload": 5.2627,
    "obfuscation": 0.9875,
    "mention": -2.8447,
    "discussion": -0.6518,
    "multiple": 2.2054,
}
FITTED_ON: Final = 1838
"""Tuning rows the weights were fitted on."""
