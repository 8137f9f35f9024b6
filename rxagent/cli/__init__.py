"""The `rxagent` command.

```text
rxagent [--debug] --version
rxagent demo [--json] [--fast] [--delay SECONDS]
rxagent run "prompt" --model PROVIDER:NAME [--tools MODULE:ATTR ...] [--sys-prompt TEXT]
            [--agent NAME] [--store URL] [--session ID] [--json] [--live]
rxagent chat --model PROVIDER:NAME [--tools MODULE:ATTR ...] [--store URL] [--session ID]
rxagent serve MODULE:ATTR [--host 127.0.0.1] [--port 8000] [--store URL] [--api-key KEY ...]
rxagent sessions list [--agent NAME] [--store URL] [--json]
rxagent sessions show ID [--agent NAME] [--store URL] [--json]
rxagent sessions delete ID [--agent NAME] [--store URL]
```

Errors are one line on stderr naming the fix (`--debug` adds the traceback). Exit codes: 0 ok,
1 failed, 2 usage, 130 interrupted. See `docs/cli.md`.
"""

from rxagent.cli._main import build_parser as build_parser
from rxagent.cli._main import main as main

__all__ = ["build_parser", "main"]
