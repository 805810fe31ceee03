"""Real-browser fixtures: one chromium per module, a fresh context (no cookies) per test.

Pages are served by pytest-django's `live_server` (a thread in this process, on the transactional
test database), so data the test creates is visible to the browser.
"""

from __future__ import annotations

import os

import pytest

CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
# Short enough that a broken page fails fast, long enough for a cold PostgreSQL query.
TIMEOUT_MS = 10_000


@pytest.fixture(scope="module")
def _launched():
    """The Playwright driver for the module and the browsers launched through it, keyed by path.

    `chromium_path` is function-scoped (it skips), so the browser is launched lazily from the
    function-scoped `browser` fixture and cached here.
    """
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an asyncio loop in this thread; Django would otherwise refuse ORM
    # calls made from fixtures while that loop exists. Only for browser modules, then restored.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    with sync_playwright() as pw:
        browsers: dict = {}
        yield pw, browsers
        for browser in browsers.values():
            browser.close()
    del os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"]


@pytest.fixture
def browser(_launched, chromium_path):
    pw, browsers = _launched
    if chromium_path not in browsers:
        browsers[chromium_path] = pw.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
    return browsers[chromium_path]


@pytest.fixture
def page(browser, live_server):
    """A page in a browser that asks for English (Accept-Language en-US), so tests that read
    English text do not depend on the machine's locale."""
    yield from _page(browser, live_server, locale="en-US")


@pytest.fixture
def zh_page(browser, live_server):
    """A page in a browser that asks for Simplified Chinese (Accept-Language zh-CN)."""
    yield from _page(browser, live_server, locale="zh-CN")


def _page(browser, live_server, *, locale: str, viewport: dict | None = None):
    context = browser.new_context(base_url=live_server.url, locale=locale, viewport=viewport)
    context.set_default_timeout(TIMEOUT_MS)
    yield context.new_page()
    context.close()
