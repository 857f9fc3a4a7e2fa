"""The tables and one-line reports of select, explain, admit, reconcile, effective, history, sync
and validate-runtime (reference/kubectl-ome/runtime.md)."""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from typing import Iterator, Sequence

from ome.selector.v1 import selector_pb2

from ome_selector.cli.cells import (
    _accelerator_source,
    _chain_refs,
    _component,
    _component_cells,
    _component_error,
    _one_line,
    _yes_no,
    format_size,
    primary_reason,
    runtime_ref,
)
from ome_selector.cli.labels import (
    _ADMISSION_PATH,
    _BOUND_LETTER,
    _CHECK,
    _COLUMN_GAP,
    _COMPLETENESS,
    _CONSISTENCY,
    _DRIFT_CAUSE,
    _DRIFT_STATE,
    _LIVE,
    _LIVE_RELATION,
    _MODE,
    _MODE_SOURCE,
    _OBS_LETTER,
    _OBSERVATION,
    _PIN_MODE,
    _PIN_STATE,
    _RELATION,
    _ROLE,
    _ROLE_LETTER,
    _SCOPE,
    _STATUS,
    _SYNC,
    _TIE_BREAK,
    _VERDICT,
    CANDIDATE_HEADERS,
    COMPONENT_HEADERS,
    CONDITION_HEADERS,
    EFFECTIVE_HEADERS,
    EFFECTIVE_VALUE_WIDTH,
    EFFECTIVE_WIDE_HEADERS,
    EVENT_HEADERS,
    EXCLUSION_HEADERS,
    EXPLAIN_HEADERS,
    FIELD_VALUE_HEADERS,
    HISTORY_HEADERS,
    HISTORY_REVISION_WIDTH,
    HISTORY_WIDE_HEADERS,
    ISVC_WEBHOOK,
    SYNC_VALUE_WIDTH,
    TABLE_WIDTH,
)
from ome_selector.texts.messages import SYNC_PREVIEW_TITLE

# --- tables and reports ------------------------------------------------------------------------


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
    if _NO_HEADERS.get():
        if not rows:
            return ""
        widths = [max(len(row[i]) for row in rows) for i in range(len(headers))]
        return "\n".join(
            _COLUMN_GAP.join([cell.ljust(width) for cell, width in zip(row[:-1], widths)] + [row[-1]]).rstrip()
            for row in rows
        )
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
