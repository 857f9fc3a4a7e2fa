"""``cache.specs``: a write that meets a spec it has seen (the same bytes, or the same but for the
priorities) gives exactly what checking and compiling it again gives: the same violations, word
for word, the same defaulted objects and the same compiled specs."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from helpers_docs import CATALOG_RUNTIMES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2
from ome_selector.cache import ingest, specs
from ome_selector.cache.manifests import load_manifests
from ome_selector.cache.specs import SharedSpecs
from ome_selector.cache.store import CacheStore, prepare_write
from ome_selector.domain import objects as d
from ome_selector.domain.errors import RequestError
from ome_selector.validation import objects as validation_objects


def _catalog() -> list[cache_pb2.CacheObject]:
    loaded = load_manifests([str(CATALOG_RUNTIMES)])
    assert not loaded.errors
    runtimes = [o for o in loaded.objects if o.WhichOneof("object") == "cluster_serving_runtime"]
    assert len(runtimes) > 100
    return runtimes


CATALOG = _catalog()


def _fields(compiled: d.Compiled) -> dict[str, Any]:
    return {f.name: getattr(compiled, f.name) for f in dataclasses.fields(compiled)}


def _outcome(objects: list[cache_pb2.CacheObject], shared: SharedSpecs) -> Any:
    """(violations) or (serialized defaulted objects, compiled fields) of one ``prepare_write``."""
    copies = []
    for obj in objects:
        copy = cache_pb2.CacheObject()
        copy.CopyFrom(obj)
        copies.append(copy)
    try:
        prepared = prepare_write(copies, shared=shared)
    except RequestError as error:
        return [(v.field, v.description) for v in error.violations]
    return (
        {key: _with_spec(obj, prepared.runtimes.get(key)) for key, obj in prepared.objects.items()},
        {key: _fields(rt.own) for key, rt in prepared.runtimes.items()},
    )


def _with_spec(obj: cache_pb2.CacheObject, runtime: d.Runtime | None) -> bytes:
    """The bytes of a prepared object with its runtime's spec put back (a runtime is stored without it)."""
    out = cache_pb2.CacheObject()
    out.CopyFrom(obj)
    if runtime is not None:
        which = out.WhichOneof("object")
        assert which is not None and not getattr(out, which).HasField("spec")
        getattr(out, which).spec.CopyFrom(runtime.spec)
    return out.SerializeToString(deterministic=True)


def runtime_variant(
    catalog: list[cache_pb2.CacheObject], source: int, name: str, priorities: list[int | None], breakage: str
) -> cache_pb2.CacheObject:
    """A copy of the ClusterServingRuntime ``catalog[source % len]`` named ``name``, its entries'
    priorities set from ``priorities`` (None clears one) and broken as ``breakage`` says ("" for
    none; "no format name", "long version", "bad name", "no priorities", "duplicate" (named rt-0),
    "scaling mode")."""
    obj = cache_pb2.CacheObject()
    obj.CopyFrom(catalog[source % len(catalog)])
    runtime = obj.cluster_serving_runtime
    runtime.metadata.name = name
    for entry, priority in zip(runtime.spec.supported_model_formats, priorities):
        if priority is None:
            entry.ClearField("priority")
        else:
            entry.priority = priority
    entries = runtime.spec.supported_model_formats
    if breakage == "no format name" and entries:
        entries[0].model_format.name = ""
    elif breakage == "long version" and entries:
        entries[0].model_format.version = "1" * 129
    elif breakage == "bad name":
        runtime.metadata.name = "Bad_Name"
    elif breakage == "no priorities":
        for entry in entries:
            entry.ClearField("priority")
    elif breakage == "duplicate":
        runtime.metadata.name = "rt-0"
    elif breakage == "scaling mode":
        runtime.spec.scaling_policy.mode = "Sideways"
    return obj


def _variant(source: int, name: str, priorities: list[int | None], breakage: str) -> cache_pb2.CacheObject:
    return runtime_variant(CATALOG, source, name, priorities, breakage)


_variants = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.lists(st.one_of(st.none(), st.integers(-1, 9)), min_size=0, max_size=3),
        st.sampled_from(["", "", "", "no format name", "long version", "bad name", "no priorities", "scaling mode"]),
    ),
    min_size=1,
    max_size=6,
)


class _Forgetful(SharedSpecs):
    """Tables that never remember: every spec is checked and compiled (the reference)."""

    def find(self, spec: Any, raw: bytes | None = None) -> specs.Lookup:
        return specs.Lookup(spec.SerializeToString(), False, None, ingest.spec_defaults(spec))

    def shared(self, lookup: specs.Lookup) -> tuple[Any, d.Compiled]:
        obj = cache_pb2.CacheObject()
        obj.cluster_serving_runtime.spec.MergeFromString(lookup.raw)
        spec = ingest.apply_defaults(obj).cluster_serving_runtime.spec
        return spec, ingest.compile_spec(spec)


WARM = SharedSpecs()


@pytest.fixture(scope="module", autouse=True)
def _warm() -> None:
    prepare_write(CATALOG, shared=WARM)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_variants)
def test_a_seen_spec_gives_what_a_first_look_gives(draws: list[tuple[int, list[int | None], str]]) -> None:
    objects = [
        _variant(source, f"rt-{i}", priorities, breakage) for i, (source, priorities, breakage) in enumerate(draws)
    ]
    first_look = _outcome(objects, _Forgetful())
    assert _outcome(objects, SharedSpecs()) == first_look
    assert _outcome(objects, WARM) == first_look
    if isinstance(first_look, tuple):
        prepare_write(objects, shared=WARM)  # what it learnt stays for the next draws
    assert _outcome(objects, WARM) == first_look


def test_a_priority_below_1_is_reported_when_the_template_is_known() -> None:
    shared = SharedSpecs()
    base = _variant(0, "rt-a", [5, 5, 5], "")
    held = prepare_write([base], shared=shared)
    zero = _variant(0, "rt-b", [0, 5, 5], "")
    with pytest.raises(RequestError) as caught:
        prepare_write([zero], shared=shared)
    assert [(v.field, v.description) for v in caught.value.violations] == [
        (
            "objects[0].cluster_serving_runtime.spec.supported_model_formats[0].priority",
            "Invalid value: 0: must be greater than or equal to 1",
        )
    ]
    assert held.runtimes


def test_known_specs_skip_the_spec_checks_and_the_compilation(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = SharedSpecs()
    held = prepare_write([_variant(3, "rt-a", [2], "")], shared=shared)

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("called for a known spec")

    monkeypatch.setattr(validation_objects, "_crd_runtime_violations", refuse)
    monkeypatch.setattr(specs, "compile_spec", refuse)
    same = prepare_write([_variant(3, "rt-b", [2], "")], shared=shared)
    assert (
        same.runtimes[("ClusterServingRuntime", "", "rt-b")].own
        is held.runtimes[("ClusterServingRuntime", "", "rt-a")].own
    )
    other_priority = prepare_write([_variant(3, "rt-c", [7], "")], shared=shared)  # the template's
    (entry,) = other_priority.runtimes[("ClusterServingRuntime", "", "rt-c")].own.entries[:1]
    assert entry.priority == 7
    with pytest.raises(AssertionError, match="called for a known spec"):
        prepare_write([_variant(4, "rt-d", [2], "")], shared=shared)


def test_the_tables_start_afresh_when_full() -> None:
    runtimes = CATALOG[:20]
    raws = [o.cluster_serving_runtime.spec.SerializeToString() for o in runtimes]
    shared = SharedSpecs(max_bytes=10**9)
    prepare_write(runtimes, shared=shared)
    assert len(shared) == len(set(raws))
    assert shared.size >= sum(len(r) for r in set(raws))
    small = SharedSpecs(max_bytes=2 * max(raws, key=len).__len__() + 10)
    prepare_write(runtimes, shared=small)
    assert 1 <= len(small) < len(set(raws))
    assert small.size <= small.max_bytes
    assert _outcome(runtimes, small) == _outcome(runtimes, _Forgetful())


def test_writes_keep_new_messages_and_one_spec_per_distinct_spec() -> None:
    """The cache holds none of the written messages (a decoded request's messages share one
    block of memory), stores a runtime without its spec, and holds one defaulted spec for all
    the runtimes whose specs are equal."""
    objs = [_variant(0, "rt-a", [None], ""), _variant(0, "rt-b", [None], ""), _variant(1, "rt-c", [None], "")]
    sent = [o.SerializeToString(deterministic=True) for o in objs]
    store = CacheStore()
    store.apply_snapshot("v1", objs)
    assert [o.SerializeToString(deterministic=True) for o in objs] == sent  # the caller's objects unchanged
    kept = {name: store.snapshot.objects[("ClusterServingRuntime", "", name)] for name in ("rt-a", "rt-b", "rt-c")}
    assert all(k is not o for k in kept.values() for o in objs)
    assert [k.cluster_serving_runtime.HasField("spec") for k in kept.values()] == [False, False, False]
    assert kept["rt-a"].cluster_serving_runtime.metadata == objs[0].cluster_serving_runtime.metadata
    runtimes = store.snapshot.cluster_serving_runtimes
    assert runtimes["rt-a"].spec is runtimes["rt-b"].spec
    assert runtimes["rt-a"].spec is not runtimes["rt-c"].spec
    assert runtimes["rt-a"].spec.supported_model_formats[0].model_format.operator == "Equal"
    for name, obj in zip(("rt-a", "rt-c"), (objs[0], objs[2])):
        stored = store.snapshot.stored_object(("ClusterServingRuntime", "", name))
        assert stored is not None
        assert stored.SerializeToString(deterministic=True) == ingest.apply_defaults(obj).SerializeToString(
            deterministic=True
        )
