"""ExplainRuntimes' rows (reference/kubectl-ome/runtime.md, ``explain``): the candidates in rank
order, then every other runtime, ServingRuntimes first, each kind by name. ``_explain_rows``
builds a page without a pass over every runtime; every slice equals the same slice of the whole
table as written out runtime by runtime."""

from __future__ import annotations

from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine
from ome_selector.flows import selection


def _auto() -> engine.AutoSelection:
    docs = [
        *(runtime(f"rt-{i:02d}", entry(priority=1 + i % 4)) for i in range(0, 20, 2)),  # candidates
        *(runtime(f"rt-{i:02d}", entry(format=("gguf", "1"))) for i in range(1, 20, 2)),  # model format
        runtime("rt-05", entry(priority=2), namespace="llama-demo"),  # a ServingRuntime candidate
        runtime("rt-00", entry(format=("gguf", "1")), namespace="llama-demo"),
        runtime("rt-zz", entry(format=("gguf", "1")), namespace="llama-demo"),
    ]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs, model(namespace=None)))
    snapshot = store.snapshot
    return engine.auto_select(
        snapshot,
        snapshot.cluster_models["llama-3-2-3b-instruct"],
        compile_request(inference_service(isvc())),
        "llama-demo",
    )


def _label(row: engine.Ranked | object) -> str:
    if isinstance(row, engine.Ranked):
        return f"#{row.rank} {row.evaluation.runtime.kind}/{row.evaluation.runtime.name}"
    return f"{row.kind}/{row.name}"  # type: ignore[attr-defined]


def _whole_table(auto: engine.AutoSelection, name: str = "") -> list[str]:
    candidates = {id(r.evaluation.runtime) for r in auto.ranked}
    rows = [_label(r) for r in auto.ranked if not name or r.evaluation.runtime.name == name]
    for result in auto.results:
        rows += [
            _label(rt) for rt in result.group.by_name() if id(rt) not in candidates and (not name or rt.name == name)
        ]
    return rows


def test_the_table_is_candidates_by_rank_then_servingruntimes_then_clusterservingruntimes_by_name() -> None:
    auto = _auto()
    total, rows = selection._explain_rows(auto, "")
    labels = [_label(r) for r in rows(0, total)]
    assert total == 23
    assert labels[:11] == [  # score 2 x priority; ServingRuntimes first; then name
        "#1 ServingRuntime/rt-05",
        *(f"#{2 + k} ClusterServingRuntime/rt-{i:02d}" for k, i in enumerate((2, 6, 10, 14, 18))),
        *(f"#{7 + k} ClusterServingRuntime/rt-{i:02d}" for k, i in enumerate((0, 4, 8, 12, 16))),
    ]
    assert labels[11:] == [
        "ServingRuntime/rt-00",
        "ServingRuntime/rt-zz",
        *(f"ClusterServingRuntime/rt-{i:02d}" for i in range(1, 20, 2)),
    ]


def test_every_page_is_the_same_slice_of_the_whole_table() -> None:
    auto = _auto()
    whole = _whole_table(auto)
    total, rows = selection._explain_rows(auto, "")
    assert total == len(whole)
    for start in range(total + 1):
        for stop in range(start, total + 2):
            assert [_label(r) for r in rows(start, stop)] == whole[start:stop], (start, stop)


def test_a_runtime_name_keeps_only_its_rows() -> None:
    auto = _auto()
    for name in ("rt-00", "rt-05", "rt-01", "rt-zz", "missing"):
        total, rows = selection._explain_rows(auto, name)
        assert [_label(r) for r in rows(0, total)] == _whole_table(auto, name), name
    total, rows = selection._explain_rows(auto, "rt-00")
    assert [_label(r) for r in rows(0, total)] == ["#7 ClusterServingRuntime/rt-00", "ServingRuntime/rt-00"]
