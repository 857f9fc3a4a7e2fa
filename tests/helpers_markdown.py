"""The docs' pages as the tests that run their command blocks read them: a page (README.md or a
page of docs/) and one of its ``## `` sections (up to the next ``## `` heading or the page's end)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from conftest import REPO_ROOT


def page(path: str) -> str:
    """The text of ``path`` (relative to the repository root)."""
    return (REPO_ROOT / path).read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    """The body of the section ``## <title>`` of ``text``; fails when there is none."""
    match = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert match, f"no section {title!r}"
    return match.group(1)


# A fenced block: its opening fence (indented as in a list item), language, body and closing fence.
_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.S | re.M)
_HEADING = re.compile(r"^## (.+)$", re.M)


@dataclass(frozen=True)
class Block:
    """A fenced block of a page: ``section`` is its ``## `` title ("" before the first heading),
    ``line`` the 1-based line of its opening fence, ``body`` its text with the fence's
    indentation removed."""

    page: str
    section: str
    line: int
    lang: str
    body: str


def blocks(path: str) -> list[Block]:
    """Every fenced block of the page ``path`` (relative to the repository root), in page order."""
    text = page(path)
    headings = [(m.start(), m.group(1)) for m in _HEADING.finditer(text)]
    found = []
    for match in _FENCE.finditer(text):
        title = next((t for start, t in reversed(headings) if start < match.start()), "")
        indent = len(match.group("indent"))
        body = "".join(
            line[indent:] if line[:indent].isspace() else line for line in match.group("body").splitlines(True)
        )
        line = text.count("\n", 0, match.start()) + 1
        found.append(Block(path, title, line, match.group("lang"), body))
    return found


def commands(body: str) -> list[str]:
    """The commands of a shell block as a terminal runs them: continuation lines (``\\`` at the
    end) joined, here-documents kept with their command, comments and blank lines left out."""
    out: list[str] = []
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        command = line
        while command.endswith("\\") and i < len(lines):
            command += "\n" + lines[i]
            i += 1
        heredoc = re.search(r"<<-?'?(\w+)'?", command)
        if heredoc:
            while i < len(lines):
                command += "\n" + lines[i]
                i += 1
                if lines[i - 1].strip() == heredoc.group(1):
                    break
        out.append(command)
    return out
