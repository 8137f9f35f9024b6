"""The `rxagent` command.

```text
rxagent [--debug] --version
rxagent demo [--json] [--fast] [--delay SECONDS]
rxagent run "prompt" [--agent MODULE:ATTR | --model PROVIDER:NAME [--tools MODULE:ATTR ...]
            [--sys-prompt TEXT] [--name NAME] [--context-window TOKENS]]
            [--store URL] [--session ID] [--json] [--live]
rxagent chat [the options of run]
rxagent serve MODULE:ATTR [--host 127.0.0.1] [--port 8000] [--store URL] [--api-key KEY ...]
rxagent sessions list [--name NAME] [--store URL] [--json]
rxagent sessions show ID [--name NAME] [--store URL] [--json]
rxagent sessions delete ID [--name NAME] [--store URL]
rxagent rag ingest PATH... [--kb PATH|URL] [--collection NAME] [--sparse-only]
rxagent rag search "query" [-k 5] [--json] [--kb PATH|URL] [--collection NAME] [--sparse-only]
rxagent bench [--quick] [--json FILE] [--n N] [--rounds R] [--conc-m M] [--conc-batches B]
              [--latency-ms MS] [--import-reps R]
```

`run` and `chat` talk to `--agent` (a `ReActAgent`, or a zero-argument factory of one), to an
agent built from `--model`, or, with neither, to the offline demo agent.

Errors are one line on stderr naming the fix (`--debug` adds the traceback). Exit codes: 0 ok,
1 failed, 2 usage, 130 interrupted. See `docs/cli.md`.
"""

from rxagent.cli._main import build_parser as build_parser
from rxagent.cli._main import main as main

__all__ = ["build_parser", "main"]
