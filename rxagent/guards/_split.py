"""The deterministic development / held-out split of the labelled injection corpus.

Rows are grouped by `source` (texts of one source never straddle the split) and stratified by
label: within each label, sources are ordered by the SHA-256 of `label + source`, and the first
sources whose rows make up at most 30% of that label go to the held-out part. The rule depends
only on the rows' labels and sources, never on any detector's output.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

HELD_OUT_SHARE: Final = 0.30

Split = Literal["dev", "held_out"]


def _key(label: str, source: str) -> str:
    return hashlib.sha256(f"{label}\x00{source}".encode()).hexdigest()


def split_rows(rows: Sequence[Mapping[str, str]]) -> list[Split]:
    """Assign each row to `"dev"` or `"held_out"`, stratified by label and grouped by source.

    Args:
        rows: Rows with at least `label` and `source`.

    Returns:
        One split name per row, in the rows' order.

    Example:
        ```python
        from rxagent.guards._split import split_rows

        rows = [{"label": "benign", "source": f"s{i}"} for i in range(10)]
        assert split_rows(rows).count("held_out") == 3
        ```
    """
    by_label: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        by_label[row["label"]][row["source"]] += 1
    held_out: set[tuple[str, str]] = set()
    for label, sources in by_label.items():
        budget = int(HELD_OUT_SHARE * sum(sources.values()))
        taken = 0
        for source in sorted(sources, key=lambda s: _key(label, s)):
            if taken + sources[source] <= budget:
                held_out.add((label, source))
                taken += sources[source]
    return ["held_out" if (r["label"], r["source"]) in held_out else "dev" for r in rows]
