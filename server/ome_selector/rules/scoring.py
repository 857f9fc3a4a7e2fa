"""Entry scores and the explain columns (runtime-selection-scoring.md): format and framework
weights times the priority, int64 arithmetic as OME's Go code does."""

from __future__ import annotations

from ome_selector.domain.objects import Entry, Model, Spec
from ome_selector.domain.versions import entry_accepts
from ome_selector.rules.results import ModelFit


def _versions_fit(model: Spec, entry: Spec) -> bool:
    if model.version is not None and entry.version is not None:
        return entry_accepts(entry.parsed, entry.operator, model.parsed)
    return True


def entry_score(entry: Entry, model: Model, priority: int) -> int:
    """The lenient score of one entry (runtime-selection-scoring.md, "How the score is computed").

    Architecture, quantization and pipeline are ignored. ``(format weight + framework weight) x
    priority``, a weight of 0 counting as 10 (format) or 5 (framework); 0 when names or versions
    differ or a framework is on one side only.
    """
    weights = entry_weights(entry, model)
    return 0 if weights is None else weighted(weights, priority)


Weights = tuple[int | None, int | None]
"""(format weight, framework weight) of an entry that scores, a weight of 0 already counted as 10
(format) or 5 (framework); None for a side the score leaves out."""


def entry_weights(entry: Entry, model: Model) -> Weights | None:
    """The weights ``entry`` scores ``model`` with, or None when it scores 0 whatever its priority:
    names or versions differ, or a framework is on one side only (runtime-selection-scoring.md,
    "How the score is computed")."""
    ef, mf = entry.model_format, model.model_format
    fmt_ok = False
    if ef is not None:
        if ef.name != mf.name or not _versions_fit(mf, ef):
            return None
        fmt_ok = True
    ew, mw = entry.model_framework, model.model_framework
    fw_ok = False
    if ew is not None and mw is not None:
        if ew.name != mw.name or not _versions_fit(mw, ew):
            return None
        fw_ok = True
    if not ((fmt_ok or ef is None) and (fw_ok or (ew is None and mw is None))):
        return None
    return (
        (ef.weight or 10) if fmt_ok and ef is not None else None,
        (ew.weight or 5) if fw_ok and ew is not None else None,
    )


def weighted(weights: Weights, priority: int) -> int:
    """The score of an entry with ``weights`` and ``priority``: each weight times the priority,
    added in int64 arithmetic."""
    score = 0
    fmt, fw = weights
    if fmt is not None:
        score = int64(score + int64(fmt * priority))
    if fw is not None:
        score = int64(score + int64(fw * priority))
    return score


def int64(value: int) -> int:
    """``value`` wrapped to a signed 64-bit integer, as OME's Go arithmetic on int64 weights
    wraps silently (weights are any int64; their products can overflow)."""
    return (value + 2**63) % 2**64 - 2**63


def explain_columns(fit: ModelFit) -> tuple[int, int] | None:
    """PRIORITY and WEIGHT of an explain row: the first matching entry's priority (or 1) and its
    format + framework weights times the priority, leaving out weights of 0 or less."""
    entry = fit.match
    if entry is None:
        return None
    priority = entry.effective_priority
    weight = 0
    for spec in (entry.model_format, entry.model_framework):
        if spec is not None and spec.weight > 0:
            weight = int64(weight + int64(spec.weight * priority))
    return priority, weight


def named_entry(entries: tuple[Entry, ...], model: Model) -> tuple[int, int]:
    """(index, score) of the entry OME applies for a named runtime: the highest score with
    priority 1 over all entries, ``autoSelect`` ignored, the earlier entry on a tie; (-1, 0) when
    none scores above 0 (ome-selection-facts.md 3.17)."""
    best, index = 0, -1
    for entry in entries:
        score = entry_score(entry, model, 1)
        if score > best:
            best, index = score, entry.index
    return index, best
