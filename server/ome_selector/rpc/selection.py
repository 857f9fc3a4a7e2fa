"""SelectRuntime (BASIC or FULL view; runtime-selection-scoring.md, reference-a-runtime-explicitly.md)
and ExplainRuntimes (by InferenceService or by model, paged; reference/kubectl-ome/runtime.md, explain)."""

from __future__ import annotations

import base64
import hashlib
import json

from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import (
    compile_request,
    model_spec_violations,
    validate_name,
    validate_spec,
)
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.answers import DEFAULT_CANDIDATE_LIMIT
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import AutoSelection, Evaluation, Verdict
from ome_selector.flows import resolution
from ome_selector.rpc.common import (
    EXPLICIT_RUNTIME_NOTE,
    NO_RUNTIMES_NOTE,
    _isvc_violations,
    _require_isvc,
    _require_synced,
    runtime_ref,
)
from ome_selector.rpc.enums import CHECK_TO_PB, COMPONENT_TO_PB, TIE_BREAK_TO_PB, VERDICT_TO_PB
from ome_selector.rules.results import Check, Failure
from ome_selector.rules.scoring import entry_score, explain_columns
from ome_selector.texts import messages

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
    if request.HasField("candidate_limit") and request.candidate_limit < 0:
        violations.append(
            FieldViolation("candidate_limit", f"candidate_limit must be 0 (all) or more, got {request.candidate_limit}")
        )
    if violations:
        raise RequestError.invalid(violations)
    model_spec = request.model_spec if request.HasField("model_spec") else None
    full = request.view == pb.SELECT_RUNTIME_VIEW_FULL
    limit = 0 if full else request.candidate_limit if request.HasField("candidate_limit") else DEFAULT_CANDIDATE_LIMIT
    return _select_response(snapshot, isvc, resolution.decide(snapshot, isvc, model_spec), full, limit)


def _select_response(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, decision: resolution.Decision, full: bool, limit: int = 0
) -> pb.SelectRuntimeResponse:
    """The answer for ``decision``: ``full`` adds the exclusions; ``limit`` bounds the candidates
    carried (0 = all)."""
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
    response.total_candidates = len(auto.ranked)
    for ranked in auto.ranked[:limit] if limit else auto.ranked:
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
