"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7839
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1665,
    "persona": 3.7699,
    "extraction": 4.6522,
    "authority": 2.5067,
    "output_control": 2.5415,
    "evasion": 3.1437,
    "stealth": 2.5040,
    "pre_approval": 2.0902,
    "task_hijack": 1.9634,
    "ai_address": 1.4498,
    "addressed_directive": 2.9512,
    "action_demand": 1.2149,
    "secret_access": 1.9347,
    "secret_to_asker": 2.0422,
    "exfiltration": 1.3654,
    "addressed_action": 3.0077,
    "role_tag": 4.0575,
    "fake_turn": 1.8889,
    "delimiter": 3.0046,
    "hidden_instruction": 3.0809,
    "in_data": 1.5257,
    "markdown_exfiltration": 5.1037,
    "payload": 5.2642,
    "obfuscation": 0.9869,
    "mention": -2.8444,
    "discussion": -0.6454,
    "multiple": 2.2049,
}
FITTED_ON: Final = 1808
"""Tuning rows the weights were fitted on."""
