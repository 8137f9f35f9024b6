"""`GuardVerdict`, what one guard stage says about one text (defined with the events)."""

from __future__ import annotations

from rxagent.events import GuardVerdict as GuardVerdict

__all__ = ["GuardVerdict"]
