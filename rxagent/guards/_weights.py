"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7752
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1676,
    "persona": 3.7773,
    "extraction": 4.6210,
    "authority": 2.5123,
    "output_control": 2.5422,
    "evasion": 3.1407,
    "stealth": 2.5158,
    "pre_approval": 2.1055,
    "task_hijack": 1.9887,
    "ai_address": 1.4407,
    "addressed_directive": 2.9519,
    "action_demand": 1.2550,
    "secret_access": 1.9166,
    "secret_to_asker": 2.0417,
    "exfiltration": 1.3717,
    "addressed_action": 3.0074,
    "role_tag": 4.0561,
    "fake_turn": 1.8950,
    "delimiter": 3.0044,
    "hidden_instruction": 3.0793,
    "in_data": 1.5250,
    "markdown_exfiltration": 5.1012,
    "payload": 5.2584,
    "obfuscation": 0.9876,
    "mention": -2.8466,
    "discussion": -0.6553,
    "multiple": 2.2059,
}
FITTED_ON: Final = 1878
"""Tuning rows the weights were fitted on."""
