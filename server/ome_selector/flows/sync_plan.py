"""``kubectl ome runtime sync`` (reference/kubectl-ome/runtime.md, sync): the plan (preview rows,
token, target hash) or the refusal. Pure Python, no gRPC; the pin rules are ``revisions``'.

- ``plan_sync(snapshot, isvc, ome_namespace, request_id, context)`` -> ``SyncPlan``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows import revisions as pinning
from ome_selector.flows.revisions import PinMode, PinState, SyncState
from ome_selector.flows.views import (
    DriftCause,
    DriftState,
    EffectiveReport,
    effective_report,
    revision_issues,
    revision_source,
    revisions_of,
)
from ome_selector.texts import messages

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
    source = revision_source(isvc, live)
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
