"""Column headers, widths and the labels of the proto enums the query commands print
(reference/kubectl-ome/runtime.md)."""

from __future__ import annotations

from typing import Any, Callable

from ome.selector.v1 import cache_pb2, selector_pb2

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
# A watch prints each row as its event comes, so its columns are padded to fixed widths (all but
# the last). The table keeps every line within WATCH_LINE_WIDTH columns: longer names are
# shortened (start...end#fingerprint), the step names the change's reason (ChangeStep), and
# VERSION and the reason's text and causes are -o wide's, whose wider cells push the rest of
# their row, as `kubectl get -w` does.
WATCH_HEADERS = ("INFERENCESERVICE", "NAMESPACE", "BEFORE", "AFTER", "STEP")
WATCH_WIDTHS = (24, 12, 28, 28)  # the last column: at most 16 (InferenceService)
WATCH_LINE_WIDTH = 120
WATCH_WIDE_HEADERS = ("INFERENCESERVICE", "NAMESPACE", "BEFORE", "AFTER", "WHY / CAUSE", "VERSION")
WATCH_WIDE_WIDTHS = (24, 12, 36, 36, 72)

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
_CHANGE_STEP = _labels(selector_pb2.ChangeStep, "CHANGE_STEP_", _camel)  # Ranking, CheckFailed, NamedRuntime ...
_OBJECT_KIND = _labels(cache_pb2.ObjectKind, "OBJECT_KIND_", _camel)  # ServingRuntime, ClusterBaseModel ...
