"""The fault matrix: its `faults` marker, its sizes, its stores and its table.

Every row runs in two sizes. `short` runs by default (a few runs, one kill point: the whole
short matrix stays well under 90 seconds); `full` is marked `faults`, and is left out of the run
(deselected) unless the marker is selected: `pytest -m faults tests/faults`. The rows of the
session are printed as one table at its end (and written as JSON to `$FAULTS_MATRIX_JSON` when
that is set).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fault_helpers import Matrix, StoreTarget  # type: ignore[import-not-found]
from service_helpers import (  # type: ignore[import-not-found]
    drop_pg_tables,
    drop_redis_keys,
    unique_key_prefix,
    unique_table_prefix,
)

_MATRIX = Matrix()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "faults: the full fault matrix (kill -9, store loss, SIGTERM, slow readers); "
        "select it with -m faults",
    )


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the full size of each row `faults`; without `-m faults`, leave it out of the run."""
    selected = "faults" in (config.getoption("markexpr") or "")
    here = Path(__file__).parent
    left_out: list[pytest.Item] = []
    for item in items:
        if here not in item.path.parents:
            continue  # a session hook: it sees every test, and marks only this folder's
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("size") == "full":
            item.add_marker("faults")
            if not selected:
                left_out.append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        dropped = {id(item) for item in left_out}
        items[:] = [item for item in items if id(item) not in dropped]


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _MATRIX.rows:
        return
    terminalreporter.section("fault matrix")
    terminalreporter.write_line(_MATRIX.table())
    out = os.environ.get("FAULTS_MATRIX_JSON")
    if out:
        Path(out).write_text(json.dumps([dataclasses.asdict(r) for r in _MATRIX.rows], indent=1))


@pytest.fixture(params=["short", "full"])
def size(request: pytest.FixtureRequest) -> str:
    """The size of a row: `short` (by default) or `full` (marked `faults`: with `-m faults`)."""
    return str(request.param)


@pytest.fixture
def matrix() -> Matrix:
    """The session's fault matrix, to add a row to."""
    return _MATRIX


@pytest.fixture(params=["sqlite", "postgres", "redis"])
async def fault_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreTarget]:
    """A store for the servers of one test, on its own file, tables or keys (dropped after)."""
    if request.param == "sqlite":
        yield StoreTarget("sqlite", f"sqlite:///{tmp_path / 'sessions.db'}", "")
        return
    if request.param == "postgres":
        dsn = request.getfixturevalue("postgres_dsn")
        prefix = unique_table_prefix()
        try:
            yield StoreTarget("postgres", dsn, prefix)
        finally:
            await drop_pg_tables(dsn, prefix)
        return
    url = request.getfixturevalue("redis_url")
    prefix = unique_key_prefix()
    try:
        yield StoreTarget("redis", url, prefix)
    finally:
        await drop_redis_keys(url, prefix)
