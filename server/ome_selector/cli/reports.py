"""The tables and one-line reports of select, explain, admit, reconcile and validate-runtime;
those of effective, history and sync are ``runtime_reports``'s, the table layout
``tables``'s (both re-exported here: every query command's report by one name)."""

from __future__ import annotations

from ome.selector.v1 import selector_pb2

from ome_selector.cli.cells import (
    _component_cells,
    _one_line,
    _yes_no,
    format_size,
    primary_reason,
    runtime_ref,
)
from ome_selector.cli.labels import (
    _ADMISSION_PATH,
    _MODE,
    _SCOPE,
    _TIE_BREAK,
    _VERDICT,
    CANDIDATE_HEADERS,
    COMPONENT_HEADERS,
    CONDITION_HEADERS,
    EVENT_HEADERS,
    EXCLUSION_HEADERS,
    EXPLAIN_HEADERS,
    ISVC_WEBHOOK,
)
from ome_selector.cli.runtime_reports import (
    effective_value,
    format_effective,
    format_effective_wide,
    format_history,
    format_history_wide,
    format_sync_result,
    history_revision,
    sync_preview,
)
from ome_selector.cli.tables import cut, fingerprint, format_table, headers_shown, shorten_name, without_headers

__all__ = [
    "admission_notes",
    "cut",
    "effective_value",
    "explain_notes",
    "fingerprint",
    "format_admission",
    "format_effective",
    "format_effective_wide",
    "format_explain",
    "format_history",
    "format_history_wide",
    "format_reconcile",
    "format_runtime_validation",
    "format_selection",
    "format_sync_result",
    "format_table",
    "headers_shown",
    "history_revision",
    "runtime_validation_notes",
    "shorten_name",
    "sync_preview",
    "without_headers",
]


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
