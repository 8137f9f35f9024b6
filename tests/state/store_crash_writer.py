"""The crash test's victim: saves numbered states in a tight loop until it is killed.

Usage: `python store_crash_writer.py STORE_URL OPTIONS_JSON AGENT SESSION PAD_UNITS`.
Each state encodes its sequence number (see `store_helpers.numbered_state`); save `n` (from 0)
expects version `n`, so the stored version is always `seq + 1`. After each save it prints the new
version, so the parent knows what was acknowledged.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))  # tests/: service_helpers
sys.path.insert(0, str(Path(__file__).parent))  # tests/state: store_helpers

from store_helpers import numbered_state  # type: ignore[import-not-found]

from rxagent.state import open_store


async def main(url: str, options: str, agent: str, session: str, pad_units: int) -> None:
    store = open_store(url, **json.loads(options))
    try:
        version = 0
        while True:
            version = await store.save(
                agent, session, numbered_state(version, pad_units), expected_version=version
            )
            sys.stdout.write(f"{version}\n")
            sys.stdout.flush()
    finally:
        await store.aclose()


if __name__ == "__main__":
    url, options, agent, session, pad_units = sys.argv[1:6]
    asyncio.run(main(url, options, agent, session, int(pad_units)))
