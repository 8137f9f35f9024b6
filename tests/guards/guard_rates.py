"""Detection and false-positive rates of `InjectionDetector` on the labelled sets, by group."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from rxagent.guards import InjectionDetector
from rxagent.guards._split import split_rows

DATA = Path(__file__).parent / "data"


@dataclass
class Rate:
    """Counts of one group: attacks caught out of attacks, benign flagged out of benign."""

    caught: int = 0
    attacks: int = 0
    false_alarms: int = 0
    benign: int = 0

    def add(self, injection: bool, flagged: bool) -> None:
        if injection:
            self.attacks += 1
            self.caught += flagged
        else:
            self.benign += 1
            self.false_alarms += flagged

    @property
    def detection(self) -> float | None:
        return self.caught / self.attacks if self.attacks else None

    @property
    def false_positive(self) -> float | None:
        return self.false_alarms / self.benign if self.benign else None


def load(name: str) -> list[dict[str, str]]:
    lines = (DATA / name).read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line]


def parts() -> dict[str, list[dict[str, str]]]:
    """The three measured sets: development, held-out, fresh."""
    public = load("public.jsonl")
    split = split_rows(public)
    return {
        "dev": [r for r, s in zip(public, split, strict=True) if s == "dev"],
        "held_out": [r for r, s in zip(public, split, strict=True) if s == "held_out"],
        "fresh": load("fresh.jsonl"),
    }


def rates(rows: list[dict[str, str]], detector: InjectionDetector) -> dict[str, Rate]:
    """Rates over all rows (key `"all"`), by `kind:` and by `lang:`."""
    table: dict[str, Rate] = defaultdict(Rate)
    for row in rows:
        flagged = detector.check(row["text"]).flagged
        injection = row["label"] == "injection"
        for key in ("all", f"kind:{row['kind']}", f"lang:{row['lang']}"):
            table[key].add(injection, flagged)
    return dict(table)
