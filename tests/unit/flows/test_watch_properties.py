"""Property tests of the incremental outcomes (docs/api.md "Watch selections and preview a change"): after random writes the tracker's
outcomes and change events equal evaluating every InferenceService from scratch, the shared
evaluations (``outcomes.Evaluations``) equal evaluating each InferenceService alone, and
PreviewCacheChange equals applying the change and diffing. Bounded: a fixed number of examples on
a small universe of names (namespaces a/b, runtimes r1-r3 that may inherit from each other,
models m1/m2, classes c1/c2, InferenceServices i1-i4; the sharing test adds namespaces c/d, which
hold InferenceServices only, and more InferenceServices)."""

from __future__ import annotations

from typing import Any

from helpers_docs import accelerator_class, entry, isvc, model, objects, revision, runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.flows.outcomes import Evaluations, Selections, evaluate
from ome_selector.rpc import outcomes
from ome_selector.rpc import runtimes as rpc_runtimes
from ome_selector.rpc.watch import SelectionTracker
from ome_selector.validation import KIND_TO_ENUM, object_key

NAMESPACES = ("a", "b")
RUNTIMES = ("r1", "r2", "r3")
MODELS = ("m1", "m2")
CLASSES = ("c1", "c2")
ISVCS = ("i1", "i2", "i3", "i4")
BOUNDED = settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))

runtimes = st.builds(
    lambda name, namespace, fmt, arch, priority, auto, classes, mode, disabled, parent, size: runtime(
        name,
        entry(format=(fmt, "1.0.0"), architecture=arch, priority=priority, auto_select=auto),
        namespace=namespace,
        classes=classes,
        engine_mode=mode,
        disabled=disabled,
        inherit_from=parent if parent != name else None,
        size=size,
    ),
    st.sampled_from(RUNTIMES),
    st.sampled_from((None, *NAMESPACES)),
    st.sampled_from(("safetensors", "gguf")),
    st.sampled_from(("LlamaForCausalLM", "QwenForCausalLM")),
    st.integers(1, 3),
    st.booleans(),
    st.sampled_from((None, ["c1"], ["c1", "c2"])),
    st.sampled_from((None, "OMENative", "RawDeployment")),
    st.sampled_from((None, True)),
    st.sampled_from((None, *RUNTIMES)),
    st.sampled_from((None, ("1B", "8B"), ("1B", "100B"))),
)
models = st.builds(
    lambda name, namespace, fmt, arch, size, disabled: model(
        name,
        namespace=namespace,
        format=(fmt, "1.0.0") if fmt else None,
        architecture=arch,
        size=size,
        spec={"disabled": True} if disabled else None,
    ),
    st.sampled_from(MODELS),
    st.sampled_from((None, *NAMESPACES)),
    st.sampled_from((None, "safetensors", "gguf")),
    st.sampled_from(("LlamaForCausalLM", "QwenForCausalLM")),
    st.sampled_from(("3B", "70B")),
    st.booleans(),
)
services = st.builds(
    lambda name, namespace, model_name, named, cls, mode: isvc(
        model_name, name=name, namespace=namespace, runtime_name=named, accelerator_class=cls, deployment_mode=mode
    ),
    st.sampled_from(ISVCS),
    st.sampled_from(NAMESPACES),
    st.sampled_from(MODELS),
    st.sampled_from((None, None, *RUNTIMES)),
    st.sampled_from((None, *CLASSES)),
    st.sampled_from((None, "OMENative")),
)
classes = st.builds(accelerator_class, st.sampled_from(CLASSES))
any_object = st.one_of(runtimes, models, services, classes)


def unique(docs: list[dict[str, Any]]) -> list[cache_pb2.CacheObject]:
    """The CacheObjects of ``docs``, the last of each key kept."""
    by_key = {object_key(o): o for o in objects(*docs)}
    return list(by_key.values())


def every_key() -> list[cache_pb2.ObjectKey]:
    """Every key the universe can hold."""
    kinds = cache_pb2.ObjectKind
    out = [cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name=r) for r in RUNTIMES]
    out += [cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_CLUSTER_BASE_MODEL, name=m) for m in MODELS]
    out += [cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_ACCELERATOR_CLASS, name=c) for c in CLASSES]
    for ns in NAMESPACES:
        out += [cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_SERVING_RUNTIME, namespace=ns, name=r) for r in RUNTIMES]
        out += [cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_BASE_MODEL, namespace=ns, name=m) for m in MODELS]
        out += [cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_INFERENCE_SERVICE, namespace=ns, name=i) for i in ISVCS]
    return out


# Present before the random objects, so that most writes meet InferenceServices they can move.
BASE = [
    model("m1", namespace=None, size="3B"),
    model("m2", namespace=None, architecture="QwenForCausalLM", size="70B"),
    accelerator_class("c1"),
    isvc("m1", name="i1", namespace="a"),
    isvc("m2", name="i2", namespace="a", accelerator_class="c1"),
    isvc("m1", name="i3", namespace="b", runtime_name="r2"),
    isvc("m2", name="i4", namespace="b", deployment_mode="OMENative"),
]
initial_objects = st.lists(st.one_of(runtimes, runtimes, any_object), max_size=10).map(lambda extra: BASE + extra)
keys = st.lists(st.sampled_from(every_key()), min_size=1, max_size=3, unique_by=lambda k: k.SerializeToString())
writes = st.one_of(
    st.tuples(st.just("upsert"), st.lists(runtimes, min_size=1, max_size=2)),
    st.tuples(st.just("upsert"), st.lists(runtimes, min_size=1, max_size=2)),
    st.tuples(st.just("upsert"), st.lists(any_object, min_size=1, max_size=3)),
    st.tuples(st.just("delete"), keys),
    st.tuples(st.just("apply"), initial_objects),
)


def write(store: CacheStore, version: str, op: str, payload: Any) -> None:
    if op == "upsert":
        store.upsert(version, unique(payload))
    elif op == "delete":
        store.delete(version, payload)
    else:
        store.apply_snapshot(version, unique(payload))


def changed(before: dict, after: dict) -> list[tuple[str, str]]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def evaluate_all(store: CacheStore, previous: dict) -> dict:
    """Every InferenceService evaluated on the store's snapshot, its RuntimeReady condition written
    when its previous outcome had one (OME keeps the condition once a failure wrote it)."""
    return {
        key: evaluate(store.snapshot, isvc_, key in previous and previous[key].condition is not None).outcome
        for key, isvc_ in sorted(store.snapshot.inference_services.items())
    }


@BOUNDED
@given(initial_objects, st.lists(writes, min_size=1, max_size=6))
def test_incremental_outcomes_equal_evaluating_every_inference_service(initial: list, steps: list) -> None:
    store = CacheStore()
    store.apply_snapshot("v0", unique(initial))
    tracker = SelectionTracker(store, synchronous=True)
    watcher = tracker.subscribe()
    assert [e.current for e in watcher.initial[:-1]] == [
        outcomes.outcome_pb(k, o) for k, o in Selections.build(store.snapshot).outcomes().items()
    ]
    after = Selections.build(store.snapshot).outcomes()
    for i, (op, payload) in enumerate(steps, start=1):
        before = after
        write(store, f"v{i}", op, payload)
        after = evaluate_all(store, before)
        assert tracker.selections.outcomes() == after
        events = [e.change for e in watcher.take() if e.HasField("change")]
        assert [(c.namespace, c.name) for c in events] == changed(before, after)
        for c in events:
            k = (c.namespace, c.name)
            assert c.HasField("before") == (k in before) and c.HasField("after") == (k in after)
            if k in before:
                assert c.before == outcomes.outcome_pb(k, before[k])
            if k in after:
                assert c.after == outcomes.outcome_pb(k, after[k])
            assert c.reason.step != selector_pb2.CHANGE_STEP_UNSPECIFIED and c.reason.text and c.causes


def reprioritized(obj: cache_pb2.CacheObject, priorities: list[int]) -> cache_pb2.CacheObject:
    """A copy of the runtime ``obj`` whose entries' priorities are ``priorities`` (cycled)."""
    out = cache_pb2.CacheObject()
    out.CopyFrom(obj)
    which = out.WhichOneof("object")
    assert which in ("serving_runtime", "cluster_serving_runtime")
    for n, e in enumerate(getattr(out, which).spec.supported_model_formats):
        e.priority = priorities[n % len(priorities)]
    return out


@BOUNDED
@given(initial_objects, st.data())
def test_a_write_of_priorities_alone_moves_what_a_rebuild_moves(initial: list, data: st.DataObject) -> None:
    """A runtime write that changes only its entries' priorities does not touch the scope keys
    that the ``no runtime found`` outcomes depend on: the outcomes and the change events still
    equal evaluating every InferenceService, and every outcome it changes had or has a runtime
    (a priority only scales a score, ome-selection-facts.md 3.12)."""
    store = CacheStore()
    store.apply_snapshot("v0", unique(initial))
    held = [store.snapshot.stored_object(k) for k in store.snapshot.objects if k[0].endswith("ServingRuntime")]
    if not held:
        return
    target = data.draw(st.sampled_from(held))
    priorities = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=2))
    tracker = SelectionTracker(store, synchronous=True)
    watcher = tracker.subscribe()
    before = tracker.selections.outcomes()
    store.upsert("v1", [reprioritized(target, priorities)])
    after = evaluate_all(store, before)
    assert tracker.selections.outcomes() == after
    events = [e.change for e in watcher.take() if e.HasField("change")]
    assert [(c.namespace, c.name) for c in events] == changed(before, after)
    assert all(after[k].runtime is not None or before[k].runtime is not None for k in changed(before, after))


@BOUNDED
@given(
    initial_objects,
    st.lists(st.one_of(runtimes, any_object), max_size=3),
    st.lists(st.sampled_from(every_key()), max_size=2, unique_by=lambda k: k.SerializeToString()),
)
def test_preview_equals_apply_then_diff(initial: list, upserts: list, deletes: list) -> None:
    store = CacheStore()
    store.apply_snapshot("v0", unique(initial))
    snapshot = store.snapshot
    upserted = unique(upserts)
    upserted_keys = {object_key(o) for o in upserted}
    deletes = [k for k in deletes if (api_kind(k), k.namespace, k.name) not in upserted_keys]
    if not upserted and not deletes:
        return
    preview = rpc_runtimes.preview_cache_change(
        snapshot, selector_pb2.PreviewCacheChangeRequest(upserts=upserted, deletes=deletes)
    )
    assert store.snapshot is snapshot  # nothing applied
    before = Selections.build(snapshot).outcomes()
    if upserted:
        store.upsert("v1", upserted)
    if deletes:
        store.delete("v2", deletes)
    # The store's next Selections, as the watch keeps them: a RuntimeReady condition a failure
    # wrote stays written (troubleshoot-runtime-selection.md, Step 5).
    after = Selections.build(snapshot).advance(snapshot, store.snapshot).selections.outcomes()
    assert [(c.namespace, c.name) for c in preview.changes] == changed(before, after)
    for c in preview.changes:
        k = (c.namespace, c.name)
        assert (c.before if k in before else None) == (outcomes.outcome_pb(k, before[k]) if k in before else None)
        assert (c.after if k in after else None) == (outcomes.outcome_pb(k, after[k]) if k in after else None)
    assert preview.inference_services == len(store.snapshot.inference_services)


_ENUM_TO_KIND = {v: k for k, v in KIND_TO_ENUM.items()}


def api_kind(k: cache_pb2.ObjectKey) -> str:
    return _ENUM_TO_KIND[k.kind]


def test_a_rejected_preview_is_rejected_like_the_write() -> None:
    store = CacheStore()
    store.apply_snapshot("v0", unique([runtime("r1")]))
    bad = unique([runtime("Bad_Name")])
    try:
        store.upsert("v1", bad)
    except RequestError as error:
        upsert_fields = [v.field for v in error.violations]
    try:
        rpc_runtimes.preview_cache_change(store.snapshot, selector_pb2.PreviewCacheChangeRequest(upserts=bad))
    except RequestError as error:
        preview_fields = [v.field for v in error.violations]
    assert upsert_fields == ["objects[0].cluster_serving_runtime.metadata.name"]
    assert preview_fields == ["upserts[0].cluster_serving_runtime.metadata.name"]


# InferenceServices of four namespaces, two of which hold nothing else: many with the same inputs
# in one namespace, and in namespaces that evaluate alike (shared, the namespace in their texts).
# Some are pinned (autoSync: false) to a ServingRuntime r1 whose revisions (in ome) are labelled
# for the namespace c, or read the revision their status reports.
PINNED_REVISION = "r-c-r1-00000001"
PINS = (
    None,
    {"runtime": {"name": "r1", "kind": "ServingRuntime", "autoSync": False}},
    {"runtime": {"name": "r1", "kind": "ServingRuntime", "autoSync": False, "revision": PINNED_REVISION}},
    {"runtime": {"name": "r1", "autoSync": False}},
)


def _shared_service(
    name: str,
    namespace: str,
    model_name: str,
    named: str | None,
    cls: str | None,
    mode: str | None,
    annotations: dict[str, str] | None,
    pin: dict[str, Any] | None,
    reported: bool,
) -> dict[str, Any]:
    doc = isvc(
        model_name,
        name=name,
        namespace=namespace,
        runtime_name=named,
        accelerator_class=cls,
        deployment_mode=mode,
        annotations=annotations,
        spec=pin,
    )
    if reported:
        doc["status"] = {"pinnedRevisionName": PINNED_REVISION}
    return doc


shared_services = st.builds(
    _shared_service,
    st.sampled_from(("i1", "i2", "i3", "i4", "i5", "i6")),
    st.sampled_from((*NAMESPACES, "c", "d")),
    st.sampled_from((*MODELS, "m3")),
    st.sampled_from((None, None, *RUNTIMES)),
    st.sampled_from((None, *CLASSES)),
    st.sampled_from((None, "OMENative")),
    # annotations the evaluation does not read, and those it reads
    st.sampled_from(
        (
            None,
            {"note": "x"},
            {"ome.io/accelerator-class": "c2"},
            {"ome.io/deploymentMode": "VirtualDeployment"},
            {"ome.io/runtime-sync": "1"},
        )
    ),
    st.sampled_from(PINS),
    st.booleans(),
)
# r1's revisions, as OME writes them for a ServingRuntime r1 of c, or for the ClusterServingRuntime r1.
revisions = st.sampled_from(
    (
        revision(PINNED_REVISION, runtime("r1", entry(), namespace="c")),
        revision("cr-r1-00000002", runtime("r1", entry())),
    )
)


@BOUNDED
@given(
    st.lists(st.one_of(runtimes, models, classes, revisions), max_size=8),
    st.lists(shared_services, min_size=1, max_size=12),
)
def test_shared_evaluations_equal_evaluating_each_inference_service_alone(others: list, services: list) -> None:
    store = CacheStore()
    store.apply_snapshot("v0", unique(BASE + others + services))
    snapshot = store.snapshot
    shared = Evaluations(snapshot)
    for isvc_ in snapshot.inference_services.values():
        assert shared.tracked(isvc_) == evaluate(snapshot, isvc_)
    assert shared.count <= len(snapshot.inference_services)
    assert Selections.build(snapshot).outcomes() == {
        key: evaluate(snapshot, isvc_).outcome for key, isvc_ in sorted(snapshot.inference_services.items())
    }
