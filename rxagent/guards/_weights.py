"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7850
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1645,
    "persona": 3.7456,
    "extraction": 4.6467,
    "authority": 2.5035,
    "output_control": 2.5653,
    "evasion": 3.1482,
    "stealth": 2.5038,
    "pre_approval": 2.0923,
    "task_hijack": 1.9769,
    "ai_address": 1.4447,
    "addressed_directive": 2.9467,
    "action_demand": 1.1764,
    "secret_access": 1.9433,
    "secret_to_asker": 2.0432,
    "exfiltration": 1.3786,
    "addressed_action": 3.0077,
    "role_tag": 4.0592,
    "fake_turn": 1.8832,
    "delimiter": 3.0047,
    "hidden_instruction": 3.0834,
    "in_data": 1.5260,
    "markdown_exfiltration": 5.1069,
    "payload": 5.2643,
    "obfuscation": 0.9824,
    "mention": -2.8399,
    "discussion": -0.6341,
    "multiple": 2.2044,
}
FITTED_ON: Final = 1736
"""Tuning rows the weights were fitted on."""
