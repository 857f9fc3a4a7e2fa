"""Model format and framework versions (ome-docs/reference/matching/model-version-matching.md).

A version is one to three dot-separated numbers with an optional lowercase ``v``; a pre-release
(after ``-``), build (after ``+``) or dev part (after ``.``) may follow the third number. Parsing
happens once, at ingestion; requests only compare parsed values.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"(?:0|[1-9][0-9]*)\Z")
_UINT64_MAX = 2**64 - 1
_UINT64_DIGITS = len(str(_UINT64_MAX))  # 20: longer numbers never fit, so are never converted
# The longest version accepted (ingest rejects longer ones with a violation; parse_version
# treats them as not parsing). Far above any real version, far below Python's 4,300-digit
# int-conversion limit.
MAX_VERSION_LENGTH = 128


@dataclass(frozen=True, slots=True)
class Version:
    """A parsed version. ``key`` orders versions: numbers, then pre, build and dev parts as
    string lists (so ``1.0.0-alpha`` > ``1.0.0``); prefix and precision do not take part."""

    key: tuple[int, int, int, tuple[str, ...], tuple[str, ...], tuple[str, ...]]
    prefix: str
    precision: int

    @property
    def unofficial(self) -> bool:
        """True when the version has a pre-release, build or dev part (a "suffix")."""
        return bool(self.key[3] or self.key[4] or self.key[5])


def _number(text: str) -> int | None:
    if len(text) > _UINT64_DIGITS or not _NUMBER.match(text):
        return None
    value = int(text)
    return value if value <= _UINT64_MAX else None


def _parts(text: str) -> tuple[str, ...] | None:
    parts = tuple(text.split("."))
    return None if any(p == "" for p in parts) else parts


def parse_version(text: str) -> Version | None:
    """Parse ``text``; ``None`` when it does not parse (such a version never matches).

    Rejected, per the docs' "Accepted version formats" table: leading zeros (``1.08.0``), a
    capital ``V``, a suffix before the third number (``1.2-beta``), an empty suffix (``1.0.0-``)
    and the empty string. A version longer than ``MAX_VERSION_LENGTH`` characters does not parse
    either; no input raises.
    """
    if len(text) > MAX_VERSION_LENGTH:
        return None
    pieces = text.split(".", 2)
    major_text = pieces[0]
    prefix = ""
    if major_text.startswith("v"):
        prefix, major_text = "v", major_text[1:]
    major = _number(major_text)
    minor = _number(pieces[1] if len(pieces) > 1 else "0")
    rest = pieces[2] if len(pieces) > 2 else "0"
    build: tuple[str, ...] | None = ()
    pre: tuple[str, ...] | None = ()
    dev: tuple[str, ...] | None = ()
    if "+" in rest:
        rest, tail = rest.split("+", 1)
        build = _parts(tail)
    if "-" in rest:
        rest, tail = rest.split("-", 1)
        pre = _parts(tail)
    if "." in rest:
        rest, tail = rest.split(".", 1)
        dev = _parts(tail)
    patch = _number(rest)
    if major is None or minor is None or patch is None or pre is None or build is None or dev is None:
        return None
    return Version((major, minor, patch, pre, build, dev), prefix, len(pieces))


def entry_accepts(entry: Version | None, operator: str | None, model: Version | None) -> bool:
    """Whether an entry's version and ``operator`` accept the model's version (both set).

    The entry's version is on the left: ``GreaterThan`` accepts models *below* it. A version with
    a suffix matches only an equal version; ``Equal`` (the default) ignores precision and the
    ``v``; any other operator needs equal precision and prefix first. See the "Operators" table
    of model-version-matching.md.
    """
    if entry is None or model is None:
        return False
    op = "Equal" if operator is None else operator
    if entry.unofficial or model.unofficial or op == "Equal":
        return entry.key == model.key
    if entry.precision != model.precision or entry.prefix != model.prefix:
        return False
    if op == "GreaterThan":
        return entry.key > model.key
    if op == "GreaterThanOrEqual":
        return entry.key >= model.key
    return entry.key == model.key
