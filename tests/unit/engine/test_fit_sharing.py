"""Runtimes that differ only in priorities share one fit (``Compiled.fit_id``, the engine's
``FIT_BASES``) yet keep their own scores; the ranking is made from keys and builds the
evaluations it shows only (runtime-selection-scoring.md, "How the score is computed" and
"Tie-breaking")."""

from __future__ import annotations

from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import TieBreak


def _store(*docs: dict) -> CacheStore:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs, model(namespace=None)))
    return store


def test_runtimes_differing_only_in_priority_share_a_fit_id_and_keep_their_scores() -> None:
    store = _store(
        runtime("rt-p1", entry(priority=1), size=("1B", "8B")),
        runtime("rt-p3", entry(priority=3), size=("1B", "8B")),
        runtime("rt-p2", entry(priority=2), size=("1B", "8B")),
        runtime("rt-wide", entry(priority=3), size=("1B", "80B")),
    )
    snapshot = store.snapshot
    specs = {rt.name: rt.own for rt in snapshot.runtimes_in_scope("llama-demo")[1].order}
    assert specs["rt-p1"].fit_id == specs["rt-p2"].fit_id == specs["rt-p3"].fit_id
    assert specs["rt-wide"].fit_id != specs["rt-p1"].fit_id  # another size range, another fit
    mdl = snapshot.cluster_models["llama-3-2-3b-instruct"]
    request = compile_request(inference_service(isvc()))
    auto = engine.auto_select(snapshot, mdl, request, "llama-demo")
    # (format weight 1 + framework weight 1) x priority (spec_of's weights); equal scores by the
    # narrower range.
    assert [(r.evaluation.runtime.name, r.evaluation.fit.score, r.tie_break) for r in auto.ranked] == [
        ("rt-p3", 6, TieBreak.UNSPECIFIED),
        ("rt-wide", 6, TieBreak.SIZE_DISTANCE),
        ("rt-p2", 4, TieBreak.SCORE),
        ("rt-p1", 2, TieBreak.SCORE),
    ]
    _, ranked, _ = engine.exhaustive_auto_select(snapshot, mdl, request, "llama-demo")
    assert [r.evaluation.runtime.name for r in ranked] == [r.evaluation.runtime.name for r in auto.ranked]


def test_the_ranking_builds_only_the_evaluations_it_is_asked_for() -> None:
    store = _store(*(runtime(f"rt-{i:02d}", entry(priority=1 + i % 9)) for i in range(30)))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["llama-3-2-3b-instruct"]
    auto = engine.auto_select(snapshot, mdl, compile_request(inference_service(isvc())), "llama-demo")
    assert len(auto.ranked) == 30
    evaluated = auto.results[1].evaluated
    assert len(evaluated.made) == 0  # counted and ranked from keys alone
    top = auto.ranked[:3]
    assert [(r.rank, r.evaluation.runtime.name, r.evaluation.fit.score) for r in top] == [
        (1, "rt-08", 18),
        (2, "rt-17", 18),
        (3, "rt-26", 18),
    ]
    assert len(evaluated.made) == 3
