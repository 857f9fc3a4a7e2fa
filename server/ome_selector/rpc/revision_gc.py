"""PlanRevisionGC: OME's runtime-revision garbage collection, planned
(concepts/runtimes/runtime-revisions.md, "Garbage collection"; flows/revision_gc.py)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ome.selector.v1 import selector_pb2 as pb

from ome_selector import validation
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.domain.errors import RequestError
from ome_selector.flows import revision_gc as gc
from ome_selector.rpc.common import Rpc, _ref, _require_synced
from ome_selector.rpc.enums import RUNTIME_KIND_FROM_PB

VERDICT_TO_PB = {gc.Verdict.KEEP: pb.REVISION_GC_VERDICT_KEEP, gc.Verdict.DELETE: pb.REVISION_GC_VERDICT_DELETE}
ACTION_TO_PB = {
    gc.Action.NONE: pb.REVISION_GC_ACTION_NONE,
    gc.Action.UNMARK: pb.REVISION_GC_ACTION_UNMARK,
    gc.Action.MARK: pb.REVISION_GC_ACTION_MARK,
    gc.Action.WAIT: pb.REVISION_GC_ACTION_WAIT,
    gc.Action.DELETE: pb.REVISION_GC_ACTION_DELETE,
}
REASON_TO_PB = {
    gc.Reason.NOT_OME_MANAGED: pb.REVISION_GC_REASON_NOT_OME_MANAGED,
    gc.Reason.REQUESTED: pb.REVISION_GC_REASON_REQUESTED,
    gc.Reason.REPORTED: pb.REVISION_GC_REASON_REPORTED,
    gc.Reason.NEWEST: pb.REVISION_GC_REASON_NEWEST,
    gc.Reason.ELIGIBLE: pb.REVISION_GC_REASON_ELIGIBLE,
}


@dataclass(frozen=True, slots=True)
class GCQuery:
    """A validated PlanRevisionGC request: OME's namespace, the runtime (kind, namespace, name;
    kind empty for every revision of the name) or None, the settings, the time (epoch seconds)."""

    ome_namespace: str
    runtime: tuple[str, str, str] | None
    keep_newest: int
    grace_seconds: int
    now: float


def decode_gc(snapshot: Snapshot, request: pb.PlanRevisionGCRequest) -> GCQuery:
    """INVALID_ARGUMENT naming each bad field (``validation.revision_gc_request``); UNAVAILABLE
    before the first sync. Defaults: ``ome``, 10 newest, 24 h, the server's clock."""
    _require_synced(snapshot)
    violations = validation.revision_gc_request(request)
    if violations:
        raise RequestError.invalid(violations)
    runtime = None
    if request.HasField("runtime"):
        ref = request.runtime
        runtime = (RUNTIME_KIND_FROM_PB.get(ref.kind, ""), ref.namespace, ref.name)
    now = gc.parse_time(request.now) if request.now else None
    return GCQuery(
        request.ome_namespace or d.DEFAULT_OME_NAMESPACE,
        runtime,
        request.keep_newest or gc.DEFAULT_KEEP_NEWEST,
        request.grace_period_seconds or gc.DEFAULT_GRACE_SECONDS,
        float(int(time.time())) if now is None else now,
    )


def run_gc(snapshot: Snapshot, query: GCQuery) -> gc.GCPlan:
    """The plan (revision_gc.py)."""
    return gc.plan(snapshot, query.ome_namespace, query.runtime, query.keep_newest, query.grace_seconds, query.now)


def _time(epoch: float | None) -> str:
    return gc.format_time(epoch) if epoch is not None else ""


def encode_gc(snapshot: Snapshot, query: GCQuery, plan: gc.GCPlan) -> pb.PlanRevisionGCResponse:
    entries = [
        pb.RevisionGCEntry(
            name=e.revision.name,
            source=_ref(
                (
                    d.SERVING_RUNTIME if e.revision.owner_kind == d.SERVING_RUNTIME else d.CLUSTER_SERVING_RUNTIME,
                    e.revision.owner_namespace if e.revision.owner_kind == d.SERVING_RUNTIME else "",
                    e.revision.owner_name,
                )
            ),
            created=_time(e.revision.created),
            rank=e.rank,
            verdict=VERDICT_TO_PB[e.verdict],
            action=ACTION_TO_PB[e.action],
            reason=REASON_TO_PB[e.reason],
            used_by=e.users,
            eligible_since=_time(e.eligible_since),
            delete_after=_time(e.delete_after),
            message=e.message,
        )
        for e in plan.entries
    ]
    deleted = sum(e.verdict is gc.Verdict.DELETE for e in plan.entries)
    return pb.PlanRevisionGCResponse(
        ome_namespace=plan.ome_namespace,
        keep_newest=plan.keep_newest,
        grace_period_seconds=plan.grace_seconds,
        now=gc.format_time(plan.now),
        revisions=entries,
        kept=len(entries) - deleted,
        deleted=deleted,
        cache_version=snapshot.version,
    )


# PlanRevisionGC: its row of ``api.SELECTION_RPCS``.
plan_revision_gc = Rpc(decode_gc, run_gc, encode_gc)
