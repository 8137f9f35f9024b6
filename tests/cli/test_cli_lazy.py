"""The `rxagent` command starts without loading what only one of its commands uses."""

from __future__ import annotations

import json
import subprocess
import sys

from rxagent.cli._rag import DEFAULT_KB


def test_the_command_line_does_not_import_the_knowledge_base() -> None:
    code = (
        "import json, sys; from rxagent.cli import build_parser; build_parser(); "
        "print(json.dumps(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = set(json.loads(out.stdout))
    assert not {m for m in loaded if m.startswith(("qdrant_client", "rxagent.rag"))}


def test_the_rag_commands_default_folder_is_the_knowledge_bases() -> None:
    from rxagent.rag import DEFAULT_PATH

    assert str(DEFAULT_PATH) == DEFAULT_KB
