"""Issue text is untrusted input from the internet: XSS payloads in an issue's title, body and
comments render inert on the labeling page in the real browser — no script runs, no handler
fires, no `javascript:` link survives."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from ingest.models import Comment, Issue
from tests.annotation.labeling_helpers import items
from tests.browser.test_pages import scripts_ready, sign_in

pytestmark = pytest.mark.browser

# Each payload, if it ran, would set window.__xss.
PAYLOADS = [
    "<script>window.__xss = 'script tag'</script>",
    "<img src=x onerror=\"window.__xss='img onerror'\">",
    "<svg onload=\"window.__xss='svg onload'\"><circle r=1></circle></svg>",
    "[click me](javascript:window.__xss='markdown link')",
    "<a href=\"javascript:window.__xss='html link'\">html link</a>",
    "[data link](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<iframe src=\"javascript:window.__xss='iframe'\"></iframe>",
    "<details open ontoggle=\"window.__xss='details'\"><summary>s</summary></details>",
    "<style>body{display:none}</style>",
    "`<script>window.__xss='code span'</script>` shown as code",
]


def test_hostile_issue_text_renders_inert(page, personas, project):
    (item,) = items(project, 1)
    issue: Issue = item.issue
    issue.title = "<img src=x onerror=\"window.__xss='title'\"> Loss is NaN"
    issue.body = "\n\n".join(PAYLOADS)
    issue.save()
    Comment.objects.create(
        host=issue.host, comment_id=424242, issue=issue, body=PAYLOADS[1] + "\n\n" + PAYLOADS[3]
    )
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    sign_in(page, "volunteer_a")
    page.goto(f"/projects/{project.slug}/label/")
    scripts_ready(page)
    expect(page.locator("body")).to_contain_text("Loss is NaN")
    expect(page.locator("body")).to_contain_text("shown as code")
    page.locator("body").hover()  # give hover/focus handlers their chance
    for link in page.locator("a", has_text="link").all():
        href = link.get_attribute("href") or ""
        assert not href.lower().startswith(("javascript:", "data:")), href
    assert page.evaluate("window.__xss === undefined"), page.evaluate("window.__xss")
    assert dialogs == []
    # The one inline script element is the page's own texts, JSON data that never runs.
    assert page.locator("script:not([src]):not(#label-text)").count() == 0
    expect(page.locator("script#label-text")).to_have_attribute("type", "application/json")
    assert page.locator("[onerror], [onload], [ontoggle], iframe, svg circle").count() == 0
    expect(page.locator("body")).to_be_visible()  # the <style> did not hide the page
