"""SelectRuntime (BASIC or FULL view; runtime-selection-scoring.md, reference-a-runtime-explicitly.md)
and ExplainRuntimes (by InferenceService or by model, paged; reference/kubectl-ome/runtime.md, explain):
decode (``validation``) -> flows (resolution.decide; selection.explain) -> encode."""

from __future__ import annotations

import base64
import hashlib
import json

from ome.selector.v1 import selector_pb2 as pb

from ome_selector import validation
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.domain.answers import DEFAULT_CANDIDATE_LIMIT
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import AutoSelection, Verdict
from ome_selector.engine.explain_rows import Excluded
from ome_selector.flows import selection
from ome_selector.flows.resolution import Decision, Resolved, SelectQuery, decide
from ome_selector.flows.selection import CandidateRow, Explained, ExplainQuery
from ome_selector.rpc import explain_wire
from ome_selector.rpc.common import Rpc, _require_synced, add_reasons, runtime_ref
from ome_selector.rpc.enums import CHECK_TO_PB, TIE_BREAK_TO_PB, VERDICT_TO_PB
from ome_selector.rules.results import Check
from ome_selector.texts import messages, requests

MAX_PAGE_SIZE = 1000
# The largest serialized answer a group result keeps (``encode_select``); a larger one (a BASIC
# view asking for every candidate of thousands) is built for each request.
KEPT_ANSWER_BYTES = 16 << 10


def _model_identity(model: d.Model) -> pb.ModelIdentity:
    return pb.ModelIdentity(kind=model.kind, namespace=model.namespace, name=model.name, label=model.label)


def _raise_invalid(violations: list[FieldViolation]) -> None:
    if violations:
        raise RequestError.invalid(violations)


# ---- SelectRuntime ----------------------------------------------------------------------------


def decode_select(snapshot: Snapshot, request: pb.SelectRuntimeRequest) -> SelectQuery:
    """UNAVAILABLE before the first sync; INVALID_ARGUMENT with every violation
    (``validation.select_request``)."""
    _require_synced(snapshot)
    _raise_invalid(validation.select_request(request))
    model_spec = request.model_spec if request.HasField("model_spec") else None
    full = request.view == pb.SELECT_RUNTIME_VIEW_FULL
    # BASIC: the best candidate_limit candidates (unset: DEFAULT_CANDIDATE_LIMIT); FULL: all.
    limit = 0 if full else request.candidate_limit if request.HasField("candidate_limit") else DEFAULT_CANDIDATE_LIMIT
    return SelectQuery(request.inference_service, model_spec, full, limit)


def selection_pb(decision: Decision) -> pb.Selection | None:
    """The Selection proto of a decision's runtime, or None."""
    runtime, evaluation = decision.runtime, decision.evaluation
    if decision.outcome is not Resolved.RUNTIME or runtime is None:
        return None
    if not decision.named:
        assert evaluation is not None
        return pb.Selection(
            runtime=runtime_ref(runtime),
            score=evaluation.fit.score,
            supported_model_format_index=evaluation.fit.score_index,
            mode=pb.SELECTION_MODE_AUTO,
        )
    entry = decision.named_entry
    index, score = entry if entry is not None else (-1, 0)
    selection = pb.Selection(
        runtime=runtime_ref(runtime),
        mode=pb.SELECTION_MODE_NAMED,
        inheritance_chain=runtime.chain,
        supported_model_format_index=index,
        score=score,
    )
    if entry is not None and evaluation is not None and evaluation.verdict is Verdict.EXCLUDED:
        add_reasons(selection.reasons, evaluation.failures)
    return selection


def encode_select(snapshot: Snapshot, query: SelectQuery, decision: Decision) -> pb.SelectRuntimeResponse | bytes:
    """The SelectRuntimeResponse of ``decision``; NOT_FOUND for an unknown model or named runtime.
    A named runtime that fails a check carries OME's warning (reference-a-runtime-explicitly.md);
    auto-selection carries the ranked candidates (``_auto_selection``) and the selected runtime's
    warning or the ``no runtime found`` message.

    A BASIC answer with a selected runtime, in a namespace without ServingRuntimes, comes
    serialized: its body is kept on the ClusterServingRuntimes' group result (``_answer_key``),
    and the snapshot's ``cache_version`` follows it (a field parsed after the others, as any)."""
    if decision.outcome in (Resolved.MODEL_NOT_FOUND, Resolved.RUNTIME_NOT_FOUND):
        raise RequestError("NOT_FOUND", decision.model.not_found or decision.runtime_not_found)
    model, auto, spec = decision.model.model, decision.auto, query.isvc.spec
    key = None
    if auto is not None and model is not None and decision.runtime is not None and not (decision.named or query.full):
        key = _answer_key(auto, model, spec.model.name, query.candidate_limit)
    if key is not None:
        assert auto is not None
        body: bytes | None = auto.results[1].kept(key, None)
        if body is not None:
            return body + _cache_version(snapshot)
    response = pb.SelectRuntimeResponse(
        cache_version="" if key is not None else snapshot.version,
        model=_model_identity(model) if model is not None else None,
        model_error=decision.model.error,
        runtime_error=decision.runtime_error,
        selection=selection_pb(decision),
    )
    if decision.outcome is Resolved.MODEL_ERROR:
        return response
    if decision.named:
        if decision.compatibility_error:
            warning = messages.named_runtime_warning(spec.runtime.name, spec.model.name, decision.compatibility_error)
            response.warnings.append(warning)
        return response
    assert auto is not None and model is not None
    _auto_selection(response, auto, query.candidate_limit, query.full)
    if decision.runtime is None:
        response.no_runtime_message = auto.no_runtime_message or ""
        return response
    response.warnings.append(messages.auto_selected(decision.runtime.name, spec.model.name or model.name))
    if key is not None:
        body = response.SerializeToString()
        if len(body) <= KEPT_ANSWER_BYTES:
            auto.results[1].keep(key, None, body)
        return body + _cache_version(snapshot)
    return response


def _answer_key(auto: AutoSelection, model: d.Model, spec_model: str, limit: int) -> tuple[object, ...] | None:
    """The key a BASIC answer with a selected runtime is kept under on the ClusterServingRuntimes'
    group result, when no ServingRuntime is in scope (the answer is then that result's alone)
    and the group keeps its results (``engine.group_result``); else None. Past the result (the
    model's content and the request's checks), the answer depends on the model's identity, the
    model name its warning gives (``spec_model``) and the candidates it shows at most (``limit``)."""
    if len(auto.results[0].group) or len(auto.results[1].group) < engine.MEMO_MIN_RUNTIMES:
        return None
    return (engine.ANSWER, model.kind, model.namespace, model.name, model.label, spec_model, limit)


def _cache_version(snapshot: Snapshot) -> bytes:
    """The ``cache_version`` field of a SelectRuntimeResponse, serialized."""
    return pb.SelectRuntimeResponse(cache_version=snapshot.version).SerializeToString()


def _auto_selection(response: pb.SelectRuntimeResponse, auto: AutoSelection, limit: int, full: bool) -> None:
    """The ranked candidates (the first ``limit``, 0: all) and their number, the exclusion summary
    and, for the FULL view, every exclusion's primary reason."""
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
            exclusion = response.exclusions.add(runtime=runtime_ref(x.runtime), verdict=VERDICT_TO_PB[x.verdict])
            add_reasons(exclusion.reasons, (x.primary,), entries=False)


# (check, its name, its proto enum value) in canonical order.
_CHECKS = tuple((check, check.name, CHECK_TO_PB[check]) for check in Check)


def exclusion_summary(auto: AutoSelection) -> pb.ExclusionSummary:
    """The runtimes in scope counted by primary reason, with its one-line text."""
    counts = auto.counts
    named = [(name, counts[check]) for check, name, _ in _CHECKS]
    summary = pb.ExclusionSummary(
        runtimes=auto.total,
        candidates=len(auto.ranked),
        text=messages.exclusion_summary(len(auto.ranked), auto.total, named),
    )
    for check, _, value in _CHECKS:
        if counts[check]:
            summary.counts.add(check=value, count=counts[check])
    return summary


SELECT = Rpc(decode_select, decide, encode_select, pb.SelectRuntimeResponse)
select_runtime = SELECT


# ---- ExplainRuntimes --------------------------------------------------------------------------


def decode_explain(snapshot: Snapshot, request: pb.ExplainRuntimesRequest) -> tuple[ExplainQuery, str]:
    """UNAVAILABLE before the first sync; INVALID_ARGUMENT for the violations
    ``validation.explain_request`` finds, a bad page size or page token. The query, and the
    fingerprint the page tokens are bound to."""
    _require_synced(snapshot)
    _raise_invalid(validation.explain_request(request))
    fingerprint = _request_fingerprint(request)
    page_size, offset = _page(request, fingerprint)
    by_isvc = request.HasField("inference_service")
    isvc = request.inference_service if by_isvc else None
    query = ExplainQuery(
        namespace=isvc.metadata.namespace if isvc is not None else request.model.namespace,
        model_name=request.model.name,
        isvc=isvc,
        model_spec=request.model_spec if request.HasField("model_spec") else None,
        runtime_name=request.runtime_name,
        page_size=page_size,
        offset=offset,
    )
    return query, fingerprint


def run_explain(snapshot: Snapshot, decoded: tuple[ExplainQuery, str]) -> Explained:
    return selection.explain(snapshot, decoded[0])


def encode_explain(snapshot: Snapshot, decoded: tuple[ExplainQuery, str], outcome: Explained) -> bytes:
    """The ExplainRuntimesResponse page of ``outcome``, serialized (``explain_wire``: the rows
    joined from parts serialized once, then the other fields); NOT_FOUND for an unknown model."""
    res = outcome.model
    if res.not_found:
        raise RequestError("NOT_FOUND", res.not_found)
    assert res.model is not None
    response = pb.ExplainRuntimesResponse(
        cache_version=snapshot.version, model=_model_identity(res.model), notes=outcome.notes, model_error=res.error
    )
    if res.error:
        return response.SerializeToString()
    response.total_size = outcome.total
    if outcome.next_offset is not None:
        response.next_page_token = _page_token(decoded[1], outcome.next_offset)
    out: list[bytes] = []
    excluded: list[Excluded] = []
    for row in outcome.rows:
        if isinstance(row, Excluded):
            excluded.append(row)
            continue
        if excluded:
            explain_wire.excluded_rows(excluded, res.model.cache_key, out)
            excluded = []
        if isinstance(row, CandidateRow):
            e = row.ranked.evaluation
            index = e.fit.match.index if e.fit.match is not None else -1
            explain_wire.candidate_row(e.runtime, row.ranked.rank, e.fit.score, index, row.columns, out)
        else:
            explain_wire.evaluated_row(row, out)
    explain_wire.excluded_rows(excluded, res.model.cache_key, out)
    out.append(response.SerializeToString())  # fields 2 to 7 come after the rows (field 1)
    return b"".join(out)


def _request_fingerprint(request: pb.ExplainRuntimesRequest) -> str:
    """What a page token is bound to: the request without its paging fields."""
    unpaged = pb.ExplainRuntimesRequest()
    unpaged.CopyFrom(request)
    unpaged.ClearField("page_token")
    unpaged.ClearField("page_size")
    return hashlib.sha256(unpaged.SerializeToString(deterministic=True)).hexdigest()[:16]


def _page_token(fingerprint: str, offset: int) -> str:
    """An opaque token for the rows from ``offset`` on (AIP-158)."""
    raw = json.dumps({"o": offset, "r": fingerprint}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _page(request: pb.ExplainRuntimesRequest, fingerprint: str) -> tuple[int, int]:
    """(page size, offset) of an ExplainRuntimes request; raises INVALID_ARGUMENT for a negative
    or too large page size, or a token that is malformed or from another request."""
    if request.page_size < 0 or request.page_size > MAX_PAGE_SIZE:
        text = requests.PAGE_SIZE.format(limit=MAX_PAGE_SIZE, size=request.page_size)
        raise RequestError.invalid([FieldViolation("page_size", text)])
    if not request.page_token:
        return request.page_size, 0
    try:
        token = request.page_token
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        offset, bound = data["o"], data["r"]
        valid = isinstance(offset, int) and offset >= 0 and bound == fingerprint
    except (ValueError, TypeError, KeyError):
        valid = False
    if not valid:
        raise RequestError.invalid([FieldViolation("page_token", requests.PAGE_TOKEN)])
    return request.page_size, offset


EXPLAIN = Rpc(decode_explain, run_explain, encode_explain, pb.ExplainRuntimesResponse)
explain_runtimes = EXPLAIN
