"""Speed of the embedders: `LocalEmbedder` (all-MiniLM-L6-v2 on numpy) and `OpenAIEmbedder`.

Run: `python bench/embedders.py` (a minute or two; `--quick` for a smoke run, `--json FILE` for
the results). Figures are texts per second, the median of several rounds (`time.perf_counter`),
after one warm-up call that loads the weights.

- **LocalEmbedder**, on two kinds of text: **sentences** (8 to 20 words, about 16 word pieces)
  and **chunks** (a paragraph of about 120 word pieces, the size a knowledge base stores), at
  batch sizes 8, 32 and 64, and with `threads=2` at batch 32; in texts per second, and per
  CPU-second of the process, which a busy machine changes less. Run it twice: as it is (BLAS
  uses its own threads) and with `OPENBLAS_NUM_THREADS=1` (one BLAS thread per batch, so the
  per-CPU-second figure is the speed of one core).
- **OpenAIEmbedder** against the fake OpenAI server on 127.0.0.1, 2,048 texts in batches of
  256: the client's own cost per text (JSON both ways, batching, ordering), since the fake
  answers without model work.

The first line checks the vectors, so a fast wrong encoder does not pass unnoticed: the cosine
of a paraphrase pair must beat that of an unrelated pair.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from rxagent.rag import LocalEmbedder, OpenAIEmbedder
from rxagent.testing.providers import FakeOpenAIServer

WORDS = (
    "the a vector search index query document retrieval model token embedding server request "
    "answer agent tool memory context window budget stream event hook run session cache store "
    "user system prompt result error retry batch latency throughput chunk section heading"
).split()


def texts(count: int, low: int, high: int, seed: int = 7) -> list[str]:
    """`count` texts of `low` to `high` words drawn from a fixed vocabulary (seeded)."""
    rng = random.Random(seed)
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))) + "."
        for _ in range(count)
    ]


def per_second(count: int, run: Any, rounds: int) -> tuple[float, float]:
    """Texts per second of wall time and per CPU-second of this process, medians over `rounds`
    runs of `run()`, which embeds `count` texts.

    On a busy machine the wall figure falls with the CPU share the process gets; the CPU figure
    does not (with one BLAS thread it is the speed of one core).
    """
    wall, cpu = [], []
    for _ in range(rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        asyncio.run(run())
        wall.append(count / (time.perf_counter() - start))
        cpu.append(count / max(time.process_time() - start_cpu, 1e-9))
    return statistics.median(wall), statistics.median(cpu)


def check_vectors() -> tuple[float, float]:
    """Cosines of a paraphrase pair and of an unrelated pair (unit vectors: dot products)."""
    query, close, far = asyncio.run(
        LocalEmbedder().embed(
            [
                "How do I reset my password?",
                "Steps to recover a forgotten password",
                "The train leaves at noon.",
            ]
        )
    )

    def dot(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    return dot(query, close), dot(query, far)


def bench_local(quick: bool) -> dict[str, dict[str, float]]:
    count, rounds = (16, 1) if quick else (256, 3)
    kinds = {"sentences": texts(count, 8, 20), "chunks": texts(count // 2, 90, 110)}
    results: dict[str, dict[str, float]] = {}
    for kind, items in kinds.items():
        settings: list[dict[str, Any]] = [{"batch_size": b} for b in (8, 32, 64)]
        settings.append({"batch_size": 32, "threads": 2})
        for options in settings:
            embedder = LocalEmbedder(**options)
            asyncio.run(embedder.embed(items[:4]))  # warm up: the weights, the thread pool
            rate, cpu = per_second(len(items), lambda e=embedder, i=items: e.embed(i), rounds)
            label = f"{kind} batch={options['batch_size']}"
            label += f" threads={options['threads']}" if "threads" in options else ""
            results[label] = {"texts_per_s": round(rate, 1), "texts_per_cpu_s": round(cpu, 1)}
            print(f"LocalEmbedder  {label:<28} {rate:9.1f} texts/s {cpu:9.1f} per CPU-second")
    return results


def bench_openai(quick: bool) -> dict[str, float]:
    count, rounds = (256, 1) if quick else (2048, 5)
    items = texts(count, 20, 60)

    async def run() -> float:
        async with FakeOpenAIServer(embedding_dimensions=384) as server:
            embedder = OpenAIEmbedder(base_url=server.base_url, api_key="k", batch_size=256)
            async with embedder:
                await embedder.embed(items[:8])  # warm up: the connection
                samples = []
                for _ in range(rounds):
                    start = time.perf_counter()
                    vectors = await embedder.embed(items)
                    samples.append(count / (time.perf_counter() - start))
                    assert len(vectors) == count
        return statistics.median(samples)

    rate = asyncio.run(run())
    print(f"OpenAIEmbedder fake server, batches of 256     {rate:9.1f} texts/s")
    return {"fake server batch=256": round(rate, 1)}


def main(argv: list[str] | None = None) -> int:
    """Check the vectors, time each embedder, print one line per setting."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run (few texts)")
    parser.add_argument("--json", metavar="FILE", help="also write the results to this file")
    args = parser.parse_args(argv)
    blas = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}, BLAS threads: {blas}")
    close, far = check_vectors()
    print(f"vectors: paraphrase cosine {close:.3f} > unrelated cosine {far:.3f}: {close > far}")
    results: dict[str, Any] = {
        "check": {"paraphrase": round(close, 4), "unrelated": round(far, 4), "ok": close > far},
        "local": bench_local(args.quick),
        "openai": bench_openai(args.quick),
    }
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2), "utf-8")
    return 0 if close > far else 1


if __name__ == "__main__":
    sys.exit(main())
