"""Request -> domain -> engine -> response, shared by the gRPC servicers and the offline CLI.

Every function takes the snapshot the caller read once and a request proto, and returns the
response proto. They raise ``RequestError``: INVALID_ARGUMENT (with field violations) for bad
input, NOT_FOUND for an unknown model or named runtime, UNAVAILABLE when the cache has never been
synced. "No runtime found", a denial and a failed check are normal answers. No answer is
memoised: each call computes its answer on the snapshot it read (``engine.auto_select``).

- ``select_runtime``: SelectRuntime, BASIC or FULL view (runtime-selection-scoring.md;
  reference-a-runtime-explicitly.md).
- ``explain_runtimes``: ExplainRuntimes, by InferenceService or by model, paged (kubectl-ome runtime.md).
- ``admit_inference_service``, ``reconcile_inference_service``, ``get_effective_runtime``: admission.py,
  reconcile.py, effective.py.
- ``validate_serving_runtime``: runtime_webhook.py, plus the warning of the InferenceServices the
  runtime would move (outcomes.py).
- ``preview_cache_change``: PreviewCacheChange (outcomes.py); ``outcome_pb`` / ``change_pbs`` build
  the protos WatchSelections streams too.
- ``get_runtime_status``: runtime_status.py.
- ``get_effective_runtime`` (Active view, Service rows, ISSUE codes), ``get_runtime_history``,
  ``plan_runtime_sync``: views.py.
"""

from __future__ import annotations

import base64
import hashlib
import json
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.cache.ingest import (
    KIND_TO_ENUM,
    compile_request,
    isvc_spec_violations,
    model_spec_violations,
    object_key,
    validate_name,
    validate_spec,
)
from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import prepare, resolve_keys
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import AutoSelection, Evaluation, TieBreak, Verdict
from ome_selector.flows import admission as admission_rules
from ome_selector.flows import changes, outcomes, reconcile, resolution, tree, views
from ome_selector.flows import revisions as pinning
from ome_selector.flows.components import ComponentConfig
from ome_selector.flows.revisions import DriftReason, LiveRelation, PinMode, PinState, SyncState
from ome_selector.flows.runtime_status import runtime_status
from ome_selector.flows.runtime_webhook import as_cache_object, deletion_verdict, validate_runtime
from ome_selector.rules import accelerators
from ome_selector.rules.checks import Check, Failure, entry_score, explain_columns
from ome_selector.texts import messages

R = TypeVar("R", pb.AdmitInferenceServiceResponse, pb.ReconcileInferenceServiceResponse)
NOT_SYNCED_MESSAGE = "cache not synced yet"
NO_RUNTIMES_NOTE = "No serving runtimes found in the selected namespace or at cluster scope."
EXPLICIT_RUNTIME_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."


def _require_synced(snapshot: Snapshot) -> None:
    if not snapshot.synced:
        raise RequestError("UNAVAILABLE", NOT_SYNCED_MESSAGE)


def _isvc_violations(isvc: types_pb2.InferenceService, base: str = "inference_service") -> list[FieldViolation]:
    """Violations of fields the API server validates before OME sees the object: namespace and
    name, ``spec.deploymentMode`` and ``acceleratorSelector.policy`` enums
    (``ingest.isvc_spec_violations``, which a cached InferenceService gets too)."""
    violations = validate_name(isvc.metadata.namespace, f"{base}.metadata.namespace", "namespace")
    if isvc.metadata.name:
        violations += validate_name(isvc.metadata.name, f"{base}.metadata.name")
    return violations + isvc_spec_violations(isvc, base)


def _require_isvc(
    request: pb.SelectRuntimeRequest
    | pb.ExplainRuntimesRequest
    | pb.ReconcileInferenceServiceRequest
    | pb.GetEffectiveRuntimeRequest
    | pb.GetRuntimeHistoryRequest
    | pb.PlanRuntimeSyncRequest,
) -> types_pb2.InferenceService:
    if not request.HasField("inference_service"):
        raise RequestError.invalid([FieldViolation("inference_service", errors.required())])
    violations = _isvc_violations(request.inference_service)
    if violations:
        raise RequestError.invalid(violations)
    return request.inference_service


def _ref(key: tuple[str, str, str]) -> pb.RuntimeRef:
    """RuntimeRef proto of a runtime key; kind unspecified for a key of no runtime kind (a
    parent that does not exist)."""
    kind = RUNTIME_KIND_TO_PB.get(key[0], pb.RUNTIME_KIND_UNSPECIFIED)
    return pb.RuntimeRef(kind=kind, namespace=key[1], name=key[2])


def runtime_ref(runtime: d.Runtime) -> pb.RuntimeRef:
    """RuntimeRef proto of a runtime."""
    return _ref(runtime.key)


# One explicit table per domain enum -> proto enum.
RUNTIME_KIND_TO_PB = {
    d.SERVING_RUNTIME: pb.RUNTIME_KIND_SERVING_RUNTIME,
    d.CLUSTER_SERVING_RUNTIME: pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME,
}
CHECK_TO_PB = {
    Check.DISABLED: pb.CHECK_DISABLED,
    Check.ACCELERATOR_CLASS: pb.CHECK_ACCELERATOR_CLASS,
    Check.DEPLOYMENT_MODE: pb.CHECK_DEPLOYMENT_MODE,
    Check.MODEL_FORMAT: pb.CHECK_MODEL_FORMAT,
    Check.MODEL_SIZE: pb.CHECK_MODEL_SIZE,
    Check.AUTO_SELECT: pb.CHECK_AUTO_SELECT,
    Check.SCORE: pb.CHECK_SCORE,
}
VERDICT_TO_PB = {
    Verdict.CANDIDATE: pb.VERDICT_CANDIDATE,
    Verdict.EXCLUDED: pb.VERDICT_EXCLUDED,
    Verdict.COMPATIBLE_NOT_AUTO_SELECTABLE: pb.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE,
}
TIE_BREAK_TO_PB = {
    TieBreak.UNSPECIFIED: pb.TIE_BREAK_UNSPECIFIED,
    TieBreak.SCOPE: pb.TIE_BREAK_SCOPE,
    TieBreak.SCORE: pb.TIE_BREAK_SCORE,
    TieBreak.SIZE_DISTANCE: pb.TIE_BREAK_SIZE_DISTANCE,
    TieBreak.NAME: pb.TIE_BREAK_NAME,
}
COMPONENT_TO_PB = {
    "": pb.COMPONENT_UNSPECIFIED,
    "engine": pb.COMPONENT_ENGINE,
    "decoder": pb.COMPONENT_DECODER,
    "router": pb.COMPONENT_ROUTER,
}
MODE_SOURCE_TO_PB = {
    "SERVICE_ANNOTATION": pb.MODE_SOURCE_SERVICE_ANNOTATION,
    "COMPONENT_ANNOTATION": pb.MODE_SOURCE_COMPONENT_ANNOTATION,
    "SERVICE_SPEC": pb.MODE_SOURCE_SERVICE_SPEC,
    "LEADER_WORKER_SHAPE": pb.MODE_SOURCE_LEADER_WORKER_SHAPE,
    "DEFAULT": pb.MODE_SOURCE_DEFAULT,
}
ACCELERATOR_SOURCE_TO_PB = {
    "UNSPECIFIED": pb.ACCELERATOR_SOURCE_UNSPECIFIED,
    accelerators.COMPONENT_OVERRIDE: pb.ACCELERATOR_SOURCE_COMPONENT_OVERRIDE,
    accelerators.SELECTOR: pb.ACCELERATOR_SOURCE_SELECTOR,
    accelerators.POLICY: pb.ACCELERATOR_SOURCE_POLICY,
    accelerators.NONE_RUNTIME_LISTS_NONE: pb.ACCELERATOR_SOURCE_NONE_RUNTIME_LISTS_NONE,
    accelerators.NONE_NOT_REQUESTED: pb.ACCELERATOR_SOURCE_NONE_NOT_REQUESTED,
    accelerators.NONE_NO_CANDIDATE: pb.ACCELERATOR_SOURCE_NONE_NO_CANDIDATE,
    accelerators.NONE_ROUTER: pb.ACCELERATOR_SOURCE_NONE_ROUTER,
}
ADMISSION_PATH_TO_PB = {
    "NO_ENGINE": pb.ADMISSION_PATH_NO_ENGINE,
    "DEFERRED_FULL_RUNNER": pb.ADMISSION_PATH_DEFERRED_FULL_RUNNER,
    "AUTO_SELECT": pb.ADMISSION_PATH_AUTO_SELECT,
    "NAMED_RUNTIME": pb.ADMISSION_PATH_NAMED_RUNTIME,
    "NAMED_RUNTIME_NO_MODEL": pb.ADMISSION_PATH_NAMED_RUNTIME_NO_MODEL,
    "PINNED_NO_MODEL": pb.ADMISSION_PATH_PINNED_NO_MODEL,
    "SPEC": pb.ADMISSION_PATH_SPEC,
    "DELETE": pb.ADMISSION_PATH_DELETE,
}
# Proto -> domain: unspecified is CREATE, the operation of every request before the field existed.
OPERATION_FROM_PB = {
    pb.ADMISSION_OPERATION_UNSPECIFIED: d.Operation.CREATE,
    pb.ADMISSION_OPERATION_CREATE: d.Operation.CREATE,
    pb.ADMISSION_OPERATION_UPDATE: d.Operation.UPDATE,
    pb.ADMISSION_OPERATION_DELETE: d.Operation.DELETE,
}
CHANGE_STEP_TO_PB = {
    outcomes.ChangeStep.INFERENCE_SERVICE: pb.CHANGE_STEP_INFERENCE_SERVICE,
    outcomes.ChangeStep.MODEL: pb.CHANGE_STEP_MODEL,
    outcomes.ChangeStep.RUNTIME_ADDED: pb.CHANGE_STEP_RUNTIME_ADDED,
    outcomes.ChangeStep.RUNTIME_DELETED: pb.CHANGE_STEP_RUNTIME_DELETED,
    outcomes.ChangeStep.CHECK_FAILED: pb.CHANGE_STEP_CHECK_FAILED,
    outcomes.ChangeStep.CHECK_PASSED: pb.CHANGE_STEP_CHECK_PASSED,
    outcomes.ChangeStep.RANKING: pb.CHANGE_STEP_RANKING,
    outcomes.ChangeStep.NAMED_RUNTIME: pb.CHANGE_STEP_NAMED_RUNTIME,
    outcomes.ChangeStep.CONFIGURATION: pb.CHANGE_STEP_CONFIGURATION,
}
PIN_MODE_TO_PB = {
    PinMode.AUTO_SYNC: pb.PIN_MODE_AUTO_SYNC,
    PinMode.MANAGED_PIN: pb.PIN_MODE_MANAGED_PIN,
    PinMode.EXPLICIT_PIN: pb.PIN_MODE_EXPLICIT_PIN,
    PinMode.INVALID_PIN: pb.PIN_MODE_INVALID_PIN,
}
PIN_STATE_TO_PB = {
    PinState.NOT_APPLICABLE: pb.PIN_STATE_NOT_APPLICABLE,
    PinState.AWAITING_PIN: pb.PIN_STATE_AWAITING_PIN,
    PinState.RESOLVED: pb.PIN_STATE_RESOLVED,
    PinState.DESIRED_REPORTED_MISMATCH: pb.PIN_STATE_DESIRED_REPORTED_MISMATCH,
    PinState.REVISION_MISSING: pb.PIN_STATE_REVISION_MISSING,
    PinState.REVISION_INVALID: pb.PIN_STATE_REVISION_INVALID,
    PinState.REVISION_DISABLED: pb.PIN_STATE_REVISION_DISABLED,
    PinState.UNAVAILABLE: pb.PIN_STATE_UNAVAILABLE,
    PinState.INVALID_INTENT: pb.PIN_STATE_INVALID_INTENT,
}
SYNC_STATE_TO_PB = {
    SyncState.ABSENT: pb.SYNC_STATE_ABSENT,
    SyncState.STATUS_ONLY: pb.SYNC_STATE_STATUS_ONLY,
    SyncState.ACKNOWLEDGED: pb.SYNC_STATE_ACKNOWLEDGED,
    SyncState.PENDING: pb.SYNC_STATE_PENDING,
}
LIVE_RELATION_TO_PB = {
    LiveRelation.UNKNOWN: pb.LIVE_RELATION_UNKNOWN,
    LiveRelation.EQUAL: pb.LIVE_RELATION_EQUAL,
    LiveRelation.DIFFERENT: pb.LIVE_RELATION_DIFFERENT,
    LiveRelation.AMBIGUOUS: pb.LIVE_RELATION_AMBIGUOUS,
}
DRIFT_REASON_TO_PB = {
    DriftReason.REVISION_MISMATCH: pb.DRIFT_REASON_REVISION_MISMATCH,
    DriftReason.REVISION_MISSING: pb.DRIFT_REASON_REVISION_MISSING,
    DriftReason.RUNTIME_MISMATCH: pb.DRIFT_REASON_RUNTIME_MISMATCH,
    DriftReason.SOURCE_RUNTIME_MISSING: pb.DRIFT_REASON_SOURCE_RUNTIME_MISSING,
}
RUNTIME_KIND_FROM_PB = {
    pb.RUNTIME_KIND_SERVING_RUNTIME: d.SERVING_RUNTIME,
    pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME: d.CLUSTER_SERVING_RUNTIME,
}
TREE_ISSUE_TO_PB = {
    tree.IssueCode.PARENT_MISSING: pb.RUNTIME_TREE_ISSUE_CODE_PARENT_MISSING,
    tree.IssueCode.CYCLE_DETECTED: pb.RUNTIME_TREE_ISSUE_CODE_CYCLE_DETECTED,
    tree.IssueCode.MAX_DEPTH_EXCEEDED: pb.RUNTIME_TREE_ISSUE_CODE_MAX_DEPTH_EXCEEDED,
}
TREE_UNATTRIBUTED_STATE_TO_PB = {
    tree.UnattributedState.UNRESOLVED: pb.RUNTIME_TREE_UNATTRIBUTED_STATE_UNRESOLVED,
    tree.UnattributedState.INVALID: pb.RUNTIME_TREE_UNATTRIBUTED_STATE_INVALID,
    tree.UnattributedState.AMBIGUOUS: pb.RUNTIME_TREE_UNATTRIBUTED_STATE_AMBIGUOUS,
}
_REASON = tree.UnattributedReason
TREE_UNATTRIBUTED_REASON_TO_PB = {
    _REASON.AUTOMATIC_SELECTION: pb.RUNTIME_TREE_UNATTRIBUTED_REASON_AUTOMATIC_SELECTION,
    _REASON.RUNTIME_NOT_FOUND: pb.RUNTIME_TREE_UNATTRIBUTED_REASON_RUNTIME_NOT_FOUND,
    _REASON.INVALID_RUNTIME_NAME: pb.RUNTIME_TREE_UNATTRIBUTED_REASON_INVALID_RUNTIME_NAME,
    _REASON.DUPLICATE_INFERENCE_SERVICE: pb.RUNTIME_TREE_UNATTRIBUTED_REASON_DUPLICATE_INFERENCE_SERVICE,
}
TREE_COLLECTION_STATUS_TO_PB = {
    tree.CollectionStatus.COMPLETE: pb.RUNTIME_TREE_COLLECTION_STATUS_COMPLETE,
    tree.CollectionStatus.TRUNCATED: pb.RUNTIME_TREE_COLLECTION_STATUS_TRUNCATED,
    tree.CollectionStatus.UNAVAILABLE: pb.RUNTIME_TREE_COLLECTION_STATUS_UNAVAILABLE,
}
TREE_WARNING_TO_PB = {
    tree.TreeWarning.PARTIAL_DATA: pb.RUNTIME_TREE_WARNING_PARTIAL_DATA,
    tree.TreeWarning.SOURCE_UNAVAILABLE: pb.RUNTIME_TREE_WARNING_SOURCE_UNAVAILABLE,
    tree.TreeWarning.TRUNCATED: pb.RUNTIME_TREE_WARNING_TRUNCATED,
}
MAX_PAGE_SIZE = 1000


def _reasons(failures: tuple[Failure, ...]) -> list[pb.Reason]:
    out = []
    for i, f in enumerate(failures):
        reason = pb.Reason(
            check=CHECK_TO_PB[f.check],
            component=COMPONENT_TO_PB[f.component],
            runtime_value=f.runtime_value,
            requested_value=f.requested_value,
            message=f.message,
            primary=i == 0,
        )
        for m in f.entries:
            reason.entry_mismatches.add(index=m.index, differences=m.differences)
        out.append(reason)
    return out


def _model_identity(model: d.Model) -> pb.ModelIdentity:
    return pb.ModelIdentity(kind=model.kind, namespace=model.namespace, name=model.name, label=model.label)


def _user_specified_entry(evaluation: Evaluation, model: d.Model) -> tuple[int, int]:
    """(index, score) of the entry OME applies for a named runtime: the highest score with
    priority 1 over all entries, ``autoSelect`` ignored, the earlier entry on a tie; (-1, 0) when
    none scores above 0 (ome-selection-facts.md 3.17)."""
    best, index = 0, -1
    for entry in evaluation.spec.entries:
        score = entry_score(entry, model, 1)
        if score > best:
            best, index = score, entry.index
    return index, best


def _selection(decision: resolution.Decision) -> pb.Selection | None:
    """The Selection proto of a decision's runtime, or None."""
    runtime = decision.runtime
    if runtime is None or decision.runtime_error:
        return None
    evaluation = decision.evaluation
    if not decision.named:
        assert evaluation is not None
        return pb.Selection(
            runtime=runtime_ref(runtime),
            score=evaluation.fit.score,
            supported_model_format_index=evaluation.fit.score_index,
            mode=pb.SELECTION_MODE_AUTO,
        )
    selection = pb.Selection(
        runtime=runtime_ref(runtime),
        mode=pb.SELECTION_MODE_NAMED,
        inheritance_chain=runtime.chain,
        supported_model_format_index=-1,
    )
    model = decision.model.model
    if evaluation is not None and model is not None:
        selection.supported_model_format_index, selection.score = _user_specified_entry(evaluation, model)
        if evaluation.verdict is Verdict.EXCLUDED:
            selection.reasons.extend(_reasons(evaluation.failures))
    return selection


def select_runtime(snapshot: Snapshot, request: pb.SelectRuntimeRequest) -> pb.SelectRuntimeResponse:
    """SelectRuntime: the named runtime (used even when it fails a check, with OME's warning), or
    auto-selection with ranked candidates and an exclusion for every other runtime in scope."""
    _require_synced(snapshot)
    if not request.HasField("inference_service"):
        raise RequestError.invalid([FieldViolation("inference_service", errors.required())])
    isvc = request.inference_service
    violations = _isvc_violations(isvc)
    named = bool(isvc.spec.runtime.name)
    if not isvc.spec.model.name and (request.HasField("model_spec") or not named):
        problem = (
            "required with model_spec (OME's messages name the model)"
            if request.HasField("model_spec")
            else "a model is required when spec.runtime.name is not set"
        )
        violations.append(FieldViolation("inference_service.spec.model.name", problem))
    if request.HasField("model_spec"):
        violations += validate_spec(request.model_spec, "model_spec")
        violations += model_spec_violations(request.model_spec, "model_spec")
    if violations:
        raise RequestError.invalid(violations)
    model_spec = request.model_spec if request.HasField("model_spec") else None
    full = request.view == pb.SELECT_RUNTIME_VIEW_FULL
    return _select_response(snapshot, isvc, resolution.decide(snapshot, isvc, model_spec), full)


def _select_response(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, decision: resolution.Decision, full: bool
) -> pb.SelectRuntimeResponse:
    response = pb.SelectRuntimeResponse(cache_version=snapshot.version)
    res = decision.model
    if res.not_found:
        raise RequestError("NOT_FOUND", res.not_found)
    if res.model is not None:
        response.model.CopyFrom(_model_identity(res.model))
    if res.error:
        response.model_error = res.error
        return response
    if decision.runtime_not_found:
        raise RequestError("NOT_FOUND", decision.runtime_not_found)
    response.runtime_error = decision.runtime_error
    selection = _selection(decision)
    if selection is not None:
        response.selection.CopyFrom(selection)
    model_name = isvc.spec.model.name
    if decision.named:
        if decision.compatibility_error:
            response.warnings.append(
                messages.named_runtime_warning(isvc.spec.runtime.name, model_name, decision.compatibility_error)
            )
        return response
    auto = decision.auto
    assert auto is not None and res.model is not None
    for ranked in auto.ranked:
        e = ranked.evaluation
        candidate = response.candidates.add(
            runtime=runtime_ref(e.runtime),
            rank=ranked.rank,
            score=e.fit.score,
            supported_model_format_index=e.fit.score_index,
            tie_break=TIE_BREAK_TO_PB[ranked.tie_break],
        )
        if e.distance is not None:
            candidate.size_distance = e.distance
    response.exclusion_summary.CopyFrom(exclusion_summary(auto))
    if full:
        for x in auto.exclusions():
            # The primary reason only; ExplainRuntimes lists every failing check with details.
            primary = _reasons((x.primary,))[0]
            primary.ClearField("entry_mismatches")
            response.exclusions.add(runtime=runtime_ref(x.runtime), verdict=VERDICT_TO_PB[x.verdict], reasons=[primary])
    if decision.runtime is None:
        response.no_runtime_message = auto.no_runtime_message or ""
    else:
        response.warnings.append(messages.auto_selected(decision.runtime.name, model_name or res.model.name))
    return response


def exclusion_summary(auto: AutoSelection) -> pb.ExclusionSummary:
    """The runtimes in scope counted by primary reason, with its one-line text."""
    counts = [(check, auto.counts[check]) for check in Check]
    summary = pb.ExclusionSummary(
        runtimes=auto.total,
        candidates=len(auto.ranked),
        text=messages.exclusion_summary(len(auto.ranked), auto.total, [(c.name, n) for c, n in counts]),
    )
    for check, count in counts:
        if count:
            summary.counts.add(check=CHECK_TO_PB[check], count=count)
    return summary


def explain_runtimes(snapshot: Snapshot, request: pb.ExplainRuntimesRequest) -> pb.ExplainRuntimesResponse:
    """ExplainRuntimes, as ``kubectl ome runtime explain`` (reference/kubectl-ome/runtime.md):
    ``--isvc`` also applies the InferenceService's accelerator classes and deployment modes,
    ``--model`` does not. Rows: candidates in rank order, then the others, ServingRuntimes first,
    each group by name. A named runtime does not change the table (the selection is hypothetical)."""
    _require_synced(snapshot)
    by_model = request.HasField("model")
    if by_model == request.HasField("inference_service"):
        raise RequestError.invalid([FieldViolation("model", "exactly one of model or inference_service is required")])
    if by_model and request.HasField("model_spec"):
        raise RequestError.invalid(
            [FieldViolation("model_spec", "model_spec goes with inference_service, not with model")]
        )
    notes: list[str] = []
    if by_model:
        lookup = request.model
        violations = validate_name(lookup.namespace, "model.namespace", "namespace") + validate_name(
            lookup.name, "model.name"
        )
        if violations:
            raise RequestError.invalid(violations)
        namespace = lookup.namespace
        model = snapshot.base_models.get((namespace, lookup.name)) or snapshot.cluster_models.get(lookup.name)
        if model is None:
            raise RequestError("NOT_FOUND", f'clusterbasemodels.ome.io "{lookup.name}" not found')
        res = resolution.model_errors(model, lookup.name)
        compiled: d.Request | None = None
    else:
        isvc = _require_isvc(request)
        namespace = isvc.metadata.namespace
        model_spec = request.model_spec if request.HasField("model_spec") else None
        if not isvc.spec.model.name and model_spec is None:
            raise RequestError.invalid(
                [
                    FieldViolation(
                        "inference_service.spec.model.name",
                        f'InferenceService "{isvc.metadata.name}" has no spec.model; pass --model instead',
                    )
                ]
            )
        if model_spec is not None:
            violations = model_spec_violations(model_spec, "model_spec")
            if violations:
                raise RequestError.invalid(violations)
        if isvc.spec.runtime.name:
            notes.append(EXPLICIT_RUNTIME_NOTE)
        res = resolution.resolve_model(snapshot, isvc, model_spec)
        if res.not_found:  # looked up as --model does, so the API server's error (kubectl-ome runtime.md)
            raise RequestError("NOT_FOUND", f'clusterbasemodels.ome.io "{isvc.spec.model.name}" not found')
        compiled = compile_request(isvc)
    assert res.model is not None
    page_size, offset = _page(request)
    response = pb.ExplainRuntimesResponse(cache_version=snapshot.version, model=_model_identity(res.model), notes=notes)
    if res.error:
        response.model_error = res.error
        return response
    result = engine.auto_select(snapshot, res.model, compiled, namespace)
    if not result.total:
        response.notes.append(NO_RUNTIMES_NOTE)
    rows = _explain_rows(result, request.runtime_name)
    response.total_size = len(rows)
    end = len(rows) if page_size == 0 else min(len(rows), offset + page_size)
    for row in rows[offset:end]:
        if isinstance(row, engine.Ranked):
            e = row.evaluation
            out = response.runtimes.add(
                runtime=runtime_ref(e.runtime),
                verdict=pb.VERDICT_CANDIDATE,
                rank=row.rank,
                score=e.fit.score,
                reason="-",
                supported_model_format_index=e.fit.match.index if e.fit.match is not None else -1,
            )
            columns = explain_columns(e.fit)
            if columns is not None:
                out.priority, out.weight = columns
            continue
        e = engine.evaluate(row, row.own, res.model, compiled)
        response.runtimes.add(
            runtime=runtime_ref(e.runtime),
            verdict=VERDICT_TO_PB[e.verdict],
            reasons=_reasons(e.failures),
            reason=e.failures[0].message,
            supported_model_format_index=e.fit.match.index if e.fit.match is not None else -1,
        )
    if end < len(rows):
        response.next_page_token = _page_token(request, end)
    return response


def _explain_rows(result: AutoSelection, name: str) -> list[engine.Ranked | d.Runtime]:
    """The explain table's rows: the candidates in rank order, then every other runtime,
    ServingRuntimes first, each kind by name; only runtimes called ``name`` when it is set."""
    candidates = {id(r.evaluation.runtime) for r in result.ranked}
    rows: list[engine.Ranked | d.Runtime] = [r for r in result.ranked if not name or r.evaluation.runtime.name == name]
    for group_result in result.results:
        rows += [
            rt for rt in group_result.group.by_name() if id(rt) not in candidates and (not name or rt.name == name)
        ]
    return rows


def _request_fingerprint(request: pb.ExplainRuntimesRequest) -> str:
    """What a page token is bound to: the request without its paging fields."""
    unpaged = pb.ExplainRuntimesRequest()
    unpaged.CopyFrom(request)
    unpaged.ClearField("page_token")
    unpaged.ClearField("page_size")
    return hashlib.sha256(unpaged.SerializeToString(deterministic=True)).hexdigest()[:16]


def _page_token(request: pb.ExplainRuntimesRequest, offset: int) -> str:
    """An opaque token for the rows from ``offset`` on (AIP-158)."""
    raw = json.dumps({"o": offset, "r": _request_fingerprint(request)}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _page(request: pb.ExplainRuntimesRequest) -> tuple[int, int]:
    """(page size, offset) of an ExplainRuntimes request; raises INVALID_ARGUMENT for a negative
    or too large page size, or a token that is malformed or from another request."""
    if request.page_size < 0 or request.page_size > MAX_PAGE_SIZE:
        raise RequestError.invalid(
            [FieldViolation("page_size", f"page_size must be between 0 and {MAX_PAGE_SIZE}, got {request.page_size}")]
        )
    if not request.page_token:
        return request.page_size, 0
    try:
        token = request.page_token
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        offset, bound = data["o"], data["r"]
        valid = isinstance(offset, int) and offset >= 0 and bound == _request_fingerprint(request)
    except (ValueError, TypeError, KeyError):
        valid = False
    if not valid:
        raise RequestError.invalid(
            [
                FieldViolation(
                    "page_token",
                    "page_token is not a token of this request (it must come from next_page_token of the same request)",
                )
            ]
        )
    return request.page_size, offset


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
            out.append(FieldViolation(new_field, errors.forbidden(f"must not be set on DELETE; set {old_field}")))
        if old is None:
            out.append(FieldViolation(old_field, missing[1]))
        return out
    if new is None:
        out.append(FieldViolation(new_field, missing[0]))
    if old is None:
        return out
    if operation is d.Operation.CREATE:
        out.append(FieldViolation(old_field, errors.forbidden("must not be set on CREATE, only on UPDATE and DELETE")))
    elif new is not None:
        for part in ("namespace", "name"):
            was, now = getattr(old.metadata, part), getattr(new.metadata, part)  # type: ignore[attr-defined]
            if was != now:
                detail = f"must equal {new_field}.metadata.{part} ({errors.quote(now)}): an UPDATE keeps the object"
                out.append(FieldViolation(f"{old_field}.metadata.{part}", errors.invalid_value(was, detail)))
    return out


def admit_inference_service(
    snapshot: Snapshot, request: pb.AdmitInferenceServiceRequest
) -> pb.AdmitInferenceServiceResponse:
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
    admission = admission_rules.admit(snapshot, isvc, operation)
    response = pb.AdmitInferenceServiceResponse(
        allowed=admission.allowed,
        denial_message=admission.denial,
        warnings=admission.warnings,
        path=ADMISSION_PATH_TO_PB[admission.path],
        webhook=admission_rules.ISVC_WEBHOOK,
        cache_version=snapshot.version,
    )
    return _with_selection(response, _selection(admission.decision) if admission.decision is not None else None)


def _with_selection(response: R, selection: pb.Selection | None) -> R:
    """``response`` with its ``selection`` set when there is one."""
    if selection is not None:
        response.selection.CopyFrom(selection)
    return response


def _events(events: tuple[reconcile.Event, ...]) -> list[pb.Event]:
    return [pb.Event(type=e.type, reason=e.reason, message=e.message) for e in events]


def _condition(c: reconcile.ConditionValue) -> pb.Condition:
    return pb.Condition(type="RuntimeReady", status=c.status, reason=c.reason, message=c.message, severity="Info")


def reconcile_inference_service(
    snapshot: Snapshot, request: pb.ReconcileInferenceServiceRequest
) -> pb.ReconcileInferenceServiceResponse:
    """The controller's runtime step (reconcile.py), with the runtime pin (pinning.py) of a
    named runtime with ``autoSync: false``: ``runtime_drifted`` / ``remove_runtime_drifted`` and
    ``pin``. ``ome_namespace``, when set, must be a namespace name (INVALID_ARGUMENT)."""
    _require_synced(snapshot)
    ome_namespace = _ome_namespace(request)
    isvc = _require_isvc(request)
    result = reconcile.reconcile(snapshot, isvc, request.has_runtime_ready_condition, ome_namespace)
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
        selection = _selection(result.decision)
    else:
        selection = None
    selected = result.decision.runtime if result.decision is not None and not isvc.spec.runtime.name else None
    _pin_fields(response, pinning.report(snapshot, isvc, ome_namespace, selected), pin, isvc, ome_namespace)
    return _with_selection(response, selection)


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
            [FieldViolation("collection_limit", errors.invalid_value(request.collection_limit, "must be 0 or more"))]
        )
    return request.collection_limit


GENERATION_STATUS_TO_PB = {
    views.GenerationStatus.UNOBSERVED: pb.GENERATION_STATUS_UNOBSERVED,
    views.GenerationStatus.CURRENT: pb.GENERATION_STATUS_CURRENT,
    views.GenerationStatus.STALE: pb.GENERATION_STATUS_STALE,
    views.GenerationStatus.INVALID: pb.GENERATION_STATUS_INVALID,
}
DRIFT_STATE_TO_PB = {
    views.DriftState.NOT_REPORTED: pb.DRIFT_STATE_NOT_REPORTED,
    views.DriftState.REPORTED_TRUE: pb.DRIFT_STATE_REPORTED_TRUE,
    views.DriftState.REPORTED_FALSE: pb.DRIFT_STATE_REPORTED_FALSE,
    views.DriftState.REPORTED_UNKNOWN: pb.DRIFT_STATE_REPORTED_UNKNOWN,
    views.DriftState.MALFORMED: pb.DRIFT_STATE_MALFORMED,
}
DRIFT_CAUSE_TO_PB = {
    None: pb.DRIFT_CAUSE_UNSPECIFIED,
    views.DriftCause.REVISION_MISMATCH: pb.DRIFT_CAUSE_REVISION_MISMATCH,
    views.DriftCause.REVISION_MISSING: pb.DRIFT_CAUSE_REVISION_MISSING,
    views.DriftCause.SOURCE_RUNTIME_MISSING: pb.DRIFT_CAUSE_SOURCE_RUNTIME_MISSING,
    views.DriftCause.RUNTIME_MISMATCH: pb.DRIFT_CAUSE_RUNTIME_MISMATCH,
    views.DriftCause.OTHER: pb.DRIFT_CAUSE_OTHER,
}
# IssueCode members are named as the proto values after ``ISSUE_CODE_`` (tests check both ways).
ISSUE_CODE_TO_PB = {code: pb.IssueCode.Value(f"ISSUE_CODE_{code.name}") for code in views.IssueCode}
OBSERVATION_TO_PB = {
    views.Observation.COMPLETE: pb.HISTORY_OBSERVATION_COMPLETE,
    views.Observation.PARTIAL: pb.HISTORY_OBSERVATION_PARTIAL,
    views.Observation.UNAVAILABLE: pb.HISTORY_OBSERVATION_UNAVAILABLE,
}
COMPLETENESS_TO_PB = {
    views.Completeness.RETENTION_BOUNDED: pb.HISTORY_COMPLETENESS_RETENTION_BOUNDED,
    views.Completeness.INCOMPLETE: pb.HISTORY_COMPLETENESS_INCOMPLETE,
}
ROLE_TO_PB = {
    views.Role.ACTIVE: pb.REVISION_ROLE_ACTIVE,
    views.Role.REQUESTED: pb.REVISION_ROLE_REQUESTED,
    views.Role.REPORTED: pb.REVISION_ROLE_REPORTED,
    views.Role.HISTORY: pb.REVISION_ROLE_HISTORY,
}
CONSISTENCY_TO_PB = {
    views.Consistency.CONSISTENT: pb.REVISION_CONSISTENCY_CONSISTENT,
    views.Consistency.INCONSISTENT: pb.REVISION_CONSISTENCY_INCONSISTENT,
    views.Consistency.UNKNOWN: pb.REVISION_CONSISTENCY_UNKNOWN,
}
RELATION_TO_PB = {
    views.Relation.MATCHES_LIVE: pb.REVISION_RELATION_MATCHES_LIVE,
    views.Relation.DIFFERS_FROM_LIVE: pb.REVISION_RELATION_DIFFERS_FROM_LIVE,
    views.Relation.AMBIGUOUS_LIVE: pb.REVISION_RELATION_AMBIGUOUS_LIVE,
    views.Relation.UNKNOWN: pb.REVISION_RELATION_UNKNOWN,
}
SYNC_REFUSAL_TO_PB = {
    views.SyncRefusal.TARGET_IDENTITY: pb.SYNC_REFUSAL_TARGET_IDENTITY,
    views.SyncRefusal.TARGET_DELETING: pb.SYNC_REFUSAL_TARGET_DELETING,
    views.SyncRefusal.PLACEMENT: pb.SYNC_REFUSAL_PLACEMENT,
    views.SyncRefusal.INSPECTION_BOUNDS: pb.SYNC_REFUSAL_INSPECTION_BOUNDS,
    views.SyncRefusal.MANAGED_EVIDENCE: pb.SYNC_REFUSAL_MANAGED_EVIDENCE,
    views.SyncRefusal.ACTIVE_RUNTIME: pb.SYNC_REFUSAL_ACTIVE_RUNTIME,
    views.SyncRefusal.CONTROLLER_EVIDENCE: pb.SYNC_REFUSAL_CONTROLLER_EVIDENCE,
    views.SyncRefusal.MAILBOX: pb.SYNC_REFUSAL_MAILBOX,
    views.SyncRefusal.UNSAFE_VALUE: pb.SYNC_REFUSAL_UNSAFE_VALUE,
}


def _issues(issues: tuple[views.Issue, ...]) -> list[pb.Issue]:
    return [pb.Issue(code=ISSUE_CODE_TO_PB[i.code], revision=i.revision, text=i.text) for i in issues]


def get_effective_runtime(snapshot: Snapshot, request: pb.GetEffectiveRuntimeRequest) -> pb.GetEffectiveRuntimeResponse:
    """``kubectl ome runtime effective`` (effective.py, views.py): the Live view, the Active view
    and the Service rows with the ISSUE codes. INVALID_ARGUMENT for a bad InferenceService,
    ``ome_namespace`` or a negative ``collection_limit``."""
    _require_synced(snapshot)
    isvc = _require_isvc(request)
    ome_namespace = _ome_namespace(request)
    report = views.effective_report(snapshot, isvc, ome_namespace, _collection_limit(request))
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
    if active.runtime is not None:
        response.active.runtime = active.runtime.display
        response.active.runtime_ref.CopyFrom(runtime_ref(active.runtime))
    return response


def _created(revision: d.Revision) -> str:
    """RFC 3339 in UTC (``2026-09-20T14:30:00Z``); ``""`` when unknown."""
    if revision.created is None:
        return ""
    from datetime import datetime, timezone

    return datetime.fromtimestamp(revision.created, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def get_runtime_history(snapshot: Snapshot, request: pb.GetRuntimeHistoryRequest) -> pb.GetRuntimeHistoryResponse:
    """``kubectl ome runtime history`` (views.history): the RuntimeHistoryReport.
    INVALID_ARGUMENT as ``get_effective_runtime``."""
    _require_synced(snapshot)
    isvc = _require_isvc(request)
    ome_namespace = _ome_namespace(request)
    report = views.history(snapshot, isvc, ome_namespace, _collection_limit(request))
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


def plan_runtime_sync(snapshot: Snapshot, request: pb.PlanRuntimeSyncRequest) -> pb.PlanRuntimeSyncResponse:
    """``kubectl ome runtime sync --dry-run client`` (views.plan_sync): the refusal, or the
    preview, the token and the ActionResult. The service plans; the caller patches.
    INVALID_ARGUMENT for a bad InferenceService or ``ome_namespace``, a ``request_id`` that is not
    a UUID, or a ``context`` over 253 characters."""
    _require_synced(snapshot)
    isvc = _require_isvc(request)
    ome_namespace = _ome_namespace(request)
    violations: list[FieldViolation] = []
    request_id = request.request_id
    if request_id:
        try:
            request_id = str(uuid.UUID(request_id))
        except ValueError:
            violations.append(FieldViolation("request_id", errors.invalid_value(request_id, "must be a UUID")))
    else:
        request_id = str(uuid.uuid4())
    if len(request.context) > 253:
        violations.append(FieldViolation("context", errors.too_long_value(request.context, 253)))
    if violations:
        raise RequestError.invalid(violations)
    plan = views.plan_sync(snapshot, isvc, ome_namespace, request_id, request.context)
    if plan.refusal is not None:
        return pb.PlanRuntimeSyncResponse(
            refusal=SYNC_REFUSAL_TO_PB[plan.refusal],
            refusal_message=plan.refusal.value,
            cache_version=snapshot.version,
        )
    meta = isvc.metadata
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
            follow_up=messages.sync_follow_up(meta.name, meta.namespace, request.context, ome_namespace),
            hint=messages.SYNC_HINT,
        ),
        cache_version=snapshot.version,
    )


def validate_serving_runtime(
    snapshot: Snapshot, request: pb.ValidateServingRuntimeRequest
) -> pb.ValidateServingRuntimeResponse:
    """The ServingRuntime / ClusterServingRuntime validating webhook (runtime_webhook.py) on the
    request's ``operation``. The objects the operation carries (``_admission_objects``; on UPDATE
    the old runtime is of the same kind), object names and namespaces are validated first
    (INVALID_ARGUMENT)."""
    _require_synced(snapshot)
    operation = _operation(request.operation)
    which, old_which = request.WhichOneof("runtime"), request.WhichOneof("old_runtime")
    new = getattr(request, which) if which is not None else None
    old = getattr(request, old_which) if old_which is not None else None
    other_kind = operation is d.Operation.UPDATE and None not in (which, old_which) and old_which != f"old_{which}"
    violations = _admission_objects(
        operation,
        new,
        None if other_kind else old,
        (which or "runtime", old_which or "old_runtime"),
        (
            "exactly one of servingRuntime or clusterServingRuntime is required",
            "exactly one of oldServingRuntime or oldClusterServingRuntime is required on DELETE",
        ),
    )
    if other_kind:
        assert old_which is not None
        violations.append(FieldViolation(old_which, errors.forbidden(f"an UPDATE keeps the kind; set old_{which}")))
    field, runtime = (which, new) if new is not None else (old_which, old)
    if runtime is not None:
        assert field is not None
        violations += validate_name(runtime.metadata.name, f"{field}.metadata.name")
        if isinstance(runtime, types_pb2.ServingRuntime):
            violations += validate_name(runtime.metadata.namespace, f"{field}.metadata.namespace", "namespace")
    if violations:
        raise RequestError.invalid(violations)
    assert runtime is not None
    kind = d.SERVING_RUNTIME if isinstance(runtime, types_pb2.ServingRuntime) else d.CLUSTER_SERVING_RUNTIME
    if operation is d.Operation.DELETE:
        verdict = deletion_verdict(kind)
    else:
        verdict = validate_runtime(snapshot, kind, runtime, old)
    response = pb.ValidateServingRuntimeResponse(
        allowed=verdict.allowed,
        denial_message=verdict.denial_message,
        webhook=verdict.webhook,
        inheritance_chain=verdict.inheritance_chain,
        cache_version=snapshot.version,
    )
    if verdict.allowed and snapshot.inference_services:
        moved = _moved_inference_services(snapshot, kind, runtime, operation is d.Operation.DELETE)
        if moved:
            response.warnings.append(messages.moves_inference_services(moved))
    return response


def _moved_inference_services(
    snapshot: Snapshot, kind: str, runtime: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime, delete: bool
) -> list[str]:
    """``<namespace>/<name>`` of each cached InferenceService whose runtime (another one, or none)
    writing (or, with ``delete``, deleting) ``runtime`` would change (``outcomes``), sorted."""
    meta = runtime.metadata
    key = (kind, meta.namespace if kind == d.SERVING_RUNTIME else "", meta.name)
    upserts: dict[tuple[str, str, str], cache_pb2.CacheObject] = {}
    if not delete:
        obj = as_cache_object(kind, runtime)
        upserts[object_key(obj)] = obj
    deletes = [key] if delete else []
    proposed = snapshot.with_changes(
        snapshot.version, upserts, deletes, synced=snapshot.synced, generation=snapshot.generation
    )
    result = outcomes.selections_for(snapshot).advance(snapshot, proposed)
    return [
        f"{c.key[0]}/{c.key[1]}"
        for c in result.changes
        if (c.before.runtime if c.before else None) != (c.after.runtime if c.after else None)
    ]


def preview_cache_change(snapshot: Snapshot, request: pb.PreviewCacheChangeRequest) -> pb.PreviewCacheChangeResponse:
    """PreviewCacheChange: the write ``request`` proposes, validated as UpsertObjects and
    DeleteObjects validate theirs (``store.prepare``, ``store.resolve_keys``; a key may not be
    both upserted and deleted), applied to a snapshot that is never stored; every cached
    InferenceService whose outcome would change, with both outcomes, the causes and the reason
    (``outcomes.Selections.advance``, the path WatchSelections' events take)."""
    _require_synced(snapshot)
    violations: list[FieldViolation] = []
    try:
        upserts = prepare(request.upserts, "upserts")
    except RequestError as error:
        upserts, violations = {}, list(error.violations)
    deletes, found = resolve_keys(request.deletes, "deletes")
    violations += found
    if not request.upserts and not request.deletes:
        violations.append(FieldViolation("upserts", "at least one upsert or delete is required"))
    for i, key in enumerate(deletes):
        if key in upserts:
            violations.append(FieldViolation(f"deletes[{i}]", "the key is in upserts too"))
    if violations:
        raise RequestError.invalid(violations)
    proposed = snapshot.with_changes(
        snapshot.version, upserts, deletes, synced=snapshot.synced, generation=snapshot.generation
    )
    before = outcomes.selections_for(snapshot)
    result = before.advance(snapshot, proposed)
    return pb.PreviewCacheChangeResponse(
        changes=change_pbs(snapshot, proposed, before, result),
        cache_version=snapshot.version,
        reevaluated=result.reevaluated,
        inference_services=len(proposed.inference_services),
        not_found=[key for k, key in zip(deletes, request.deletes) if k not in snapshot.objects],
    )


# ---- outcomes of cached InferenceServices (issue 8) -------------------------------------------------


def outcome_pb(key: outcomes.IsvcKey, outcome: outcomes.Outcome) -> pb.SelectionOutcome:
    """The SelectionOutcome proto of one cached InferenceService's outcome."""
    out = pb.SelectionOutcome(
        namespace=key[0],
        name=key[1],
        mode=pb.SELECTION_MODE_NAMED if outcome.named else pb.SELECTION_MODE_AUTO,
        warnings=_events(outcome.warnings),
        components=_components(outcome.components),
    )
    if outcome.runtime is not None:
        out.runtime.CopyFrom(_ref(outcome.runtime))
    if outcome.condition is not None:
        out.runtime_ready.CopyFrom(_condition(outcome.condition))
    return out


def _reason_pb(reason: outcomes.Reason) -> pb.ChangeReason:
    out = pb.ChangeReason(step=CHANGE_STEP_TO_PB[reason.step], text=reason.text)
    if reason.runtime is not None:
        out.runtime.CopyFrom(_ref(reason.runtime))
    if reason.check is not None:
        out.check = CHECK_TO_PB[reason.check]
    if reason.tie_break is not None:
        out.tie_break = TIE_BREAK_TO_PB[reason.tie_break]
    return out


def change_pbs(
    old: Snapshot, new: Snapshot, before: outcomes.Selections, advance: outcomes.Advance
) -> list[pb.SelectionChange]:
    """The SelectionChange protos of every change of ``advance`` (``before.advance(old, new)``),
    in its order: the outcomes, the write's objects behind each (one line each,
    ``changes.describe``, once per object) and the reason (``outcomes.Explanations``: once per
    distinct reason)."""
    explanations = outcomes.Explanations(old, new, before, advance)
    texts: dict[tuple[str, str, str], str] = {}
    built: dict[int, pb.SelectionOutcome] = {}  # id of an Outcome (shared between InferenceServices) -> its proto

    def set_outcome(target: pb.SelectionOutcome, key: outcomes.IsvcKey, outcome: outcomes.Outcome) -> None:
        template = built.get(id(outcome))
        if template is None:
            template = built[id(outcome)] = outcome_pb(("", ""), outcome)
        target.CopyFrom(template)
        target.namespace, target.name = key

    out = []
    for change in advance.changes:  # they hold every outcome ``built`` names while it lives
        proto = pb.SelectionChange(namespace=change.key[0], name=change.key[1], cache_version=new.version)
        if change.before is not None:
            set_outcome(proto.before, change.key, change.before)
        if change.after is not None:
            set_outcome(proto.after, change.key, change.after)
        for key in explanations.causes(change):
            text = texts.get(key)
            if text is None:
                text = texts[key] = changes.describe(old, new, key)
            proto.causes.add(key=_object_key(key), text=text)
        proto.reason.CopyFrom(_reason_pb(explanations.reason(change)))
        out.append(proto)
    return out


def _object_key(key: tuple[str, str, str]) -> cache_pb2.ObjectKey:
    return cache_pb2.ObjectKey(kind=KIND_TO_ENUM[key[0]], namespace=key[1], name=key[2])


def get_runtime_status(snapshot: Snapshot, request: pb.GetRuntimeStatusRequest) -> pb.GetRuntimeStatusResponse:
    """What OME's controller writes on a cached runtime (runtime_status.py;
    runtime-inheritance.md, "When a chain breaks"). INVALID_ARGUMENT for a missing kind or a bad
    name or namespace (a ClusterServingRuntime takes none); NOT_FOUND for a runtime the cache does
    not hold (``servingruntimes.ome.io "x" not found``)."""
    _require_synced(snapshot)
    ref = request.runtime
    kind = RUNTIME_KIND_FROM_PB.get(ref.kind)
    violations: list[FieldViolation] = []
    if kind is None:
        problem = errors.required() if ref.kind == pb.RUNTIME_KIND_UNSPECIFIED else f"unknown kind {ref.kind}"
        violations.append(FieldViolation("runtime.kind", problem))
    violations += validate_name(ref.name, "runtime.name")
    if kind == d.SERVING_RUNTIME:
        violations += validate_name(ref.namespace, "runtime.namespace", "namespace")
    elif ref.namespace:
        violations.append(
            FieldViolation(
                "runtime.namespace", errors.forbidden("ClusterServingRuntime is cluster-scoped and takes no namespace")
            )
        )
    if violations:
        raise RequestError.invalid(violations)
    found = (
        snapshot.serving_runtimes.get((ref.namespace, ref.name))
        if kind == d.SERVING_RUNTIME
        else snapshot.cluster_serving_runtimes.get(ref.name)
    )
    if found is None:
        raise RequestError("NOT_FOUND", messages.runtime_object_not_found(kind == d.CLUSTER_SERVING_RUNTIME, ref.name))
    status = runtime_status(found)
    generation = getattr(snapshot.objects[found.key], _RUNTIME_FIELD[found.kind]).metadata.generation
    response = pb.GetRuntimeStatusResponse(
        runtime=runtime_ref(found),
        inheritance_chain=[_ref(key) for key in status.chain],
        events=[pb.Event(type=e.type, reason=e.reason, message=e.message) for e in status.events],
        spec_hash=pinning.short(status.spec_hash),
        cache_version=snapshot.version,
    )
    if status.spec is not None:
        response.spec.CopyFrom(status.spec)
    response.status.inheritance_chain.extend(status.inheritance_chain)
    response.status.conditions.add(
        type=messages.CONDITION_INHERITANCE_READY,
        status="True" if status.ready else "False",
        reason=status.reason,
        message=status.message,
        observed_generation=generation,
    )
    return response


_RUNTIME_FIELD = {d.SERVING_RUNTIME: "serving_runtime", d.CLUSTER_SERVING_RUNTIME: "cluster_serving_runtime"}
# ---- the runtime tree (kubectl-ome runtime.md, tree) ----------------------------------------------


def get_runtime_tree(snapshot: Snapshot, request: pb.GetRuntimeTreeRequest) -> pb.GetRuntimeTreeResponse:
    """GetRuntimeTree: the RuntimeTreeReport of ``kubectl ome runtime tree`` (tree.py;
    reference/kubectl-ome/runtime.md, "tree"). Raises ``RequestError`` with the page's texts:
    INVALID_ARGUMENT for an invalid ``name`` or ``kind`` (the message names the first, the
    violations every bad field) or a missing or invalid ``namespace`` (required unless ``kind``
    is ``ClusterServingRuntime``); NOT_FOUND, FAILED_PRECONDITION as ``tree.find_target`` and
    ``tree.runtime_tree`` raise them; UNAVAILABLE before the first sync."""
    _require_synced(snapshot)
    texts, violations = [], []
    problem = bounds.name_problem(request.name)
    if problem:
        texts.append(messages.tree_invalid_name(errors.quote(request.name), problem))
        violations.append(FieldViolation("name", errors.invalid_value(request.name, problem)))
    if request.kind and request.kind not in messages.TREE_SUPPORTED_KINDS:
        texts.append(messages.tree_unsupported_kind(errors.quote(request.kind)))
        violations.append(FieldViolation("kind", errors.unsupported(request.kind, messages.TREE_SUPPORTED_KINDS)))
    if request.namespace or request.kind != d.CLUSTER_SERVING_RUNTIME:
        violations += validate_name(request.namespace, "namespace", "namespace")
    if violations:
        if not texts:
            raise RequestError.invalid(violations)
        raise RequestError("INVALID_ARGUMENT", texts[0], violations)
    target = tree.find_target(snapshot, request.name, request.namespace, request.kind)
    report = tree.runtime_tree(snapshot, target, request.show_unattributed_users)
    response = pb.GetRuntimeTreeResponse(
        api_version=tree.API_VERSION,
        kind=tree.REPORT_KIND,
        target=_ref(report.target),
        contexts=[_tree_context(context, report.target) for context in report.contexts],
        snapshot=pb.RUNTIME_TREE_SNAPSHOT_PARTIAL if report.partial else pb.RUNTIME_TREE_SNAPSHOT_COMPLETE,
        collections=[_tree_collection(c) for c in report.collections],
        warnings=[TREE_WARNING_TO_PB[w] for w in report.warnings],
        cache_version=snapshot.version,
    )
    if report.unattributed is not None:
        response.unattributed.SetInParent()
        for user in report.unattributed:
            response.unattributed.users.add(
                namespace=user.key[0],
                name=user.key[1],
                state=TREE_UNATTRIBUTED_STATE_TO_PB[user.state],
                reason=TREE_UNATTRIBUTED_REASON_TO_PB[user.reason],
                declared_runtime=user.declared,
            )
    return response


def _tree_context(context: tree.Context, target: tree.Key) -> pb.RuntimeTreeContext:
    """The RuntimeTreeContext proto of a context; ``target`` is marked selected in every chain."""
    out = pb.RuntimeTreeContext(
        scope=pb.RUNTIME_TREE_CONTEXT_SCOPE_CLUSTER
        if context.namespace is None
        else pb.RUNTIME_TREE_CONTEXT_SCOPE_NAMESPACED,
        namespace=context.namespace or "",
        resolution=pb.RUNTIME_TREE_RESOLUTION_COMPLETE,
    )
    for head in context.heads:
        issues = [head.issue] if head.issue is not None else []
        out.heads.add(
            runtime=_ref(head.runtime),
            chain=[pb.RuntimeTreeNode(runtime=_ref(key), selected=key == target) for key in head.chain],
            issues=[
                pb.RuntimeTreeIssue(
                    code=TREE_ISSUE_TO_PB[issue.code],
                    subject=_ref(issue.subject),
                    parent=_ref(issue.parent),
                    path=[_ref(key) for key in issue.path],
                )
                for issue in issues
            ],
            users=[pb.RuntimeTreeUser(namespace=ns, name=name) for ns, name in head.users],
        )
    return out


def _tree_collection(listed: tree.Collection) -> pb.RuntimeTreeCollection:
    if listed.namespace == "":
        scope = pb.RUNTIME_TREE_COLLECTION_SCOPE_CLUSTER
    elif listed.namespace is None:
        scope = pb.RUNTIME_TREE_COLLECTION_SCOPE_ALL_NAMESPACES
    else:
        scope = pb.RUNTIME_TREE_COLLECTION_SCOPE_NAMESPACE
    return pb.RuntimeTreeCollection(
        kind=KIND_TO_ENUM[listed.kind],
        scope=scope,
        namespace=listed.namespace or "",
        status=TREE_COLLECTION_STATUS_TO_PB[listed.status],
        pages=listed.pages,
        items=listed.items,
    )


# SelectionService: method name -> the function that answers it (service.SelectionServicer
# serves each row; the offline CLI calls the same functions).
SELECTION_RPCS: dict[str, Callable[[Snapshot, Any], Message]] = {
    "SelectRuntime": select_runtime,
    "ExplainRuntimes": explain_runtimes,
    "AdmitInferenceService": admit_inference_service,
    "ReconcileInferenceService": reconcile_inference_service,
    "GetEffectiveRuntime": get_effective_runtime,
    "ValidateServingRuntime": validate_serving_runtime,
    "PreviewCacheChange": preview_cache_change,
    "GetRuntimeStatus": get_runtime_status,
    "GetRuntimeHistory": get_runtime_history,
    "PlanRuntimeSync": plan_runtime_sync,
    "GetRuntimeTree": get_runtime_tree,
}
# SelectionService's streaming method, served by ``service.SelectionServicer`` itself.
STREAMING_RPCS = frozenset({"WatchSelections"})

_RPC_BY_REQUEST = {
    method.input_type.full_name: method.name for method in pb.DESCRIPTOR.services_by_name["SelectionService"].methods
}


def answer(snapshot: Snapshot, request: Message) -> Message:
    """The ``SELECTION_RPCS`` row for ``request``'s type, applied (the offline CLI and the fuzzer
    dispatch through it, as the servicer does). Raises ``RequestError`` as that row does."""
    return SELECTION_RPCS[_RPC_BY_REQUEST[request.DESCRIPTOR.full_name]](snapshot, request)
