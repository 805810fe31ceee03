"""The Chinese interface in a real chromium: a browser that asks for Chinese gets the labeling
page in Chinese with a Chinese issue from a Gitee tracker on it; the top bar's switch changes
the language (a CSRF-checked POST) and the choice outlives a reload."""

from __future__ import annotations

import json
import re

import pytest
from django.conf import settings
from django.urls import reverse
from playwright.sync_api import expect

from annotation.projects.demo import demo_items_load
from tests.browser.test_every_page import sideways_overflow, sign_in
from tests.browser.test_pages import scripts_ready

pytestmark = pytest.mark.browser

HAN = re.compile(r"[\u4e00-\u9fff]")


def test_chinese_interface_renders_a_chinese_issue_on_the_labeling_page(zh_page, personas, project):
    path = settings.DEMO_DATA_DIR / "issues-zh.json"
    demo_items_load(project=project, path=path)
    open_titles = {
        e["title"] for e in json.loads(path.read_text())["issues"] if e["stage"] == "open"
    }
    page = zh_page
    sign_in(page, "volunteer_a")
    page.goto(reverse("label-next", args=[project.slug]))

    html = page.locator("html")
    expect(html).to_have_attribute("lang", "zh-hans")
    title = page.locator("#issue-title")
    expect(title).to_have_text(HAN)
    shown = title.inner_text().strip()
    assert shown in open_titles
    expect(page.locator("#issue .crumbs")).to_contain_text("Gitee")
    expect(page.locator("#issue .issue-text")).to_contain_text(HAN)
    expect(title.locator("[lang]")).to_have_count(0)  # Chinese, like the page
    expect(page.locator("#submit-label")).to_contain_text("提交")
    expect(page.get_by_label("一句话摘要")).to_be_visible()
    scripts_ready(page)  # the script's own sentences come in the page's language too
    expect(page.locator("#picker-path")).to_contain_text("选择类型")
    page.set_viewport_size({"width": 390, "height": 844})
    assert sideways_overflow(page) <= 1

    # the switch in the top bar: English interface, the same issue, still in Chinese
    page.locator("header form.language button", has_text="English").click()
    expect(html).to_have_attribute("lang", "en")
    expect(page.locator("#submit-label")).to_contain_text("Submit")
    expect(title).to_have_text(shown)
    # ... which a screen reader now reads with a Chinese voice: it is marked (issue #32)
    expect(title.locator("[lang]")).to_have_attribute("lang", "zh-Hans")
    expect(page.locator("#issue-body > [lang]")).to_have_attribute("lang", "zh-Hans")
    page.reload()  # the browser still asks for Chinese; the chosen language wins
    expect(html).to_have_attribute("lang", "en")
    expect(page.locator("header form.language button")).to_have_text("简体中文")


def test_the_taxonomy_reads_in_chinese_and_is_searched_in_both_languages(
    zh_page, personas, project
):
    """The Chinese interface shows each category's Chinese name with the English beside; the
    taxonomy page's search and the labeling page's find categories by words of either language."""
    demo_items_load(project=project, path=settings.DEMO_DATA_DIR / "issues-zh.json")
    page = zh_page
    sign_in(page, "volunteer_a")
    page.goto(reverse("taxonomy-detail", args=[project.taxonomy_id]))
    memory = page.locator('#taxonomy-tree li.node[data-code="C.2"] > details > summary')
    expect(memory).to_contain_text("资源效率与内存管理 · Resource Efficiency and Memory Management")
    page.locator("#taxonomy-search").fill("超时")
    expect(page.locator('#taxonomy-tree li.node.match[data-code="C.3.iii"]')).to_be_visible()
    page.locator("#taxonomy-search").fill("memory management")  # the English name, beside
    expect(page.locator('#taxonomy-tree li.node.match[data-code="C.2"]')).to_be_visible()

    # the labeling page (themes): searching 显存 offers the memory theme, in Chinese
    page.goto(reverse("label-next", args=[project.slug]))
    scripts_ready(page)
    page.keyboard.press("/")
    page.keyboard.type("显存")
    option = page.locator('#picker li.opt[data-code="C.2"]')
    expect(option).to_be_visible()
    expect(option).to_contain_text("资源效率与内存管理")

    # and from the English interface, the Chinese words still find it
    page.locator("header form.language button", has_text="English").click()
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.goto(reverse("taxonomy-detail", args=[project.taxonomy_id]))
    page.locator("#taxonomy-search").fill("显存")
    expect(page.locator('#taxonomy-tree li.node.match[data-code="C.2"]')).to_be_visible()
    expect(memory).not_to_contain_text("资源效率")
