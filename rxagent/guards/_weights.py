"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7836
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1664,
    "persona": 3.7698,
    "extraction": 4.6520,
    "authority": 2.5067,
    "output_control": 2.5414,
    "evasion": 3.1437,
    "stealth": 2.5040,
    "pre_approval": 2.0902,
    "task_hijack": 1.9633,
    "ai_address": 1.4519,
    "addressed_directive": 2.9534,
    "action_demand": 1.2148,
    "secret_access": 1.9346,
    "secret_to_asker": 2.0421,
    "exfiltration": 1.3654,
    "addressed_action": 3.0077,
    "role_tag": 4.0575,
    "fake_turn": 1.8889,
    "delimiter": 3.0046,
    "hidden_instruction": 3.0809,
    "in_data": 1.5257,
    "markdown_exfiltration": 5.1037,
    "payload": 5.2641,
    "obfuscation": 0.9869,
    "mention": -2.8446,
    "discussion": -0.6457,
    "multiple": 2.2056,
}
FITTED_ON: Final = 1808
"""Tuning rows the weights were fitted on."""
