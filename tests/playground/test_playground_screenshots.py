"""The docs' screenshot script writes its five PNGs."""

from __future__ import annotations

from pathlib import Path

from playground_harness import browser_or_skip  # type: ignore[import-not-found]

browser_or_skip()

import screenshots  # type: ignore[import-not-found]  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


def test_the_screenshot_script_writes_five_pngs(tmp_path: Path) -> None:
    paths = screenshots.capture(tmp_path / "img")
    assert [p.name for p in paths] == list(screenshots.NAMES)
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(PNG), path
        assert len(data) > 20_000, path
        width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
        assert (width, height) == (1280, 800)
