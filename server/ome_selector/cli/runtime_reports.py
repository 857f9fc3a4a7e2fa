"""The reports of kubectl-ome's runtime page (reference/kubectl-ome/runtime.md): ``effective``
(the Live, Active and Service rows, and ``-o wide``), ``history`` and ``sync --dry-run client``
(the preview on stderr, the ActionResult on stdout)."""

from __future__ import annotations

from typing import Sequence

from ome.selector.v1 import selector_pb2

from ome_selector.cli.cells import (
    _accelerator_source,
    _chain_refs,
    _component,
    _component_cells,
    _component_error,
    _one_line,
    _yes_no,
    runtime_ref,
)
from ome_selector.cli.labels import (
    _BOUND_LETTER,
    _CHECK,
    _COLUMN_GAP,
    _COMPLETENESS,
    _CONSISTENCY,
    _DRIFT_CAUSE,
    _DRIFT_STATE,
    _LIVE,
    _LIVE_RELATION,
    _MODE_SOURCE,
    _OBS_LETTER,
    _OBSERVATION,
    _PIN_MODE,
    _PIN_STATE,
    _RELATION,
    _ROLE,
    _ROLE_LETTER,
    _STATUS,
    _SYNC,
    COMPONENT_HEADERS,
    EFFECTIVE_HEADERS,
    EFFECTIVE_VALUE_WIDTH,
    EFFECTIVE_WIDE_HEADERS,
    FIELD_VALUE_HEADERS,
    HISTORY_HEADERS,
    HISTORY_REVISION_WIDTH,
    HISTORY_WIDE_HEADERS,
    SYNC_VALUE_WIDTH,
    TABLE_WIDTH,
)
from ome_selector.cli.tables import cut, fingerprint, format_table, shorten_name
from ome_selector.texts.messages import SYNC_PREVIEW_TITLE


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


def effective_value(value: str, named: bool, width: int = EFFECTIVE_VALUE_WIDTH) -> str:
    """runtime.md, effective: a value within ``width`` characters. A long name (runtime,
    revision, issue) keeps its start and end with ``...`` between, then ``fingerprint``; another
    long value keeps its first ``width - 3`` characters and ends in ``...``."""
    if len(value) <= width:
        return value
    return shorten_name(value, width) if named else cut(value, width)


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
