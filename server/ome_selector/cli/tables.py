"""kubectl-style tables (``format_table``, ``--no-headers``) and the ways a long cell is kept
within its column: ``shorten_name`` (start...end#fingerprint, reference/kubectl-ome/runtime.md,
effective and tree) and ``cut``."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from typing import Iterator, Sequence

from ome_selector.cli.labels import _COLUMN_GAP

# ``--no-headers``: tables printed without their header line (``without_headers``).
_NO_HEADERS: contextvars.ContextVar[bool] = contextvars.ContextVar("no_headers", default=False)


@contextlib.contextmanager
def without_headers(enabled: bool = True) -> Iterator[None]:
    """While active (``enabled``), ``format_table`` leaves out the header line, as kubectl's
    ``--no-headers``; the columns are then as wide as their widest row cell."""
    token = _NO_HEADERS.set(enabled)
    try:
        yield
    finally:
        _NO_HEADERS.reset(token)


def headers_shown() -> bool:
    """False inside ``without_headers()``."""
    return not _NO_HEADERS.get()


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A kubectl-style table: columns padded to their widest cell, three spaces apart, one line
    per row (cells are never wrapped), no trailing spaces. Every row has ``len(headers)`` cells.
    Inside ``without_headers()``: the rows alone (``""`` for none)."""
    lines = [*rows] if _NO_HEADERS.get() else [headers, *rows]
    if not lines:
        return ""
    widths = [max(len(line[i]) for line in lines) for i in range(len(headers))]
    return "\n".join(
        _COLUMN_GAP.join([cell.ljust(width) for cell, width in zip(line[:-1], widths)] + [line[-1]]).rstrip()
        for line in lines
    )


def fingerprint(text: str) -> str:
    """``#`` and eight hex digits of SHA-256 of ``text``: tells shortened names apart (runtime.md,
    effective and history; not the runtime hash)."""
    return "#" + hashlib.sha256(text.encode()).hexdigest()[:8]


def shorten_name(text: str, width: int) -> str:
    """runtime.md (effective, tree): ``text`` when it has at most ``width`` characters; else its
    start and end with ``...`` between them, then ``fingerprint``, in ``width`` characters (at
    least two of ``text``), so different names stay distinct."""
    if len(text) <= width:
        return text
    mark = fingerprint(text)
    keep = max(2, width - len("...") - len(mark))
    head, tail = keep - keep // 2, keep // 2
    return f"{text[:head]}...{text[len(text) - tail :]}{mark}"


def cut(value: str, width: int) -> str:
    """The first ``width - 3`` characters and ``...`` when ``value`` is longer than ``width``."""
    return value if len(value) <= width else value[: width - 3] + "..."
