"""`rxagent rag ingest` and `rxagent rag search` on a local-mode folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DOCS = {
    "guide/tides.md": "# Tides\n\nThe moon pulls the sea twice a day.\n",
    "guide/notes.rst": "Parking\n=======\n\nVisitors park in the north garage.\n",
    "guide/page.html": "<h1>Cars</h1><p>A car needs <b>fuel</b>.</p><script>evil()</script>",
    "guide/tool.py": "def fuel_level():\n    return 0.5\n",
    "guide/readme.txt": "Plain text about lighthouses.",
    "guide/.hidden/secret.md": "never read",
    "guide/image.png": "not text",
}


@pytest.fixture
def docs(workdir: Path) -> Path:
    for name, text in DOCS.items():
        path = workdir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return workdir / "guide"


def test_ingest_skips_unchanged_files_and_replaces_changed_ones(cli, docs: Path):
    first = cli("rag", "ingest", "guide", "--kb", "kb", "--sparse-only")
    assert first.code == 0, first.err
    assert "ingested 5 file(s), skipped 0 unchanged" in first.out
    again = cli("rag", "ingest", "guide", "--kb", "kb", "--sparse-only")
    assert "ingested 0 file(s), skipped 5 unchanged" in again.out
    assert "holds 5 chunks (+0)" in again.out
    (docs / "tides.md").write_text("# Tides\n\nNow about neap tides only.\n")
    changed = cli(
        "rag", "ingest", "guide/tides.md", "guide/tides.md", "--kb", "kb", "--sparse-only"
    )
    assert "ingested 1 file(s), skipped 0 unchanged" in changed.out
    found = cli("rag", "search", "neap", "--kb", "kb", "--sparse-only", "--json")
    (hit,) = json.loads(found.out)
    assert hit["id"] == "guide/tides.md"
    assert hit["metadata"]["kind"] == "md"
    assert len(hit["metadata"]["sha256"]) == 64


def test_search_prints_numbered_sources(cli, docs: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("RXAGENT_KB", "kb")
    assert cli("rag", "ingest", "guide", "--sparse-only").code == 0
    out = cli("rag", "search", "fuel", "-k", "2", "--sparse-only")
    assert out.code == 0
    assert "[1] guide/" in out.out
    assert "evil" not in out.out  # the script of the HTML page was dropped
    park = cli("rag", "search", "where do visitors park", "--sparse-only")
    assert "[1] guide/notes.rst (Parking)" in park.out
    none = cli("rag", "search", "zeppelin", "--sparse-only")
    assert none.code == 0
    assert "no matching chunks" in none.err


def test_mistakes_are_one_line_errors(cli, docs: Path):
    missing = cli("rag", "ingest", "nowhere", "--kb", "kb", "--sparse-only")
    assert missing.code == 2
    assert "nowhere: no such file or folder" in missing.err
    binary = cli("rag", "ingest", "guide/image.png", "--kb", "kb", "--sparse-only")
    assert binary.code == 2
    assert "cannot read .png" in binary.err
    assert cli("rag", "search", "x", "-k", "0", "--kb", "kb").code == 2
    assert cli("rag", "ingest", "guide/readme.txt", "--kb", "kb", "--sparse-only").code == 0
    other = cli("rag", "search", "x", "--kb", "kb", "--collection", "rxagent")
    if other.code:  # the default embedder exists here: the collection was made without one
        assert "made with embedder None" in other.err
