"""The server's API, fuzzed from its own OpenAPI document by schemathesis (real server process).

The server (`serve_fuzzed.py`) serves an agent whose tool needs approval, a plain agent and a
team, with auth on. schemathesis reads `/openapi.json` and nothing else (no config file, no
hooks; it runs in an empty directory), runs every phase (examples, coverage, fuzzing, stateful
through the document's links) with every check, and must find nothing. The HAR report shows
that every operation of the document was reached: each answered a success at least once (or,
for an interrupt, the `409 not_running` its logic decides), not only 401/404/422.

`RXAGENT_FUZZ_EXAMPLES=200` runs a larger fuzz locally (the default keeps CI under a minute);
`RXAGENT_FUZZ_SEED` picks another seed.
"""

from __future__ import annotations

import base64
import collections
import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

SERVER = Path(__file__).with_name("serve_fuzzed.py")
KEY = "rk-fuzz-0123456789abcdef"
EXAMPLES = int(os.environ.get("RXAGENT_FUZZ_EXAMPLES", "8"))
SEED = int(os.environ.get("RXAGENT_FUZZ_SEED", "20261127"))
RUN_TIMEOUT_S = 90 + 6 * EXAMPLES
_SUCCESS = set(range(200, 300))
_DECIDED: set[int | str] = {*_SUCCESS, 409, "approval_not_found"}
REACHED: dict[str, set[int | str]] = {
    "interruptSession": {202, 409},
    "decideApproval": _DECIDED,
    "decideApprovalStream": _DECIDED,
}
"""What shows an operation's logic ran, where a success is not sure to come (default: a 2xx).

An interrupt needs a run in progress, which the fuzzer's runs (they end at once) never leave: its
`409 not_running` is decided after the session is found. An approval route's logic runs once the
session is found: a decision (2xx), a `409` (`ambiguous_session`, `session_busy`), or a `404`
whose code is `approval_not_found` (the session was found, and the approval was decided already,
by the other approval route the fuzzer followed a link to first)."""


pytestmark = pytest.mark.timeout(RUN_TIMEOUT_S + 60)


def _schemathesis() -> list[str]:
    try:
        import schemathesis
    except ImportError:
        if os.environ.get("CI") == "true":
            pytest.fail("schemathesis is not installed: pip install 'schemathesis>=4,<5'")
        pytest.skip("schemathesis is not installed (pip install 'schemathesis>=4,<5')")
    assert schemathesis.__version__.split(".")[0] == "4", schemathesis.__version__
    return [sys.executable, "-m", "schemathesis.cli"]


@pytest.fixture
def server_url(tmp_path: Path) -> Iterator[str]:
    """Start `serve_fuzzed.py` on a free port of 127.0.0.1; yield its URL; stop it."""
    env = {**os.environ, "RXAGENT_FUZZ_KEY": KEY, "PYTHONUNBUFFERED": "1"}
    with (tmp_path / "server.log").open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, str(SERVER)], stdout=subprocess.PIPE, stderr=log, env=env
        )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().decode()
        assert line.startswith("rxagent server listening on http://127.0.0.1:"), line
        yield line.rsplit(" ", 1)[1].strip()
    finally:
        assert process.stdout is not None
        process.stdout.close()
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _operations(document: dict[str, Any]) -> dict[str, tuple[str, re.Pattern[str], set[int]]]:
    """Each operation of the document: its method, a regex of its path, its documented codes."""
    found = {}
    for path, item in document["paths"].items():
        pattern = re.compile("^" + re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(path)) + "$")
        for method, operation in item.items():
            codes = {int(c) for c in operation["responses"]}
            found[operation["operationId"]] = (method.upper(), pattern, codes)
    return found


def _error_code(response: dict[str, Any]) -> str | None:
    """The `error.code` of a JSON error answer in the HAR report, or None."""
    text = response.get("content", {}).get("text") or ""
    if response.get("content", {}).get("encoding") == "base64":
        text = base64.b64decode(text).decode(errors="replace")
    try:
        body = json.loads(text)
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _answers(
    har: dict[str, Any], document: dict[str, Any]
) -> dict[str, collections.Counter[int | str]]:
    """The statuses (and error codes) each operation answered, from the HAR report (the longest
    path that matches wins: `.../{approval_id}:stream` over `.../{approval_id}`)."""
    operations = sorted(_operations(document).items(), key=lambda o: -len(o[1][1].pattern))
    answers: dict[str, collections.Counter[int | str]] = collections.defaultdict(
        collections.Counter
    )
    for entry in har["log"]["entries"]:
        method, path = entry["request"]["method"], urlsplit(entry["request"]["url"]).path
        for operation_id, (op_method, pattern, _) in operations:
            if op_method == method and pattern.match(path):
                response = entry["response"]
                answers[operation_id][response["status"]] += 1
                code = _error_code(response) if response["status"] >= 400 else None
                if code is not None:
                    answers[operation_id][code] += 1
                break
    return answers


def test_the_fuzzer_finds_nothing_and_reaches_every_operation(server_url: str, tmp_path: Path):
    command = _schemathesis()
    workdir = tmp_path / "empty"
    workdir.mkdir()
    reports = tmp_path / "reports"
    started = time.monotonic()
    run = subprocess.run(
        [
            *command,
            "run",
            f"{server_url}/openapi.json",
            "-H",
            f"Authorization: Bearer {KEY}",
            "--checks",
            "all",
            "--max-examples",
            str(EXAMPLES),
            "--seed",
            str(SEED),
            "--workers",
            "1",  # CPython 3.11 can fail to build an AST in two threads at once (gh-106905)
            "--request-timeout",
            "20",
            "--generation-database",
            "none",
            "--report",
            "json,har",
            "--report-json-path",
            str(reports / "run.json"),
            "--report-har-path",
            str(reports / "run.har"),
            "--no-color",
        ],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env={k: v for k, v in os.environ.items() if not k.startswith("SCHEMATHESIS_")},
    )
    elapsed = time.monotonic() - started
    output = run.stdout[-20_000:] + run.stderr[-5_000:]
    report = json.loads((reports / "run.json").read_text())
    assert (run.returncode, report["failures"], report["errors"]) == (0, [], []), output
    assert report["complete"], output
    assert report["stop_reason"] == "completed", output
    assert report["operations"]["tested"] == report["operations"]["total"], report["operations"]
    assert report["test_cases"]["generated"] > 0

    request = urllib.request.Request(
        f"{server_url}/openapi.json", headers={"Authorization": f"Bearer {KEY}"}
    )
    with urllib.request.urlopen(request, timeout=20) as answer:  # the document the fuzzer read
        document = json.loads(answer.read())
    answers = _answers(json.loads((reports / "run.har").read_text()), document)
    operations = _operations(document)
    assert len(operations) == report["operations"]["total"]
    for operation_id, (_, _, documented) in operations.items():
        got = answers[operation_id]
        reached = REACHED.get(operation_id, set(_SUCCESS))
        assert reached & set(got), f"{operation_id} never reached its logic: {dict(got)}"
        statuses = {status for status in got if isinstance(status, int)}
        assert statuses <= documented | {405}, f"{operation_id}: {dict(got)} vs {documented}"
        assert not any(status >= 500 for status in statuses), f"{operation_id}: {dict(got)}"
    decided = answers["decideApproval"][200] + answers["decideApprovalStream"][200]
    sys.stderr.write(
        f"schemathesis: {report['test_cases']['generated']} cases, approvals decided: {decided}, "
        f"{sum(sum(c.values()) for c in answers.values())} requests, "
        f"{len(operations)} operations reached, 0 failures, {elapsed:.1f} s\n"
    )
