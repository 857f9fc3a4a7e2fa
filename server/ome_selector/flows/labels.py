"""Kubernetes label selectors (the ``-l`` of kubectl; k8s.io/apimachinery ``labels.Parse``), for
WatchSelections' ``label_selector``. Pure Python, no gRPC.

``parse(text, path)`` -> ``Selector``: requirements separated by ``,`` (a ``,`` inside ``( )``
separates set values), each one of ``k=v``, ``k==v``, ``k!=v``, ``k in (a,b)``, ``k notin (a,b)``,
``k`` (the label exists) or ``!k`` (it does not); an empty text selects everything. Keys are
label keys (``[prefix/]name``), values label values (bounds.py). A bad selector raises
``RequestError`` (INVALID_ARGUMENT, field ``path``) naming the requirement.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from ome_selector import validation as bounds
from ome_selector.domain import errors
from ome_selector.domain.errors import FieldViolation, RequestError

_SET = re.compile(r"(?P<key>[^\s=!(),]+)\s+(?P<op>in|notin)\s*\((?P<values>[^()]*)\)\Z")
_EQUALITY = re.compile(r"(?P<key>[^\s=!(),]+)\s*(?P<op>==|=|!=)\s*(?P<value>[^\s=!(),]*)\Z")
_EXISTS = re.compile(r"(?P<not>!?)\s*(?P<key>[^\s=!(),]+)\Z")
_VALUE = re.compile(r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?\Z")


@dataclass(frozen=True, slots=True)
class Requirement:
    """One requirement: ``op`` is ``in``, ``notin``, ``exists`` or ``!exists`` (``=``/``==``
    are ``in`` of one value, ``!=`` is ``notin`` of one)."""

    key: str
    op: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Kubernetes' semantics: ``notin`` and ``!=`` also match when the label is absent."""
        if self.op == "exists":
            return self.key in labels
        if self.op == "!exists":
            return self.key not in labels
        if self.op == "in":
            return self.key in labels and labels[self.key] in self.values
        return self.key not in labels or labels[self.key] not in self.values


@dataclass(frozen=True, slots=True)
class Selector:
    """All requirements must match; no requirement matches everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        """Whether ``labels`` satisfy every requirement."""
        return all(r.matches(labels) for r in self.requirements)


def _split(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts]


def _invalid(path: str, value: str, detail: str) -> RequestError:
    return RequestError.invalid([FieldViolation(path, errors.invalid_value(value, detail))])


def _requirement(part: str, path: str) -> Requirement:
    found = _SET.match(part)
    if found:
        values = [v.strip() for v in found["values"].split(",")]
        key, op = found["key"], found["op"]
    elif found := _EQUALITY.match(part):
        key, op, values = found["key"], "notin" if found["op"] == "!=" else "in", [found["value"]]
    elif found := _EXISTS.match(part):
        key, op, values = found["key"], "!exists" if found["not"] else "exists", []
    else:
        raise _invalid(path, part, "not a label selector requirement (k=v, k!=v, k in (a,b), k notin (a,b), k, !k)")
    problems = bounds.qualified_name(key, path)
    if problems:
        raise RequestError.invalid(problems)
    for value in values:
        if len(value) > bounds.MAX_LABEL_VALUE_LENGTH:
            raise RequestError.invalid(
                [FieldViolation(path, errors.too_long_value(value, bounds.MAX_LABEL_VALUE_LENGTH))]
            )
        if not _VALUE.match(value):
            raise _invalid(path, value, bounds.LABEL_VALUE_RULE)
    return Requirement(key, op, frozenset(values))


def parse(text: str, path: str = "label_selector") -> Selector:
    """The selector ``text`` (see the module docstring); raises ``RequestError`` naming ``path``."""
    if not text.strip():
        return Selector()
    parts = _split(text)
    if any(not part for part in parts):
        raise _invalid(path, text, "empty requirement")
    return Selector(tuple(_requirement(part, path) for part in parts))
