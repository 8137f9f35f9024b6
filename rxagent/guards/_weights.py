"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7866
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1631,
    "persona": 3.7581,
    "extraction": 4.6448,
    "authority": 2.5063,
    "output_control": 2.5650,
    "evasion": 3.1458,
    "stealth": 2.5041,
    "pre_approval": 2.0917,
    "task_hijack": 1.9785,
    "ai_address": 1.4474,
    "addressed_directive": 2.9489,
    "action_demand": 1.1781,
    "secret_access": 1.9470,
    "secret_to_asker": 2.0424,
    "exfiltration": 1.3644,
    "addressed_action": 3.0080,
    "role_tag": 4.0583,
    "fake_turn": 1.8867,
    "delimiter": 3.0046,
    "hidden_instruction": 3.0822,
    "in_data": 1.5256,
    "markdown_exfiltration": 5.1053,
    "payload": 5.2643,
    "obfuscation": 0.9833,
    "mention": -2.8423,
    "discussion": -0.6395,
    "multiple": 2.2051,
}
FITTED_ON: Final = 1778
"""Tuning rows the weights were fitted on."""
