"""The one evaluation path (``engine.auto_select``: bit masks per check, texts only where an
answer shows them) gives exactly what evaluating every runtime gives
(``engine.exhaustive_auto_select``): the ranking with its tie-breaks, each runtime's verdict and
primary reason, the exclusion counts and OME's ``no runtime found`` text. And a snapshot derived
write by write (``Snapshot.with_changes``) equals one built from scratch on the same objects.

Property tests on random snapshots and requests (hypothesis, bounded in examples and time).
"""

from __future__ import annotations

from typing import Any

from helpers_docs import entry, isvc, model, objects, runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import Verdict
from ome_selector.rpc import selection
from ome_selector.rules.results import Check

NS = "team-a"
CLASSES = ("a100", "h100", "l40s")
MODES = ("RawDeployment", "OMENative", "MultiNode", "bogus")
SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

formats = st.sampled_from([("safetensors", "1.0.0"), ("safetensors", "2.0.0"), ("safetensors", None), ("gguf", "1")])
frameworks = st.sampled_from([("transformers", "4.45.0"), ("transformers", "4.47.0"), ("vllm", None)])
architectures = st.sampled_from(["LlamaForCausalLM", "Qwen2ForCausalLM", None])
quantizations = st.sampled_from([None, None, "fp8"])
sizes = st.sampled_from([None, ("1B", "8B"), ("2B", None), (None, "4B"), ("70B", "75B"), ("3B", "3.5B")])


@st.composite
def entries(draw: Any) -> dict[str, Any]:
    fmt = draw(formats)
    operator = draw(st.sampled_from([None, "Equal", "GreaterThan", "GreaterThanOrEqual"]))
    fw = draw(frameworks)
    return entry(
        format={
            "name": fmt[0],
            **({"version": fmt[1]} if fmt[1] else {}),
            **({"operator": operator} if operator else {}),
            **({"weight": w} if (w := draw(st.sampled_from([None, 0, 1, 2]))) is not None else {}),
        },
        framework=fw,
        architecture=draw(architectures),
        quantization=draw(quantizations),
        auto_select=draw(st.sampled_from([True, True, False, None])),
        priority=draw(st.sampled_from([None, 1, 2, 3])),
    )


@st.composite
def runtimes(draw: Any, name: str, namespace: str | None) -> dict[str, Any]:
    return runtime(
        name,
        *draw(st.lists(entries(), min_size=1, max_size=3)),
        namespace=namespace,
        size=draw(sizes),
        classes=draw(st.one_of(st.none(), st.lists(st.sampled_from(CLASSES), min_size=1, max_size=2, unique=True))),
        engine_mode=draw(st.sampled_from([None, None, *MODES])),
        decoder_mode=draw(st.sampled_from([None, "OMENative", "RawDeployment"])),
        disabled=draw(st.sampled_from([None, False, True])),
        created=draw(st.sampled_from([None, "2025-01-01T00:00:00Z", "2025-06-01T00:00:00Z", "2026-01-01T00:00:00Z"])),
    )


@st.composite
def clusters(draw: Any) -> list[dict[str, Any]]:
    """Up to 12 ClusterServingRuntimes and 4 ServingRuntimes in NS (names may repeat across kinds)."""
    names = draw(st.lists(st.sampled_from([f"rt-{i}" for i in range(14)]), min_size=0, max_size=12, unique=True))
    namespaced = draw(st.lists(st.sampled_from([f"rt-{i}" for i in range(6)]), min_size=0, max_size=4, unique=True))
    return [draw(runtimes(n, None)) for n in names] + [draw(runtimes(n, NS)) for n in namespaced]


@st.composite
def models(draw: Any) -> dict[str, Any]:
    fmt = draw(formats)
    distribution = draw(st.sampled_from([None, None, None, "PerNode", "Sharded"]))  # base-models.md, "Distribution"
    return model(
        "m",
        namespace=None,
        format=(fmt[0], fmt[1] or "1.0.0"),
        framework=draw(
            st.sampled_from([("transformers", "4.45.0"), ("transformers", "4.47.0"), ("vllm", "0.6"), None])
        ),
        architecture=draw(architectures),
        quantization=draw(quantizations),
        size=draw(st.sampled_from([None, "3.21B", "70B", "7B", "500M"])),
        spec={"distribution": distribution} if distribution else None,
    )


@st.composite
def services(draw: Any) -> dict[str, Any]:
    classes = draw(st.lists(st.sampled_from(CLASSES), max_size=2, unique=True))
    decoder = draw(
        st.sampled_from(
            [None, {}, *({"annotations": {"ome.io/deploymentMode": m}} for m in ("OMENative", "RawDeployment"))]
        )
    )
    doc = isvc(
        "m",
        namespace=draw(st.sampled_from([NS, "other"])),
        accelerator_class=classes[0] if classes else None,
        deployment_mode=draw(st.sampled_from([None, "OMENative", "RawDeployment"])),
        decoder=decoder,
    )
    if len(classes) > 1:
        doc["metadata"]["annotations"] = {"ome.io/accelerator-class": classes[1]}
    return doc


def _failure_view(failure: Any) -> tuple[Any, ...]:
    return (failure.check, failure.message, failure.component, failure.runtime_value, failure.requested_value)


@SETTINGS
@given(clusters(), models(), services())
def test_fast_path_equals_the_exhaustive_evaluation(
    cluster: list[dict[str, Any]], model_doc: dict[str, Any], service: dict[str, Any]
) -> None:
    assert_fast_path(cluster, model_doc, service)


def assert_fast_path(cluster: list[dict[str, Any]], model_doc: dict[str, Any], service: dict[str, Any]) -> None:
    """``auto_select`` on a snapshot of ``cluster`` and ``model_doc`` for ``service`` equals
    ``exhaustive_auto_select``: ranking, tie-breaks, message (uncapped), exclusions, counts,
    evaluations."""
    store = CacheStore(max_message_bytes=0)
    store.apply_snapshot("v1", objects(*cluster, model_doc))
    assert_fast_path_on(store, service)


def assert_fast_path_on(store: CacheStore, service: dict[str, Any]) -> None:
    """``auto_select`` on the store's snapshot (model ``m``, an uncapped message) for ``service``
    equals ``exhaustive_auto_select``, as ``assert_fast_path`` says."""
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    from helpers_docs import inference_service

    request = compile_request(inference_service(service))
    namespace = service["metadata"]["namespace"]
    fast = engine.auto_select(snapshot, mdl, request, namespace)
    evaluations, ranked, message = engine.exhaustive_auto_select(snapshot, mdl, request, namespace)

    assert [(r.evaluation.runtime.key, r.rank, r.tie_break, r.evaluation.fit.score) for r in fast.ranked] == [
        (r.evaluation.runtime.key, r.rank, r.tie_break, r.evaluation.fit.score) for r in ranked
    ]
    assert fast.no_runtime_message == message
    expected = [
        (e.runtime.key, e.verdict, _failure_view(e.failures[0]))
        for e in evaluations
        if e.verdict is not Verdict.CANDIDATE
    ]
    assert [(x.runtime.key, x.verdict, _failure_view(x.primary)) for x in fast.exclusions()] == expected
    counts = dict.fromkeys(Check, 0)
    for e in evaluations:
        if e.failures:
            counts[e.failures[0].check] += 1
    assert fast.counts == counts
    assert [(e.runtime.key, e.verdict, e.failures) for e in fast.evaluations()] == [
        (e.runtime.key, e.verdict, e.failures) for e in evaluations
    ]


@st.composite
def writes(draw: Any) -> list[tuple[str, Any]]:
    """A sequence of upserts (runtime docs, some with ``ome.io/inherit-from``) and deletes."""
    out: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 8))):
        name = draw(st.sampled_from([f"rt-{i}" for i in range(6)]))
        namespace = draw(st.sampled_from([None, None, NS]))
        if draw(st.booleans()):
            doc = draw(runtimes(name, namespace))
            parent = draw(st.sampled_from([None, None, "rt-0", "rt-1", "rt-2", name]))
            if parent:
                doc["metadata"].setdefault("annotations", {})["ome.io/inherit-from"] = parent
            out.append(("upsert", doc))
        else:
            kind = cache_pb2.OBJECT_KIND_SERVING_RUNTIME if namespace else cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME
            out.append(("delete", cache_pb2.ObjectKey(kind=kind, namespace=namespace or "", name=name)))
    return out


def _shape(snapshot: Snapshot) -> Any:
    """Everything selection reads of a snapshot, comparable across builds."""

    def group(g: Any) -> Any:
        derived = (
            g.names(),
            g.format_ids(),
            [(rt.key, rt.own.format_id, rt.own.index_keys, rt.spec) for rt in g.by_name()],
            g.pieces("why"),
        )
        return ([rt.key for rt in g.order], {k: m for k, m in g.masks.items()}, derived)

    def resolved(rt: Any) -> Any:
        return (rt.key, rt.chain, rt.chain_keys, rt.inheritance_error, rt.named_compiled.index_keys, rt.own.index_keys)

    return (
        group(snapshot.cluster),
        {ns: group(g) for ns, g in snapshot.namespaced.items()},
        sorted(
            resolved(rt) for rt in (*snapshot.serving_runtimes.values(), *snapshot.cluster_serving_runtimes.values())
        ),
        snapshot.counts(),
    )


@SETTINGS
@given(clusters(), writes())
def test_a_snapshot_derived_write_by_write_equals_one_built_from_scratch(
    cluster: list[dict[str, Any]], changes: list[tuple[str, Any]]
) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*cluster))
    for i, (op, item) in enumerate(changes):
        _shape(store.snapshot)  # derive the groups' tables, so that writes carry them forward
        if op == "upsert":
            store.upsert(f"v{i + 2}", objects(item))
        else:
            store.delete(f"v{i + 2}", [item])
    derived = store.snapshot
    stored = {key: derived.stored_object(key) for key in derived.objects}
    rebuilt = Snapshot(derived.version, stored, synced=True, generation=derived.generation)  # type: ignore[arg-type]
    assert _shape(derived) == _shape(rebuilt)


def test_basic_view_leaves_exclusions_out_and_full_has_them() -> None:
    """The views differ only in ``exclusions`` (AIP-157): BASIC is FULL without them."""
    docs = [
        runtime("fits", size=("1B", "8B")),
        runtime("too-small", size=("1B", "2B")),
        runtime("off", disabled=True),
        model("m", namespace=None),
    ]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs))
    from helpers_docs import inference_service

    service = inference_service(isvc("m", namespace=NS))
    basic = selection.select_runtime(store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=service))
    full = selection.select_runtime(
        store.snapshot,
        selector_pb2.SelectRuntimeRequest(inference_service=service, view=selector_pb2.SELECT_RUNTIME_VIEW_FULL),
    )
    assert [(e.runtime.name, e.reasons[0].message) for e in full.exclusions] == [
        ("off", "runtime is disabled"),
        ("too-small", "model size 3.21B is outside supported range [1B, 2B]"),
    ]
    stripped = selector_pb2.SelectRuntimeResponse()
    stripped.CopyFrom(full)
    stripped.ClearField("exclusions")
    assert basic == stripped
    assert basic.exclusion_summary == selector_pb2.ExclusionSummary(
        runtimes=3,
        candidates=1,
        counts=[
            selector_pb2.ExclusionCount(check=selector_pb2.CHECK_DISABLED, count=1),
            selector_pb2.ExclusionCount(check=selector_pb2.CHECK_MODEL_SIZE, count=1),
        ],
        text="1/3 runtimes are candidates: 1 disabled, 1 model size",
    )


def test_no_runtime_message_survives_the_format_cache_being_emptied(monkeypatch: Any) -> None:
    """The format-failure cache may drop a model's table at any time (it is bounded); an answer
    being written then still gets every text."""
    from ome_selector.engine import memo as caches

    docs = [runtime(f"rt-{i}", entry(format=("gguf", str(i)))) for i in range(5)] + [model("m", namespace=None)]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs))
    real_add = caches.FORMAT_FAILURES.add

    def add_then_evict(model_key: object, table: dict, key: object, value: Any) -> Any:
        out = real_add(model_key, table, key, value)
        caches.FORMAT_FAILURES.clear()
        return out

    monkeypatch.setattr(caches.FORMAT_FAILURES, "add", add_then_evict)
    caches.FORMAT_FAILURES.clear()
    from helpers_docs import inference_service

    response = selection.select_runtime(
        store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc("m", namespace=NS)))
    )
    reason = "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in supported formats: format name mismatch (model=safetensors, runtime=gguf)"
    assert response.no_runtime_message == (
        "no runtime found to support model safetensors with format safetensors in namespace team-a. Checked 5 runtimes "
        "(0 namespace-scoped, 5 cluster-scoped). Excluded runtimes: "
        + "; ".join(f"rt-{i} ({reason})" for i in range(5))
    )
