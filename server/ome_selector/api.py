"""Request -> domain -> engine -> response, shared by the gRPC servicer and the offline CLI.

``select_runtime`` and ``explain_runtimes`` take the snapshot the caller read once and a request
proto, and return the response proto. They raise ``RequestError``: INVALID_ARGUMENT (with field
violations) for bad input, NOT_FOUND for an unknown model or named runtime, UNAVAILABLE when the
cache has never been synced. "No runtime found" is a normal answer.
"""
from __future__ import annotations

from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from . import domain as d
from . import engine, messages
from .checks import Check, Failure, entry_score, explain_columns
from .engine import Evaluation, Verdict
from .errors import FieldViolation, RequestError
from .ingest import compile_model, compile_request, validate_name
from .snapshot import Snapshot

NOT_SYNCED_MESSAGE = "cache not synced yet"
_SERVICE_MODES = ("OMENative", "RawDeployment")
_POLICIES = ("", "BestFit", "Cheapest", "MostCapable", "FirstAvailable")
_RUNTIME_KINDS = ("", d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME)


def _require_synced(snapshot: Snapshot) -> None:
    if not snapshot.synced:
        raise RequestError("UNAVAILABLE", NOT_SYNCED_MESSAGE)


def _validate(request: pb.SelectRuntimeRequest | pb.ExplainRuntimesRequest) -> None:
    """INVALID_ARGUMENT for an InferenceService the API server would not have admitted."""
    if not request.HasField("inference_service"):
        raise RequestError.invalid([FieldViolation("inference_service", "inference_service is required")])
    isvc = request.inference_service
    spec = isvc.spec
    base = "inference_service"
    violations = validate_name(isvc.metadata.namespace, f"{base}.metadata.namespace", "namespace")
    if isvc.metadata.name:
        violations += validate_name(isvc.metadata.name, f"{base}.metadata.name")
    if spec.HasField("deployment_mode") and spec.deployment_mode not in _SERVICE_MODES:
        violations.append(FieldViolation(f"{base}.spec.deployment_mode", f"deploymentMode must be OMENative or RawDeployment, not {spec.deployment_mode!r}"))
    if spec.accelerator_selector.HasField("policy") and spec.accelerator_selector.policy not in _POLICIES:
        violations.append(FieldViolation(f"{base}.spec.accelerator_selector.policy", f"policy must be one of BestFit, Cheapest, MostCapable, FirstAvailable, not {spec.accelerator_selector.policy!r}"))
    if spec.runtime.HasField("kind") and spec.runtime.kind not in _RUNTIME_KINDS:
        violations.append(FieldViolation(f"{base}.spec.runtime.kind", f"kind must be ServingRuntime or ClusterServingRuntime, not {spec.runtime.kind!r}"))
    named = bool(spec.runtime.name)
    if not named and not spec.model.name and not request.HasField("model_spec"):
        violations.append(FieldViolation(f"{base}.spec.model.name", "a model is required when spec.runtime.name is not set (or pass model_spec)"))
    if violations:
        raise RequestError.invalid(violations)


def _resolve_model(snapshot: Snapshot, request: pb.SelectRuntimeRequest | pb.ExplainRuntimesRequest) -> tuple[d.Model | None, str]:
    """The model and OME's model error text ("" when valid). A namespaced BaseModel of the
    name wins over a ClusterBaseModel, whatever ``spec.model.kind`` says (base-models.md)."""
    isvc = request.inference_service
    namespace, name = isvc.metadata.namespace, isvc.spec.model.name
    if request.HasField("model_spec"):
        spec = request.model_spec
        model = compile_model("", "", name, spec, ("inline", spec.SerializeToString(deterministic=True)))
    elif name:
        model = snapshot.base_models.get((namespace, name)) or snapshot.cluster_models.get(name)
        if model is None:
            raise RequestError("NOT_FOUND", messages.model_not_found(name, namespace))
    else:
        return None, ""
    if model.disabled:
        return model, messages.model_disabled(name or model.name)
    if not model.model_format.name:
        return model, messages.MODEL_FORMAT_REQUIRED
    return model, ""


def _named_runtime(snapshot: Snapshot, ref: types_pb2.ServingRuntimeRef, namespace: str) -> d.Runtime:
    """Look the runtime up by ``spec.runtime.kind`` (reference-a-runtime-explicitly.md):
    ClusterServingRuntime (the default) first then the namespace's ServingRuntime;
    ``ServingRuntime`` only in the namespace; an empty kind namespace first."""
    kind = ref.kind if ref.HasField("kind") else d.CLUSTER_SERVING_RUNTIME
    sr = snapshot.serving_runtimes.get((namespace, ref.name))
    csr = snapshot.cluster_serving_runtimes.get(ref.name)
    if kind == d.SERVING_RUNTIME:
        found = sr
    elif kind == d.CLUSTER_SERVING_RUNTIME:
        found = csr or sr
    else:
        found = sr or csr
    if found is None:
        text = messages.serving_runtime_not_found(ref.name, namespace) if kind == d.SERVING_RUNTIME else messages.runtime_not_found(ref.name, namespace)
        raise RequestError("NOT_FOUND", text)
    return found


def runtime_ref(runtime: d.Runtime) -> pb.RuntimeRef:
    """RuntimeRef proto of a runtime."""
    kind = pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME if runtime.is_cluster else pb.RUNTIME_KIND_SERVING_RUNTIME
    return pb.RuntimeRef(kind=kind, namespace=runtime.namespace, name=runtime.name)


def _reasons(failures: tuple[Failure, ...]) -> list[pb.Reason]:
    out = []
    for i, f in enumerate(failures):
        reason = pb.Reason(
            check=pb.Check.Value("CHECK_" + f.check.value),
            component=pb.Component.Value("COMPONENT_" + f.component.upper()) if f.component else pb.COMPONENT_UNSPECIFIED,
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


def _user_specified_entry(evaluation: Evaluation, model: d.Model) -> int:
    """The entry OME applies for a named runtime: the highest score with priority 1 over all
    entries, the earlier entry on a tie; -1 when none scores above 0."""
    best, index = 0, -1
    for entry in evaluation.spec.entries:
        score = entry_score(entry, model, 1)
        if score > best:
            best, index = score, entry.index
    return index


def _select_named(snapshot: Snapshot, request: pb.SelectRuntimeRequest, response: pb.SelectRuntimeResponse) -> pb.SelectRuntimeResponse:
    isvc = request.inference_service
    namespace = isvc.metadata.namespace
    runtime = _named_runtime(snapshot, isvc.spec.runtime, namespace)
    if runtime.inheritance_error is not None:
        response.runtime_error = runtime.inheritance_error
        return response
    spec = runtime.effective or runtime.own
    if spec.disabled:
        response.runtime_error = messages.runtime_disabled(runtime.is_cluster, runtime.name)
        return response
    model, model_error = _resolve_model(snapshot, request)
    if model is not None:
        response.model.CopyFrom(_model_identity(model))
    if model_error:
        response.model_error = model_error
        return response
    selection = response.selection
    selection.runtime.CopyFrom(runtime_ref(runtime))
    selection.mode = pb.SELECTION_MODE_NAMED
    selection.inheritance_chain.extend(runtime.chain)
    selection.supported_model_format_index = -1
    if model is None:  # no spec.model: OME checks only that the runtime exists and is enabled
        return response
    evaluation = engine.evaluate(snapshot, runtime, spec, model, compile_request(isvc))
    selection.score = evaluation.fit.score
    selection.supported_model_format_index = _user_specified_entry(evaluation, model)
    if evaluation.verdict is Verdict.EXCLUDED:
        selection.reasons.extend(_reasons(evaluation.failures))
        error = engine.named_error(runtime, evaluation.failures, model)
        response.warnings.append(messages.named_runtime_warning(runtime.name, isvc.spec.model.name, error))
    return response


def select_runtime(snapshot: Snapshot, request: pb.SelectRuntimeRequest) -> pb.SelectRuntimeResponse:
    """SelectRuntime: the named runtime, or auto-selection (runtime-selection-scoring.md)."""
    _require_synced(snapshot)
    _validate(request)
    response = pb.SelectRuntimeResponse(cache_version=snapshot.version)
    isvc = request.inference_service
    if isvc.spec.runtime.name:
        return _select_named(snapshot, request, response)
    model, model_error = _resolve_model(snapshot, request)
    assert model is not None
    response.model.CopyFrom(_model_identity(model))
    if model_error:
        response.model_error = model_error
        return response
    namespace = isvc.metadata.namespace
    compiled = compile_request(isvc)
    memo_key = ("select", model.cache_key, compiled.cache_key, isvc.spec.model.name)
    cached = snapshot.memo.get(memo_key)
    if isinstance(cached, pb.SelectRuntimeResponse):
        return cached
    snapshot.remember(memo_key, _auto_response(snapshot, model, compiled, isvc, response))
    return response


def _auto_response(snapshot: Snapshot, model: d.Model, compiled: d.Request, isvc: types_pb2.InferenceService, response: pb.SelectRuntimeResponse) -> pb.SelectRuntimeResponse:
    result = engine.auto_select(snapshot, model, compiled, isvc.metadata.namespace)
    for ranked in result.ranked:
        e = ranked.evaluation
        candidate = response.candidates.add(
            runtime=runtime_ref(e.runtime),
            rank=ranked.rank,
            score=e.fit.score,
            supported_model_format_index=e.fit.score_index,
            tie_break=pb.TieBreak.Value("TIE_BREAK_" + ranked.tie_break.value),
        )
        if e.distance is not None:
            candidate.size_distance = e.distance
    for e in result.evaluations:
        if e.verdict is not Verdict.CANDIDATE:
            # The primary reason only; ExplainRuntimes lists every failing check with details.
            primary = _reasons(e.failures[:1])[0]
            primary.ClearField("entry_mismatches")
            response.exclusions.add(
                runtime=runtime_ref(e.runtime),
                verdict=pb.Verdict.Value("VERDICT_" + e.verdict.value),
                reasons=[primary],
            )
    selected = result.selected
    if selected is None:
        response.no_runtime_message = result.no_runtime_message or ""
        return response
    response.selection.runtime.CopyFrom(runtime_ref(selected.runtime))
    response.selection.score = selected.fit.score
    response.selection.supported_model_format_index = selected.fit.score_index
    response.selection.mode = pb.SELECTION_MODE_AUTO
    response.warnings.append(messages.auto_selected(selected.runtime.name, isvc.spec.model.name or model.name))
    return response


def explain_runtimes(snapshot: Snapshot, request: pb.ExplainRuntimesRequest) -> pb.ExplainRuntimesResponse:
    """ExplainRuntimes: one row per runtime in scope, as ``kubectl ome runtime explain --isvc``
    (reference/kubectl-ome/runtime.md): candidates in rank order, then the others,
    ServingRuntimes first, each group by name. Named runtimes are ignored: the selection is
    hypothetical, as the CLI notes."""
    _require_synced(snapshot)
    _validate(request)
    response = pb.ExplainRuntimesResponse(cache_version=snapshot.version)
    isvc = request.inference_service
    model, model_error = _resolve_model(snapshot, request)
    if model is None:
        raise RequestError.invalid([FieldViolation("inference_service.spec.model.name", "explain needs a model (spec.model.name or model_spec)")])
    response.model.CopyFrom(_model_identity(model))
    if model_error:
        response.model_error = model_error
        return response
    compiled = compile_request(isvc)
    memo_key = ("explain", model.cache_key, compiled.cache_key)
    cached = snapshot.memo.get(memo_key)
    if isinstance(cached, pb.ExplainRuntimesResponse):
        return cached
    result = engine.auto_select(snapshot, model, compiled, isvc.metadata.namespace)
    snapshot.remember(memo_key, response)
    for ranked in result.ranked:
        e = ranked.evaluation
        columns = explain_columns(e.fit)
        row = response.runtimes.add(
            runtime=runtime_ref(e.runtime),
            verdict=pb.VERDICT_CANDIDATE,
            rank=ranked.rank,
            score=e.fit.score,
            reason="-",
            supported_model_format_index=e.fit.match.index if e.fit.match is not None else -1,
        )
        if columns is not None:
            row.priority, row.weight = columns
    others = sorted(
        (e for e in result.evaluations if e.verdict is not Verdict.CANDIDATE),
        key=lambda e: (e.runtime.is_cluster, e.runtime.name),
    )
    for e in others:
        response.runtimes.add(
            runtime=runtime_ref(e.runtime),
            verdict=pb.Verdict.Value("VERDICT_" + e.verdict.value),
            reasons=_reasons(e.failures),
            reason=e.failures[0].message,
            supported_model_format_index=e.fit.match.index if e.fit.match is not None else -1,
        )
    return response


__all__ = ["select_runtime", "explain_runtimes", "runtime_ref", "Check"]
