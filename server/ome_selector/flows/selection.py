"""The flow of ExplainRuntimes over one snapshot, from a typed query to a typed outcome
(reference/kubectl-ome/runtime.md, ``explain``; runtime-selection-scoring.md). SelectRuntime's
flow is ``resolution.decide``. Pure Python, no gRPC."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import compile_request
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import AutoSelection, Evaluation, GroupResult
from ome_selector.engine.explain_rows import Excluded, RowMaker
from ome_selector.flows.resolution import ModelResolution, model_errors, resolve_model
from ome_selector.rules.scoring import explain_columns
from ome_selector.texts import messages

_NAME = attrgetter("name")


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


class CandidateRow(NamedTuple):
    """A candidate row: its rank, and the explain PRIORITY and WEIGHT columns (None: no match).
    A named tuple, as ``Excluded``: one is made per row listed."""

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
    rows: tuple[CandidateRow | Excluded | Evaluation, ...] = ()
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
    total, rows = _explain_rows(result, query.runtime_name)
    end = total if query.page_size == 0 else min(total, query.offset + query.page_size)
    listed = list(rows(query.offset, end))
    candidates = next((i for i, row in enumerate(listed) if not isinstance(row, engine.Ranked)), len(listed))
    page: list[CandidateRow | Excluded | Evaluation] = [
        CandidateRow(row, explain_columns(row.evaluation.fit))
        for row in listed[:candidates]
        if isinstance(row, engine.Ranked)
    ]
    page += RowMaker(res.model, compiled).rows(listed[candidates:])  # type: ignore[arg-type]  # runtimes only
    return Explained(res, notes, tuple(page), total, end if end < total else None)


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


def _explain_rows(
    result: AutoSelection, name: str
) -> tuple[int, Callable[[int, int], Iterator[engine.Ranked | d.Runtime]]]:
    """The explain table's rows: the candidates in rank order, then every other runtime,
    ServingRuntimes first, each kind by name; only runtimes called ``name`` when it is set.
    Returns (how many rows, rows(start, stop) -> that slice of them): a page costs its rows and
    the candidates, never a pass over every runtime in scope."""
    if name:
        ranked = [r for r in result.ranked if r.evaluation.runtime.name == name]
        others = [rt for gr in result.results for rt in _named(gr.group.by_name(), name) if not _is_candidate(gr, rt)]
        listed: list[engine.Ranked | d.Runtime] = [*ranked, *others]
        return len(listed), lambda start, stop: iter(listed[start:stop])
    candidates = len(result.ranked)
    total = candidates + sum(len(gr.group) - len(gr.keys) for gr in result.results)

    def rows(start: int, stop: int) -> Iterator[engine.Ranked | d.Runtime]:
        for i in range(start, min(stop, candidates)):
            yield result.ranked[i]
        first = candidates  # row number of the group's first non-candidate
        for gr in result.results:
            count = len(gr.group) - len(gr.keys)
            lo, hi = max(start, first) - first, min(stop, first + count) - first
            if lo < hi:  # a page within the candidates never sorts a group by name
                yield from _skipping(gr.group.by_name(), _candidate_places(gr), lo, hi)
            first += count

    return total, rows


def _named(by_name: tuple[d.Runtime, ...], name: str) -> tuple[d.Runtime, ...]:
    """The runtimes called ``name`` in ``by_name`` (sorted by name): a slice found by bisection."""
    lo = bisect.bisect_left(by_name, name, key=_NAME)
    return by_name[lo : bisect.bisect_right(by_name, name, lo=lo, key=_NAME)]


def _is_candidate(result: GroupResult, rt: d.Runtime) -> bool:
    order = result.group.order
    return any(order[key[3]] is rt for key in result.keys)


def _candidate_places(result: GroupResult) -> list[int]:
    """Where the group's candidates are in its by-name order, ascending."""
    by_name, order = result.group.by_name(), result.group.order
    places = []
    for key in result.keys:
        rt = order[key[3]]
        i = bisect.bisect_left(by_name, rt.name, key=_NAME)
        while by_name[i] is not rt:  # names are unique in a group; a guard all the same
            i += 1
        places.append(i)
    return sorted(places)


def _skipping(by_name: tuple[d.Runtime, ...], places: list[int], lo: int, hi: int) -> Iterator[d.Runtime]:
    """Non-candidates ``lo`` to ``hi`` (0-based, ``hi`` excluded) of ``by_name``, skipping the
    candidates at ``places`` (sorted)."""
    k = 0  # candidates before the current place
    index = lo
    while k < len(places) and places[k] <= index:  # the lo-th non-candidate's place in by_name
        index += 1
        k += 1
    for _ in range(hi - lo):
        while k < len(places) and places[k] == index:
            index += 1
            k += 1
        yield by_name[index]
        index += 1
