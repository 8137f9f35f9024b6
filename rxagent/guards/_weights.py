"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7676
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1656,
    "persona": 3.7743,
    "extraction": 4.6475,
    "authority": 2.5071,
    "output_control": 2.5402,
    "evasion": 3.1403,
    "stealth": 2.5331,
    "pre_approval": 2.1039,
    "task_hijack": 1.9973,
    "ai_address": 1.4450,
    "addressed_directive": 2.9469,
    "action_demand": 1.2475,
    "secret_access": 1.9106,
    "secret_to_asker": 2.0417,
    "exfiltration": 1.3670,
    "addressed_action": 3.0074,
    "role_tag": 4.0559,
    "fake_turn": 1.8930,
    "delimiter": 3.0044,
    "hidden_instruction": 3.0789,
    "in_data": 1.5249,
    "markdown_exfiltration": 5.1006,
    "payload": 5.2569,
    "obfuscation": 0.9868,
    "mention": -2.8473,
    "discussion": -0.6578,
    "multiple": 2.2018,
}
FITTED_ON: Final = 1860
"""Tuning rows the weights were fitted on."""
