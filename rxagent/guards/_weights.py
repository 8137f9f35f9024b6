"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""

from typing import Final

BIAS: Final = -2.5182
WEIGHTS: Final[dict[str, float]] = {
    "override": 5.0567,
    "persona": 2.6884,
    "extraction": 4.1321,
    "stealth": 2.5000,
    "authority": 2.6343,
    "output_control": 2.6115,
    "evasion": 3.0341,
    "ai_address": 1.5367,
    "action_demand": 1.5021,
    "addressed_action": 3.0000,
    "role_tag": 4.0165,
    "delimiter": 3.0010,
    "markdown_exfiltration": 5.0069,
    "payload": 5.0034,
    "obfuscation": 3.5239,
    "multiple": 2.0056,
}
FITTED_ON: Final = 183
"""Development rows the weights were fitted on."""
