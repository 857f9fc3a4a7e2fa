"""What ``kubectl ome runtime`` reports beyond the Live view (reference/kubectl-ome/runtime.md):
``effective``'s Active view, Service rows and ISSUE codes; ``history``'s RuntimeHistoryReport;
``sync``'s plan or refusal. Pure Python, no gRPC; the pin rules are ``pinning``'s.

- ``effective_report(snapshot, isvc, ome_namespace, limit)`` -> ``EffectiveReport``.
- ``history(snapshot, isvc, ome_namespace, limit)`` -> ``HistoryReport``.
- ``plan_sync(snapshot, isvc, ome_namespace, request_id, context)`` -> ``SyncPlan``.

``limit`` is kubectl-ome's collection limit (1,000) or 0 for none: the RPCs take it from the
request, the CLI sends 1,000 (the controller's selection has no such limit).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows import revisions as pinning
from ome_selector.flows.components import ComponentConfig, components
from ome_selector.flows.effective import Effective, effective
from ome_selector.flows.resolution import decide
from ome_selector.flows.revisions import PinMode, PinReport, PinState, SyncState
from ome_selector.texts import messages


class IssueCode(enum.Enum):
    """The ISSUE codes (runtime.md, effective; history's two last), valued by the code kubectl-ome
    prints (``messages.ISSUE_CODES``, in the page's order); members named as the proto's
    ``ISSUE_CODE_*``."""

    INVALID_DECLARED_KIND = messages.ISSUE_CODES[0]
    DECLARED_COMPATIBILITY_MISMATCH = messages.ISSUE_CODES[1]
    INHERITANCE_UNAVAILABLE = messages.ISSUE_CODES[2]
    LIVE_RUNTIME_UNAVAILABLE = messages.ISSUE_CODES[3]
    STATUS_UNOBSERVED = messages.ISSUE_CODES[4]
    STATUS_STALE = messages.ISSUE_CODES[5]
    STATUS_INVALID = messages.ISSUE_CODES[6]
    REPORTED_DRIFT_CONFLICT = messages.ISSUE_CODES[7]
    ACTIVE_REVISION_UNREPORTED = messages.ISSUE_CODES[8]
    ACTIVE_REVISION_UNAVAILABLE = messages.ISSUE_CODES[9]
    REVISION_NOT_FOUND = messages.ISSUE_CODES[10]
    REVISION_UNAVAILABLE = messages.ISSUE_CODES[11]
    REVISION_DISABLED = messages.ISSUE_CODES[12]
    REVISION_NOT_OME_MANAGED = messages.ISSUE_CODES[13]
    REVISION_SOURCE_MISMATCH = messages.ISSUE_CODES[14]
    REVISION_HASH_INVALID = messages.ISSUE_CODES[15]
    REVISION_HASH_MISMATCH = messages.ISSUE_CODES[16]
    REVISION_NAME_MISMATCH = messages.ISSUE_CODES[17]
    REVISION_ORDINAL_UNEXPECTED = messages.ISSUE_CODES[18]
    REVISION_PAYLOAD_NON_CANONICAL = messages.ISSUE_CODES[19]
    REVISION_DATA_OBJECT_PRESENT = messages.ISSUE_CODES[20]
    REVISION_PAYLOAD_MALFORMED = messages.ISSUE_CODES[21]
    REVISION_IDENTITY_MISMATCH = messages.ISSUE_CODES[22]
    DUPLICATE_REVISION = messages.ISSUE_CODES[23]
    CONFLICTING_REVISION = messages.ISSUE_CODES[24]
    DUPLICATE_REVISION_CONTENT = messages.ISSUE_CODES[25]
    REVISION_HASH_COLLISION = messages.ISSUE_CODES[26]
    HISTORY_UNAVAILABLE = messages.ISSUE_CODES[27]
    HISTORY_TRUNCATED = messages.ISSUE_CODES[28]


GenerationStatus = enum.Enum("GenerationStatus", "UNOBSERVED CURRENT STALE INVALID")
DriftState = enum.Enum("DriftState", "NOT_REPORTED REPORTED_TRUE REPORTED_FALSE REPORTED_UNKNOWN MALFORMED")
DriftCause = enum.Enum("DriftCause", "REVISION_MISMATCH REVISION_MISSING SOURCE_RUNTIME_MISSING RUNTIME_MISMATCH OTHER")
_DRIFT_CAUSES = {
    messages.DRIFT_REVISION_MISMATCH: DriftCause.REVISION_MISMATCH,
    messages.DRIFT_REVISION_MISSING: DriftCause.REVISION_MISSING,
    messages.DRIFT_SOURCE_RUNTIME_MISSING: DriftCause.SOURCE_RUNTIME_MISSING,
    messages.DRIFT_RUNTIME_MISMATCH: DriftCause.RUNTIME_MISMATCH,
}
_DRIFT_STATES = {
    "True": DriftState.REPORTED_TRUE,
    "False": DriftState.REPORTED_FALSE,
    "Unknown": DriftState.REPORTED_UNKNOWN,
}


@dataclass(frozen=True, slots=True)
class Issue:
    """One ISSUE row: a code, and the revision a revision code is about."""

    code: IssueCode
    revision: str = ""

    @property
    def text(self) -> str:
        """``<Code>`` or ``<Code>(<revision>)``."""
        return messages.issue_text(self.code.value, self.revision)


# --- effective ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActiveView:
    """effective's Active view: the spec the InferenceService is meant to run (the pinned
    revision, or the Live view when it is not pinned). ``full_hash`` is empty when Unavailable."""

    state: str
    reason: str
    runtime: d.Runtime | None
    revision: str
    full_hash: str
    components: tuple[ComponentConfig, ...]


@dataclass(frozen=True, slots=True)
class EffectiveReport:
    """The RuntimeEffectiveReport: the Live view, the Active view, the Service rows."""

    live: Effective
    active: ActiveView
    pin: PinReport
    status: GenerationStatus
    drift_state: DriftState
    drift_cause: DriftCause | None
    issues: tuple[Issue, ...]


def generation_status(isvc: types_pb2.InferenceService) -> GenerationStatus:
    """runtime.md, effective STATUS: ``status.observedGeneration`` against ``metadata.generation``."""
    if not isvc.status.HasField("observed_generation"):
        return GenerationStatus.UNOBSERVED
    observed, generation = isvc.status.observed_generation, isvc.metadata.generation
    if observed == generation:
        return GenerationStatus.CURRENT
    return GenerationStatus.STALE if observed < generation else GenerationStatus.INVALID


def drift(isvc: types_pb2.InferenceService) -> tuple[DriftState, DriftCause | None]:
    """runtime.md, effective DRIFT: the ``RuntimeDrifted`` condition's state and cause. More than
    one such condition is ``Malformed`` with no cause; another status is ``Malformed`` with its
    cause; an empty or unknown reason is ``Other``."""
    found = [c for c in isvc.status.conditions if c.type == messages.CONDITION_RUNTIME_DRIFTED]
    if not found:
        return DriftState.NOT_REPORTED, None
    if len(found) > 1:
        return DriftState.MALFORMED, None
    condition = found[0]
    return (
        _DRIFT_STATES.get(condition.status, DriftState.MALFORMED),
        _DRIFT_CAUSES.get(condition.reason, DriftCause.OTHER),
    )


def revisions_of(snapshot: Snapshot, ome_namespace: str, runtime_name: str) -> list[d.Revision]:
    """The revisions in OME's namespace labelled ``ome.io/runtime-of: <runtime_name>``, newest
    first (a revision without a creation time last), then by name."""
    found = [r for (ns, _), r in snapshot.revisions.items() if ns == ome_namespace and r.owner_name == runtime_name]
    return sorted(found, key=lambda r: (r.created is None, -(r.created or 0.0), r.name))


def revision_issues(
    snapshot: Snapshot, revision: d.Revision, source: tuple[str, str, str], siblings: list[d.Revision]
) -> list[Issue]:
    """The revision codes of ``revision`` (runtime.md, effective ISSUE), in the page's order.
    ``source``: (kind, namespace, name) of the runtime the revision should belong to;
    ``siblings``: every revision of that runtime name (``revisions_of``).

    ``RevisionHashMismatch`` is never reported: this service hashes specs its own way, so a hash
    label OME wrote cannot be checked against the spec (README, deviations). The payload and
    identity codes cannot arise from a cache (every cached revision parsed, is keyed by name and
    held once)."""
    name = revision.name
    out: list[Issue] = []
    kind, namespace, runtime = source
    if revision.disabled:
        out.append(Issue(IssueCode.REVISION_DISABLED, name))
    out += [Issue(IssueCode(code), name) for code in pinning.consistency_problems(revision, runtime, kind, namespace)]
    others = [r for r in siblings if r.name != name]
    if any(r.full_hash == revision.full_hash for r in others):
        out.append(Issue(IssueCode.DUPLICATE_REVISION_CONTENT, name))
    if any(r.short_hash == revision.short_hash and r.full_hash != revision.full_hash for r in others):
        out.append(Issue(IssueCode.REVISION_HASH_COLLISION, name))
    return out


def _live(snapshot: Snapshot, isvc: types_pb2.InferenceService, limit: int) -> Effective:
    """The Live view; auto-selection beyond ``limit`` runtimes in scope is ``Unavailable``
    (``Unreadable``), as kubectl-ome's collection limit makes it."""
    if limit and not isvc.spec.runtime.name and isvc.spec.model.name:
        namespaced, cluster = snapshot.runtimes_in_scope(isvc.metadata.namespace)
        if len(namespaced) + len(cluster) > limit:
            return Effective(
                messages.VIEW_UNAVAILABLE,
                messages.VIEW_UNREADABLE,
                None,
                "Selected",
                (),
                "",
                components(snapshot, isvc, None, False),
            )
    return effective(snapshot, isvc)


def _source(isvc: types_pb2.InferenceService, live: Effective) -> tuple[str, str, str]:
    """(kind, namespace, name) the revisions should belong to: the runtime ``spec.runtime``
    declares (its kind as the controller reads it), else the one OME selected."""
    ref = isvc.spec.runtime
    if ref.name:
        kind, namespace = pinning.declared(isvc)
        return kind, namespace, ref.name
    if live.runtime is not None:
        return live.runtime.key
    return d.CLUSTER_SERVING_RUNTIME, "", ""


def _selected(live: Effective, isvc: types_pb2.InferenceService) -> d.Runtime | None:
    return live.runtime if not isvc.spec.runtime.name else None


def _active(snapshot: Snapshot, isvc: types_pb2.InferenceService, live: Effective, pin: PinReport) -> ActiveView:
    """The Active view from the pin state (runtime.md, effective REASON and pin state tables)."""
    follows = pin.state in (PinState.NOT_APPLICABLE, PinState.AWAITING_PIN)
    if follows and live.state == messages.VIEW_AVAILABLE:
        return ActiveView(live.state, "", live.runtime, "", pin.live_hash, live.components)
    revision = pin.active_revision
    if revision is not None:
        configs = components(snapshot, isvc, revision.runtime, True)
        return ActiveView(messages.VIEW_AVAILABLE, "", revision.runtime, revision.name, revision.full_hash, configs)
    reason = {
        PinState.REVISION_MISSING: messages.VIEW_NOT_FOUND,
        PinState.REVISION_DISABLED: messages.VIEW_DISABLED,
        PinState.REVISION_INVALID: messages.VIEW_MALFORMED_PAYLOAD,
        PinState.INVALID_INTENT: messages.VIEW_MALFORMED_PAYLOAD,
    }.get(pin.state, live.reason or messages.VIEW_NOT_FOUND)
    return ActiveView(
        messages.VIEW_UNAVAILABLE, reason, None, pin.revision_name, "", components(snapshot, isvc, None, True)
    )


def effective_report(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, ome_namespace: str, limit: int = 0
) -> EffectiveReport:
    """``kubectl ome runtime effective`` (runtime.md, "Output fields"): the Live view
    (effective.py), the Active view, PIN / SYNC / LIVE-RELATION (``pinning.report``), STATUS,
    DRIFT and the ISSUE codes in the page's table order; the revision codes only for the
    revisions named in ``spec.runtime.revision`` and ``status.pinnedRevisionName``."""
    live = _live(snapshot, isvc, limit)
    pin = pinning.report(snapshot, isvc, ome_namespace, _selected(live, isvc))
    active = _active(snapshot, isvc, live, pin)
    status = generation_status(isvc)
    drift_state, drift_cause = drift(isvc)
    ref = isvc.spec.runtime
    issues: list[Issue] = []
    if ref.HasField("kind") and ref.kind not in (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME):
        issues.append(Issue(IssueCode.INVALID_DECLARED_KIND))
    # Only an InferenceService that "names a runtime and follows it live" (runtime.md, ISSUE
    # codes): with ``autoSync: false`` it follows a revision, recorded or not yet.
    follows = pin.mode is PinMode.AUTO_SYNC
    if ref.name and follows and live.state == messages.VIEW_AVAILABLE and decide(snapshot, isvc).compatibility_error:
        issues.append(Issue(IssueCode.DECLARED_COMPATIBILITY_MISMATCH))
    if live.inheritance_reason:
        issues.append(Issue(IssueCode.INHERITANCE_UNAVAILABLE))
    if live.state != messages.VIEW_AVAILABLE and live.reason in (
        messages.VIEW_NOT_FOUND,
        messages.VIEW_DISABLED,
        messages.VIEW_UNREADABLE,
    ):
        issues.append(Issue(IssueCode.LIVE_RUNTIME_UNAVAILABLE))
    status_issue = {
        GenerationStatus.UNOBSERVED: IssueCode.STATUS_UNOBSERVED,
        GenerationStatus.STALE: IssueCode.STATUS_STALE,
        GenerationStatus.INVALID: IssueCode.STATUS_INVALID,
    }.get(status)
    if status_issue is not None:
        issues.append(Issue(status_issue))
    if drift_state is DriftState.MALFORMED:
        issues.append(Issue(IssueCode.REPORTED_DRIFT_CONFLICT))
    if pin.state is PinState.AWAITING_PIN:
        issues.append(Issue(IssueCode.ACTIVE_REVISION_UNREPORTED))
    if pin.mode is not PinMode.AUTO_SYNC and active.state != messages.VIEW_AVAILABLE:
        issues.append(Issue(IssueCode.ACTIVE_REVISION_UNAVAILABLE))
    source = _source(isvc, live)
    names = tuple(dict.fromkeys(n for n in (ref.revision, isvc.status.pinned_revision_name) if n))
    siblings = revisions_of(snapshot, ome_namespace, source[2]) if names and source[2] else []
    for name in names:
        revision = snapshot.revisions.get((ome_namespace, name))
        if revision is None:
            issues.append(Issue(IssueCode.REVISION_NOT_FOUND, name))
        else:
            issues += revision_issues(snapshot, revision, source, siblings)
    return EffectiveReport(live, active, pin, status, drift_state, drift_cause, tuple(issues))


# --- history -----------------------------------------------------------------------------------

Observation = enum.Enum("Observation", "COMPLETE PARTIAL UNAVAILABLE")
Completeness = enum.Enum("Completeness", "RETENTION_BOUNDED INCOMPLETE")
Role = enum.Enum("Role", "ACTIVE REQUESTED REPORTED HISTORY")
Consistency = enum.Enum("Consistency", "CONSISTENT INCONSISTENT UNKNOWN")
Relation = enum.Enum("Relation", "MATCHES_LIVE DIFFERS_FROM_LIVE AMBIGUOUS_LIVE UNKNOWN")
HISTORY_PAGE_SIZE = 500  # kubectl-ome lists "at most 1,000 revisions, in two pages of 500"


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One revision of the history (runtime.md, history "Output fields")."""

    revision: d.Revision
    roles: tuple[Role, ...]
    consistency: Consistency
    relation: Relation
    issues: tuple[Issue, ...]


@dataclass(frozen=True, slots=True)
class HistoryReport:
    """The RuntimeHistoryReport: WINDOW (observation, completeness, pages seen / asked), the
    revisions newest first, and the report issues."""

    runtime_name: str
    observation: Observation
    completeness: Completeness
    pages_seen: int
    pages_asked: int
    entries: tuple[HistoryEntry, ...]
    report_issues: tuple[Issue, ...]
    total: int


def _relation(live_hash: str, revision_hash: str) -> Relation:
    relation = pinning.live_relation(live_hash, revision_hash)
    return {
        pinning.LiveRelation.EQUAL: Relation.MATCHES_LIVE,
        pinning.LiveRelation.DIFFERENT: Relation.DIFFERS_FROM_LIVE,
        pinning.LiveRelation.AMBIGUOUS: Relation.AMBIGUOUS_LIVE,
    }.get(relation, Relation.UNKNOWN)


def history(snapshot: Snapshot, isvc: types_pb2.InferenceService, ome_namespace: str, limit: int = 0) -> HistoryReport:
    """``kubectl ome runtime history`` (runtime.md, history): the revisions labelled
    ``ome.io/runtime-of=<runtime name>`` in OME's namespace, newest first, the runtime found as
    ``effective`` finds it. With no runtime name there is no list: ``Unavailable`` with
    ``HistoryUnavailable``. More than ``limit`` revisions: the newest ``limit``, ``Partial`` /
    ``Incomplete`` with ``HistoryTruncated``. Pages: a cache is read at once, counted in pages
    of ``HISTORY_PAGE_SIZE`` as kubectl-ome lists them (at least one)."""
    report = effective_report(snapshot, isvc, ome_namespace, limit)
    source = _source(isvc, report.live)
    if not source[2]:
        issues: tuple[Issue, ...] = (Issue(IssueCode.HISTORY_UNAVAILABLE),)
        return HistoryReport("", Observation.UNAVAILABLE, Completeness.INCOMPLETE, 0, 1, (), issues, 0)
    every = revisions_of(snapshot, ome_namespace, source[2])
    listed = every[:limit] if limit else every
    truncated = len(listed) < len(every)
    pages = max(1, -(-len(listed) // HISTORY_PAGE_SIZE))
    active = report.pin.active_revision.name if report.pin.active_revision is not None else ""
    ref = isvc.spec.runtime
    entries = []
    for revision in listed:
        roles = tuple(
            role
            for role, holds in (
                (Role.ACTIVE, revision.name == active),
                (Role.REQUESTED, revision.name == ref.revision),
                (Role.REPORTED, revision.name == isvc.status.pinned_revision_name),
                (Role.HISTORY, True),
            )
            if holds
        )
        issues = tuple(revision_issues(snapshot, revision, source, every))
        consistency = Consistency.INCONSISTENT if issues else Consistency.CONSISTENT
        entries.append(
            HistoryEntry(revision, roles, consistency, _relation(report.pin.live_hash, revision.full_hash), issues)
        )
    report_issues = (Issue(IssueCode.HISTORY_TRUNCATED),) if truncated else ()
    return HistoryReport(
        source[2],
        Observation.PARTIAL if truncated else Observation.COMPLETE,
        Completeness.INCOMPLETE if truncated else Completeness.RETENTION_BOUNDED,
        pages,
        pages,
        tuple(entries),
        report_issues,
        len(every),
    )


# --- sync --------------------------------------------------------------------------------------

SyncRefusal = enum.Enum(
    "SyncRefusal",
    [
        ("TARGET_IDENTITY", messages.REFUSAL_TARGET_IDENTITY),
        ("TARGET_DELETING", messages.REFUSAL_TARGET_DELETING),
        ("PLACEMENT", messages.REFUSAL_PLACEMENT),
        ("INSPECTION_BOUNDS", messages.REFUSAL_INSPECTION_BOUNDS),
        ("MANAGED_EVIDENCE", messages.REFUSAL_MANAGED_EVIDENCE),
        ("ACTIVE_RUNTIME", messages.REFUSAL_ACTIVE_RUNTIME),
        ("CONTROLLER_EVIDENCE", messages.REFUSAL_CONTROLLER_EVIDENCE),
        ("MAILBOX", messages.REFUSAL_MAILBOX),
        ("UNSAFE_VALUE", messages.REFUSAL_UNSAFE_VALUE),
    ],
)
# runtime.md, sync: the placement annotations and labels, the mailbox annotations, the bounds.
PLACEMENT_KEYS = (
    "ome.io/accelerator-requirements",
    "ome.io/cluster-selector",
    "ome.io/placement-origin",
    "ome.io/placement-origin-uid",
    "ome.io/placement-control-plane",
)
MAILBOX_ANNOTATIONS = ("ome.io/rollout-promote", "ome.io/rollout-rollback", "ome.io/rollout-repin")
PAUSE_ANNOTATION = "ome.io/rollout-paused"
MAX_ANNOTATIONS = 256
MAX_CHAIN = 5
MAX_REVISIONS = 32
MAX_PREVIEW_VALUE = 768
OMENATIVE = "OMENative"


@dataclass(frozen=True, slots=True)
class SyncPlan:
    """What ``sync`` would do: a refusal, or the preview rows (FIELD, VALUE), the token to set
    and the target hash (the live spec's short hash)."""

    refusal: SyncRefusal | None
    preview: tuple[tuple[str, str], ...] = ()
    token: str = ""
    request_id: str = ""
    target_hash: str = ""


def _meta(snapshot: Snapshot, key: tuple[str, str, str]) -> types_pb2.ObjectMeta:
    """The cached object's metadata (uid, resourceVersion, generation for the preview)."""
    obj = snapshot.objects.get(key)
    if obj is None:
        return types_pb2.ObjectMeta()
    which = obj.WhichOneof("object")
    return getattr(obj, which).metadata if which else types_pb2.ObjectMeta()


def _pause_state(isvc: types_pb2.InferenceService) -> str:
    """``Paused`` (``ome.io/rollout-paused: "true"``), ``Freeze`` (``"freeze"``), else ``Not recognized``."""
    value = isvc.metadata.annotations.get(PAUSE_ANNOTATION, "").lower()
    return {"true": messages.PAUSE_PAUSED, "freeze": messages.PAUSE_FREEZE}.get(value, messages.PAUSE_NOT_RECOGNIZED)


def _kind_ref(key: tuple[str, str, str]) -> str:
    """``ClusterServingRuntime//<name>`` or ``ServingRuntime/<namespace>/<name>``."""
    return f"{key[0]}/{key[1]}/{key[2]}"


def _managed_evidence_holds(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, report: EffectiveReport, ome_namespace: str
) -> bool:
    """runtime.md, sync "Refusals", the conditions under which ``sync`` goes ahead."""
    ref = isvc.spec.runtime
    live, pin = report.live, report.pin
    if ref.HasField("kind") and ref.kind not in (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME):
        return False
    if ref.HasField("api_group") and ref.api_group != "ome.io":
        return False
    if pin.mode is not PinMode.MANAGED_PIN or pin.state is not PinState.RESOLVED:
        return False
    if report.active.revision != isvc.status.pinned_revision_name:
        return False
    if (report.drift_state, report.drift_cause) != (DriftState.REPORTED_TRUE, DriftCause.REVISION_MISMATCH):
        return False
    if pin.relation is not pinning.LiveRelation.DIFFERENT or pin.sync is SyncState.PENDING:
        return False
    if live.state != messages.VIEW_AVAILABLE or len(live.chain) > MAX_CHAIN or len(set(live.chain)) != len(live.chain):
        return False
    source = _source(isvc, live)
    every = revisions_of(snapshot, ome_namespace, ref.name)
    if len(every) > MAX_REVISIONS:
        return False
    if any(revision_issues(snapshot, r, source, every) for r in every):
        return False
    return sum(r.full_hash == pin.live_hash for r in every) <= 1


def plan_sync(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, ome_namespace: str, request_id: str, context: str
) -> SyncPlan:
    """``kubectl ome runtime sync --dry-run client`` (runtime.md, sync): the refusals every action
    shares (identity, placement, inspection bounds), then sync's (the mailbox, the managed pin
    evidence, a preview value unsafe to show), in that order; else the preview and the token
    ``cli-runtime-sync-<request_id>``. A component on OMENative is an inspection-bounds refusal:
    the cache holds no InferenceReplicas, so their evidence cannot be read in full. Not modelled
    (no such fields in the cache): a target being deleted, ``spec.placement`` /
    ``status.placement`` / the placement finalizer, rollout runs (controller evidence) and a
    second read (active runtime)."""
    meta = isvc.metadata
    if not meta.name or not meta.uid or not meta.resource_version or meta.generation <= 0:
        return SyncPlan(SyncRefusal.TARGET_IDENTITY)
    keys = {*meta.annotations, *meta.labels}
    if any(k in keys for k in PLACEMENT_KEYS):
        return SyncPlan(SyncRefusal.PLACEMENT)
    report = effective_report(snapshot, isvc, ome_namespace)
    if len(meta.annotations) > MAX_ANNOTATIONS or any(
        c.mode == OMENATIVE for c in (*report.live.components, *report.active.components)
    ):
        return SyncPlan(SyncRefusal.INSPECTION_BOUNDS)
    if any(a in meta.annotations for a in MAILBOX_ANNOTATIONS):
        return SyncPlan(SyncRefusal.MAILBOX)
    if not _managed_evidence_holds(snapshot, isvc, report, ome_namespace):
        return SyncPlan(SyncRefusal.MANAGED_EVIDENCE)
    pin = report.pin
    revision = pin.active_revision
    live = report.live.runtime
    assert revision is not None and live is not None and pin.roll_forward is not None
    pin_meta = _meta(snapshot, (d.CONTROLLER_REVISION, ome_namespace, revision.name))
    rows: list[tuple[str, str]] = [
        ("Action", messages.SYNC_ACTION),
        ("Context", context or "-"),
        ("Workload NS", meta.namespace),
        ("OME NS", ome_namespace),
        ("Target", f"InferenceService/{meta.name}"),
        ("UID", meta.uid),
        ("ResourceVersion", meta.resource_version),
        ("Dry-run", "client"),
        ("Generation", str(meta.generation)),
        ("Reported gen", str(isvc.status.observed_generation) if isvc.status.HasField("observed_generation") else "-"),
        ("Freshness", messages.SYNC_FRESHNESS),
        ("Pin", revision.name),
        ("Pin source", _kind_ref(live.key)),
    ]
    for key in report.live.chain:
        source_meta = _meta(snapshot, key)
        rows += [
            ("Source", _kind_ref(key)),
            ("Source UID", source_meta.uid or "-"),
            ("Source RV", source_meta.resource_version or "-"),
            ("Source gen", str(source_meta.generation)),
        ]
    choice = pin.roll_forward
    rows += [
        ("Pin UID", pin_meta.uid or "-"),
        ("Pin RV", pin_meta.resource_version or "-"),
        ("Current hash", revision.short_hash),
        ("Target hash", pinning.short(pin.live_hash)),
        ("Predicted pin", choice.name),
        ("Target evidence", "Existing" if choice.exists else "NotFound"),
        ("Old sync token", _SYNC_LABELS[pin.sync]),
    ]
    if choice.exists:
        target_meta = _meta(snapshot, (d.CONTROLLER_REVISION, ome_namespace, choice.name))
        rows += [("Target UID", target_meta.uid or "-"), ("Target RV", target_meta.resource_version or "-")]
    token = messages.SYNC_TOKEN_PREFIX + request_id
    rows += [
        ("Pause state", _pause_state(isvc)),
        ("Request UUID", request_id),
        ("Set annotation", d.RUNTIME_SYNC_ANNOTATION),
        ("New token", token),
    ]
    old = meta.annotations.get(d.RUNTIME_SYNC_ANNOTATION, "")
    if any(_unsafe(value) for _, value in rows) or _unsafe(old):
        return SyncPlan(SyncRefusal.UNSAFE_VALUE)
    return SyncPlan(None, tuple(rows), token, request_id, pinning.short(pin.live_hash))


_SYNC_LABELS = {
    SyncState.ABSENT: "Absent",
    SyncState.STATUS_ONLY: "StatusOnly",
    SyncState.ACKNOWLEDGED: "Acknowledged",
    SyncState.PENDING: "Pending",
}


def _unsafe(value: str) -> bool:
    """A preview value with a tab or a line break, or longer than 768 characters."""
    return len(value) > MAX_PREVIEW_VALUE or any(c in value for c in "\t\n\r")
