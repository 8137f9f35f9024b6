"""The playground page against a server with API keys: it asks for the key and keeps it safe."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playground_harness import (  # type: ignore[import-not-found]
    CHROMIUM,
    WATCH_SCRIPT,
    PlaygroundServer,
    browser_or_skip,
    chromium_args,
)

from rxagent.demo import build_demo_agent

browser_or_skip()

from playwright.sync_api import expect, sync_playwright  # noqa: E402

KEY = "sk-test"


@pytest.fixture(scope="module")
def server() -> Iterator[PlaygroundServer]:
    with PlaygroundServer([build_demo_agent()], auth=[KEY]) as running:
        yield running


@pytest.fixture(scope="module")
def context() -> Iterator[Any]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=chromium_args())
        opened = browser.new_context(viewport={"width": 1280, "height": 800})
        opened.set_default_timeout(15_000)
        opened.add_init_script(WATCH_SCRIPT)
        yield opened
        browser.close()


def test_the_page_asks_for_the_key_refuses_a_wrong_one_and_keeps_it_out_of_storage(server, context):
    page = context.new_page()
    page.goto(f"{server.url}/playground?agent=demo&q=What+is+2+%2B+2%3F")
    expect(page.locator("#auth")).to_be_visible()
    expect(page.locator("#layout")).to_be_hidden()
    expect(page.locator("#key-error")).to_contain_text("needs an API key")

    page.locator("#api-key").fill("sk-wrong")
    page.locator("#key-form button[type=submit]").click()
    expect(page.locator("#key-error")).to_contain_text("The key was refused")
    expect(page.locator("#layout")).to_be_hidden()

    page.locator("#api-key").fill(KEY)
    page.locator("#api-key").press("Enter")
    expect(page.locator("#layout")).to_be_visible()
    expect(page.locator("#key-status")).to_have_text("API key set (in memory)")
    # the deep link's question runs once the key is accepted
    expect(page.locator('li.event[data-event-type="post_call"]')).to_have_count(1)
    expect(page.locator("#messages .msg-assistant.final")).to_contain_text("2 + 2 = 4")
    assert page.locator("#api-key").input_value() == ""
    assert page.evaluate("localStorage.length") == 0
    assert page.evaluate("sessionStorage.length") == 0
    assert page.evaluate("document.cookie") == ""
    assert context.cookies() == []
    assert page.evaluate("window.__problems") == []

    page.locator("#forget-key").click()
    expect(page.locator("#auth")).to_be_visible()
    expect(page.locator("#key-status")).to_have_text("no API key")
    page.locator("#refresh-sessions").evaluate("b => b.click()")  # a request without the key
    expect(page.locator("#auth")).to_be_visible()


def test_a_key_kept_for_the_tab_lives_in_session_storage_only(server, context):
    page = context.new_page()
    page.goto(f"{server.url}/playground")
    page.locator("#api-key").fill(KEY)
    page.locator("#remember-key").check()
    page.locator("#key-form button[type=submit]").click()
    expect(page.locator("#key-status")).to_have_text("API key set (kept for this tab)")
    assert page.evaluate("localStorage.length") == 0
    assert page.evaluate("Object.keys(sessionStorage)") == ["rxagent.playground.key"]
    page.reload()
    expect(page.locator("#layout")).to_be_visible()
    expect(page.locator("#agent")).to_have_value("demo")
    page.locator("#forget-key").click()
    assert page.evaluate("sessionStorage.length") == 0
    assert context.cookies() == []
