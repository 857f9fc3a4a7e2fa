"""``cache.wire_objects``: an ApplySnapshot read object by object from its bytes (a runtime whose
spec is known decoded without it) gives exactly what decoding the whole request gives: the same
stored objects, compiled runtimes and violations word for word, the same INVALID_ARGUMENT for
bytes that do not decode; irregular encodings are decoded whole. Also ``store.gc_paused`` and
the deferred freeze of ``server.loading``."""

from __future__ import annotations

import dataclasses
import gc
from typing import Any

import pytest
from google.protobuf.message import DecodeError
from helpers_docs import CATALOG_RUNTIMES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache import specs
from ome_selector.cache.manifests import load_manifests
from ome_selector.cache.specs import SharedSpecs
from ome_selector.cache.store import CacheStore, gc_paused, prepare_write
from ome_selector.cache.wire_objects import SplitSnapshotRequest, WireRuntime, split_snapshot_request
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.examples import example_paths
from ome_selector.rpc import servicers, wire
from ome_selector.server import loading
from ome_selector.validation.names import MAX_OBJECT_BYTES
from test_specs import runtime_variant

LOADED = load_manifests([str(CATALOG_RUNTIMES), *example_paths()])
assert not LOADED.errors
CATALOG = [o for o in LOADED.objects if o.WhichOneof("object") == "cluster_serving_runtime"]
OTHERS = [o for o in LOADED.objects if o.WhichOneof("object") != "cluster_serving_runtime"]
UNDECODABLE = "Invalid value: {} bytes: cannot be decoded as ome.selector.v1.ApplySnapshotRequest"


def _request(objects: list[cache_pb2.CacheObject], version: str = "v1") -> bytes:
    return cache_pb2.ApplySnapshotRequest(version=version, objects=objects).SerializeToString()


def _clone(src: cache_pb2.CacheObject, name: str, priority: int | None = None) -> cache_pb2.CacheObject:
    obj = cache_pb2.CacheObject()
    obj.CopyFrom(src)
    runtime = getattr(obj, obj.WhichOneof("object") or "")
    runtime.metadata.name = name
    if priority is not None:
        for entry in runtime.spec.supported_model_formats:
            entry.priority = priority
    return obj


def _state(store: CacheStore) -> tuple[Any, ...]:
    """Everything a write leaves: each object stored (with its runtime's spec), each runtime's
    compiled spec, the groups' order, the status."""
    snap = store.snapshot
    status = store.status()
    status.ClearField("last_update")  # the time of the write
    runtimes = {**snap.cluster_serving_runtimes, **{f"{k[0]}/{k[1]}": rt for k, rt in snap.serving_runtimes.items()}}
    return (
        {key: snap.stored_object(key).SerializeToString(deterministic=True) for key in snap.objects},  # type: ignore[union-attr]
        {name: dataclasses.astuple(rt.own) for name, rt in runtimes.items()},
        [rt.name for rt in snap.cluster.order],
        status.SerializeToString(deterministic=True),
    )


def _outcome(data: bytes, *, wire_path: bool) -> Any:
    """(violations) or ``_state`` of a new store after ApplySnapshot of ``data``, as the servicer
    answers it: the request split (``wire_path``) or decoded whole."""
    store = CacheStore()
    request: Any = split_snapshot_request(data) if wire_path else cache_pb2.ApplySnapshotRequest.FromString(data)
    assert request is not None
    try:
        servicers._apply_snapshot(store, request)
    except RequestError as error:
        assert store.snapshot.generation == 0
        return [(v.field, v.description) for v in error.violations]
    return _state(store)


@pytest.fixture(autouse=True)
def _fresh_tables() -> None:
    specs.SHARED.clear()


def test_the_catalog_read_from_the_wire_is_the_catalog_decoded_whole() -> None:
    objects = [*OTHERS, *CATALOG, *(_clone(o, f"{o.cluster_serving_runtime.metadata.name}-v0", 3) for o in CATALOG)]
    data = _request(objects)
    split = split_snapshot_request(data)
    assert split is not None and split.version == "v1" and len(split) == len(objects)
    decoded = split.decode()
    assert decoded is not None
    runtimes = [o for o in objects if o.WhichOneof("object") in ("serving_runtime", "cluster_serving_runtime")]
    assert len(runtimes) == 2 * len(CATALOG) + 1  # the examples' ServingRuntime too
    assert [isinstance(o, WireRuntime) for o in decoded] == [o in runtimes for o in objects]
    assert sum(isinstance(o, WireRuntime) and o.whole is not None for o in decoded) == len(
        {getattr(o, o.WhichOneof("object") or "").spec.SerializeToString() for o in runtimes}
    )
    whole = _outcome(data, wire_path=False)
    assert isinstance(whole, tuple) and len(whole[0]) == len(objects)
    specs.SHARED.clear()
    assert _outcome(data, wire_path=True) == whole  # every spec new
    assert _outcome(data, wire_path=True) == whole  # every spec known


def test_a_runtime_stored_from_the_wire_has_no_spec_and_shares_the_tables_spec() -> None:
    data = _request([_clone(CATALOG[0], "a"), _clone(CATALOG[0], "b")])
    split = split_snapshot_request(data)
    assert split is not None
    store = CacheStore()
    servicers._apply_snapshot(store, split)
    snap = store.snapshot
    a, b = snap.cluster_serving_runtimes["a"], snap.cluster_serving_runtimes["b"]
    assert a.spec is b.spec and a.own is b.own
    stored = snap.objects[("ClusterServingRuntime", "", "b")]
    assert stored.WhichOneof("object") == "cluster_serving_runtime"
    assert not stored.cluster_serving_runtime.HasField("spec")
    assert stored.cluster_serving_runtime.metadata.name == "b"


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (number 1-15) of ``payload``."""
    return bytes((number << 3 | 2,)) + _varint(len(payload)) + payload


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


RUNTIME = CATALOG[0].cluster_serving_runtime
META = RUNTIME.metadata.SerializeToString()
SPEC = RUNTIME.spec.SerializeToString()
OTHER_SPEC = CATALOG[1].cluster_serving_runtime.spec.SerializeToString()


def _csr(*fields: bytes) -> bytes:
    """A CacheObject holding a ClusterServingRuntime of ``fields``."""
    return _field(2, b"".join(fields))


@pytest.mark.parametrize(
    ("objects", "version", "split"),
    [
        ([_csr(_field(3, META), _field(4, SPEC))], b"v1", True),
        ([_csr(_field(4, SPEC), _field(3, META))], b"v1", True),  # fields in another order
        ([_csr(_field(3, META))], b"v1", True),  # no spec: the runtime's checks report it
        ([_csr(_field(3, META), _field(4, b""))], b"v1", True),  # an empty spec
        ([_csr(_field(3, META), _field(4, SPEC), _field(4, OTHER_SPEC))], b"v1", True),  # merged
        ([_csr(_field(3, META), _field(4, SPEC), _field(9, b"x"))], b"v1", True),  # unknown field
        ([_csr(_field(1, b"ome.io/v1beta1"), _field(2, b"Wrong"), _field(3, META), _field(4, SPEC))], b"v1", True),
        ([_csr(_field(3, META), _field(4, SPEC)) + _field(4, b"")], b"v1", True),  # a second kind
        ([_csr(_field(3, META), _field(4, SPEC)), _csr(_field(3, META), _field(4, SPEC))], b"v1", True),  # dup
        ([_csr(_field(3, META), _field(4, SPEC)), _field(4, _field(1, _field(1, b"m")))], b"v1", True),
        ([b""], b"v1", True),  # an object of no kind
        ([_csr(_field(3, META), _field(4, SPEC))], b"", True),  # no version
        ([_csr(_field(3, META), _field(4, SPEC))], None, True),
    ],
)
def test_every_encoding_gives_what_the_whole_decode_gives(
    objects: list[bytes], version: bytes | None, split: bool
) -> None:
    data = (b"" if version is None else _field(1, version)) + b"".join(_field(2, o) for o in objects)
    assert (split_snapshot_request(data) is not None) is split
    whole = _outcome(data, wire_path=False)
    specs.SHARED.clear()
    assert _outcome(data, wire_path=True) == whole
    assert _outcome(data, wire_path=True) == whole  # the spec known


@pytest.mark.parametrize(
    "data",
    [
        _field(1, b"v1") + _field(1, b"v2"),  # the version twice: the last counts
        _field(1, b"v1") + _field(3, b"x"),  # an unknown field
        _field(1, b"v1") + b"\x10\x01",  # objects with another wire type
        _field(1, b"\xff"),  # a version that is not UTF-8
        _field(1, b"v1") + b"\x12\x05ab",  # truncated
        _field(1, b"v1") + b"\x92\x01\x00",  # a tag of two bytes
    ],
)
def test_a_request_not_in_the_plain_encoding_is_decoded_whole(data: bytes) -> None:
    assert split_snapshot_request(data) is None
    decode = wire.snapshot_deserializer()
    try:
        expected: Any = cache_pb2.ApplySnapshotRequest.FromString(data)
    except Exception:
        assert isinstance(decode(data), wire.UndecodableRequest)
        return
    assert decode(data) == expected


def test_the_deserializer_splits_a_request_in_the_plain_encoding() -> None:
    data = _request([CATALOG[0]])
    found = wire.snapshot_deserializer()(data)
    assert isinstance(found, SplitSnapshotRequest)
    # The version's 4 bytes, the object's tag and its length in 2 bytes, then the object.
    assert (found.version, found.size, found.ranges) == ("v1", len(data), ((7, len(data)),))


@pytest.mark.parametrize(
    "bad",
    [
        _csr(_field(3, _field(1, b"\xff\xfe")), _field(4, SPEC)),  # a name that is not UTF-8
        _csr(_field(3, META), _field(4, b"\x0a\x05ab")),  # a spec that does not decode
        _csr(_field(3, META + b"\x0a\x05ab"), _field(4, SPEC), _field(9, b"x")),  # decoded whole
        _csr(_field(3, META + b"\x0a\x05ab"), _field(4, SPEC)),  # truncated metadata
    ],
)
def test_an_object_that_does_not_decode_is_the_requests_invalid_argument(bad: bytes) -> None:
    objects = [_csr(_field(3, META), _field(4, SPEC)), bad]
    for version in (b"v1", b""):  # the version's violation is not added
        data = _field(1, version) + b"".join(_field(2, o) for o in objects)
        with pytest.raises(DecodeError):
            cache_pb2.ApplySnapshotRequest.FromString(data)
        split = split_snapshot_request(data)
        assert split is not None
        store = CacheStore()
        with pytest.raises(RequestError) as caught:
            servicers._apply_snapshot(store, split)
        assert caught.value.code == "INVALID_ARGUMENT"
        assert caught.value.violations == [FieldViolation("request", UNDECODABLE.format(len(data)))]
        assert store.snapshot.generation == 0


def test_the_size_of_a_runtime_read_without_its_spec_counts_the_spec() -> None:
    big = _clone(CATALOG[0], "big")
    runtime = big.cluster_serving_runtime
    runtime.metadata.annotations["note"] = "x" * (MAX_OBJECT_BYTES - runtime.ByteSize())
    size = runtime.ByteSize()
    assert MAX_OBJECT_BYTES < size < MAX_OBJECT_BYTES + 64
    data = _request([_clone(CATALOG[0], "small"), big])
    expected = [
        (
            "objects[1].cluster_serving_runtime",
            f"Too long: {size} bytes: may not be more than {MAX_OBJECT_BYTES} bytes",
        )
    ]
    assert _outcome(data, wire_path=False) == expected
    specs.SHARED.clear()
    split = split_snapshot_request(data)
    assert split is not None
    decoded = split.decode()
    assert decoded is not None and isinstance(decoded[1], WireRuntime) and decoded[1].whole is None
    assert _outcome(data, wire_path=True) == expected


def test_a_spec_in_another_encoding_keeps_its_decoded_size() -> None:
    # The spec's first field with its length in two bytes where one does: a valid encoding, one
    # byte longer than this decoder writes the same spec.
    assert SPEC[0] & 7 == 2 and SPEC[1] < 0x80
    spec = SPEC[:1] + bytes((SPEC[1] | 0x80, 0)) + SPEC[2:]
    other_meta = _clone(CATALOG[0], "other").cluster_serving_runtime.metadata.SerializeToString()
    data = _field(1, b"v1") + _field(2, _csr(_field(3, META), _field(4, spec)))
    data += _field(2, _csr(_field(3, other_meta), _field(4, spec)))
    assert cache_pb2.ApplySnapshotRequest.FromString(data).objects[0].cluster_serving_runtime.spec == RUNTIME.spec
    whole = _outcome(data, wire_path=False)
    specs.SHARED.clear()
    assert _outcome(data, wire_path=True) == whole
    assert specs.SHARED.known(spec) is not None
    assert specs.SHARED.spec_size(spec) == len(SPEC) == len(spec) - 1
    split = split_snapshot_request(data)
    assert split is not None
    again = split.decode()
    assert again is not None and isinstance(again[1], WireRuntime) and again[1].whole is None
    size = again[1].byte_size(specs.SHARED.spec_size(spec))
    expected = types_pb2.ClusterServingRuntime(
        metadata=again[1].slim.cluster_serving_runtime.metadata, spec=RUNTIME.spec
    )
    assert size == again[1].decoded().cluster_serving_runtime.ByteSize() == expected.ByteSize() == 1463


# --- a property: any mix of known, new and broken runtimes ------------------------------------


def _variant(source: int, name: str, priorities: list[int | None], breakage: str) -> cache_pb2.CacheObject:
    return runtime_variant(CATALOG, source, name, priorities, breakage)


_variants = st.lists(
    st.tuples(
        st.integers(0, 10_000),
        st.lists(st.one_of(st.none(), st.integers(-1, 9)), min_size=0, max_size=3),
        st.sampled_from(["", "", "", "no format name", "bad name", "duplicate", "scaling mode"]),
    ),
    min_size=1,
    max_size=6,
)
WARM = SharedSpecs()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_variants)
def test_a_write_read_from_the_wire_gives_what_the_whole_decode_gives(
    draws: list[tuple[int, list[int | None], str]],
) -> None:
    objects = [
        _variant(source, f"rt-{i}", priorities, breakage) for i, (source, priorities, breakage) in enumerate(draws)
    ]
    data = _request(objects)
    expected = _prepared(cache_pb2.ApplySnapshotRequest.FromString(data).objects, SharedSpecs())
    for shared in (SharedSpecs(), WARM, WARM):
        split = split_snapshot_request(data)
        assert split is not None
        decoded = split.decode(shared)
        assert decoded is not None
        assert _prepared(decoded, shared) == expected


def _prepared(objects: Any, shared: SharedSpecs) -> Any:
    try:
        prepared = prepare_write(objects, shared=shared)
    except RequestError as error:
        return [(v.field, v.description) for v in error.violations]
    return (
        {key: obj.SerializeToString(deterministic=True) for key, obj in prepared.objects.items()},
        {
            key: (rt.spec.SerializeToString(deterministic=True), dataclasses.astuple(rt.own))
            for key, rt in prepared.runtimes.items()
        },
    )


# --- the collector during and after a bulk write ----------------------------------------------


def test_gc_paused_turns_the_collector_off_and_back_on() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # it was off: it stays off
    finally:
        gc.enable()


def test_apply_snapshot_builds_with_the_collector_off() -> None:
    seen: list[bool] = []
    store = CacheStore()
    store.add_listener(lambda snapshot: seen.append(gc.isenabled()))
    original = CacheStore.apply_snapshot.__globals__["prepare_write"]

    def spying(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return original(*args, **kwargs)

    CacheStore.apply_snapshot.__globals__["prepare_write"] = spying
    try:
        store.apply_snapshot("v1", [CATALOG[0]])
        with pytest.raises(RequestError):
            store.apply_snapshot("v2", [_clone(CATALOG[0], "Bad_Name")])
    finally:
        CacheStore.apply_snapshot.__globals__["prepare_write"] = original
    assert seen == [False, True, False]  # the listeners run with it on again
    assert gc.isenabled()


def test_a_bulk_write_freezes_after_it_answers_and_a_small_one_does_not() -> None:
    scheduled: list[tuple[float, Any]] = []
    listener = loading._FreezeAfterBulkWrites(0, timer=lambda delay, function: scheduled.append((delay, function)))
    store = CacheStore()
    store.add_listener(listener)
    store.apply_snapshot("v1", [_clone(CATALOG[0], f"rt-{i}") for i in range(100)])
    assert scheduled == [(0.5, loading._collect_and_freeze), (2.0, loading._malloc_trim)]
    assert listener.objects == 100
    store.upsert("v2", [_clone(CATALOG[0], "rt-100")])
    assert len(scheduled) == 2 and listener.objects == 100


def test_over_grpc_an_object_that_does_not_decode_changes_nothing(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    import grpc
    from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]
    from ome_selector.server.inprocess import InProcessServer, synced_store

    caplog.set_level(logging.INFO)
    store = synced_store()
    before = _state(store)
    good = _csr(_field(3, META), _field(4, SPEC))
    bad = _csr(_field(3, _field(1, b"\xff\xfe")), _field(4, SPEC))
    data = _field(1, b"v2") + _field(2, good) + _field(2, bad)
    with InProcessServer(store) as server, grpc.insecure_channel(server.address) as channel:
        call = channel.unary_unary(
            "/ome.selector.v1.CacheService/ApplySnapshot", request_serializer=None, response_deserializer=None
        )
        with pytest.raises(grpc.RpcError) as caught:
            call(data, timeout=10)
        assert _state(store) == before and store.snapshot.generation == 1
        answer = cache_pb2.ApplySnapshotResponse.FromString(call(_field(1, b"v3") + _field(2, good), timeout=10))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = status_pb2.Status.FromString(dict(caught.value.trailing_metadata())["grpc-status-details-bin"])
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert [(v.field, v.description) for v in bad_request.field_violations] == [
        ("request", UNDECODABLE.format(len(data)))
    ]
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert (answer.status.version, answer.status.generation) == ("v3", 2)
    assert [c.count for c in answer.status.counts if c.kind == cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME] == [1]
