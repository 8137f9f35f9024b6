"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.7881
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.1534,
    "persona": 3.6670,
    "extraction": 4.6582,
    "authority": 2.5317,
    "output_control": 2.5954,
    "evasion": 3.2138,
    "stealth": 2.5460,
    "pre_approval": 2.0337,
    "task_hijack": 1.9497,
    "ai_address": 1.3703,
    "addressed_directive": 2.8963,
    "action_demand": 1.1940,
    "secret_access": 2.9665,
    "exfiltration": 1.3537,
    "addressed_action": 3.0087,
    "role_tag": 3.9838,
    "fake_turn": 1.9041,
    "delimiter": 3.0026,
    "hidden_instruction": 3.0475,
    "in_data": 1.5374,
    "markdown_exfiltration": 5.1190,
    "payload": 5.2884,
    "obfuscation": 0.9667,
    "mention": -2.8814,
    "discussion": -0.7225,
    "multiple": 2.1841,
}
FITTED_ON: Final = 1115
"""Tuning rows the weights were fitted on."""
