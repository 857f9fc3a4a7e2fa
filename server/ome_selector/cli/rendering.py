"""How the ``ome-selector`` query commands print an answer: kubectl-style tables, one-line
reports, ``-o name`` lines, and the ``-o json`` / ``-o yaml`` documents.

Every function takes response protos (and, where the text names the object asked about, the
request) and returns text without a trailing newline; none prints, none raises for a
well-formed response. Cells are one line each (``_one_line`` folds white space); a missing
value is ``-``.

- ``format_explain``: ``kubectl ome runtime explain`` (reference/kubectl-ome/runtime.md,
  "explain", "Output fields"), plus SCORE.
- ``format_effective`` / ``format_effective_wide``: the Live view of ``kubectl ome runtime
  effective`` (runtime.md, "effective", "Output fields"), with the rows we add.
- ``format_history`` / ``format_history_wide``: ``kubectl ome runtime history``; ``sync_preview``
  / ``format_sync_result``: ``sync --dry-run client``'s preview (stderr) and ActionResult.
- ``format_selection``, ``format_reconcile``, ``format_admission``,
  ``format_runtime_validation``: ours (the docs have no such commands); the admission lines are
  kubectl's own (``<resource>/<name> admitted``, ``Error from server: admission webhook ...``).
- ``format_tree`` / ``format_tree_wide``: ``kubectl ome runtime tree`` (runtime.md, "tree",
  "Output fields"): the default output within 80 columns (``shorten_name``), wide with full names.
- ``*_name`` functions: kubectl's ``-o name`` (``<resource>.<group>/<name>``).
- ``format_json`` / ``format_yaml``: the responses in proto3 JSON names; ``format_json_line``:
  one stream event as one line of JSON.
- ``format_preview`` / ``format_preview_wide``, ``preview_notes``: ``what-if`` (PreviewCacheChange);
  ``format_watch_event``, ``WATCH_HEADING``: ``watch`` (WatchSelections), one line per event.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Callable, Sequence

import yaml
from google.protobuf import json_format
from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2, selector_pb2

from ome_selector.texts.messages import SYNC_PREVIEW_TITLE

ISVC_WEBHOOK = "inferenceservice.ome-webhook-server.validator"
EXPLAIN_HEADERS = ("RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "SCORE", "REASON")
CANDIDATE_HEADERS = ("RANK", "RUNTIME", "SCOPE", "SCORE", "ENTRY", "SIZE-DISTANCE", "TIE-BREAK")
EXCLUSION_HEADERS = ("RUNTIME", "SCOPE", "VERDICT", "REASON")
EFFECTIVE_HEADERS = ("SCOPE", "FIELD", "VALUE")
# runtime.md, effective -o wide: the page's columns, then ours (the accelerator and errors).
EFFECTIVE_WIDE_HEADERS = (
    "VIEW",
    "STATE",
    "REASON",
    "RUNTIME",
    "REVISION",
    "HASH",
    "COMPONENT",
    "MODE",
    "MODE-SOURCE",
    "PIN",
    "PIN-STATE",
    "SYNC",
    "STATUS",
    "DRIFT",
    "LIVE-RELATION",
    "ISSUES",
    "ACCELERATOR",
    "ACCELERATOR-SOURCE",
    "POLICY",
    "ERROR",
)
# runtime.md, history "Output fields" and -o wide.
HISTORY_HEADERS = ("WINDOW", "REVISION", "CREATED", "ROLES", "CHECK", "LIVE", "ISSUES")
HISTORY_WIDE_HEADERS = (
    "OBSERVATION",
    "COMPLETENESS",
    "PAGES",
    "REVISION",
    "CREATED",
    "HASH",
    "ROLES",
    "SOURCE",
    "CONSISTENCY",
    "RELATION",
    "REVISION-ISSUES",
    "REPORT-ISSUES",
)
FIELD_VALUE_HEADERS = ("FIELD", "VALUE")
EFFECTIVE_VALUE_WIDTH = 54  # runtime.md, effective: "keeps each value within 54 characters"
TABLE_WIDTH = 80  # runtime.md: the default tables of effective and history keep within 80 columns
SYNC_VALUE_WIDTH = 56  # runtime.md, sync: "The table cuts each value to 56 characters"
HISTORY_REVISION_WIDTH = 14
COMPONENT_HEADERS = ("COMPONENT", "MODE", "MODE-SOURCE", "ACCELERATOR", "ACCELERATOR-SOURCE", "POLICY", "ERROR")
CONDITION_HEADERS = ("TYPE", "STATUS", "REASON", "MESSAGE")
EVENT_HEADERS = ("TYPE", "REASON", "MESSAGE")
_COLUMN_GAP = "   "
PREVIEW_HEADERS = ("INFERENCESERVICE", "NAMESPACE", "BEFORE", "AFTER", "WHY")
PREVIEW_WIDE_HEADERS = (*PREVIEW_HEADERS, "CAUSE")
WATCH_HEADERS = ("INFERENCESERVICE", "NAMESPACE", "BEFORE", "AFTER", "WHY / CAUSE", "VERSION")
# A watch prints each row as its event comes, so its columns are padded to these widths (all but
# the last); a wider cell pushes the rest of its row, as `kubectl get -w` does.
WATCH_WIDTHS = (24, 12, 36, 36, 72)

# --- labels of the proto enums -----------------------------------------------------------------

_SCOPE = {
    selector_pb2.RUNTIME_KIND_SERVING_RUNTIME: "Namespaced",
    selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME: "Cluster",
}
_KIND = {
    selector_pb2.RUNTIME_KIND_SERVING_RUNTIME: "ServingRuntime",
    selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME: "ClusterServingRuntime",
}
_VERDICT = {
    selector_pb2.VERDICT_CANDIDATE: "Candidate",
    selector_pb2.VERDICT_EXCLUDED: "Excluded",
    selector_pb2.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE: "NotAutoSelectable",
}


def _labels(enum: Any, prefix: str, style: Callable[[list[str]], str], drop: str = "") -> dict[int, str]:
    """Labels of a proto enum's values from their names (``UNSPECIFIED`` left out): the name
    without ``prefix`` (and ``drop``), its words put together by ``style``."""
    return {
        value: style(name.removeprefix(prefix).removeprefix(drop).split("_"))
        for name, value in enum.items()
        if not name.endswith("_UNSPECIFIED")
    }


def _camel(words: list[str]) -> str:
    return "".join(w.capitalize() for w in words)


def _kebab(words: list[str]) -> str:
    return "-".join(w.lower() for w in words)


_TIE_BREAK = _labels(selector_pb2.TieBreak, "TIE_BREAK_", _kebab)  # scope, score, size-distance, name
_MODE = _labels(selector_pb2.SelectionMode, "SELECTION_MODE_", _kebab)  # auto, named
_COMPONENT = _labels(selector_pb2.Component, "COMPONENT_", _kebab)  # engine, decoder, router
# kubectl-ome runtime.md (effective): the mode sources as the docs name them (ServiceAnnotation ...).
_MODE_SOURCE = _labels(selector_pb2.ModeSource, "MODE_SOURCE_", _camel)
# Ours (the docs' effective report shows no accelerator): why a component gets its class
# (ComponentOverride, Selector, Policy, RuntimeListsNone, NotRequested, NoCandidate, Router).
_ACCELERATOR_SOURCE = _labels(selector_pb2.AcceleratorSource, "ACCELERATOR_SOURCE_", _camel, drop="NONE_")
_ADMISSION_PATH = _labels(selector_pb2.AdmissionPath, "ADMISSION_PATH_", _camel)  # NoEngine, AutoSelect ...
# runtime.md, effective: ManagedPin, Resolved, StatusOnly, Current, ReportedTrue, RevisionMismatch, Different ...
_PIN_MODE = _labels(selector_pb2.PinMode, "PIN_MODE_", _camel)
_PIN_STATE = _labels(selector_pb2.PinState, "PIN_STATE_", _camel)
_SYNC = _labels(selector_pb2.SyncState, "SYNC_STATE_", _camel)
_STATUS = _labels(selector_pb2.GenerationStatus, "GENERATION_STATUS_", _camel)
_DRIFT_STATE = _labels(selector_pb2.DriftState, "DRIFT_STATE_", _camel)
_DRIFT_CAUSE = _labels(selector_pb2.DriftCause, "DRIFT_CAUSE_", _camel)
_LIVE_RELATION = _labels(selector_pb2.LiveRelation, "LIVE_RELATION_", _camel)
# runtime.md, history: Complete, RetentionBounded, Active, Consistent, MatchesLive ... and their letters.
_OBSERVATION = _labels(selector_pb2.HistoryObservation, "HISTORY_OBSERVATION_", _camel)
_COMPLETENESS = _labels(selector_pb2.HistoryCompleteness, "HISTORY_COMPLETENESS_", _camel)
_ROLE = _labels(selector_pb2.RevisionRole, "REVISION_ROLE_", _camel)
_CONSISTENCY = _labels(selector_pb2.RevisionConsistency, "REVISION_CONSISTENCY_", _camel)
_RELATION = _labels(selector_pb2.RevisionRelation, "REVISION_RELATION_", _camel)
_OBS_LETTER = {
    selector_pb2.HISTORY_OBSERVATION_COMPLETE: "C",
    selector_pb2.HISTORY_OBSERVATION_PARTIAL: "P",
    selector_pb2.HISTORY_OBSERVATION_UNAVAILABLE: "U",
}
_BOUND_LETTER = {
    selector_pb2.HISTORY_COMPLETENESS_RETENTION_BOUNDED: "B",
    selector_pb2.HISTORY_COMPLETENESS_INCOMPLETE: "I",
}
_ROLE_LETTER = {
    selector_pb2.REVISION_ROLE_ACTIVE: "A",
    selector_pb2.REVISION_ROLE_REQUESTED: "Q",
    selector_pb2.REVISION_ROLE_REPORTED: "R",
    selector_pb2.REVISION_ROLE_HISTORY: "H",
}
_CHECK = {
    selector_pb2.REVISION_CONSISTENCY_CONSISTENT: "OK",
    selector_pb2.REVISION_CONSISTENCY_INCONSISTENT: "BAD",
    selector_pb2.REVISION_CONSISTENCY_UNKNOWN: "?",
}
_LIVE = {
    selector_pb2.REVISION_RELATION_MATCHES_LIVE: "MATCH",
    selector_pb2.REVISION_RELATION_DIFFERS_FROM_LIVE: "DIFF",
    selector_pb2.REVISION_RELATION_AMBIGUOUS_LIVE: "AMB",
    selector_pb2.REVISION_RELATION_UNKNOWN: "?",
}
_OBJECT_KIND = _labels(cache_pb2.ObjectKind, "OBJECT_KIND_", _camel)  # ServingRuntime, ClusterBaseModel ...


# --- tables and reports ------------------------------------------------------------------------


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A kubectl-style table: columns padded to their widest cell, three spaces apart, one line
    per row (cells are never wrapped), no trailing spaces. Every row has ``len(headers)`` cells."""
    widths = [
        max(len(headers[i]), *(len(row[i]) for row in rows)) if rows else len(headers[i]) for i in range(len(headers))
    ]
    lines = []
    for row in (headers, *rows):
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths)] + [row[-1]]
        lines.append(_COLUMN_GAP.join(cells).rstrip())
    return "\n".join(lines)


def format_explain(response: selector_pb2.ExplainRuntimesResponse) -> str:
    """The ``explain`` table, the columns of ``kubectl ome runtime explain`` (runtime.md,
    "explain", "Output fields") plus SCORE: RUNTIME SCOPE COMPATIBLE PRIORITY WEIGHT SCORE
    REASON, one row per runtime in the response's order; ``Model error: <text>`` instead when
    the model cannot be matched; ``""`` when there are no runtimes at all."""
    if response.model_error:
        return f"Model error: {response.model_error}"
    if not response.runtimes:
        return ""
    rows = []
    for row in response.runtimes:
        candidate = row.verdict == selector_pb2.VERDICT_CANDIDATE
        rows.append(
            (
                row.runtime.name,
                _SCOPE.get(row.runtime.kind, "-"),
                "Yes" if candidate else "No",
                str(row.priority) if row.HasField("priority") else "-",
                str(row.weight) if row.HasField("weight") else "-",
                str(row.score) if candidate else "-",
                _one_line(row.reason) or "-",
            )
        )
    return format_table(EXPLAIN_HEADERS, rows)


def explain_notes(response: selector_pb2.ExplainRuntimesResponse) -> list[str]:
    """``explain``'s lines for stderr: the response's notes (``Note: spec.runtime is explicit;
    automatic selection below is hypothetical.``, runtime.md "explain")."""
    return list(response.notes)


def format_selection(response: selector_pb2.SelectRuntimeResponse) -> str:
    """The ``select`` report: the selection (or why there is none), the model, warnings, then the
    ranked candidates and the exclusions with their primary reason."""
    lines = []
    if response.HasField("selection"):
        lines += _selection_lines(response.selection)
    elif response.runtime_error:
        lines.append(f"Runtime error: {response.runtime_error}")
    elif response.model_error:
        lines.append(f"Model error: {response.model_error}")
    else:
        lines.append(f"No runtime selected: {response.no_runtime_message or '-'}")
    if response.HasField("model"):
        model = response.model
        name = (
            f"{model.kind}/{model.namespace + '/' if model.namespace else ''}{model.name}"
            if model.name
            else "inline spec"
        )
        lines.append(f"Model: {name}" + (f" ({model.label})" if model.label else ""))
    if response.cache_version:
        lines.append(f"Cache version: {response.cache_version}")
    for warning in response.warnings:
        lines.append(f"Warning: {_one_line(warning)}")
    if response.HasField("exclusion_summary"):
        lines.append(f"Runtimes: {response.exclusion_summary.text}")
    if response.candidates:
        lines += ["", "Candidates:"]
        lines.append(
            format_table(
                CANDIDATE_HEADERS,
                [
                    (
                        str(c.rank),
                        c.runtime.name,
                        _SCOPE.get(c.runtime.kind, "-"),
                        str(c.score),
                        str(c.supported_model_format_index),
                        format_size(c.size_distance) if c.HasField("size_distance") else "-",
                        _TIE_BREAK.get(c.tie_break, "-"),
                    )
                    for c in response.candidates
                ],
            )
        )
    if response.exclusions:
        lines += ["", "Excluded:"]
        lines.append(
            format_table(
                EXCLUSION_HEADERS,
                [
                    (
                        e.runtime.name,
                        _SCOPE.get(e.runtime.kind, "-"),
                        _VERDICT.get(e.verdict, "-"),
                        _one_line(primary_reason(e.reasons)) or "-",
                    )
                    for e in response.exclusions
                ],
            )
        )
    return "\n".join(lines)


def _selection_lines(selection: selector_pb2.Selection) -> list[str]:
    """``Selected runtime:``, ``Selection:``, the inheritance chain and each failing check."""
    entry = selection.supported_model_format_index
    lines = [
        f"Selected runtime: {runtime_ref(selection.runtime)}",
        f"Selection: {_MODE.get(selection.mode, '-')}, score {selection.score}, "
        f"supportedModelFormats entry {entry if entry >= 0 else '-'}",
    ]
    if selection.inheritance_chain:
        lines.append(f"Inheritance chain: {' -> '.join(selection.inheritance_chain)}")
    for reason in selection.reasons:
        lines.append(f"Failing check: {_one_line(reason.message)}")
    return lines


def format_effective(response: selector_pb2.GetEffectiveRuntimeResponse) -> str:
    """The ``effective`` table (SCOPE FIELD VALUE; runtime.md, "effective", "Output fields"):
    Live rows, Active rows, Service rows, then ours; a row only when it has a value (STATE always).
    Every line keeps within 80 columns: values within 54 characters (fewer when our longer FIELD
    names widen that column; ``effective_value``).

    Live STATE, REASON, RUNTIME, HASH, a ``MODE (SOURCE)`` row per component, then ours per
    component: ``<COMPONENT>-ACCELERATOR`` (``class (source)``) and ``<COMPONENT>-ERROR``. Active
    STATE, REASON, RUNTIME, REVISION, HASH, the component rows. Service PIN, SYNC, STATUS, DRIFT,
    LIVE-RELATION and one ISSUE row per issue. Then ours, as ``explain --with-effective`` prints
    them: Source INHERITANCE, REASON and a ROOT-FIRST row per runtime of the chain. Values are
    kept within 54 characters (``effective_value``).
    """
    rows: list[tuple[str, str, str]] = [("Live", "STATE", response.state or "-")]
    if response.state != "Available" and response.reason:
        rows.append(("Live", "REASON", response.reason))
    if response.runtime:
        rows.append(("Live", "RUNTIME", response.runtime))
    if response.hash:
        rows.append(("Live", "HASH", response.hash))
    rows += [("Live", *cells) for cells in _mode_rows(response.components)]
    for c in response.components:
        if c.accelerator_source != selector_pb2.ACCELERATOR_SOURCE_UNSPECIFIED:  # unspecified: no runtime
            rows.append(
                (
                    "Live",
                    f"{_component(c).upper()}-ACCELERATOR",
                    f"{c.accelerator_class or '-'} ({_accelerator_source(c)})",
                )
            )
        error = _component_error(c)
        if error:
            rows.append(("Live", f"{_component(c).upper()}-ERROR", error))
    if response.HasField("active"):
        active = response.active
        rows.append(("Active", "STATE", active.state or "-"))
        for field, value in (
            ("REASON", active.reason if active.state != "Available" else ""),
            ("RUNTIME", active.runtime),
            ("REVISION", active.revision),
            ("HASH", active.hash),
        ):
            if value:
                rows.append(("Active", field, value))
        rows += [("Active", *cells) for cells in _mode_rows(active.components)]
    if response.HasField("service"):
        service = response.service
        rows += [
            ("Service", "PIN", _pin(service)),
            ("Service", "SYNC", _SYNC.get(service.sync, "-")),
            ("Service", "STATUS", _STATUS.get(service.status, "-")),
            ("Service", "DRIFT", _drift(service)),
            ("Service", "LIVE-RELATION", _LIVE_RELATION.get(service.live_relation, "-")),
        ]
        rows += [("Service", "ISSUE", issue.text) for issue in service.issues]
    if response.inheritance_error or not response.HasField("runtime_ref"):
        rows.append(("Source", "INHERITANCE", "Unavailable"))
        if response.inheritance_reason or response.reason:
            rows.append(("Source", "REASON", response.inheritance_reason or response.reason))
    else:
        rows.append(("Source", "INHERITANCE", "Observed"))
        for member in _chain_refs(response):
            rows.append(("Source", "ROOT-FIRST", member))
    named = {"RUNTIME", "REVISION", "ISSUE", "ROOT-FIRST"}
    # 54 characters keep the page's rows within 80 columns; our longer FIELD names
    # (ENGINE-ACCELERATOR ...) take theirs from the value, so every line stays within 80.
    prefix = max(len(r[0]) for r in rows) + max(len(r[1]) for r in rows) + 2 * len(_COLUMN_GAP)
    width = min(EFFECTIVE_VALUE_WIDTH, TABLE_WIDTH - prefix)
    return format_table(
        EFFECTIVE_HEADERS,
        [(scope, name, effective_value(_one_line(value), name in named, width)) for scope, name, value in rows],
    )


def _mode_rows(configs: Sequence[selector_pb2.ComponentConfiguration]) -> list[tuple[str, str]]:
    """ENGINE / DECODER / ROUTER rows: ``MODE (SOURCE)``."""
    return [(_component(c).upper(), f"{c.deployment_mode} ({_MODE_SOURCE.get(c.mode_source, '-')})") for c in configs]


def _pin(service: selector_pb2.EffectiveService) -> str:
    """PIN: ``<mode>/<state>``."""
    return f"{_PIN_MODE.get(service.pin_mode, '-')}/{_PIN_STATE.get(service.pin_state, '-')}"


def _drift(service: selector_pb2.EffectiveService) -> str:
    """DRIFT: ``<state>/<cause>``, or the state alone when there is no cause."""
    state = _DRIFT_STATE.get(service.drift_state, "-")
    cause = _DRIFT_CAUSE.get(service.drift_cause, "")
    return f"{state}/{cause}" if cause else state


def fingerprint(text: str) -> str:
    """``#`` and eight hex digits of SHA-256 of ``text``: tells shortened names apart (runtime.md,
    effective and history; not the runtime hash)."""
    return "#" + hashlib.sha256(text.encode()).hexdigest()[:8]


def effective_value(value: str, named: bool, width: int = EFFECTIVE_VALUE_WIDTH) -> str:
    """runtime.md, effective: a value within ``width`` characters. A long name (runtime,
    revision, issue) keeps its start and end with ``...`` between, then ``fingerprint``; another
    long value keeps its first ``width - 3`` characters and ends in ``...``."""
    if len(value) <= width:
        return value
    return shorten_name(value, width) if named else cut(value, width)


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


def format_effective_wide(response: selector_pb2.GetEffectiveRuntimeResponse) -> str:
    """``effective -o wide`` (runtime.md): one row per view and component under the page's
    columns (full kind and name; the Service fields repeated on each row), then ours; a view
    without components takes one row with ``-`` components."""
    service = response.service
    drift = _drift(service)
    service_cells = (
        _PIN_MODE.get(service.pin_mode, "-"),
        _PIN_STATE.get(service.pin_state, "-"),
        _SYNC.get(service.sync, "-"),
        _STATUS.get(service.status, "-"),
        drift,
        _LIVE_RELATION.get(service.live_relation, "-"),
        ",".join(issue.text for issue in service.issues) or "-",
    )
    active = response.active
    views = (
        (
            "Live",
            response.state,
            response.reason,
            response.runtime_ref if response.HasField("runtime_ref") else None,
            "",
            response.hash,
            response.components,
        ),
        (
            "Active",
            active.state,
            active.reason,
            active.runtime_ref if active.HasField("runtime_ref") else None,
            active.revision,
            active.hash,
            active.components,
        ),
    )
    rows = []
    for view, state, reason, ref, revision, hash_, configs in views:
        head = (
            view,
            state or "-",
            reason or "-",
            runtime_ref(ref) if ref is not None else "-",
            revision or "-",
            hash_ or "-",
        )
        for c in configs or (None,):
            cells = _component_cells(c) if c is not None else tuple("-" for _ in COMPONENT_HEADERS)
            rows.append((*head, *cells[:3], *service_cells, *cells[3:]))
    return format_table(EFFECTIVE_WIDE_HEADERS, rows)


def _issue_count(n: int) -> str:
    return "9+" if n > 9 else str(n)


def history_revision(name: str) -> str:
    """runtime.md, history REVISION: the name when it fits in 14 characters, else its first two
    characters, ``...`` and ``fingerprint`` of the full name."""
    return name if len(name) <= HISTORY_REVISION_WIDTH else f"{name[:2]}...{fingerprint(name)}"


def format_history(response: selector_pb2.GetRuntimeHistoryResponse) -> str:
    """The ``history`` table (runtime.md, history "Output fields"): WINDOW ``OBS/BOUND/SEEN/ASKED``,
    REVISION, CREATED (``YY-MM-DDTHH:MMZ``), ROLES (A Q R H), CHECK, LIVE, ISSUES
    (``R<n>/G<n>``); no revisions: one row with the window, ``-`` and the issues."""
    window = "/".join(
        (
            _OBS_LETTER.get(response.observation, "?"),
            _BOUND_LETTER.get(response.completeness, "?"),
            str(response.pages_seen),
            str(response.pages_asked),
        )
    )
    total = len(response.report_issues) + sum(len(r.issues) for r in response.revisions)
    rows = [
        (
            window,
            history_revision(r.name),
            f"{r.created[2:16]}Z" if r.created else "-",
            "".join(_ROLE_LETTER.get(role, "") for role in r.roles) or "-",
            _CHECK.get(r.consistency, "?"),
            _LIVE.get(r.relation, "?"),
            f"R{_issue_count(len(r.issues))}/G{_issue_count(total)}",
        )
        for r in response.revisions
    ]
    if not rows:
        rows = [(window, "-", "-", "-", "-", "-", f"R0/G{_issue_count(total)}")]
    return format_table(HISTORY_HEADERS, rows)


def format_history_wide(response: selector_pb2.GetRuntimeHistoryResponse) -> str:
    """``history -o wide`` (runtime.md): full names, times and hashes, and the issue codes."""
    head = (
        _OBSERVATION.get(response.observation, "-"),
        _COMPLETENESS.get(response.completeness, "-"),
        f"{response.pages_seen}/{response.pages_asked}",
    )
    report = ",".join(i.text for i in response.report_issues) or "-"
    rows: list[tuple[str, ...]] = [
        (
            *head,
            r.name,
            r.created or "-",
            r.hash or "-",
            ",".join(_ROLE.get(role, "-") for role in r.roles) or "-",
            runtime_ref(r.source),
            _CONSISTENCY.get(r.consistency, "-"),
            _RELATION.get(r.relation, "-"),
            ",".join(i.text for i in r.issues) or "-",
            report,
        )
        for r in response.revisions
    ]
    if not rows:
        rows = [(*head, *("-" for _ in range(8)), report)]
    return format_table(HISTORY_WIDE_HEADERS, rows)


def sync_preview(response: selector_pb2.PlanRuntimeSyncResponse) -> list[str]:
    """``sync``'s stderr: the refusal as ``error: <message>``, else the preview (runtime.md,
    sync "How the action runs"): its title, the FIELD VALUE rows, the warnings."""
    if response.refusal_message:
        return [f"error: {response.refusal_message}"]
    table = format_table(FIELD_VALUE_HEADERS, [(f.field, _one_line(f.value)) for f in response.preview])
    return [SYNC_PREVIEW_TITLE, table, *response.warnings]


def format_sync_result(response: selector_pb2.PlanRuntimeSyncResponse) -> str:
    """``sync``'s stdout: the ActionResult table, each value cut to 56 characters; ``""`` for a
    refusal."""
    if response.refusal_message:
        return ""
    r = response.result
    rows = [
        ("action", r.action),
        ("target", r.target),
        ("dry-run", r.dry_run),
        ("accepted", _yes_no(r.accepted)),
        ("applied", _yes_no(r.applied)),
        ("request-id", r.request_id),
        ("revision-hash", r.revision_hash),
        ("message", r.message),
        ("follow-up", r.follow_up),
        ("hint", r.hint),
    ]
    return format_table(FIELD_VALUE_HEADERS, [(f, cut(_one_line(v), SYNC_VALUE_WIDTH)) for f, v in rows])


def format_reconcile(response: selector_pb2.ReconcileInferenceServiceResponse) -> str:
    """The ``reconcile`` report: the runtime, requeue and workload flags, then the RuntimeReady
    condition, the events, the log lines and the component configuration, each after a blank line."""
    lines = _selection_lines(response.selection) if response.HasField("selection") else ["No runtime selected"]
    lines.append(f"Requeue: {_yes_no(response.requeue)}")
    lines.append(f"Workload untouched: {_yes_no(response.workload_untouched)}")
    if response.cache_version:
        lines.append(f"Cache version: {response.cache_version}")
    lines.append("")
    if response.HasField("runtime_ready"):
        c = response.runtime_ready
        lines += [
            "RuntimeReady condition:",
            format_table(CONDITION_HEADERS, [(c.type, c.status, c.reason, _one_line(c.message) or "-")]),
        ]
    else:
        lines.append("RuntimeReady condition: unchanged")
    lines.append("")
    if response.events:
        lines += [
            "Events:",
            format_table(EVENT_HEADERS, [(e.type, e.reason, _one_line(e.message)) for e in response.events]),
        ]
    else:
        lines.append("Events: none")
    lines.append("")
    if response.logs:
        lines += ["Logs:", *(f"  {_one_line(log)}" for log in response.logs)]
    else:
        lines.append("Logs: none")
    lines.append("")
    if response.components:
        lines += ["Components:", format_table(COMPONENT_HEADERS, [_component_cells(c) for c in response.components])]
    else:
        lines.append("Components: none")
    return "\n".join(lines)


def format_admission(
    request: selector_pb2.AdmitInferenceServiceRequest, response: selector_pb2.AdmitInferenceServiceResponse
) -> str:
    """The InferenceService webhook's verdict as kubectl prints an admitted object:
    ``inferenceservice.ome.io/<name> admitted (path <PATH>)`` (PATH: ``NoEngine``,
    ``AutoSelect`` ...); ``""`` when denied (the denial goes to stderr, ``admission_notes``)."""
    if not response.allowed:
        return ""
    name = request.inference_service.metadata.name
    path = _ADMISSION_PATH.get(response.path, "-")
    return f"inferenceservice.ome.io{'/' + name if name else ''} admitted (path {path})"


def admission_notes(response: selector_pb2.AdmitInferenceServiceResponse) -> list[str]:
    """The lines kubectl prints on stderr for the InferenceService webhook: ``Warning: <warning>``
    per warning when admitted, kubectl's denial line when denied."""
    if not response.allowed:
        return [_denied(response.webhook or ISVC_WEBHOOK, response.denial_message)]
    return [f"Warning: {_one_line(w)}" for w in response.warnings]


def format_runtime_validation(
    request: selector_pb2.ValidateServingRuntimeRequest, response: selector_pb2.ValidateServingRuntimeResponse
) -> str:
    """The runtime webhook's verdict as kubectl prints an admitted object:
    ``clusterservingruntime.ome.io/<name> admitted`` (or ``servingruntime.ome.io/<name>``);
    ``""`` when denied (the denial goes to stderr, ``runtime_validation_notes``)."""
    return f"{_runtime_object(request)} admitted" if response.allowed else ""


def runtime_validation_notes(response: selector_pb2.ValidateServingRuntimeResponse) -> list[str]:
    """kubectl's denial line on stderr when the runtime webhook denies; nothing when it admits."""
    return [] if response.allowed else [_denied(response.webhook, response.denial_message)]


def _denied(webhook: str, message: str) -> str:
    """kubectl's line for a denial by a validating webhook."""
    return f'Error from server: admission webhook "{webhook}" denied the request: {message}'


def _runtime_object(request: selector_pb2.ValidateServingRuntimeRequest) -> str:
    """``servingruntime.ome.io/<name>`` or ``clusterservingruntime.ome.io/<name>`` of the runtime
    the request carries."""
    which = request.WhichOneof("runtime")
    assert which is not None
    return f"{which.replace('_', '')}.ome.io/{getattr(request, which).metadata.name}"


# --- the runtime tree (kubectl-ome runtime.md, "tree") -------------------------------------------

TREE_TITLE = "RUNTIME TREE"
TREE_WIDTH = 80  # "The default output keeps each line within 80 columns."
UNATTRIBUTED_HEADING = "Unattributed users (not attributed to runtime tree):"
NONE_OBSERVED = "none observed"
_TREE_INDENT = "    "
_CONTINUATION = "  "
_TREE_ISSUE = _labels(selector_pb2.RuntimeTreeIssueCode, "RUNTIME_TREE_ISSUE_CODE_", _camel)  # ParentMissing ...
_TREE_STATE = _labels(selector_pb2.RuntimeTreeUnattributedState, "RUNTIME_TREE_UNATTRIBUTED_STATE_", _camel)
_TREE_REASON = _labels(selector_pb2.RuntimeTreeUnattributedReason, "RUNTIME_TREE_UNATTRIBUTED_REASON_", _camel)
_TREE_SNAPSHOT = _labels(selector_pb2.RuntimeTreeSnapshot, "RUNTIME_TREE_SNAPSHOT_", _camel)  # Complete, Partial
_TREE_COLLECTION_SCOPE = _labels(selector_pb2.RuntimeTreeCollectionScope, "RUNTIME_TREE_COLLECTION_SCOPE_", _camel)
_TREE_COLLECTION_STATUS = _labels(selector_pb2.RuntimeTreeCollectionStatus, "RUNTIME_TREE_COLLECTION_STATUS_", _camel)
_TREE_WARNING = _labels(selector_pb2.RuntimeTreeWarning, "RUNTIME_TREE_WARNING_", _camel)  # PartialData ...
_TREE_RESOLUTION = _labels(selector_pb2.RuntimeTreeResolution, "RUNTIME_TREE_RESOLUTION_", _camel)
_OBJECT_KIND = _labels(cache_pb2.ObjectKind, "OBJECT_KIND_", _camel)  # ServingRuntime ...

# A name on a line: (the part kept whole, such as ``ServingRuntime/``; the part that may be shortened).
_Name = tuple[str, str]


def format_tree(response: selector_pb2.GetRuntimeTreeResponse) -> str:
    """``tree``'s default output (runtime.md, "tree"): ``RUNTIME TREE``, ``Target:``, each
    context with its paths, the unattributed block when the response has one, ``Snapshot:``,
    ``Collection:`` and ``Warning:`` lines, every line within ``TREE_WIDTH`` columns: a long
    ``Issue:`` line continues with ``parent=`` on an indented line, a long ``Issue path:`` at
    a `` -> ``, a long ``Collection:`` line with ``status=``, and a name that does not fit is
    shortened (``shorten_name``)."""
    return "\n".join(_tree_lines(response, TREE_WIDTH))


def format_tree_wide(response: selector_pb2.GetRuntimeTreeResponse) -> str:
    """``tree -o wide``: the same lines with full names, none wrapped, except the unattributed
    block, which is as in ``format_tree``."""
    return "\n".join(_tree_lines(response, None))


def _fitted(prefix: str, name: _Name, suffix: str, width: int | None) -> str:
    """``prefix``, ``name`` (its second part shortened so the line fits ``width``; whole for
    None) and ``suffix``."""
    kept, rest = name
    if width is not None:
        rest = shorten_name(rest, width - len(prefix) - len(kept) - len(suffix))
    return f"{prefix}{kept}{rest}{suffix}"


def _tree_name(ref: selector_pb2.RuntimeRef, namespaced: bool) -> _Name:
    """``ServingRuntime/<namespace>/<name>`` or ``ClusterServingRuntime/<name>`` as a ``_Name``;
    inside a Namespaced context without the namespace; a parent that does not exist (kind
    unspecified) as its bare name."""
    if ref.kind == selector_pb2.RUNTIME_KIND_UNSPECIFIED:
        return "", ref.name
    return f"{_KIND[ref.kind]}/", ref.name if namespaced or not ref.namespace else f"{ref.namespace}/{ref.name}"


def _user_name(namespace: str, name: str, namespaced: bool) -> _Name:
    return "InferenceService/", name if namespaced else f"{namespace}/{name}"


def _tree_lines(response: selector_pb2.GetRuntimeTreeResponse, width: int | None) -> list[str]:
    lines = [TREE_TITLE, _fitted("Target: ", _tree_name(response.target, False), "", width)]
    for context in response.contexts:
        namespaced = context.scope == selector_pb2.RUNTIME_TREE_CONTEXT_SCOPE_NAMESPACED
        resolution = f" (resolution: {_TREE_RESOLUTION.get(context.resolution, '-')})"
        if namespaced:
            lines.append(_fitted("Context: Namespaced/", ("", context.namespace), resolution, width))
        else:
            lines.append(f"Context: Cluster{resolution}")
        for head in context.heads:
            lines += _head_lines(head, namespaced, width)
    if response.HasField("unattributed"):
        lines += _unattributed_lines(response.unattributed)
    lines.append(f"Snapshot: {_TREE_SNAPSHOT.get(response.snapshot, '-')}")
    for listed in response.collections:
        lines += _collection_lines(listed, width)
    lines += [f"Warning: {_TREE_WARNING.get(w, '-')}" for w in response.warnings]
    return lines


def _head_lines(head: selector_pb2.RuntimeTreeHead, namespaced: bool, width: int | None) -> list[str]:
    """``Head:``, its issue lines, the chain root first (each runtime after `` `-- ``, four
    columns deeper than the one above), then the InferenceServices one level deeper."""
    lines = [_fitted("Head: ", _tree_name(head.runtime, namespaced), "", width)]
    for issue in head.issues:
        lines += _issue_lines(issue, namespaced, width)
    for depth, node in enumerate(head.chain):
        prefix = _TREE_INDENT * (depth - 1) + "`-- " if depth else ""
        selected = " [selected]" if node.selected else ""
        lines.append(_fitted(prefix, _tree_name(node.runtime, namespaced), selected, width))
    indent = _TREE_INDENT * max(0, len(head.chain) - 1)
    for i, user in enumerate(head.users):
        connector = "`-- " if i == len(head.users) - 1 else "|-- "
        lines.append(_fitted(indent + connector, _user_name(user.namespace, user.name, namespaced), "", width))
    return lines


def _issue_lines(issue: selector_pb2.RuntimeTreeIssue, namespaced: bool, width: int | None) -> list[str]:
    """``Issue: <code> subject=<runtime> parent=<runtime>`` (``parent=`` on an indented line
    when it does not fit), then ``Issue path:`` with the runtimes joined by `` -> `` (continued
    on indented lines at a `` -> `` when it does not fit)."""
    code = _TREE_ISSUE.get(issue.code, "-")
    subject, parent = _tree_name(issue.subject, namespaced), _tree_name(issue.parent, namespaced)
    whole = _fitted(f"Issue: {code} subject=", subject, " parent=" + "".join(parent), None)
    if width is None or len(whole) <= width:
        lines = [whole]
    else:
        lines = [
            _fitted(f"Issue: {code} subject=", subject, "", width),
            _fitted(f"{_CONTINUATION}parent=", parent, "", width),
        ]
    names = [_tree_name(ref, namespaced) for ref in issue.path]
    path = "Issue path: " + " -> ".join("".join(name) for name in names)
    if width is None or len(path) <= width:
        return [*lines, path]
    current = _fitted("Issue path: ", names[0], "", width) if names else "Issue path:"
    for name in names[1:]:
        piece = " -> " + "".join(name)
        if len(current) + len(piece) <= width:
            current += piece
        else:
            lines.append(current)
            current = _fitted(f"{_CONTINUATION}-> ", name, "", width)
    return [*lines, current]


def _unattributed_lines(block: selector_pb2.RuntimeTreeUnattributed) -> list[str]:
    """The ``--show-unattributed-users`` block, within ``TREE_WIDTH`` columns in every output."""
    lines = [UNATTRIBUTED_HEADING]
    for user in block.users:
        lines.append(
            _fitted(f"{_CONTINUATION}[not attributed] ", _user_name(user.namespace, user.name, False), "", TREE_WIDTH)
        )
        lines.append(
            f"{_CONTINUATION}state={_TREE_STATE.get(user.state, '-')} reason={_TREE_REASON.get(user.reason, '-')}"
        )
        if user.declared_runtime:
            lines.append(_fitted(f"{_CONTINUATION}declared runtime=", ("", user.declared_runtime), "", TREE_WIDTH))
    if not block.users:
        lines.append(f"{_CONTINUATION}{NONE_OBSERVED}")
    return lines


def _collection_lines(listed: selector_pb2.RuntimeTreeCollection, width: int | None) -> list[str]:
    """``Collection: <kind> scope=<scope> status=<status> pages=<n> items=<n>``; from
    ``status=`` on an indented line when it does not fit."""
    scope = _TREE_COLLECTION_SCOPE.get(listed.scope, "-")
    start = f"Collection: {_OBJECT_KIND.get(listed.kind, '-')} scope={scope}"
    rest = f"status={_TREE_COLLECTION_STATUS.get(listed.status, '-')} pages={listed.pages} items={listed.items}"
    in_namespace = listed.scope == selector_pb2.RUNTIME_TREE_COLLECTION_SCOPE_NAMESPACE
    namespace = ("/", listed.namespace) if in_namespace else ("", "")
    whole = _fitted(start, namespace, " " + rest, None)
    if width is None or len(whole) <= width:
        return [whole]
    return [_fitted(start, namespace, "", width), _CONTINUATION + rest]


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


def _watch_row(cells: Sequence[str]) -> str:
    """One watch row: each cell but the last padded to its ``WATCH_WIDTHS`` width."""
    padded = [cell.ljust(width) for cell, width in zip(cells[:-1], WATCH_WIDTHS)]
    return _COLUMN_GAP.join([*padded, cells[-1]]).rstrip()


WATCH_HEADING = _watch_row(WATCH_HEADERS)


def format_watch_event(event: selector_pb2.WatchSelectionsResponse) -> str:
    """One ``watch`` line: a row (WATCH_HEADERS) for an InferenceService's current outcome (WHY /
    CAUSE ``(current)``) or a change (its reason, then `` / `` and its causes; the cache version
    after the write); a ``# ...`` line for the marker after the current outcomes, a write's stats
    and a resync."""
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


# --- -o name -------------------------------------------------------------------------------------


def selected_runtime_name(
    response: selector_pb2.SelectRuntimeResponse | selector_pb2.ReconcileInferenceServiceResponse,
) -> str:
    """``-o name`` of ``select`` and ``reconcile``: the selected runtime, or ``""``."""
    return _ref_name(response.selection.runtime) if response.HasField("selection") else ""


def candidate_names(response: selector_pb2.ExplainRuntimesResponse) -> str:
    """``-o name`` of ``explain``: each candidate in rank order, one a line."""
    return "\n".join(_ref_name(r.runtime) for r in response.runtimes if r.verdict == selector_pb2.VERDICT_CANDIDATE)


def effective_runtime_name(response: selector_pb2.GetEffectiveRuntimeResponse) -> str:
    """``-o name`` of ``effective``: the runtime the Live view names, or ``""``."""
    return _ref_name(response.runtime_ref) if response.HasField("runtime_ref") else ""


def admitted_name(
    request: selector_pb2.AdmitInferenceServiceRequest, response: selector_pb2.AdmitInferenceServiceResponse
) -> str:
    """``-o name`` of ``admit``: ``inferenceservice.ome.io/<name>`` when admitted, else ``""``."""
    return f"inferenceservice.ome.io/{request.inference_service.metadata.name}" if response.allowed else ""


def admitted_runtime_name(
    request: selector_pb2.ValidateServingRuntimeRequest, response: selector_pb2.ValidateServingRuntimeResponse
) -> str:
    """``-o name`` of ``validate-runtime``: the runtime when admitted, else ``""``."""
    return _runtime_object(request) if response.allowed else ""


def _ref_name(ref: selector_pb2.RuntimeRef) -> str:
    """``clusterservingruntime.ome.io/<name>`` or ``servingruntime.ome.io/<name>``."""
    return f"{_KIND.get(ref.kind, 'Runtime').lower()}.ome.io/{ref.name}"


# --- several answers, json and yaml ---------------------------------------------------------------


def with_heading(request: Message, text: str) -> str:
    """One answer among several: ``# inferenceservice.ome.io/<namespace>/<name>`` (``# request``
    for a request without an InferenceService), then ``text`` on the next line when there is one."""
    isvc = getattr(request, "inference_service", None)
    if isvc is None:
        subject = "request"
    else:
        subject = f"inferenceservice.ome.io/{isvc.metadata.namespace}/{isvc.metadata.name or '<no name>'}"
    return f"# {subject}\n{text}" if text else f"# {subject}"


def format_json(responses: Sequence[Message]) -> str:
    """``-o json``: one response as a JSON object, several as a JSON array, in order (proto3 JSON
    names, two-space indent)."""
    if len(responses) == 1:
        return json_format.MessageToJson(responses[0], preserving_proto_field_name=False)
    documents = [json_format.MessageToDict(response, preserving_proto_field_name=False) for response in responses]
    return json.dumps(documents, indent=2, ensure_ascii=False)


def format_json_line(response: Message) -> str:
    """One response (a stream's event) as one line of JSON (proto3 JSON names)."""
    return json.dumps(json_format.MessageToDict(response, preserving_proto_field_name=False), ensure_ascii=False)


def format_yaml(responses: Sequence[Message]) -> str:
    """``-o yaml``: one YAML document per response, in order, separated by ``---`` (proto3 JSON
    names, fields in proto order)."""
    return "---\n".join(
        yaml.safe_dump(json_format.MessageToDict(response, preserving_proto_field_name=False), sort_keys=False)
        for response in responses
    ).rstrip("\n")


# --- cells ---------------------------------------------------------------------------------------


def _component(config: selector_pb2.ComponentConfiguration) -> str:
    return _COMPONENT.get(config.component, "-")


def _accelerator_source(config: selector_pb2.ComponentConfiguration) -> str:
    """``Selector``, ``Policy/Cheapest``, ``NoCandidate/BestFit`` ..."""
    source = _ACCELERATOR_SOURCE.get(config.accelerator_source, "-")
    return f"{source}/{config.accelerator_policy}" if config.accelerator_policy else source


def _component_error(config: selector_pb2.ComponentConfiguration) -> str:
    return "; ".join(e for e in (config.mode_error, config.accelerator_error) if e)


def _component_cells(config: selector_pb2.ComponentConfiguration) -> tuple[str, ...]:
    """COMPONENT MODE MODE-SOURCE ACCELERATOR ACCELERATOR-SOURCE POLICY ERROR."""
    return (
        _component(config),
        config.deployment_mode or "-",
        _MODE_SOURCE.get(config.mode_source, "-"),
        config.accelerator_class or "-",
        _ACCELERATOR_SOURCE.get(config.accelerator_source, "-"),
        config.accelerator_policy or "-",
        _one_line(_component_error(config)) or "-",
    )


def _chain_refs(response: selector_pb2.GetEffectiveRuntimeResponse) -> list[str]:
    """The ROOT-FIRST rows: the chain as ``CSR/<name>`` / ``SR/<namespace>/<name>``, root first,
    ending with the runtime itself."""
    return [
        f"CSR/{ref.name}"
        if ref.kind == selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
        else f"SR/{ref.namespace}/{ref.name}"
        for ref in response.inheritance_chain
    ]


def _yes_no(value: bool) -> str:
    return "Yes" if value else "No"


def runtime_ref(ref: selector_pb2.RuntimeRef) -> str:
    """``ClusterServingRuntime/<name>`` or ``ServingRuntime/<namespace>/<name>``."""
    kind = _KIND.get(ref.kind, "Runtime")
    return f"{kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{kind}/{ref.name}"


def primary_reason(reasons: Sequence[selector_pb2.Reason]) -> str:
    """The message of the primary reason (the first failing check); ``""`` for no reasons."""
    for reason in reasons:
        if reason.primary:
            return reason.message
    return reasons[0].message if reasons else ""


def format_size(value: float) -> str:
    """A parameter count as OME writes sizes: ``7B``, ``500M``, ``1.5T`` (``%g``; below a
    million, the number itself)."""
    for factor, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(value) >= factor:
            return f"{value / factor:g}{suffix}"
    return f"{value:g}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
