"""Fit the injection detector's weights on the tuning rows; writes `_weights.py`.

Run: `python -m rxagent.guards._fit [--data tests/guards/data/public.jsonl]`.

The model is a logistic regression over the features of `_features.FEATURES`. It is fitted by
gradient descent on the **tuning** rows: the development split of `public.jsonl`
(`_split.split_rows`), `fresh.jsonl`, `train_extra.jsonl` (texts written for this repository
to cover the categories the public corpus lacks) and the two former blind sets `blind_a.jsonl`
and `blind_b.jsonl`, with:

- class-balanced loss: each label weighs half, so the fitted 0.5 point is where the evidence for
  both labels is equal, whatever the mix of the corpus;
- a Gaussian prior centred on `PRIOR` (hand-set weights, argued feature by feature below) instead
  of on zero, so a feature the development rows rarely show (tool actions, exfiltrating images)
  keeps the weight its design gives it rather than shrinking to nothing.

The held-out rows of `public.jsonl` are never read here. The fit is deterministic: the same rows
give the same weights.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Final

from rxagent.guards._features import FEATURES, extract
from rxagent.guards._split import split_rows

PRIOR_BIAS: Final = -3.0
"""With no evidence at all a text is benign with odds e^3 (about 95%)."""

PRIOR: Final[dict[str, float]] = {
    # an instruction to drop the model's instructions is injection on its own
    "override": 5.0,
    # a persona switch ("you are now", DAN) alone is also legitimate role-play and fiction:
    # meant to stay near the even-odds point alone, and to decide with any other evidence
    "persona": 3.0,
    # asking for the hidden prompt or a password is the goal of most attacks
    "extraction": 4.0,
    # claims of authority, demands on the reply's form, concealment and pre-approval are each
    # the mark of a text that speaks to the model on someone else's behalf, but each has an
    # ordinary use (a sysadmin's note, a quiz's "reply with", a surprise party, a CAB approval)
    "authority": 2.5,
    "output_control": 2.5,
    "evasion": 3.0,
    "stealth": 2.5,
    "pre_approval": 2.0,
    "task_hijack": 2.0,
    # addressing "the AI" is common in articles about AI; a demand right after it is not
    "ai_address": 1.0,
    "addressed_directive": 2.5,
    # a sensitive action, or data sent to an outside address: the user's own requests look the
    # same, so alone they stay under the even-odds point
    "action_demand": 1.5,
    # reading or sending a credential (a key file, environment variables, a token) is what many
    # attacks want, but runbooks and install docs tell their reader to do it too: alone, under the
    # even-odds point
    "secret_access": 2.0,
    # ... shown to whoever asks ("show me", "paste it here", "in your reply"): a runbook handling
    # keys for its reader does not say that
    "secret_to_asker": 2.0,
    "exfiltration": 1.5,
    # together with an address, concealment, a pre-approval or hidden text: the definition of an
    # indirect tool-action injection
    "addressed_action": 3.0,
    "role_tag": 4.0,
    "fake_turn": 2.0,
    "delimiter": 3.0,
    "hidden_instruction": 3.0,
    # an instruction after "here is an e-mail:", a mail header or markup: it speaks from inside
    # the data the model was handed
    "in_data": 1.5,
    "markdown_exfiltration": 5.0,
    # a decoded payload that itself reads as an injection
    "payload": 5.0,
    # zero-width characters and look-alikes support other evidence; alone they are no injection
    "obfuscation": 1.0,
    # the evidence is quoted in a text about attacks, stories or examples: a mention, not a use
    "mention": -3.0,
    "discussion": -1.0,
    "multiple": 2.0,
}
PRIOR_STRENGTH: Final = 0.005
"""Weight of the prior's squared distance against the mean balanced log-loss.

Small enough that a feature the tuning rows show often moves to what they say (persona phrases
rise, a bare action on data falls), large enough that a rare one stays near its prior and that
no weight grows without bound on rows a few features separate."""

DEFAULT_DATA: Final = Path("tests/guards/data/public.jsonl")
EXTRA_DATA: Final = ("fresh.jsonl", "train_extra.jsonl", "blind_a.jsonl", "blind_b.jsonl")
"""Tuning sets read from the folder of `--data`, whole."""
WEIGHTS_FILE: Final = Path(__file__).with_name("_weights.py")


def fit(
    rows: list[tuple[list[float], int]], steps: int = 3000, rate: float = 2.0
) -> tuple[float, list[float]]:
    """Fit bias and weights by gradient descent on balanced log-loss plus the prior.

    Args:
        rows: `(feature vector, label)` pairs, label 1 for injection.
        steps: Gradient steps.
        rate: Step size.

    Returns:
        The bias and the weights in `FEATURES` order.

    Example:
        ```python
        from rxagent.guards._features import FEATURES
        from rxagent.guards._fit import fit

        zeros = [0.0] * len(FEATURES)
        bias, weights = fit([(zeros, 0), (zeros, 0)], steps=10)
        assert bias < 0 and len(weights) == len(FEATURES)
        ```
    """
    prior = [PRIOR[name] for name in FEATURES]
    bias, weights = PRIOR_BIAS, list(prior)
    positives = sum(label for _, label in rows) or 1
    negatives = (len(rows) - positives) or 1
    for _ in range(steps):
        grad_b = PRIOR_STRENGTH * 2 * (bias - PRIOR_BIAS)
        grad = [PRIOR_STRENGTH * 2 * (w - p) for w, p in zip(weights, prior, strict=True)]
        for x, label in rows:
            z = bias + sum(w * v for w, v in zip(weights, x, strict=True))
            error = 1 / (1 + math.exp(-z)) - label
            share = 0.5 / (positives if label else negatives)
            grad_b += share * error
            for i, v in enumerate(x):
                if v:
                    grad[i] += share * error * v
        bias -= rate * grad_b
        weights = [w - rate * g for w, g in zip(weights, grad, strict=True)]
    return bias, weights


def main(argv: list[str] | None = None) -> int:
    """Fit on the development split of `--data` and the extra tuning sets; write `_weights.py`.

    Args:
        argv: Command-line arguments (default: `sys.argv[1:]`).

    Returns:
        The exit status.

    Example:
        ```python
        from rxagent.guards._fit import main

        assert callable(main)  # `python -m rxagent.guards._fit` rewrites the shipped weights
        ```
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--out", type=Path, default=WEIGHTS_FILE)
    args = parser.parse_args(argv)
    corpus = [json.loads(line) for line in args.data.read_text("utf-8").splitlines() if line]
    tuning = [row for row, part in zip(corpus, split_rows(corpus), strict=True) if part == "dev"]
    for name in EXTRA_DATA:
        path = args.data.with_name(name)
        if path.exists():
            tuning += [json.loads(line) for line in path.read_text("utf-8").splitlines() if line]
    rows = []
    for row in tuning:
        values = extract(row["text"]).values
        rows.append(([values[name] for name in FEATURES], int(row["label"] == "injection")))
    bias, weights = fit(rows)
    lines = [
        '"""Fitted weights of the injection detector (`python -m rxagent.guards._fit`)."""',
        "",
        "from typing import Final",
        "",
        f"BIAS: Final = {bias:.4f}",
        "WEIGHTS: Final[dict[str, float]] = {",
        *(f'    "{name}": {w:.4f},' for name, w in zip(FEATURES, weights, strict=True)),
        "}",
        f"FITTED_ON: Final = {len(rows)}",
        '"""Tuning rows the weights were fitted on."""',
        "",
    ]
    args.out.write_text("\n".join(lines), "utf-8")
    print(f"fitted on {len(rows)} tuning rows; wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
