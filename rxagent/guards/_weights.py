"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7478
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.2348,
    "persona": 3.6440,
    "extraction": 4.6165,
    "authority": 2.4739,
    "output_control": 2.7601,
    "evasion": 3.2491,
    "stealth": 2.5161,
    "pre_approval": 1.9300,
    "task_hijack": 1.9190,
    "ai_address": 1.3524,
    "addressed_directive": 2.9184,
    "action_demand": 1.2235,
    "secret_access": 3.0696,
    "exfiltration": 1.2939,
    "addressed_action": 3.0110,
    "role_tag": 4.0615,
    "fake_turn": 1.9285,
    "delimiter": 3.0032,
    "hidden_instruction": 3.0123,
    "markdown_exfiltration": 5.1045,
    "payload": 5.2894,
    "obfuscation": 0.9563,
    "mention": -2.9108,
    "discussion": -0.7263,
    "multiple": 2.1814,
}
FITTED_ON: Final = 918
"""Tuning rows the weights were fitted on."""
