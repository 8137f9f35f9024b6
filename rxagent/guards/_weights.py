"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7817
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1759,
    "persona": 3.6845,
    "extraction": 4.6560,
    "authority": 2.5214,
    "output_control": 2.5528,
    "evasion": 3.1953,
    "stealth": 2.5045,
    "pre_approval": 2.0359,
    "task_hijack": 1.9353,
    "ai_address": 1.4205,
    "addressed_directive": 2.9360,
    "action_demand": 1.1647,
    "secret_access": 2.0172,
    "secret_to_asker": 2.0360,
    "exfiltration": 1.3661,
    "addressed_action": 3.0085,
    "role_tag": 4.0335,
    "fake_turn": 1.9195,
    "delimiter": 3.0060,
    "hidden_instruction": 3.0423,
    "in_data": 1.5349,
    "markdown_exfiltration": 5.1210,
    "payload": 5.2800,
    "obfuscation": 0.9730,
    "mention": -2.8963,
    "discussion": -0.6756,
    "multiple": 2.2083,
}
FITTED_ON: Final = 1274
"""Tuning rows the weights were fitted on."""
