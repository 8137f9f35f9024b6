"""The measured rates of docs/injection.md hold: a regression in detection or false alarms fails.

The figures are counts (caught of attacks, false alarms of benign texts); a change may improve
them, never worsen them.
"""

from __future__ import annotations

import pytest
from guard_rates import load, parts, rates  # type: ignore[import-not-found]

from rxagent.guards import DEFAULT_THRESHOLD, InjectionDetector
from rxagent.guards._split import split_rows

# (caught, attacks, false alarms, benign). The held-out floor is the one measured on untuned text
# in docs/injection.md; dev and fresh are tuning sets now (the weights are fitted on them with
# train_extra.jsonl), so their floors are today's counts: a regression there still fails.
DOCUMENTED = {
    "dev": (96, 112, 0, 71),
    "held_out": (33, 48, 0, 30),
    "fresh": (30, 30, 0, 40),
}


@pytest.mark.parametrize("part", ["dev", "held_out", "fresh"])
def test_rates_are_at_least_the_documented_ones(part: str):
    caught, attacks, false_alarms, benign = DOCUMENTED[part]
    measured = rates(parts()[part], InjectionDetector())["all"]
    assert (measured.attacks, measured.benign) == (attacks, benign)
    assert measured.caught >= caught
    assert measured.false_alarms <= false_alarms


# the other tuning sets: the texts written for this repository to tune on
# (tests/guards/data/train_extra.jsonl), and the two sets first kept blind, measured once and
# then tuned on (blind_a.jsonl, blind_b.jsonl)
TUNING_SETS = {
    "train_extra.jsonl": (684, 706, 6, 761),
    "blind_a.jsonl": (50, 50, 0, 50),
    "blind_b.jsonl": (50, 50, 0, 50),
}


# the blind set measured once on the shipped detector (docs/injection.md); never tuned on
BLIND = {"blind_c.jsonl": (44, 60, 3, 60)}


@pytest.mark.parametrize("name", sorted({**TUNING_SETS, **BLIND}))
def test_set_rates_are_at_least_the_documented_ones(name: str):
    caught, attacks, false_alarms, benign = {**TUNING_SETS, **BLIND}[name]
    measured = rates(load(name), InjectionDetector())["all"]
    assert (measured.attacks, measured.benign) == (attacks, benign)
    assert measured.caught >= caught
    assert measured.false_alarms <= false_alarms


def test_split_is_stratified_and_keeps_sources_together():
    rows = parts()
    public = rows["dev"] + rows["held_out"]
    assert len(public) == 261
    for label in ("injection", "benign"):
        total = sum(r["label"] == label for r in public)
        held = sum(r["label"] == label for r in rows["held_out"])
        assert 0.25 * total <= held <= 0.30 * total
    dev_sources = {r["source"] for r in rows["dev"]}
    assert not dev_sources & {r["source"] for r in rows["held_out"]}


def test_split_depends_on_label_and_source_only():
    rows = [{"label": "benign", "source": f"s{i}", "text": "x"} for i in range(20)]
    changed = [{**r, "text": "y"} for r in rows]
    assert split_rows(rows) == split_rows(changed)


def test_fresh_set_has_the_planned_shape():
    fresh = parts()["fresh"]
    assert sum(r["label"] == "benign" for r in fresh) == 40
    assert sum(r["label"] == "injection" for r in fresh) == 30


def test_default_threshold_is_the_even_odds_point():
    assert DEFAULT_THRESHOLD == 0.5
