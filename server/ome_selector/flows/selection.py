"""The flow of ExplainRuntimes over one snapshot, from a typed query to a typed outcome
(reference/kubectl-ome/runtime.md, ``explain``; runtime-selection-scoring.md). SelectRuntime's
flow is ``resolution.decide``. Pure Python, no gRPC."""

from __future__ import annotations

from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import compile_request
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import AutoSelection, Evaluation
from ome_selector.flows.resolution import ModelResolution, model_errors, resolve_model
from ome_selector.rules.scoring import explain_columns
from ome_selector.texts import messages


@dataclass(frozen=True, slots=True)
class ExplainQuery:
    """A validated ExplainRuntimesRequest: by model (``model_name`` in ``namespace``) or by
    InferenceService (``isvc``, with its inline ``model_spec``); the rows of ``runtime_name``
    only when set; the page (``page_size`` 0: every row from ``offset``)."""

    namespace: str
    model_name: str
    isvc: types_pb2.InferenceService | None
    model_spec: types_pb2.BaseModelSpec | None
    runtime_name: str
    page_size: int
    offset: int


@dataclass(frozen=True, slots=True)
class CandidateRow:
    """A candidate row: its rank, and the explain PRIORITY and WEIGHT columns (None: no match)."""

    ranked: engine.Ranked
    columns: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class Explained:
    """ExplainRuntimes' outcome. ``model`` is the resolved model (``not_found`` when there is
    none, ``error`` for one that cannot be matched: then there are no rows); ``rows`` are the
    page's rows, candidates (``CandidateRow``) then the others (their ``Evaluation``);
    ``total`` counts every row; ``next_offset`` is where the next page starts (None: last page)."""

    model: ModelResolution
    notes: tuple[str, ...]
    rows: tuple[CandidateRow | Evaluation, ...] = ()
    total: int = 0
    next_offset: int | None = None


def explain(snapshot: Snapshot, query: ExplainQuery) -> Explained:
    """``--isvc`` also applies the InferenceService's accelerator classes and deployment modes,
    ``--model`` does not. A named runtime does not change the table (the selection is hypothetical)."""
    isvc = query.isvc
    notes: tuple[str, ...] = (messages.EXPLICIT_RUNTIME_NOTE,) if isvc is not None and isvc.spec.runtime.name else ()
    res = _explained_model(snapshot, query)
    if res.not_found or res.error:
        return Explained(res, notes)
    assert res.model is not None
    compiled = compile_request(isvc) if isvc is not None else None
    result = engine.auto_select(snapshot, res.model, compiled, query.namespace)
    notes += () if result.total else (messages.NO_RUNTIMES_NOTE,)
    rows = _explain_rows(result, query.runtime_name)
    end = len(rows) if query.page_size == 0 else min(len(rows), query.offset + query.page_size)
    page = tuple(_row(row, res.model, compiled) for row in rows[query.offset : end])
    return Explained(res, notes, page, len(rows), end if end < len(rows) else None)


def _explained_model(snapshot: Snapshot, query: ExplainQuery) -> ModelResolution:
    """The model explained: ``--model`` looked up as a BaseModel in the namespace, else a
    ClusterBaseModel; ``--isvc`` resolved as SelectRuntime resolves it. Not found is the API
    server's error for ``--model`` (kubectl-ome runtime.md)."""
    if query.isvc is None:
        found = snapshot.base_models.get((query.namespace, query.model_name)) or snapshot.cluster_models.get(
            query.model_name
        )
        if found is None:
            return ModelResolution(None, not_found=messages.cluster_base_model_not_found(query.model_name))
        return model_errors(found, query.model_name)
    res = resolve_model(snapshot, query.isvc, query.model_spec)
    if res.not_found:
        return ModelResolution(None, not_found=messages.cluster_base_model_not_found(query.isvc.spec.model.name))
    return res


def _row(row: engine.Ranked | d.Runtime, model: d.Model, request: d.Request | None) -> CandidateRow | Evaluation:
    if isinstance(row, engine.Ranked):
        return CandidateRow(row, explain_columns(row.evaluation.fit))
    return engine.evaluate(row, row.own, model, request)


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
