"""Files to text: HTML loses its tags and keeps its headings; other kinds are read as they are."""

from __future__ import annotations

from pathlib import Path

import pytest

from rxagent.errors import ConfigurationError
from rxagent.rag import html_to_text, read_document


def test_html_keeps_headings_blocks_and_entities():
    page = (
        "<html><head><title>T</title><style>p{}</style></head><body><h2>Tides &amp; moon</h2>"
        "<p>One</p><p>Two<br>three</p><ul><li>a</li></ul></body></html>"
    )
    assert html_to_text(page) == "## Tides & moon\n\nOne\n\nTwo\nthree\n\na"


def test_read_document_reads_known_kinds(tmp_path: Path):
    (tmp_path / "a.HTM").write_text("<h1>Hi</h1>")
    (tmp_path / "b.md").write_bytes(b"caf\xc3\xa9 \xff")
    assert read_document(tmp_path / "a.HTM") == "# Hi"
    assert read_document(str(tmp_path / "b.md")) == "café \ufffd"
    with pytest.raises(ConfigurationError, match=r"cannot read \.pdf"):
        read_document(tmp_path / "c.pdf")
    with pytest.raises(ConfigurationError, match="files without a suffix"):
        read_document(tmp_path / "Makefile")
