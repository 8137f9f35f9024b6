"""One process of the cross-process RateLimit test (run as a script by test_rate_limit_redis).

Usage: `python rate_limit_peer.py REDIS_URL PREFIX REQUESTS`

It connects (one check under another agent's name), prints `READY`, waits for a `GO` line on
stdin, then sends REQUESTS checks at once for user `ann` of agent `bot` and prints
`PASSED <n>`: how many of them the shared bucket let through.
"""

from __future__ import annotations

import asyncio
import sys

from rxagent import Principal
from rxagent.guards import GuardContext, RateLimit

RATE = "1/day"
BURST = 10


async def main(url: str, prefix: str, requests: int) -> None:
    stage = RateLimit(RATE, burst=BURST, backend=url, prefix=prefix)
    try:
        await stage.check("warm up", GuardContext("input", agent="warm-up"))
        print("READY", flush=True)
        go = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        if go.strip() != "GO":
            raise SystemExit(f"expected GO, got {go!r}")
        ann = GuardContext("input", principal=Principal(user_id="ann"), agent="bot")
        verdicts = await asyncio.gather(*(stage.check("hi", ann) for _ in range(requests)))
        print(f"PASSED {sum(not v.flagged for v in verdicts)}", flush=True)
    finally:
        await stage.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
