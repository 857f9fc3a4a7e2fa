"""Property-based fuzzing of every RPC and of the manifest loader (hypothesis; a dev dependency).

The properties (docs/architecture.md, "Fuzzing"):

- ``rpc``: a random or mutated request message, sent to every method of SelectionService and
  CacheService through a real in-process ``grpc.aio`` server on 127.0.0.1 (servicers from
  service.py, registered by wire.py), never gets INTERNAL, UNKNOWN or RESOURCE_EXHAUSTED; every
  INVALID_ARGUMENT carries a ``google.rpc.BadRequest`` with at least one violation, each with a
  field path, and its metadata fits in 8 KiB; a rejected cache write leaves the cache status
  (version, generation) unchanged.
- ``raw``: random bytes as the request of every method: the same, and never a traceback.
- ``api``: the ``api.*`` functions in-process: only ``RequestError`` escapes, and its status fits.
- ``loader``: mutated real manifests and random YAML: ``load_manifests`` never raises, every
  object it returns passes ``validation.validate_object`` and loads into a store;
  ``read_inference_services`` and ``load_runtime`` raise only ``ManifestError``.

The suite runs each property for a few seconds (tests/test_robust_fuzz.py;
``OME_SELECTOR_FUZZ_EXAMPLES`` raises the count). The long run::

    python -m tools.fuzz --examples 100000     # spread over the properties; --only rpc ...

prints, per property, the inputs tried, the status codes seen and any failure (with the input
hypothesis shrank it to), and exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import grpc
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2  # type: ignore[import-untyped]
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector import validation
from ome_selector.cache.manifest_types import ManifestError
from ome_selector.cache.manifests import load_manifests, load_runtime, read_inference_services
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.examples import example_paths, inference_service_paths
from ome_selector.rpc import api
from ome_selector.rpc.servicers import rich_status
from ome_selector.rpc.watch import SelectionTracker
from ome_selector.server.inprocess import InProcessServer, synced_store

METADATA_LIMIT = 8192  # gRPC's default maximum metadata size on the client
FORBIDDEN = frozenset({grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN, grpc.StatusCode.RESOURCE_EXHAUSTED})
SELECTION = selector_pb2.DESCRIPTOR.services_by_name["SelectionService"]
CACHE = cache_pb2.DESCRIPTOR.services_by_name["CacheService"]
METHODS: tuple[tuple[str, Any, Any], ...] = tuple(
    (f"/{service.full_name}/{method.name}", getattr(module, method.input_type.name), method)
    for service, module in ((SELECTION, selector_pb2), (CACHE, cache_pb2))
    for method in service.methods
)
WRITES = frozenset({"ApplySnapshot", "UpsertObjects", "DeleteObjects"})

# --- strategies --------------------------------------------------------------------------------

_WORDS = (
    "",
    "llama-demo",
    "default",
    "llama-3-3-70b-instruct",
    "llama-3-2-3b-instruct",
    "safetensors",
    "transformers",
    "nvidia-h100",
    "OMENative",
    "RawDeployment",
    "MultiNode",
    "BestFit",
    "Cheapest",
    "Equal",
    "GreaterThan",
    "1.0.0",
    "4.45.0.dev0",
    "v1",
    "ome.io/deploymentMode",
    "ome.io/inherit-from",
    "ome.io/accelerator-class",
    "LlamaForCausalLM",
    "fp8",
    "70B",
    "7B",
    "inf",
    "ServingRuntime",
    "ClusterServingRuntime",
    "ome.io/v1beta1",
    "Bad_Name",
    "a\nb",
    "\x1b[31mred",
    "-",
    ".",
    "a/b",
    "x" * 64,
)


def texts() -> st.SearchStrategy[str]:
    """Strings that matter here: real names and values, random text, long and huge ones."""
    return st.one_of(
        st.sampled_from(_WORDS),
        st.text(max_size=24),
        st.integers(60, 300).map(lambda n: "a" * n),
        st.integers(4300, 6000).map(lambda n: "1" * n),  # over Python's int-conversion limit
        st.integers(4300, 6000).map(lambda n: "1." + "9" * n),
        st.just("a" * 20000),
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4).map(".".join),
    )


_INT_BOUNDS = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_INT64: (-(2**63), 2**63 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
}


def _scalar(fd: FieldDescriptor) -> st.SearchStrategy[Any]:
    if fd.type == FieldDescriptor.TYPE_STRING:
        return texts()
    if fd.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=16)
    if fd.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if fd.type in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        return st.floats(allow_nan=True, width=32 if fd.type == FieldDescriptor.TYPE_FLOAT else 64)
    if fd.type == FieldDescriptor.TYPE_ENUM:
        enum: Any = fd.enum_type
        return st.one_of(st.sampled_from([v.number for v in enum.values]), st.integers(-5, 1000))
    low, high = _INT_BOUNDS.get(fd.type, (-(2**31), 2**31 - 1))
    return st.one_of(st.sampled_from([0, 1, -1, low, high]), st.integers(low, high))


@st.composite
def messages(draw: Any, descriptor: Descriptor, depth: int = 4) -> Message:
    """A random message of ``descriptor``'s type: each field set or not, nested to ``depth``."""
    from google.protobuf import message_factory

    message: Any = message_factory.GetMessageClass(descriptor)()
    if descriptor.full_name == "google.protobuf.Timestamp":
        message.seconds = draw(st.integers(-62135596800, 253402300799))
        message.nanos = draw(st.integers(0, 999_999_999))
        return message
    for fd in descriptor.fields:
        if not draw(st.booleans()) or (fd.message_type is not None and depth <= 0):
            continue
        target: Any = getattr(message, fd.name) if fd.is_repeated or fd.message_type is not None else None
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            key_fd, value_fd = fd.message_type.fields_by_name["key"], fd.message_type.fields_by_name["value"]
            for key in draw(st.lists(_scalar(key_fd), max_size=3)):
                if value_fd.message_type is not None:
                    target[key].CopyFrom(draw(messages(value_fd.message_type, depth - 1)))
                else:
                    target[key] = draw(_scalar(value_fd))
        elif fd.is_repeated:
            count = draw(st.integers(0, 3))
            for _ in range(count):
                if fd.message_type is not None:
                    target.add().CopyFrom(draw(messages(fd.message_type, depth - 1)))
                else:
                    target.append(draw(_scalar(fd)))
        elif fd.message_type is not None:
            target.CopyFrom(draw(messages(fd.message_type, depth - 1)))
        else:
            setattr(message, fd.name, draw(_scalar(fd)))
    return message


def _seeds() -> dict[str, list[Message]]:
    """Valid requests per input type, from the embedded examples."""
    isvcs = [read_inference_services(path)[0][0] for path in inference_service_paths()]
    objects = load_manifests(example_paths()).objects
    runtimes = [o for o in objects if o.WhichOneof("object") in ("serving_runtime", "cluster_serving_runtime")]
    seeds: dict[str, list[Message]] = collections.defaultdict(list)
    for isvc in isvcs:
        for cls in (
            selector_pb2.SelectRuntimeRequest,
            selector_pb2.ExplainRuntimesRequest,
            selector_pb2.GetEffectiveRuntimeRequest,
            selector_pb2.AdmitInferenceServiceRequest,
            selector_pb2.ReconcileInferenceServiceRequest,
            selector_pb2.GetRuntimeHistoryRequest,
            selector_pb2.PlanRuntimeSyncRequest,
        ):
            seeds[cls.DESCRIPTOR.full_name].append(cls(inference_service=isvc))
    revisions = []
    for obj in runtimes:
        request = selector_pb2.ValidateServingRuntimeRequest()
        if obj.HasField("serving_runtime"):
            request.serving_runtime.CopyFrom(obj.serving_runtime)
        else:
            request.cluster_serving_runtime.CopyFrom(obj.cluster_serving_runtime)
        seeds[selector_pb2.ValidateServingRuntimeRequest.DESCRIPTOR.full_name].append(request)
        kind, namespace, name = validation.object_key(obj)
        ref = selector_pb2.RuntimeRef(
            kind=selector_pb2.RUNTIME_KIND_SERVING_RUNTIME
            if kind == "ServingRuntime"
            else selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME,
            namespace=namespace,
            name=name,
        )
        seeds[selector_pb2.GetRuntimeStatusRequest.DESCRIPTOR.full_name].append(
            selector_pb2.GetRuntimeStatusRequest(runtime=ref)
        )
        revision = cache_pb2.CacheObject()  # a revision of the runtime as OME stores it
        meta = revision.controller_revision.metadata
        meta.name, meta.namespace = f"cr-{name}-00000000", "ome"
        meta.labels.update(
            {"ome.io/runtime-of": name, "ome.io/runtime-of-kind": kind, "ome.io/runtime-of-namespace": namespace}
        )
        revision.controller_revision.data.CopyFrom(getattr(obj, str(obj.WhichOneof("object"))).spec)
        revisions.append(revision)
        seeds[selector_pb2.GetRuntimeTreeRequest.DESCRIPTOR.full_name].append(
            selector_pb2.GetRuntimeTreeRequest(
                name=name, namespace=namespace or "default", show_unattributed_users=True
            )
        )
    seeds[cache_pb2.UpsertObjectsRequest.DESCRIPTOR.full_name] = [
        cache_pb2.UpsertObjectsRequest(objects=[o]) for o in (*objects, *revisions)
    ]
    seeds[cache_pb2.ApplySnapshotRequest.DESCRIPTOR.full_name] = [
        cache_pb2.ApplySnapshotRequest(version="v", objects=objects)
    ]
    seeds[cache_pb2.DeleteObjectsRequest.DESCRIPTOR.full_name] = [
        cache_pb2.DeleteObjectsRequest(
            keys=[cache_pb2.ObjectKey(kind=validation.KIND_TO_ENUM[k[0]], namespace=k[1], name=k[2])]
        )
        for k in (validation.object_key(o) for o in objects)
    ]
    return seeds


_SEEDS: dict[str, list[Message]] | None = None


def requests(cls: Any) -> st.SearchStrategy[Message]:
    """A random request of ``cls``, or a valid one with random fields merged in (a mutation)."""
    global _SEEDS
    if _SEEDS is None:
        _SEEDS = _seeds()
    seeds = _SEEDS.get(cls.DESCRIPTOR.full_name, [])
    random = messages(cls.DESCRIPTOR)
    if not seeds:
        return random

    def mutate(pair: tuple[Message, Message]) -> Message:
        seed, change = pair
        out = cls()
        out.CopyFrom(seed)
        out.MergeFrom(change)
        return out

    return st.one_of(random, st.tuples(st.sampled_from(seeds), messages(cls.DESCRIPTOR, depth=5)).map(mutate))


# --- checks ------------------------------------------------------------------------------------


class Findings:
    """Counts per property and status code, and the failures found."""

    def __init__(self) -> None:
        self.inputs: collections.Counter[str] = collections.Counter()
        self.codes: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)

    def saw(self, prop: str, code: str) -> None:
        self.inputs[prop] += 1
        self.codes[prop][code] += 1


FINDINGS = Findings()


def check_rpc_error(error: grpc.RpcError, what: str) -> str:
    """Assert the properties of a failed call; returns the code name."""
    code = error.code()  # type: ignore[attr-defined]
    assert code not in FORBIDDEN, f"{what}: {code.name}: {error.details()!r}"  # type: ignore[attr-defined]
    trailers: dict[str, Any] = dict(error.trailing_metadata() or ())  # type: ignore[attr-defined,arg-type]
    details = error.details() or ""  # type: ignore[attr-defined]
    size = len(details.encode()) + sum(len(k) + len(v) for k, v in trailers.items())
    assert size <= METADATA_LIMIT, f"{what}: status metadata {size} bytes"
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        raw = trailers.get("grpc-status-details-bin")
        assert raw, f"{what}: INVALID_ARGUMENT without details: {details!r}"
        check_status(status_pb2.Status.FromString(raw), what)
    return str(code.name)


def check_status(status: status_pb2.Status, what: str) -> None:
    """An INVALID_ARGUMENT status carries a BadRequest with field paths and fits the limit."""
    assert len(status.SerializeToString()) * 4 // 3 + len(status.message.encode()) * 3 <= METADATA_LIMIT, what
    if status.code != code_pb2.INVALID_ARGUMENT:
        return
    bad = [error_details_pb2.BadRequest() for d in status.details if d.Is(error_details_pb2.BadRequest.DESCRIPTOR)]
    assert len(bad) == 1, f"{what}: {len(bad)} BadRequest details"
    status.details[0].Unpack(bad[0])
    assert bad[0].field_violations, f"{what}: BadRequest without violations"
    for violation in bad[0].field_violations:
        assert violation.field and violation.description, f"{what}: violation without field path: {violation}"


def cache_status(channel: grpc.Channel) -> tuple[str, int]:
    """(version, generation) from GetCacheStatus."""
    call = channel.unary_unary(
        f"/{CACHE.full_name}/GetCacheStatus",
        request_serializer=None,
        response_deserializer=cache_pb2.GetCacheStatusResponse.FromString,
    )
    status = call(b"", timeout=30).status
    return status.version, status.generation


def call_rpc(channel: grpc.Channel, method: str, data: bytes, prop: str) -> None:
    """Send ``data`` to ``method`` and check the answer (and, for writes, the cache)."""
    name = method.rsplit("/", 1)[1]
    before = cache_status(channel) if name in WRITES else None
    streaming = name in api.STREAMING_RPCS
    try:
        if streaming:
            _watch_until_initial_end(channel, method, data)
        else:
            channel.unary_unary(method, request_serializer=None, response_deserializer=None)(data, timeout=60)
    except grpc.RpcError as error:
        code = check_rpc_error(error, f"{name}({len(data)} bytes)")
        if before is not None:
            assert cache_status(channel) == before, f"{name}: a rejected write changed the cache"
        FINDINGS.saw(prop, code)
        return
    FINDINGS.saw(prop, "OK")


def _watch_until_initial_end(channel: grpc.Channel, method: str, data: bytes) -> None:
    """A WatchSelections stream read up to its ``initial_events_end`` marker, then cancelled."""
    call = channel.unary_stream(
        method, request_serializer=None, response_deserializer=selector_pb2.WatchSelectionsResponse.FromString
    )
    stream = call(data, timeout=60)
    try:
        for event in stream:
            if event.HasField("initial_events_end"):
                return
    finally:
        stream.cancel()


def check_watch(tracker: SelectionTracker, request: selector_pb2.WatchSelectionsRequest) -> None:
    """``SelectionTracker.subscribe`` for ``request``: only RequestError escapes, bounded."""
    try:
        tracker.subscribe(request.namespace, request.label_selector).close()
    except RequestError as error:
        status = rich_status(error)
        check_status(status, type(request).__name__)
        FINDINGS.saw("api", error.code)
        return
    FINDINGS.saw("api", "OK")


def check_api(store: CacheStore, request: Message) -> None:
    """``api.*`` for ``request``: only RequestError escapes, and its status is bounded."""
    snapshot = store.snapshot
    try:
        api.answer(snapshot, request)
    except RequestError as error:
        status = rich_status(error)
        check_status(status, type(request).__name__)
        assert status.code not in (code_pb2.INTERNAL, code_pb2.UNKNOWN)
        FINDINGS.saw("api", error.code)
        return
    FINDINGS.saw("api", "OK")


def check_store_write(store: CacheStore, request: Message) -> None:
    """A cache write in-process: RequestError only, and a rejected one changes nothing."""
    before = (store.snapshot.version, store.snapshot.generation, store.snapshot)
    try:
        if isinstance(request, cache_pb2.ApplySnapshotRequest):
            store.apply_snapshot(request.version, request.objects)
        elif isinstance(request, cache_pb2.UpsertObjectsRequest):
            store.upsert(request.version, request.objects)
        else:
            store.delete(request.version, request.keys)  # type: ignore[attr-defined]
    except RequestError as error:
        check_status(rich_status(error), type(request).__name__)
        assert (store.snapshot.version, store.snapshot.generation, store.snapshot) == before
        FINDINGS.saw("api", error.code)
        return
    FINDINGS.saw("api", "OK")


# --- loader ------------------------------------------------------------------------------------


def _real_texts() -> list[str]:
    paths = [Path(p) for p in example_paths()] + [Path(p) for p in inference_service_paths()]
    return [p.read_text() for p in paths if p.is_file()]


@st.composite
def manifest_texts(draw: Any) -> str:
    """A real manifest with random edits (characters, lines, values), or random YAML."""
    choice = draw(st.integers(0, 3))
    if choice == 0:
        values = st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), texts()),
            lambda inner: st.one_of(
                st.lists(inner, max_size=3), st.dictionaries(st.one_of(texts(), st.integers()), inner, max_size=3)
            ),
            max_leaves=12,
        )
        import yaml

        doc = draw(
            st.fixed_dictionaries(
                {
                    "apiVersion": st.sampled_from(["ome.io/v1beta1", "v1", 3]),
                    "kind": st.sampled_from(
                        [
                            "ClusterServingRuntime",
                            "ServingRuntime",
                            "BaseModel",
                            "ClusterBaseModel",
                            "AcceleratorClass",
                            "InferenceService",
                            "List",
                            ["ClusterServingRuntime"],
                        ]
                    ),
                    "metadata": values,
                    "spec": values,
                    "items": values,
                }
            )
        )
        return yaml.safe_dump(doc)
    text = draw(st.sampled_from(_REAL_TEXTS or [""]))
    lines = text.splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1))
        edit = draw(st.integers(0, 5))
        if edit == 0:
            del lines[i]
        elif edit == 1:
            lines.insert(i, lines[i])
        elif edit == 2:
            lines[i] = lines[i].rstrip("\n") + draw(texts()).replace("\n", " ")[:300] + "\n"
        elif edit == 3:
            key, sep, _ = lines[i].partition(":")
            if sep:
                lines[i] = f"{key}{sep} {draw(st.sampled_from(_ODD_VALUES))}\n"
        elif edit == 4:
            cut = draw(st.integers(0, max(0, len(lines[i]) - 1)))
            lines[i] = (
                lines[i][:cut]
                + draw(st.sampled_from(["\t", "\x00", "---\n", "- ", ": ", "[", "{", "'", "&x ", "*x", "\ufeff"]))
                + lines[i][cut:]
            )
        else:
            lines.insert(i, "---\n")
    return "".join(lines)


_REAL_TEXTS: list[str] = []
# YAML values that have broken loaders: wrong types, huge numbers, aliases, binary, a huge string.
_ODD_VALUES = (
    "[a, b]",
    "{x: 1}",
    "1" * 5000,
    "null",
    "true",
    "-1",
    "&a [*a]",
    "!!binary aGk=",
    '"' + "b" * 70000 + '"',
    "1e999",
    ".nan",
)


def check_loader(text: str, directory: str) -> None:
    """``text`` as a manifest file: the loader never raises and what it returns is valid."""
    path = os.path.join(directory, "fuzz.yaml")
    with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
        handle.write(text)
    result = load_manifests([path])
    for obj in result.objects:
        assert not validation.validate_object(obj), "the loader returned an invalid object"
    CacheStore().apply_snapshot("fuzz", result.objects)
    for line in result.errors + result.warnings:
        assert "\n" not in line and "Traceback" not in line and "cannot load: unexpected" not in line, line
    for reader in (read_inference_services, lambda p: load_runtime(p, "default")):
        try:
            reader(path)
        except ManifestError:
            pass
    FINDINGS.saw("loader", f"rejected={min(result.rejected_count, 3)}")


# --- running -----------------------------------------------------------------------------------


def _settings(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def run_rpc(channel: grpc.Channel, examples: int) -> None:
    """The ``rpc`` property: random and mutated request messages, every method."""

    @_settings(examples)
    @given(st.sampled_from(METHODS).flatmap(lambda m: st.tuples(st.just(m[0]), requests(m[1]))))
    def prop(case: tuple[str, Message]) -> None:
        method, request = case
        call_rpc(channel, method, request.SerializeToString(), "rpc")

    prop()


def run_raw(channel: grpc.Channel, examples: int) -> None:
    """The ``raw`` property: random bytes and byte-mutated valid requests, every method."""

    def flip(pair: tuple[bytes, int, bytes]) -> bytes:
        data, at, junk = pair
        at = at % (len(data) + 1)
        return data[:at] + junk + data[at + len(junk) :]

    @_settings(examples)
    @given(
        st.sampled_from(METHODS).flatmap(
            lambda m: st.tuples(
                st.just(m[0]),
                st.one_of(
                    st.binary(max_size=64),
                    st.tuples(
                        requests(m[1]).map(lambda r: r.SerializeToString()),
                        st.integers(0, 10**6),
                        st.binary(min_size=1, max_size=8),
                    ).map(flip),
                ),
            )
        )
    )
    def prop(case: tuple[str, bytes]) -> None:
        call_rpc(channel, case[0], case[1], "raw")

    prop()


def run_api(examples: int) -> None:
    """The ``api`` property: api.* and the store in-process."""
    store = synced_store()
    tracker = SelectionTracker(store, synchronous=True)  # every write advances the outcomes too
    classes = [cls for _, cls, method in METHODS if method.name not in ("GetCacheStatus",)]

    @_settings(examples)
    @given(st.sampled_from(classes).flatmap(requests))
    def prop(request: Message) -> None:
        if isinstance(
            request, (cache_pb2.ApplySnapshotRequest, cache_pb2.UpsertObjectsRequest, cache_pb2.DeleteObjectsRequest)
        ):
            check_store_write(store, request)
        elif isinstance(request, selector_pb2.WatchSelectionsRequest):
            check_watch(tracker, request)
        else:
            check_api(store, request)

    prop()


def run_loader(examples: int) -> None:
    """The ``loader`` property."""
    if not _REAL_TEXTS:
        _REAL_TEXTS.extend(_real_texts())
    with tempfile.TemporaryDirectory() as directory:

        @_settings(examples)
        @given(manifest_texts())
        def prop(text: str) -> None:
            check_loader(text, directory)

        prop()


@contextlib.contextmanager
def serving(store: CacheStore | None = None) -> Iterator[grpc.Channel]:
    """A channel to an ``InProcessServer`` over ``store`` (default: ``synced_store()``)."""
    with InProcessServer(store or synced_store()) as server:
        with grpc.insecure_channel(server.address) as channel:
            yield channel


PROPERTIES = ("rpc", "raw", "api", "loader")
BATCH = 2000


def errors_text(exc: Exception) -> str:
    """The first 2,000 characters of a failure (hypothesis prints the shrunk input itself)."""
    return str(exc)[:2000]


# Share of --examples per property.
_WEIGHTS = {"rpc": 0.35, "raw": 0.25, "api": 0.25, "loader": 0.15}


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.fuzz [--examples N] [--only PROPERTY ...]``."""
    parser = argparse.ArgumentParser(prog="python -m tools.fuzz", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--examples", type=int, default=100_000, help="inputs in all, spread over the properties (default 100000)"
    )
    parser.add_argument("--only", nargs="+", choices=PROPERTIES, default=list(PROPERTIES), help="properties to run")
    args = parser.parse_args(argv)
    import logging

    logging.basicConfig(level=logging.ERROR, stream=sys.stderr)  # a traceback the servers log shows up here
    FINDINGS.__init__()  # type: ignore[misc]  # counts of this run only
    weights = {name: _WEIGHTS[name] for name in args.only}
    total = sum(weights.values())
    failed = False
    started = time.monotonic()
    with serving() as channel:
        for name in args.only:
            examples = max(1, round(args.examples * weights[name] / total))
            began = time.monotonic()
            outcome = "ok"
            # Batches of BATCH inputs, each a fresh hypothesis run (new random seed), so memory
            # stays bounded and progress shows.
            while FINDINGS.inputs[name] < examples:
                batch = min(BATCH, examples - FINDINGS.inputs[name])
                done = FINDINGS.inputs[name]
                try:
                    if name == "rpc":
                        run_rpc(channel, batch)
                    elif name == "raw":
                        run_raw(channel, batch)
                    elif name == "api":
                        run_api(batch)
                    else:
                        run_loader(batch)
                except Exception as exc:  # hypothesis re-raises the shrunk failure
                    failed = True
                    outcome = f"FAILED: {type(exc).__name__}: {errors_text(exc)}"
                    break
                print(
                    f"  {name}: {FINDINGS.inputs[name]}/{examples} inputs, {time.monotonic() - began:.0f}s",
                    file=sys.stderr,
                    flush=True,
                )
                if FINDINGS.inputs[name] == done:
                    break  # hypothesis found nothing new to try
            codes = ", ".join(f"{code} {count}" for code, count in FINDINGS.codes[name].most_common())
            print(
                f"{name}: {FINDINGS.inputs[name]} inputs in {time.monotonic() - began:.0f}s; {outcome}; {codes}",
                flush=True,
            )
    print(f"total: {sum(FINDINGS.inputs.values())} inputs in {time.monotonic() - started:.0f}s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
