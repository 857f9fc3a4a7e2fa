"""AdmitInferenceService (flows/admission.py), ReconcileInferenceService (flows/reconcile.py) and the
revision fields they share (flows/revisions.py)."""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.flows import admission as admission_rules
from ome_selector.flows import reconcile
from ome_selector.flows import revisions as pinning
from ome_selector.flows.components import ComponentConfig
from ome_selector.flows.resolution import Decision
from ome_selector.rpc.common import R, Rpc, _require_isvc, _require_synced, runtime_ref
from ome_selector.rpc.enums import (
    ACCELERATOR_SOURCE_TO_PB,
    ADMISSION_PATH_TO_PB,
    COMPONENT_TO_PB,
    DRIFT_REASON_TO_PB,
    LIVE_RELATION_TO_PB,
    MODE_SOURCE_TO_PB,
    OPERATION_FROM_PB,
    PIN_MODE_TO_PB,
    PIN_STATE_TO_PB,
    SYNC_STATE_TO_PB,
)
from ome_selector.rpc.selection import selection_pb
from ome_selector.texts import messages, requests
from ome_selector.validation import validate_name

# ---- lifecycle RPCs ----------------------------------------------------------------------------


def _components(configs: tuple[ComponentConfig, ...]) -> list[pb.ComponentConfiguration]:
    out = []
    for c in configs:
        a = c.accelerator
        out.append(
            pb.ComponentConfiguration(
                component=COMPONENT_TO_PB[c.component],
                deployment_mode=c.mode,
                mode_source=MODE_SOURCE_TO_PB[c.mode_source],
                mode_error=c.mode_error,
                accelerator_class=a.accelerator_class,
                accelerator_source=ACCELERATOR_SOURCE_TO_PB[a.source],
                accelerator_policy=a.policy,
                accelerator_error=a.error,
            )
        )
    return out


def _operation(value: int) -> d.Operation:
    """The request's ``operation``; INVALID_ARGUMENT for a number outside the enum."""
    found = OPERATION_FROM_PB.get(value)  # type: ignore[call-overload]
    if found is None:
        names = [op.name for op in d.Operation]
        raise RequestError.invalid([FieldViolation("operation", errors.unsupported(value, names))])
    return found


def _admission_objects(
    operation: d.Operation,
    new: Message | None,
    old: Message | None,
    fields: tuple[str, str],
    missing: tuple[str, str],
) -> list[FieldViolation]:
    """Whether an admission request carries the objects its ``operation`` has in Kubernetes'
    AdmissionRequest (``object``, ``oldObject``): CREATE the new one only; UPDATE the new one, and
    the stored one when known, with the same namespace and name; DELETE the old one only.
    ``fields`` names the two request fields, ``missing`` the texts for an absent one."""
    new_field, old_field = fields
    out = []
    if operation is d.Operation.DELETE:
        if new is not None:
            out.append(FieldViolation(new_field, errors.forbidden(requests.not_on_delete(old_field))))
        if old is None:
            out.append(FieldViolation(old_field, missing[1]))
        return out
    if new is None:
        out.append(FieldViolation(new_field, missing[0]))
    if old is None:
        return out
    if operation is d.Operation.CREATE:
        out.append(FieldViolation(old_field, errors.forbidden(requests.NOT_ON_CREATE)))
    elif new is not None:
        for part in ("namespace", "name"):
            was, now = getattr(old.metadata, part), getattr(new.metadata, part)  # type: ignore[attr-defined]
            if was != now:
                detail = requests.update_keeps(f"{new_field}.metadata.{part}", errors.quote(now))
                out.append(FieldViolation(f"{old_field}.metadata.{part}", errors.invalid_value(was, detail)))
    return out


def decode_admit(
    snapshot: Snapshot, request: pb.AdmitInferenceServiceRequest
) -> tuple[types_pb2.InferenceService, d.Operation]:
    """The InferenceService validating webhook (admission.py) on the request's ``operation``.
    Only the objects the operation carries and the namespace are required (INVALID_ARGUMENT, see
    ``_admission_objects``); every other problem is a denial with OME's message."""
    _require_synced(snapshot)
    operation = _operation(request.operation)
    new = request.inference_service if request.HasField("inference_service") else None
    old = request.old_inference_service if request.HasField("old_inference_service") else None
    fields = ("inference_service", "old_inference_service")
    violations = _admission_objects(operation, new, old, fields, (errors.required(), errors.required()))
    field, isvc = (fields[0], new) if new is not None else (fields[1], old)
    if isvc is not None:
        violations += validate_name(isvc.metadata.namespace, f"{field}.metadata.namespace", "namespace")
        if len(isvc.metadata.name) > 253:  # the API server rejects it before any webhook
            violations.append(FieldViolation(f"{field}.metadata.name", errors.too_long_value(isvc.metadata.name, 253)))
    if violations:
        raise RequestError.invalid(violations)
    assert isvc is not None
    return isvc, operation


def run_admit(snapshot: Snapshot, query: tuple[types_pb2.InferenceService, d.Operation]) -> admission_rules.Admission:
    return admission_rules.admit(snapshot, *query)


def encode_admit(
    snapshot: Snapshot, query: tuple[types_pb2.InferenceService, d.Operation], admission: admission_rules.Admission
) -> pb.AdmitInferenceServiceResponse:
    response = pb.AdmitInferenceServiceResponse(
        allowed=admission.allowed,
        denial_message=admission.denial,
        warnings=admission.warnings,
        path=ADMISSION_PATH_TO_PB[admission.path],
        webhook=admission_rules.ISVC_WEBHOOK,
        cache_version=snapshot.version,
    )
    return _with_selection(response, _decision_pb(admission.decision))


ADMIT = Rpc(decode_admit, run_admit, encode_admit)
admit_inference_service = ADMIT


def _decision_pb(decision: Decision | None) -> pb.Selection | None:
    return selection_pb(decision) if decision is not None else None


def _with_selection(response: R, selection: pb.Selection | None) -> R:
    """``response`` with its ``selection`` set when there is one."""
    if selection is not None:
        response.selection.CopyFrom(selection)
    return response


def _events(events: tuple[d.Event, ...]) -> list[pb.Event]:
    return [pb.Event(type=e.type, reason=e.reason, message=e.message) for e in events]


def _condition(c: reconcile.ConditionValue) -> pb.Condition:
    return pb.Condition(type="RuntimeReady", status=c.status, reason=c.reason, message=c.message, severity="Info")


def decode_reconcile(snapshot: Snapshot, request: pb.ReconcileInferenceServiceRequest) -> ReconcileQuery:
    """The controller's runtime step (reconcile.py), with the runtime pin (pinning.py) of a
    named runtime with ``autoSync: false``: ``runtime_drifted`` / ``remove_runtime_drifted`` and
    ``pin``. ``ome_namespace``, when set, must be a namespace name (INVALID_ARGUMENT)."""
    _require_synced(snapshot)
    ome_namespace = _ome_namespace(request)
    return ReconcileQuery(_require_isvc(request), request.has_runtime_ready_condition, ome_namespace)


@dataclass(frozen=True, slots=True)
class ReconcileQuery:
    """A validated ReconcileInferenceServiceRequest."""

    isvc: types_pb2.InferenceService
    has_runtime_ready_condition: bool
    ome_namespace: str


@dataclass(frozen=True, slots=True)
class Reconciled:
    """The reconcile, and the pin report of the InferenceService (flows/revisions.py)."""

    result: reconcile.Reconcile
    report: pinning.PinReport


def run_reconcile(snapshot: Snapshot, query: ReconcileQuery) -> Reconciled:
    isvc = query.isvc
    # The condition exists when the request says so or the InferenceService's status holds it.
    has_condition = query.has_runtime_ready_condition or reconcile.has_runtime_ready(isvc)
    result = reconcile.reconcile(snapshot, isvc, has_condition, query.ome_namespace)
    selected = result.decision.runtime if result.decision is not None and not isvc.spec.runtime.name else None
    return Reconciled(result, pinning.report(snapshot, isvc, query.ome_namespace, selected))


def encode_reconcile(
    snapshot: Snapshot, query: ReconcileQuery, outcome: Reconciled
) -> pb.ReconcileInferenceServiceResponse:
    result = outcome.result
    response = pb.ReconcileInferenceServiceResponse(
        events=_events(result.events),
        requeue=result.requeue,
        workload_untouched=result.workload_untouched,
        logs=result.logs,
        components=_components(result.components),
        cache_version=snapshot.version,
    )
    if result.condition is not None:
        response.runtime_ready.CopyFrom(_condition(result.condition))
        if result.condition.status == "False":
            response.ready_unchanged = True
            ready = reconcile.ready_left(query.isvc)
            if ready is not None:
                response.ready_condition_kept.CopyFrom(
                    pb.Condition(
                        type=ready.type,
                        status=ready.status,
                        reason=ready.reason,
                        message=ready.message,
                        severity=ready.severity,
                    )
                )
    rt, pin = result.runtime, result.pin
    if pin is not None and rt is not None:  # served without a compatibility check
        source = pin.live or rt
        selection: pb.Selection | None = pb.Selection(
            runtime=runtime_ref(source),
            mode=pb.SELECTION_MODE_NAMED,
            inheritance_chain=source.chain,
            supported_model_format_index=-1,
        )
    elif rt is not None and result.decision is not None and result.decision.runtime is rt:
        selection = _decision_pb(result.decision)
    else:
        selection = None
    _pin_fields(response, outcome.report, pin, query.isvc, query.ome_namespace)
    return _with_selection(response, selection)


RECONCILE = Rpc(decode_reconcile, run_reconcile, encode_reconcile)
reconcile_inference_service = RECONCILE


def _choice(choice: pinning.Choice | None) -> pb.RevisionChoice | None:
    if choice is None:
        return None
    return pb.RevisionChoice(name=choice.name, exists=choice.exists, hash=pinning.short(choice.full_hash))


def _pin_fields(
    response: pb.ReconcileInferenceServiceResponse,
    report: pinning.PinReport,
    outcome: pinning.PinOutcome | None,
    isvc: types_pb2.InferenceService,
    ome_namespace: str,
) -> None:
    """The reconcile's ``pin``, ``runtime_drifted`` and ``remove_runtime_drifted``."""
    pin = response.pin
    pin.mode = PIN_MODE_TO_PB[report.mode]
    pin.state = PIN_STATE_TO_PB[report.state]
    pin.sync = SYNC_STATE_TO_PB[report.sync]
    pin.live_hash = pinning.short(report.live_hash)
    pin.active_hash = pinning.short(report.active_hash)
    pin.live_relation = LIVE_RELATION_TO_PB[report.relation]
    for field, choice in (("roll_forward", report.roll_forward), ("rollback", report.rollback)):
        value = _choice(choice)
        if value is not None:
            getattr(pin, field).CopyFrom(value)
    if outcome is None:
        return
    pin.pinned_revision_name = outcome.pinned
    if outcome.token is not None:
        pin.last_runtime_sync_token = outcome.token
    pin.served_from_revision = outcome.from_revision
    if outcome.create is not None and outcome.live is not None:
        pin.create_revision.CopyFrom(new_revision(isvc, outcome.create, outcome.live, ome_namespace))
    if outcome.drift is not None:
        pin.drift_reason = DRIFT_REASON_TO_PB[outcome.drift]
        response.runtime_drifted.CopyFrom(
            pb.Condition(
                type=messages.CONDITION_RUNTIME_DRIFTED,
                status="True",
                reason=outcome.drift.value,
                message=outcome.drift_message,
            )
        )
    response.remove_runtime_drifted = outcome.clear_drift


def new_revision(
    isvc: types_pb2.InferenceService, choice: pinning.Choice, live: d.Runtime, ome_namespace: str
) -> types_pb2.ControllerRevision:
    """The ControllerRevision OME creates to pin ``live``'s merged spec (runtime-revisions.md;
    labels-and-annotations.md, "ControllerRevisions"): in OME's namespace, labelled with the
    runtime's name, kind and namespace (empty for a ClusterServingRuntime) and the short hash,
    annotated ``ome.io/created-by: ome-controller``, revision 1."""
    kind = pinning.source_kind(isvc.spec.runtime)
    revision = types_pb2.ControllerRevision(api_version="apps/v1", kind=d.CONTROLLER_REVISION, revision=1)
    meta = revision.metadata
    meta.name, meta.namespace = choice.name, ome_namespace
    meta.labels[d.RUNTIME_OF_LABEL] = isvc.spec.runtime.name
    meta.labels[d.RUNTIME_OF_KIND_LABEL] = kind
    meta.labels[d.RUNTIME_OF_NAMESPACE_LABEL] = isvc.metadata.namespace if kind == d.SERVING_RUNTIME else ""
    meta.labels[d.REVISION_HASH_LABEL] = pinning.short(choice.full_hash)
    meta.annotations[d.CREATED_BY_ANNOTATION] = d.CREATED_BY_OME
    revision.data.CopyFrom(live.named_spec)
    return revision


def _ome_namespace(
    request: pb.ReconcileInferenceServiceRequest
    | pb.GetEffectiveRuntimeRequest
    | pb.GetRuntimeHistoryRequest
    | pb.PlanRuntimeSyncRequest,
) -> str:
    """``ome_namespace``, default ``ome``; INVALID_ARGUMENT when it is not a namespace name."""
    if request.ome_namespace:
        violations = validate_name(request.ome_namespace, "ome_namespace", "namespace")
        if violations:
            raise RequestError.invalid(violations)
    return request.ome_namespace or d.DEFAULT_OME_NAMESPACE


def _collection_limit(request: pb.GetEffectiveRuntimeRequest | pb.GetRuntimeHistoryRequest) -> int:
    """``collection_limit``: 0 (no limit) or more; INVALID_ARGUMENT when negative."""
    if request.collection_limit < 0:
        raise RequestError.invalid(
            [FieldViolation("collection_limit", errors.invalid_value(request.collection_limit, requests.NOT_NEGATIVE))]
        )
    return request.collection_limit
