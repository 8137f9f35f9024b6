"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7871
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1717,
    "persona": 3.7150,
    "extraction": 4.6580,
    "authority": 2.5018,
    "output_control": 2.5877,
    "evasion": 3.1956,
    "stealth": 2.5383,
    "pre_approval": 2.0344,
    "task_hijack": 1.9286,
    "ai_address": 1.4285,
    "addressed_directive": 2.9315,
    "action_demand": 1.1772,
    "secret_access": 2.9984,
    "exfiltration": 1.3525,
    "addressed_action": 3.0082,
    "role_tag": 3.9674,
    "fake_turn": 1.9134,
    "delimiter": 3.0061,
    "hidden_instruction": 3.0424,
    "in_data": 1.5342,
    "markdown_exfiltration": 5.1212,
    "payload": 5.2811,
    "obfuscation": 0.9701,
    "mention": -2.8978,
    "discussion": -0.6398,
    "multiple": 2.1911,
}
FITTED_ON: Final = 1231
"""Tuning rows the weights were fitted on."""
