"""Shared helpers of the session-store tests: unique names, clean-up, a settable clock."""

from __future__ import annotations

from dataclasses import dataclass

from service_helpers import (  # type: ignore[import-not-found]
    PG_TABLES,
    drop_pg_tables,
    drop_redis_keys,
    unique_key_prefix,
    unique_table_prefix,
)

from rxagent import AgentState, Msg

__all__ = [
    "PG_TABLES",
    "FakeClock",
    "check_numbered",
    "drop_pg_tables",
    "drop_redis_keys",
    "numbered_state",
    "unique_key_prefix",
    "unique_table_prefix",
]


@dataclass
class FakeClock:
    """A settable clock for leases: call it for the time, move it with `advance`."""

    now: float = 1_000_000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def numbered_state(seq: int, pad_units: int = 10) -> AgentState:
    """A state that encodes its own sequence number everywhere, so a torn one is detectable."""
    pad = f"{seq}|" * pad_units
    return AgentState(
        memory=(
            Msg.user(f"message {seq}", id=f"u{seq}"),
            Msg.assistant(f"answer {seq}", id=f"a{seq}"),
        ),
        step=seq,
        call_counter=seq,
        extra={"seq": seq, "pad": pad, "pad_len": len(pad)},
    )


def check_numbered(state: AgentState) -> int:
    """Assert `state` is a whole `numbered_state(seq, ...)` and return its `seq`."""
    seq = state.extra["seq"]
    assert isinstance(seq, int)
    pad = state.extra["pad"]
    assert isinstance(pad, str)
    units = pad.count("|")
    assert pad == f"{seq}|" * units
    assert state.extra["pad_len"] == len(pad)
    assert state == numbered_state(seq, units)
    return seq
