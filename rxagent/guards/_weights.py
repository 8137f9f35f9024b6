"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7696
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1261,
    "persona": 3.7693,
    "extraction": 4.5814,
    "authority": 2.5185,
    "output_control": 2.5473,
    "evasion": 3.1387,
    "stealth": 2.5154,
    "pre_approval": 2.1041,
    "task_hijack": 1.9750,
    "ai_address": 1.4470,
    "addressed_directive": 2.9582,
    "action_demand": 1.2711,
    "secret_access": 1.9182,
    "secret_to_asker": 2.0411,
    "exfiltration": 1.3884,
    "addressed_action": 3.0072,
    "role_tag": 4.0553,
    "fake_turn": 1.8972,
    "delimiter": 3.0043,
    "hidden_instruction": 3.0782,
    "in_data": 1.5246,
    "markdown_exfiltration": 5.0996,
    "payload": 5.2547,
    "obfuscation": 0.9805,
    "mention": -2.8483,
    "discussion": -0.6583,
    "multiple": 2.1961,
}
FITTED_ON: Final = 1910
"""Tuning rows the weights were fitted on."""
