"""GetEffectiveRuntime (Live and Active views, Service rows, ISSUE codes), GetRuntimeHistory and
PlanRuntimeSync (reference/kubectl-ome/runtime.md; flows/effective.py, flows/views.py,
flows/history.py, flows/sync_plan.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.flows import history, sync_plan, views
from ome_selector.flows import revisions as pinning
from ome_selector.rpc.common import Rpc, _ref, _require_isvc, _require_synced, runtime_ref
from ome_selector.rpc.enums import (
    COMPLETENESS_TO_PB,
    CONSISTENCY_TO_PB,
    DRIFT_CAUSE_TO_PB,
    DRIFT_STATE_TO_PB,
    GENERATION_STATUS_TO_PB,
    ISSUE_CODE_TO_PB,
    LIVE_RELATION_TO_PB,
    OBSERVATION_TO_PB,
    PIN_MODE_TO_PB,
    PIN_STATE_TO_PB,
    RELATION_TO_PB,
    ROLE_TO_PB,
    SYNC_REFUSAL_TO_PB,
    SYNC_STATE_TO_PB,
)
from ome_selector.rpc.lifecycle import _collection_limit, _components, _ome_namespace
from ome_selector.texts import messages, requests


def _issues(issues: tuple[views.Issue, ...]) -> list[pb.Issue]:
    return [pb.Issue(code=ISSUE_CODE_TO_PB[i.code], revision=i.revision, text=i.text) for i in issues]


@dataclass(frozen=True, slots=True)
class ViewQuery:
    """A validated request about one InferenceService's runtime: OME's namespace (``ome``
    unless set) and the most runtime revisions to list (0: no limit)."""

    isvc: types_pb2.InferenceService
    ome_namespace: str
    collection_limit: int = 0


def decode_view(snapshot: Snapshot, request: pb.GetEffectiveRuntimeRequest | pb.GetRuntimeHistoryRequest) -> ViewQuery:
    """INVALID_ARGUMENT for a bad InferenceService, ``ome_namespace`` or a negative
    ``collection_limit``."""
    _require_synced(snapshot)
    isvc = _require_isvc(request)
    ome_namespace = _ome_namespace(request)
    return ViewQuery(isvc, ome_namespace, _collection_limit(request))


def run_effective(snapshot: Snapshot, query: ViewQuery) -> views.EffectiveReport:
    """``kubectl ome runtime effective`` (effective.py, views.py): the Live view, the Active view
    and the Service rows with the ISSUE codes."""
    return views.effective_report(snapshot, query.isvc, query.ome_namespace, query.collection_limit)


def encode_effective(
    snapshot: Snapshot, query: ViewQuery, report: views.EffectiveReport
) -> pb.GetEffectiveRuntimeResponse:
    view, active, pin = report.live, report.active, report.pin
    response = pb.GetEffectiveRuntimeResponse(
        state=view.state,
        reason=view.reason,
        selection=view.selection,
        inheritance_chain=[_ref(key) for key in view.chain],
        inheritance_error=view.inheritance_error,
        inheritance_reason=view.inheritance_reason,
        components=_components(view.components),
        cache_version=snapshot.version,
        hash=pinning.short(pin.live_hash) if view.state == messages.VIEW_AVAILABLE else "",
        active=pb.EffectiveView(
            state=active.state,
            reason=active.reason,
            revision=active.revision,
            hash=pinning.short(active.full_hash),
            components=_components(active.components),
        ),
        service=pb.EffectiveService(
            pin_mode=PIN_MODE_TO_PB[pin.mode],
            pin_state=PIN_STATE_TO_PB[pin.state],
            sync=SYNC_STATE_TO_PB[pin.sync],
            status=GENERATION_STATUS_TO_PB[report.status],
            drift_state=DRIFT_STATE_TO_PB[report.drift_state],
            drift_cause=DRIFT_CAUSE_TO_PB[report.drift_cause],
            live_relation=LIVE_RELATION_TO_PB[pin.relation],
            issues=_issues(report.issues),
        ),
        api_version=messages.REPORT_API_VERSION,
        kind=messages.EFFECTIVE_REPORT_KIND,
    )
    if view.runtime is not None:
        response.runtime = view.runtime.display
        response.runtime_ref.CopyFrom(runtime_ref(view.runtime))
        if not view.inheritance_error:
            response.spec.CopyFrom(view.runtime.named_spec)
    if active.runtime is not None:
        response.active.runtime = active.runtime.display
        response.active.runtime_ref.CopyFrom(runtime_ref(active.runtime))
        response.active.spec.CopyFrom(active.runtime.named_spec)  # a revision's: its data
    return response


EFFECTIVE = Rpc(decode_view, run_effective, encode_effective)
get_effective_runtime = EFFECTIVE


def _created(revision: d.Revision) -> str:
    """RFC 3339 in UTC (``2026-09-20T14:30:00Z``); ``""`` when unknown."""
    if revision.created is None:
        return ""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(revision.created, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def run_history(snapshot: Snapshot, query: ViewQuery) -> history.HistoryReport:
    """``kubectl ome runtime history`` (flows/history.py): the RuntimeHistoryReport."""
    return history.history(snapshot, query.isvc, query.ome_namespace, query.collection_limit)


def encode_history(snapshot: Snapshot, query: ViewQuery, report: history.HistoryReport) -> pb.GetRuntimeHistoryResponse:
    return pb.GetRuntimeHistoryResponse(
        api_version=messages.REPORT_API_VERSION,
        kind=messages.HISTORY_REPORT_KIND,
        runtime_name=report.runtime_name,
        observation=OBSERVATION_TO_PB[report.observation],
        completeness=COMPLETENESS_TO_PB[report.completeness],
        pages_seen=report.pages_seen,
        pages_asked=report.pages_asked,
        revisions=[
            pb.HistoryRevision(
                name=e.revision.name,
                created=_created(e.revision),
                hash=e.revision.short_hash,
                roles=[ROLE_TO_PB[r] for r in e.roles],
                source=_ref(
                    (
                        d.SERVING_RUNTIME if e.revision.owner_kind == d.SERVING_RUNTIME else d.CLUSTER_SERVING_RUNTIME,
                        e.revision.owner_namespace if e.revision.owner_kind == d.SERVING_RUNTIME else "",
                        e.revision.owner_name,
                    )
                ),
                consistency=CONSISTENCY_TO_PB[e.consistency],
                relation=RELATION_TO_PB[e.relation],
                issues=_issues(e.issues),
            )
            for e in report.entries
        ],
        report_issues=_issues(report.report_issues),
        total_size=report.total,
        cache_version=snapshot.version,
    )


HISTORY = Rpc(decode_view, run_history, encode_history)
get_runtime_history = HISTORY


@dataclass(frozen=True, slots=True)
class SyncQuery:
    """A validated PlanRuntimeSyncRequest: ``request_id`` a UUID (a new one unless given)."""

    isvc: types_pb2.InferenceService
    ome_namespace: str
    request_id: str
    context: str


def decode_sync(snapshot: Snapshot, request: pb.PlanRuntimeSyncRequest) -> SyncQuery:
    """INVALID_ARGUMENT for a bad InferenceService or ``ome_namespace``, a ``request_id`` that is
    not a UUID, or a ``context`` over 253 characters."""
    _require_synced(snapshot)
    isvc = _require_isvc(request)
    ome_namespace = _ome_namespace(request)
    violations: list[FieldViolation] = []
    request_id = request.request_id
    if request_id:
        try:
            request_id = str(uuid.UUID(request_id))
        except ValueError:
            violations.append(FieldViolation("request_id", errors.invalid_value(request_id, requests.NOT_A_UUID)))
    else:
        request_id = str(uuid.uuid4())
    if len(request.context) > 253:
        violations.append(FieldViolation("context", errors.too_long_value(request.context, 253)))
    if violations:
        raise RequestError.invalid(violations)
    return SyncQuery(isvc, ome_namespace, request_id, request.context)


def run_sync(snapshot: Snapshot, query: SyncQuery) -> sync_plan.SyncPlan:
    """``kubectl ome runtime sync --dry-run client`` (sync_plan.plan_sync): the refusal, or the
    preview, the token and the ActionResult. The service plans; the caller patches."""
    return sync_plan.plan_sync(snapshot, query.isvc, query.ome_namespace, query.request_id, query.context)


def encode_sync(snapshot: Snapshot, query: SyncQuery, plan: sync_plan.SyncPlan) -> pb.PlanRuntimeSyncResponse:
    if plan.refusal is not None:
        return pb.PlanRuntimeSyncResponse(
            refusal=SYNC_REFUSAL_TO_PB[plan.refusal],
            refusal_message=plan.refusal.value,
            cache_version=snapshot.version,
        )
    meta = query.isvc.metadata
    return pb.PlanRuntimeSyncResponse(
        preview=[pb.PreviewField(field=f, value=v) for f, v in plan.preview],
        warnings=messages.SYNC_PREVIEW_WARNINGS,
        annotation=d.RUNTIME_SYNC_ANNOTATION,
        token=plan.token,
        result=pb.ActionResult(
            action=messages.SYNC_ACTION,
            target=f"InferenceService/{meta.namespace}/{meta.name}",
            dry_run="client",
            accepted=False,
            applied=False,
            request_id=plan.request_id,
            revision_hash=plan.target_hash,
            message=messages.SYNC_CLIENT_DRY_RUN,
            follow_up=messages.sync_follow_up(meta.name, meta.namespace, query.context, query.ome_namespace),
            hint=messages.SYNC_HINT,
        ),
        cache_version=snapshot.version,
    )


SYNC = Rpc(decode_sync, run_sync, encode_sync)
plan_runtime_sync = SYNC
