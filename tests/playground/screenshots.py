"""The playground screenshots of the docs: `python tests/playground/screenshots.py [OUT_DIR]`.

Serves the test agents on 127.0.0.1 (no network, no API key), drives the page with Debian's
chromium at 1280x800 and writes five PNGs into OUT (default `docs/img`): `playground-run.png`,
`playground-diff.png`, `playground-approval.png`, `playground-interrupt.png` and
`playground-sessions.png`. Session ids are fixed, so the content is the same on every run but
for timings.
"""

from __future__ import annotations

import sys
import urllib.parse
from pathlib import Path
from typing import TYPE_CHECKING, Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from playground_harness import (  # type: ignore[import-not-found]
    CHROMIUM,
    PlaygroundServer,
    chromium_args,
    playground_agents,
)

from rxagent.demo import DEMO_QUESTION

if TYPE_CHECKING:
    from playwright.sync_api import ViewportSize

VIEWPORT: ViewportSize = {"width": 1280, "height": 800}
NAMES = (
    "playground-run.png",
    "playground-diff.png",
    "playground-approval.png",
    "playground-interrupt.png",
    "playground-sessions.png",
)
_TIMEOUT_MS = 20_000


def _open(page: Any, base: str, agent: str, q: str, session: str) -> None:
    query = urllib.parse.urlencode({"agent": agent, "q": q, "session": session})
    page.goto(f"{base}/playground?{query}")


def _finished(page: Any, count: int = 1) -> None:
    page.locator('li.event[data-event-type="post_call"]').nth(count - 1).wait_for()
    page.locator("#interrupt").wait_for(state="hidden")


def capture(out_dir: Path) -> list[Path]:
    """Write the five screenshots into `out_dir` and return their paths."""
    from playwright.sync_api import sync_playwright

    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / name for name in NAMES]
    run, diff, approval, interrupt, sessions = paths
    with PlaygroundServer(playground_agents(delay=0.05)) as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=chromium_args())
        try:
            context = browser.new_context(viewport=VIEWPORT, color_scheme="light")
            context.set_default_timeout(_TIMEOUT_MS)
            page = context.new_page()

            _open(page, server.url, "demo", DEMO_QUESTION, "docs-demo")
            _finished(page)
            page.locator('li.event[data-event-type="post_acting"]').first.locator(
                ".row-head"
            ).click()
            page.locator("#detail").evaluate("el => { el.hidden = true; }")
            page.screenshot(path=str(run))

            request = page.locator('li.event[data-event-type="pre_reasoning"]').first
            request.locator(".changes-summary").click()
            added = request.locator(".change .diff-add").first
            added.wait_for()
            added.evaluate("el => el.closest('.change').scrollIntoView({block: 'start'})")
            page.screenshot(path=str(diff))

            _open(page, server.url, "ops", "Deploy version 1.2", "docs-approval")
            _finished(page)
            page.locator(
                'li.event[data-event-type="approval_requested"]'
            ).scroll_into_view_if_needed()
            page.screenshot(path=str(approval))

            _open(page, server.url, "slow", DEMO_QUESTION, "docs-interrupt")
            page.locator('li.event[data-event-type="reasoning_chunk"]').nth(8).wait_for(
                state="attached"
            )
            page.locator("#interrupt").click()
            _finished(page)
            page.locator('li.event[data-event-type="interrupted"]').scroll_into_view_if_needed()
            page.screenshot(path=str(interrupt))

            _open(page, server.url, "demo", "What is 2 + 2?", "docs-sessions")
            _finished(page)
            page.locator("#input").fill("And what is 6 * 7?")
            page.locator("#input").press("Enter")
            _finished(page, 2)
            item = page.locator('#sessions li.session[data-session-id="docs-sessions"]')
            item.locator("button.open-session").click()
            page.locator("#session-view .state-json summary").click()
            page.locator(
                '#sessions li.session[data-session-id="docs-demo"] .delete-session'
            ).click()
            page.screenshot(path=str(sessions))
        finally:
            browser.close()
    return paths


def main(argv: list[str]) -> int:
    out_dir = Path(argv[1]) if len(argv) > 1 else Path("docs/img")
    for path in capture(out_dir):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
