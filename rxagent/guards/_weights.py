"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.8200
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.0307,
    "persona": 3.0966,
    "extraction": 4.1013,
    "authority": 2.5013,
    "output_control": 2.5306,
    "evasion": 3.0281,
    "stealth": 2.5024,
    "pre_approval": 1.9933,
    "task_hijack": 1.9928,
    "ai_address": 1.0785,
    "addressed_directive": 2.5800,
    "action_demand": 1.4661,
    "secret_access": 3.0113,
    "exfiltration": 1.4757,
    "addressed_action": 3.0012,
    "role_tag": 4.0074,
    "fake_turn": 1.9942,
    "delimiter": 3.0004,
    "hidden_instruction": 3.0020,
    "markdown_exfiltration": 5.0122,
    "payload": 5.0389,
    "obfuscation": 0.9956,
    "mention": -2.9907,
    "discussion": -0.9645,
    "multiple": 2.0332,
}
FITTED_ON: Final = 918
"""Tuning rows the weights were fitted on."""
