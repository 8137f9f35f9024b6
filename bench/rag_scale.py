"""Ingest throughput and search latency of `KnowledgeBase` in qdrant-client's local mode.

Run: `python bench/rag_scale.py` (10,000 and 100,000 chunks; the 100k sizes take minutes, most
of it in Qdrant's local engine), `--sizes 10000` for one size, `--quick` for a smoke run (500
chunks), `--json FILE` for the results.

Each size is measured in a fresh folder (`path=` local mode, persisted to its SQLite file; or
`:memory:` with `--memory`) for two configurations:

- **sparse**: BM25 only (`embedder=None`), the whole cost of rxagent plus Qdrant;
- **hybrid**: BM25 plus 384-dimension dense vectors from a stand-in embedder that returns
  seeded random unit vectors at no cost, so the figure is rxagent plus Qdrant, not the model.
  `LocalEmbedder`'s own speed is in `bench/embedders.py`; add its time per chunk to ingest.

Documents are synthetic prose of about 60 words from a 5,000-word vocabulary (Zipf-like word
frequencies), one chunk each. Figures: ingest chunks per second (`add_texts` in batches of
1,000), and the median and 95th-percentile latency of `search(k=5)` over 50 queries of three
to six words, after one warm-up query.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rxagent.rag import KnowledgeBase

if TYPE_CHECKING:
    from collections.abc import Sequence

VOCABULARY = 5_000
WORDS_PER_DOC = 60
QUERIES = 50
BATCH = 1_000


class RandomEmbedder:
    """Seeded random unit vectors: the dense half's storage and search cost, without a model."""

    name = "bench-random-384"
    dimensions = 384

    def __init__(self) -> None:
        self._random = random.Random(7)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = []
        for _ in texts:
            vector = [self._random.gauss(0.0, 1.0) for _ in range(self.dimensions)]
            norm = sum(x * x for x in vector) ** 0.5
            vectors.append([x / norm for x in vector])
        return vectors


def corpus(size: int, seed: int = 1) -> list[str]:
    """`size` documents of synthetic prose with Zipf-like word frequencies."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(VOCABULARY)]
    weights = [1 / (rank + 1) for rank in range(VOCABULARY)]
    return [" ".join(rng.choices(words, weights, k=WORDS_PER_DOC)) + "." for _ in range(size)]


def queries(seed: int = 2) -> list[str]:
    rng = random.Random(seed)
    return [
        " ".join(f"w{rng.randrange(20, 2_000)}" for _ in range(rng.randint(3, 6)))
        for _ in range(QUERIES)
    ]


async def measure(size: int, config: str, location: str) -> dict[str, Any]:
    """Ingest `size` chunks into a fresh folder (or `:memory:`), then time searches."""
    embedder = RandomEmbedder() if config == "hybrid" else None
    docs = corpus(size)
    async with KnowledgeBase(location, embedder=embedder) as kb:
        started = time.perf_counter()
        for start in range(0, size, BATCH):
            await kb.add_texts(docs[start : start + BATCH])
        ingest_s = time.perf_counter() - started
        chunks = await kb.count()
        await kb.search("w10 w20 w30")
        latencies: list[float] = []
        found = 0
        for query in queries():
            started = time.perf_counter()
            hits = await kb.search(query, k=5)
            latencies.append((time.perf_counter() - started) * 1_000)
            found += bool(hits)
    latencies.sort()
    return {
        "chunks": chunks,
        "ingest_s": round(ingest_s, 2),
        "chunks_per_s": round(chunks / ingest_s),
        "search_p50_ms": round(statistics.median(latencies), 2),
        "search_p95_ms": round(latencies[int(len(latencies) * 0.95) - 1], 2),
        "queries_with_hits": found,
    }


def main(argv: list[str] | None = None) -> int:
    """Measure each size and configuration and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--configs", nargs="+", default=["sparse", "hybrid"])
    parser.add_argument("--quick", action="store_true", help="500 chunks only")
    parser.add_argument(
        "--memory",
        action="store_true",
        help="`:memory:` instead of a folder: no SQLite write per point (what a folder costs)",
    )
    parser.add_argument("--json", type=Path, help="write the results to this file")
    args = parser.parse_args(argv)
    sizes = [500] if args.quick else args.sizes
    results: dict[str, Any] = {}
    where = ":memory:" if args.memory else "folder"
    print(f"| chunks | config ({where}) | ingest (chunks/s) | search p50 (ms) | search p95 (ms) |")
    print("|---|---|---|---|---|")
    for size in sizes:
        for config in args.configs:
            with tempfile.TemporaryDirectory() as folder:
                location = ":memory:" if args.memory else folder
                result = asyncio.run(measure(size, config, location))
            results[f"{size}/{config}"] = result
            print(
                f"| {result['chunks']:,} | {config} | {result['chunks_per_s']:,} | "
                f"{result['search_p50_ms']} | {result['search_p95_ms']} |",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
