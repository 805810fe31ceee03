"""The HTML pages each person may open, from the URL conf and the access rules of
tests/test_role_matrix.py: shared by the page tests in a real browser (tests/browser/) and the
test-client ones, so a new page is checked by both without being added anywhere."""

from __future__ import annotations

import re

from django.urls import reverse

from tests.test_role_matrix import ALLOWED, RULES, url_names

# Named GET URLs that answer with something other than a page: files, the API and its schema.
NOT_PAGES = {
    "project-export-download",
    "label-categories",
    "project-report-chart",
    "project-agreement-chart",
}
FILE = re.compile(r"\.[a-z]+$")  # a URL ending in a file name (triangulation.csv) is a download
# Pages that need a query to show something: the items carrying two given labels.
QUERIES = {"project-reports-items": "?a=C.1&b=C.2&level=theme"}


def pages_for(person: str, objects: dict, *, public: bool = False) -> list[str]:
    """The URLs of the HTML pages `person` may open (not the API under /api/, whose browsable
    pages are DRF's); with `public`, also the pages everyone may open (sign-in, join)."""
    urls = (
        reverse(name, kwargs=objects[RULES[name].kwargs]) + QUERIES.get(name, "")
        for name in sorted(url_names() & set(RULES))  # a URL without a rule fails elsewhere
        if RULES[name].method == "get"
        and name not in NOT_PAGES
        and person in ALLOWED[RULES[name].least]
        and (public or RULES[name].least != "public")
    )
    return [url for url in urls if not url.startswith("/api/") and not FILE.search(url)]
