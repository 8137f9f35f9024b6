"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7706
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1647,
    "persona": 3.6448,
    "extraction": 4.6429,
    "authority": 2.4868,
    "output_control": 2.6046,
    "evasion": 3.2381,
    "stealth": 2.5162,
    "pre_approval": 2.0345,
    "task_hijack": 1.9411,
    "ai_address": 1.3557,
    "addressed_directive": 2.9368,
    "action_demand": 1.1997,
    "secret_access": 3.0439,
    "exfiltration": 1.2949,
    "addressed_action": 3.0099,
    "role_tag": 4.0588,
    "fake_turn": 1.9341,
    "delimiter": 3.0030,
    "hidden_instruction": 3.0121,
    "in_data": 1.5410,
    "markdown_exfiltration": 5.1087,
    "payload": 5.2921,
    "obfuscation": 0.9613,
    "mention": -2.8981,
    "discussion": -0.7205,
    "multiple": 2.2062,
}
FITTED_ON: Final = 980
"""Tuning rows the weights were fitted on."""
