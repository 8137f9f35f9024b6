"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7790
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1712,
    "persona": 3.6933,
    "extraction": 4.6503,
    "authority": 2.5213,
    "output_control": 2.5575,
    "evasion": 3.1824,
    "stealth": 2.5042,
    "pre_approval": 2.0334,
    "task_hijack": 1.9196,
    "ai_address": 1.4372,
    "addressed_directive": 2.9451,
    "action_demand": 1.1652,
    "secret_access": 2.0567,
    "secret_to_asker": 2.0323,
    "exfiltration": 1.3744,
    "addressed_action": 3.0090,
    "role_tag": 4.0593,
    "fake_turn": 1.9256,
    "delimiter": 3.0055,
    "hidden_instruction": 3.0397,
    "in_data": 1.5323,
    "markdown_exfiltration": 5.1242,
    "payload": 5.2765,
    "obfuscation": 0.9748,
    "mention": -2.9032,
    "discussion": -0.6961,
    "multiple": 2.2100,
}
FITTED_ON: Final = 1374
"""Tuning rows the weights were fitted on."""
