"""Retrieval quality of `KnowledgeBase` on short technical documents asked about in paraphrase.

Run: `python bench/rag_quality.py` (about half a minute on two cores: MiniLM embeds every
document; `--quick` for a smoke run on the first 12 documents, `--json FILE` for the results).

The set is `bench/data/rag_paraphrase.json`: 78 short documents on networking, databases,
version control, deployment, Python, algorithms, security and APIs, each with one question
written in other words than the document's (no shared key word where English allows it), to
measure what a question phrased the way a user thinks finds. It is the test set: nothing is
tuned on it. `--dev` runs `bench/data/rag_paraphrase_dev.json` instead, 62 documents on other
topics (operating systems, hardware, compilers, concurrency, distributed systems, storage,
machine learning, front end), written before any measurement, on which the fusion was chosen.
Every document is added to one local-mode collection (`:memory:`), and each question is searched
in three modes:

- **sparse**: BM25 alone (rxagent's term weights, Qdrant's IDF), the keyword baseline;
- **dense**: all-MiniLM-L6-v2 (`LocalEmbedder`) alone;
- **hybrid**: both, the dense ranking with a scaled BM25 bonus: what the default
  `KnowledgeBase()` does.

Figures: top-1 (the right document first), recall@5 (in the first five) and MRR (the mean of
1/rank, 0 when not in the first ten). The goal is hybrid top-1 >= 85% and recall@5 >= 95%.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rxagent.rag import Embedder, KnowledgeBase, LocalEmbedder, SearchMode

if TYPE_CHECKING:
    from collections.abc import Sequence

DATA = Path(__file__).parent / "data" / "rag_paraphrase.json"
DEV = Path(__file__).parent / "data" / "rag_paraphrase_dev.json"
MODES: tuple[SearchMode, ...] = ("sparse", "dense", "hybrid")
DEPTH = 10


def load_set(limit: int | None = None, path: Path = DATA) -> list[dict[str, str]]:
    """The documents with their questions (`id`, `text`, `question`)."""
    items: list[dict[str, str]] = json.loads(path.read_text("utf-8"))
    return items[:limit] if limit else items


class CachedEmbedder:
    """Remembers each text's vector: the questions are embedded once, in one batch, up front,
    so the three modes compare retrieval, not the time to embed a query three times."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimensions = inner.dimensions
        self._vectors: dict[str, list[float]] = {}

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, await self.inner.embed(missing), strict=True))
        return [self._vectors[t] for t in texts]


async def evaluate(items: list[dict[str, str]], embedder: Embedder | None = None) -> dict[str, Any]:
    """Each mode's top-1, recall@5 and MRR over the questions, with timings."""
    cached = CachedEmbedder(embedder or LocalEmbedder())
    async with KnowledgeBase(":memory:", embedder=cached) as kb:
        started = time.perf_counter()
        await kb.add_texts([d["text"] for d in items], ids=[d["id"] for d in items])
        ingest_s = time.perf_counter() - started
        await cached.embed([d["question"] for d in items])
        results: dict[str, Any] = {"documents": len(items), "ingest_s": round(ingest_s, 2)}
        for mode in MODES:
            ranks: list[int | None] = []
            misses: list[str] = []
            started = time.perf_counter()
            for item in items:
                hits = await kb.search(item["question"], k=DEPTH, mode=mode)
                ids = [hit.id for hit in hits]
                rank = ids.index(item["id"]) + 1 if item["id"] in ids else None
                ranks.append(rank)
                if rank != 1:
                    misses.append(f"{item['id']} (rank {rank})")
            elapsed = time.perf_counter() - started
            n = len(ranks)
            results[mode] = {
                "top1": sum(r == 1 for r in ranks) / n,
                "recall@5": sum(r is not None and r <= 5 for r in ranks) / n,
                "mrr": sum(1 / r for r in ranks if r is not None) / n,
                "search_ms": round(elapsed / n * 1_000, 2),  # the query's vector was cached
                "not_first": misses,
            }
        return results


def report(results: dict[str, Any]) -> str:
    """A Markdown table of the figures."""
    lines = [
        f"{results['documents']} documents, one paraphrased question each "
        f"(ingest {results['ingest_s']} s)",
        "",
        "| mode | top-1 | recall@5 | MRR | search (ms) |",
        "|---|---|---|---|---|",
    ]
    for mode in MODES:
        r = results[mode]
        lines.append(
            f"| {mode} | {r['top1']:.1%} | {r['recall@5']:.1%} | {r['mrr']:.3f} | "
            f"{r['search_ms']} |"
        )
    lines.append("")
    lines.append("hybrid, not first: " + (", ".join(results["hybrid"]["not_first"]) or "none"))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the first 12 documents only")
    parser.add_argument("--dev", action="store_true", help="the dev set (for tuning) instead")
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args(argv)
    items = load_set(12 if args.quick else None, DEV if args.dev else DATA)
    results = asyncio.run(evaluate(items))
    print(report(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
