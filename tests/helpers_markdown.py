"""The docs' pages as the tests that run their command blocks read them: a page (README.md or a
page of docs/) and one of its ``## `` sections (up to the next ``## `` heading or the page's end)."""

from __future__ import annotations

import re

from conftest import REPO_ROOT


def page(path: str) -> str:
    """The text of ``path`` (relative to the repository root)."""
    return (REPO_ROOT / path).read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    """The body of the section ``## <title>`` of ``text``; fails when there is none."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section {title!r}"
    return match.group(1)
