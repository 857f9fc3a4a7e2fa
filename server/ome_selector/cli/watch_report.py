"""The ``what-if`` and ``watch`` lines (README, "Watch and what-if from the command line")."""

from __future__ import annotations

from typing import Sequence

from ome.selector.v1 import selector_pb2

from ome_selector.cli.cells import _one_line
from ome_selector.cli.labels import (
    _CHANGE_STEP,
    _COLUMN_GAP,
    _OBJECT_KIND,
    PREVIEW_HEADERS,
    PREVIEW_WIDE_HEADERS,
    WATCH_HEADERS,
    WATCH_LINE_WIDTH,
    WATCH_WIDE_HEADERS,
    WATCH_WIDE_WIDTHS,
    WATCH_WIDTHS,
)
from ome_selector.cli.tables import cut, format_table, shorten_name

# --- what-if and watch (README, "Watch and what-if from the command line") -----------------


def outcome_label(outcome: selector_pb2.SelectionOutcome | None) -> str:
    """A BEFORE / AFTER cell: the runtime's name; ``none (<reason>)`` without one (the
    ``RuntimeReady`` reason, else the first Warning event's, e.g. ``none (RuntimeNotFound)``);
    ``-`` for no outcome (the InferenceService is created or deleted)."""
    if outcome is None:
        return "-"
    if outcome.HasField("runtime"):
        return outcome.runtime.name
    reason = outcome.runtime_ready.reason if outcome.HasField("runtime_ready") else ""
    reason = reason or (outcome.warnings[0].reason if outcome.warnings else "")
    return f"none ({reason})" if reason else "none"


def _change_cells(change: selector_pb2.SelectionChange) -> tuple[str, str, str, str]:
    """INFERENCESERVICE NAMESPACE BEFORE AFTER of a change."""
    return (
        change.name,
        change.namespace,
        outcome_label(change.before if change.HasField("before") else None),
        outcome_label(change.after if change.HasField("after") else None),
    )


def _causes(change: selector_pb2.SelectionChange) -> str:
    return "; ".join(_one_line(cause.text) for cause in change.causes) or "-"


def format_preview(response: selector_pb2.PreviewCacheChangeResponse) -> str:
    """The ``what-if`` table: INFERENCESERVICE NAMESPACE BEFORE AFTER WHY, one row per cached
    InferenceService the change would move, in the response's order (namespace, then name);
    ``""`` when none would."""
    rows = [(*_change_cells(c), _one_line(c.reason.text) or "-") for c in response.changes]
    return format_table(PREVIEW_HEADERS, rows) if rows else ""


def format_preview_wide(response: selector_pb2.PreviewCacheChangeResponse) -> str:
    """``what-if -o wide``: the table plus CAUSE, the objects of the change behind each row."""
    rows = [(*_change_cells(c), _one_line(c.reason.text) or "-", _causes(c)) for c in response.changes]
    return format_table(PREVIEW_WIDE_HEADERS, rows) if rows else ""


def preview_notes(response: selector_pb2.PreviewCacheChangeResponse) -> list[str]:
    """``what-if``'s lines for stderr: how many cached InferenceServices would change, and each
    delete of an object the cache does not hold."""
    cached = _count(response.inference_services, "cached InferenceService")
    lines = [
        f"Note: {len(response.changes)} of {cached} would change ({response.reevaluated} re-evaluated) "
        f"at cache version {response.cache_version or '-'}; nothing was applied."
    ]
    for key in response.not_found:
        name = f"{key.namespace}/{key.name}" if key.namespace else key.name
        lines.append(f"Warning: {_OBJECT_KIND.get(key.kind, 'object')} {name} is not in the cache: nothing to delete.")
    return lines


def _watch_row(cells: Sequence[str], widths: Sequence[int] = WATCH_WIDE_WIDTHS) -> str:
    """One watch row: each cell but the last padded to its width in ``widths``."""
    padded = [cell.ljust(width) for cell, width in zip(cells[:-1], widths)]
    return _COLUMN_GAP.join([*padded, cells[-1]]).rstrip()


WATCH_HEADING = _watch_row(WATCH_HEADERS, WATCH_WIDTHS)
WATCH_WIDE_HEADING = _watch_row(WATCH_WIDE_HEADERS)


def _outcome_cell(outcome: selector_pb2.SelectionOutcome | None, width: int) -> str:
    """``outcome_label`` within ``width``: a runtime's name shortened as ``shorten_name`` does
    (distinct names stay distinct), a ``none (<reason>)`` cut."""
    label = outcome_label(outcome)
    return shorten_name(label, width) if outcome is not None and outcome.HasField("runtime") else cut(label, width)


def format_watch_event(event: selector_pb2.WatchSelectionsResponse) -> str:
    """One ``watch`` line within ``WATCH_LINE_WIDTH`` columns: a row (``WATCH_HEADERS``) for an
    InferenceService's current outcome (STEP ``(current)``) or a change (STEP: the ``ChangeStep``
    of its reason: Ranking, CheckFailed, NamedRuntime ...); names longer than their column
    shortened (``shorten_name``; a namespace cut); a ``# ...`` line, cut to the width, for the
    marker after the current outcomes, a write's stats and a resync. ``-o wide``:
    ``format_watch_event_wide``."""
    which = event.WhichOneof("event")
    if which == "current":
        o = event.current
        return _fitted_row(o.name, o.namespace, "-", _outcome_cell(o, WATCH_WIDTHS[3]), "(current)")
    if which == "change":
        c = event.change
        before = _outcome_cell(c.before if c.HasField("before") else None, WATCH_WIDTHS[2])
        after = _outcome_cell(c.after if c.HasField("after") else None, WATCH_WIDTHS[3])
        return _fitted_row(c.name, c.namespace, before, after, _CHANGE_STEP.get(c.reason.step, "-"))
    if which == "initial_events_end":
        end = event.initial_events_end
        line = (
            f"# initial state: {_count(end.inference_services, 'InferenceService')} at cache version "
            f"{end.cache_version or '-'} (generation {end.generation}); changes follow"
        )
        return cut(line, WATCH_LINE_WIDTH)
    return cut(format_watch_event_wide(event), WATCH_LINE_WIDTH)


def _fitted_row(name: str, namespace: str, before: str, after: str, step: str) -> str:
    return _watch_row(
        (shorten_name(name, WATCH_WIDTHS[0]), cut(namespace, WATCH_WIDTHS[1]), before, after, step), WATCH_WIDTHS
    )


def format_watch_event_wide(event: selector_pb2.WatchSelectionsResponse) -> str:
    """``watch -o wide``: a row (WATCH_WIDE_HEADERS) for an InferenceService's current outcome
    (WHY / CAUSE ``(current)``) or a change (its reason, then `` / `` and its causes; the cache
    version after the write), names in full; a ``# ...`` line for the marker after the current
    outcomes, a write's stats and a resync."""
    which = event.WhichOneof("event")
    if which == "current":
        o = event.current
        return _watch_row((o.name, o.namespace, "-", outcome_label(o), "(current)", "-"))
    if which == "change":
        c = event.change
        why = f"{_one_line(c.reason.text) or '-'} / {_causes(c)}"
        return _watch_row((*_change_cells(c), why, c.cache_version or "-"))
    if which == "initial_events_end":
        end = event.initial_events_end
        return (
            f"# initial state: {_count(end.inference_services, 'InferenceService')} at cache version "
            f"{end.cache_version or '-'} (generation {end.generation}); changes follow as cache writes come"
        )
    if which == "write":
        w = event.write
        return (
            f"# write {w.cache_version or '-'} (generation {w.generation}): {w.reevaluated} re-evaluated, "
            f"{w.changed} changed, {w.matched} in this watch; {_count(w.inference_services, 'InferenceService')} cached"
        )
    if which == "resync":
        return f"# resync: {_one_line(event.resync.reason)}"
    return ""


def _count(n: int, noun: str) -> str:
    """``1 InferenceService``, ``2 InferenceServices``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
