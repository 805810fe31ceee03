"""The study's interviews from the browser (issue 27): a lead imports the codebook and the
background sheet (a background job), maps a code the taxonomy lacks, uploads a transcript that
two volunteers code blind (one by keyboard, one by mouse) and reads their agreement, makes a
one-time ranking link that the participant opens on a phone without an account, and reads the
triangulation, where the ranking counts."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Role
from taxonomy.interviews.models import CodedPassage, Participant, QuoteLink
from tests.browser.test_pages import collect_errors, sign_in
from tests.conftest import STUDY
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.browser

JOB_TIMEOUT_MS = 90_000
PHONE = {"width": 390, "height": 844}
TRANSCRIPT = (
    "Q: What went wrong when you trained?\n"
    "A: The loss went flat after the framework upgrade.\n"
    "Q: And the checkpoint?\n"
    "A: It would not load on the new cards.\n"
)


def code_as(browser, live_server, tmp_path, username: str, how: str) -> None:
    """A coder signs in, opens the transcript from the project page, joins its coders if the
    lead did not assign them, codes a passage and says they are done."""
    context = browser.new_context(base_url=live_server.url, locale="en-US")
    page = context.new_page()
    errors = collect_errors(page)
    sign_in(page, username)
    page.goto("/projects/interviews/")
    page.get_by_role("link", name="Interview transcripts").click()
    page.get_by_role("link", name="U1.txt").click()
    if page.get_by_role("button", name="Code this transcript").count():
        page.get_by_role("button", name="Code this transcript").click()
    page.wait_for_selector("html[data-ready]")
    if how == "keyboard":  # line 2, taken with Space; the category typed; Enter applies it
        page.locator("#line-1").focus()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("Space")
        expect(page.locator("#passage-shown")).to_contain_text("The loss went flat")
        page.keyboard.type("C.4")
        page.keyboard.press("Enter")
    else:  # words of line 4 selected with the mouse
        page.locator("#line-4").scroll_into_view_if_needed()
        box = page.locator("#line-4 .line-text").bounding_box()
        page.mouse.move(box["x"] + 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] - 2, box["y"] + box["height"] / 2, steps=4)
        page.mouse.up()
        expect(page.locator("#passage-shown")).to_contain_text("would not load")
        page.get_by_label("Category").fill("C.4")
        page.get_by_role("button", name="Apply the code").click()
    expect(page.get_by_text("Coded C.4.")).to_be_visible()
    page.get_by_role("button", name="My coding is complete").click()
    expect(page.locator("#coders")).to_contain_text(f"{username} · done")
    assert errors == []
    context.close()


def test_import_map_code_rank_on_a_phone_and_triangulate(
    page, browser, live_server, study_taxonomy, eager_tasks, settings, tmp_path
):
    settings.VAR_DIR = tmp_path
    lead = UserFactory(username="interview-lead")
    project = ProjectFactory(taxonomy=study_taxonomy, slug="interviews", screening_enabled=False)
    MembershipFactory(project=project, user=lead, role=Role.LEAD)
    for coder in ("coder-a", "coder-b"):
        MembershipFactory(project=project, user=UserFactory(username=coder))
    errors = collect_errors(page)
    sign_in(page, "interview-lead")

    page.goto(f"/projects/{project.slug}/")
    page.get_by_role("link", name="Interviews").first.click()
    page.get_by_role("link", name="Import").click()
    page.get_by_label("Codebook (CSV)").set_input_files(str(STUDY / "interviews" / "CodeBook.csv"))
    page.get_by_label("Interviewee background (.xlsx)").set_input_files(
        str(STUDY / "interviews" / "Interviewee Background.xlsx")
    )
    # the job runs in the request here (no worker): the answer may take longer than a click waits
    page.get_by_role("button", name="Upload and import").click(no_wait_after=True)
    expect(page.locator("#import-status")).to_have_text("Done", timeout=JOB_TIMEOUT_MS)
    expect(page.locator("#import-step")).to_contain_text("19 participants (11 users, 8 developers)")
    expect(page.locator("#unresolved-links")).to_contain_text("C.11")

    page.get_by_role("link", name="Map them to categories").click()
    page.get_by_label("Category C.11 stands for").fill("C.10")
    row = page.locator("#unresolved-codes tr", has_text="C.11")
    row.get_by_role("button", name="Map").click()
    expect(page.get_by_text("C.11 now stands for C.10 (2 links).")).to_be_visible()
    expect(row.get_by_label("Category C.11 stands for")).to_have_value("C.10")
    assert {link.node.code for link in QuoteLink.objects.filter(code="C.11")} == {"C.10"}

    # a transcript of U1, coded by two volunteers: one the lead assigns, one who volunteers
    page.get_by_role("link", name="Transcripts").click()
    transcript = tmp_path / "U1.txt"
    transcript.write_text(TRANSCRIPT)
    page.get_by_label("Transcript", exact=True).set_input_files(str(transcript))
    page.get_by_label("Participant").select_option(label="U1")
    page.get_by_role("button", name="Upload", exact=True).click()
    page.get_by_label("Member").fill("coder-a")
    page.get_by_role("button", name="Assign").click()
    expect(page.locator("#coders")).to_contain_text("coder-a · coding")
    code_as(browser, live_server, tmp_path, "coder-a", "keyboard")
    code_as(browser, live_server, tmp_path, "coder-b", "mouse")
    page.reload()
    # both coded C.4: a line 2, b line 4; of 4 lines they agree on 2
    expect(page.locator("#agreement-overall-1")).to_contain_text("observed agreement 0.50")
    expect(page.locator(".disagreements")).to_contain_text("coder-b only")
    page.get_by_role("button", name="Keep C.4 on line 4").click()  # the lead settles one
    expect(page.locator("#final-codes")).to_contain_text("1 final code")
    assert CodedPassage.objects.filter(node__code="C.4").count() == 2

    page.get_by_role("link", name="Participants").click()
    page.get_by_role("link", name="U1", exact=True).click()
    page.get_by_role("button", name="Make a one-time link").click()
    link = page.locator("#ranking-link a").get_attribute("href")

    phone = browser.new_context(viewport=PHONE, locale="en-US", is_mobile=True, has_touch=True)
    participant = phone.new_page()
    participant.goto(link)
    participant.get_by_label("Bug, place 1").select_option("C.9")
    participant.get_by_label("Bug, place 2").select_option("C.4")
    participant.get_by_role("button", name="Send my ranking").click()
    expect(participant.locator("#ranking-thanks")).to_be_visible()
    width = participant.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], "the ranking page scrolls sideways on a phone"
    participant.goto(link)
    expect(participant.locator("#ranking-refusal")).to_contain_text("used already")
    phone.close()

    page.goto(f"/projects/{project.slug}/interviews/triangulation/")
    table = page.locator("#triangulation-table")
    for code in study_taxonomy.nodes.filter(level="theme").values_list("code", flat=True):
        expect(table).to_contain_text(code)
    expect(page.get_by_role("img", name="Themes in issues and interviews")).to_be_visible()
    u1 = Participant.objects.get(project=project, code="U1")
    assert {r.node.code for r in u1.rankings.select_related("node")} == {"C.9", "C.4"}
    assert errors == []
