"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.8299
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.0320,
    "persona": 3.0918,
    "extraction": 4.0857,
    "authority": 2.5123,
    "output_control": 2.5447,
    "evasion": 3.0348,
    "stealth": 2.5007,
    "pre_approval": 1.9780,
    "task_hijack": 1.9847,
    "ai_address": 1.0444,
    "addressed_directive": 2.5586,
    "action_demand": 1.4634,
    "secret_access": 3.0165,
    "exfiltration": 1.4815,
    "addressed_action": 3.0011,
    "role_tag": 4.0076,
    "fake_turn": 1.9867,
    "delimiter": 3.0006,
    "hidden_instruction": 3.0005,
    "markdown_exfiltration": 5.0124,
    "payload": 5.0431,
    "obfuscation": 0.9909,
    "mention": -2.9861,
    "discussion": -0.9501,
    "multiple": 2.0219,
}
FITTED_ON: Final = 606
"""Tuning rows the weights were fitted on."""
