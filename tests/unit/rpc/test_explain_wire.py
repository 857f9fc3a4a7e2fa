"""ExplainRuntimes' answer is joined from parts serialized once and kept beside the snapshots
(``rpc.explain_wire``, ``engine.explain_rows``, ``memo.EVALUATIONS``): its bytes must be, byte
for byte, what protobuf serializes for the table written out runtime by runtime from the
exhaustive evaluation (``engine.exhaustive_auto_select``: every check run on every runtime), on
random snapshots, requests and pages with random cache writes between them, the memos kept warm
from one answer to the next. Property tests (hypothesis, bounded in examples and time)."""

from __future__ import annotations

from typing import Any

from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.engine import evaluation as engine
from ome_selector.engine import memo as caches
from ome_selector.engine.evaluation import Verdict
from ome_selector.engine.explain_rows import Excluded, RowMaker
from ome_selector.flows import selection as flow
from ome_selector.rpc import explain_wire, selection
from ome_selector.rules.scoring import explain_columns

NS = "team-a"
CLASSES = ("a100", "h100")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

formats = st.sampled_from([("safetensors", "1.0.0"), ("safetensors", "2.0.0"), ("safetensors", None), ("gguf", "1")])
frameworks = st.sampled_from([("transformers", "4.45.0"), ("transformers", "4.47.0"), ("vllm", None)])
architectures = st.sampled_from(["LlamaForCausalLM", "Qwen2ForCausalLM", None])
sizes = st.sampled_from([None, ("1B", "8B"), ("2B", None), (None, "4B"), ("70B", "75B")])
names = [f"rt-{i}" for i in range(8)]


@st.composite
def entries(draw: Any) -> dict[str, Any]:
    fmt = draw(formats)
    return entry(
        format={"name": fmt[0], **({"version": fmt[1]} if fmt[1] else {})},
        framework=draw(frameworks),
        architecture=draw(architectures),
        quantization=draw(st.sampled_from([None, None, "fp8"])),
        auto_select=draw(st.sampled_from([True, False, None])),
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
        engine_mode=draw(st.sampled_from([None, None, "RawDeployment", "OMENative"])),
        decoder_mode=draw(st.sampled_from([None, "OMENative"])),
        disabled=draw(st.sampled_from([None, False, True])),
        created=draw(st.sampled_from([None, "2025-01-01T00:00:00Z", "2026-01-01T00:00:00Z"])),
    )


@st.composite
def clusters(draw: Any) -> list[dict[str, Any]]:
    """Up to 8 ClusterServingRuntimes and 3 ServingRuntimes in NS (a name may be on both)."""
    cluster = draw(st.lists(st.sampled_from(names), max_size=8, unique=True))
    namespaced = draw(st.lists(st.sampled_from(names[:4]), max_size=3, unique=True))
    return [draw(runtimes(n, None)) for n in cluster] + [draw(runtimes(n, NS)) for n in namespaced]


# Models the random entries can match (formats, frameworks and architectures drawn from the same
# values), one that they cannot, and a Sharded one (base-models.md, "Distribution").
MODELS = [
    model("m1", namespace=None, framework=("transformers", "4.45.0")),
    model("m2", namespace=None, format=("safetensors", "2.0.0"), framework=("transformers", "4.47.0"), size="70B"),
    model(
        "m3",
        namespace=None,
        format=("gguf", "1"),
        framework=("vllm", "0.6"),
        architecture="Qwen2ForCausalLM",
        size=None,
    ),
    model("m4", namespace=None, framework=None, architecture=None, quantization="fp8", size="7B"),
    model("m5", namespace=None, framework=("transformers", "4.45.0"), spec={"distribution": "Sharded"}),
]


@st.composite
def requests(draw: Any) -> pb.ExplainRuntimesRequest:
    name = draw(st.sampled_from(["m1", "m1", "m2", "m3", "m4", "m5", "missing"]))
    if draw(st.integers(0, 4)) == 0:
        request = pb.ExplainRuntimesRequest(model=pb.ModelLookup(name=name, namespace=NS))
    else:
        service = isvc(
            name,
            namespace=draw(st.sampled_from([NS, "other"])),
            accelerator_class=draw(st.sampled_from([None, *CLASSES])),
            deployment_mode=draw(st.sampled_from([None, "OMENative", "RawDeployment"])),
            decoder=draw(st.sampled_from([None, {}, {"annotations": {"ome.io/deploymentMode": "OMENative"}}])),
            runtime_name=draw(st.sampled_from([None, None, "rt-1"])),
        )
        request = pb.ExplainRuntimesRequest(inference_service=inference_service(service))
    request.page_size = draw(st.sampled_from([0, 0, 1, 3]))
    request.runtime_name = draw(st.sampled_from(["", "", "", "rt-0", "rt-2"]))
    return request


@st.composite
def writes(draw: Any) -> list[cache_pb2.CacheObject | cache_pb2.ObjectKey]:
    """Upserts (new specs, or the same names with other priorities) and deletes."""
    out: list[cache_pb2.CacheObject | cache_pb2.ObjectKey] = []
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.sampled_from(names))
        namespace = draw(st.sampled_from([None, None, NS]))
        if draw(st.integers(0, 3)):
            out += objects(draw(runtimes(name, namespace)))
        else:
            kind = cache_pb2.OBJECT_KIND_SERVING_RUNTIME if namespace else cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME
            out.append(cache_pb2.ObjectKey(kind=kind, namespace=namespace or "", name=name))
    return out


def _reasons(row: pb.RuntimeExplanation, e: engine.Evaluation) -> None:
    for i, f in enumerate(e.failures):
        reason = row.reasons.add(
            check=pb.Check.Value(f"CHECK_{f.check.name}"),
            component=pb.COMPONENT_UNSPECIFIED
            if not f.component
            else pb.Component.Value(f"COMPONENT_{f.component.upper()}"),
            runtime_value=f.runtime_value,
            requested_value=f.requested_value,
            message=f.message,
            primary=i == 0,
        )
        for m in f.entries:
            reason.entry_mismatches.add(index=m.index, differences=m.differences)


def _ref(e: engine.Evaluation) -> pb.RuntimeRef:
    kind = pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME if e.runtime.is_cluster else pb.RUNTIME_KIND_SERVING_RUNTIME
    return pb.RuntimeRef(kind=kind, namespace=e.runtime.namespace, name=e.runtime.name)


def _reference_rows(snapshot: Snapshot, request: pb.ExplainRuntimesRequest) -> list[pb.RuntimeExplanation]:
    """The whole table, every runtime evaluated by every check: the candidates in rank order,
    then the others, ServingRuntimes first, each kind by name (selector.proto), only those of
    ``runtime_name`` when set."""
    query, _ = selection.decode_explain(snapshot, request)
    res = flow._explained_model(snapshot, query)
    assert res.model is not None and not res.error
    compiled = compile_request(query.isvc) if query.isvc is not None else None
    evaluations, ranked, _ = engine.exhaustive_auto_select(snapshot, res.model, compiled, query.namespace)
    rows = []
    for r in ranked:
        e = r.evaluation
        row = pb.RuntimeExplanation(
            runtime=_ref(e),
            verdict=pb.VERDICT_CANDIDATE,
            rank=r.rank,
            score=e.fit.score,
            reason="-",
            supported_model_format_index=e.fit.match.index if e.fit.match is not None else -1,
        )
        columns = explain_columns(e.fit)
        if columns is not None:
            row.priority, row.weight = columns
        rows.append(row)
    others = sorted(
        (e for e in evaluations if e.verdict is not Verdict.CANDIDATE),
        key=lambda e: (e.runtime.is_cluster, e.runtime.name),
    )
    for e in others:
        verdict = pb.VERDICT_EXCLUDED if e.verdict is Verdict.EXCLUDED else pb.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE
        row = pb.RuntimeExplanation(
            runtime=_ref(e),
            verdict=verdict,
            reason=e.failures[0].message,
            supported_model_format_index=e.fit.match.index if e.fit.match is not None else -1,
        )
        _reasons(row, e)
        rows.append(row)
    name = request.runtime_name
    return [row for row in rows if not name or row.runtime.name == name]


def _check_pages(snapshot: Snapshot, request: pb.ExplainRuntimesRequest) -> None:
    """Every page of ``request`` on ``snapshot``: its bytes are protobuf's serialization of the
    reference rows of the page with the answer's other fields."""
    try:
        data = selection.explain_runtimes(snapshot, request, True)
    except RequestError as error:
        assert error.code == "NOT_FOUND"
        return
    assert isinstance(data, bytes)
    answer = pb.ExplainRuntimesResponse.FromString(data)
    if answer.model_error:
        assert not answer.runtimes and data == answer.SerializeToString()
        return
    whole = _reference_rows(snapshot, request)
    assert answer.total_size == len(whole)
    start, page = 0, pb.ExplainRuntimesRequest()
    page.CopyFrom(request)
    while True:
        data = selection.explain_runtimes(snapshot, page, True)
        assert isinstance(data, bytes)
        answer = pb.ExplainRuntimesResponse.FromString(data)
        stop = len(whole) if not page.page_size else min(len(whole), start + page.page_size)
        expected = pb.ExplainRuntimesResponse()
        expected.CopyFrom(answer)
        del expected.runtimes[:]
        expected.runtimes.extend(whole[start:stop])
        assert data == expected.SerializeToString()
        assert selection.explain_runtimes(snapshot, page) == expected  # the row parses the same bytes
        if not answer.next_page_token:
            assert stop == len(whole)
            return
        start, page.page_token = stop, answer.next_page_token


@SETTINGS
@given(clusters(), st.lists(st.tuples(writes(), requests()), min_size=1, max_size=6))
def test_the_answer_is_the_exhaustive_table_serialized_by_protobuf(
    cluster: list[dict[str, Any]], steps: list[tuple[list[Any], pb.ExplainRuntimesRequest]]
) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*cluster, *MODELS))
    for i, (changes, request) in enumerate(steps):
        last = {_key(c): c for c in changes}  # a write names each object once
        upserts = [c for c in last.values() if isinstance(c, cache_pb2.CacheObject)]
        deletes = [c for c in last.values() if isinstance(c, cache_pb2.ObjectKey)]
        if upserts:
            store.upsert(f"v{i}u", upserts)
        held = [k for k in deletes if _held(store.snapshot, k)]
        if held:
            store.delete(f"v{i}d", held)
        _check_pages(store.snapshot, request)
        _check_pages(store.snapshot, request)  # again, every part from the memos


def _key(change: cache_pb2.CacheObject | cache_pb2.ObjectKey) -> tuple[bool, str, str]:
    if isinstance(change, cache_pb2.ObjectKey):
        return (change.kind == cache_pb2.OBJECT_KIND_SERVING_RUNTIME, change.namespace, change.name)
    served = change.HasField("serving_runtime")
    meta = change.serving_runtime.metadata if served else change.cluster_serving_runtime.metadata
    return (served, meta.namespace, meta.name)


def _held(snapshot: Snapshot, key: cache_pb2.ObjectKey) -> bool:
    if key.kind == cache_pb2.OBJECT_KIND_SERVING_RUNTIME:
        return (key.namespace, key.name) in snapshot.serving_runtimes
    return key.name in snapshot.cluster_serving_runtimes


@SETTINGS
@given(clusters(), st.sampled_from(MODELS), requests())
def test_a_row_has_the_failures_of_every_check(
    cluster: list[dict[str, Any]], model_doc: dict[str, Any], request: pb.ExplainRuntimesRequest
) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*cluster, model_doc))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models[model_doc["metadata"]["name"]]
    compiled = compile_request(request.inference_service) if request.HasField("inference_service") else None
    namespaced, cluster_group = snapshot.runtimes_in_scope(NS)
    listed = [*namespaced.order, *cluster_group.order]
    for runtime_, row in zip(listed, RowMaker(mdl, compiled).rows(listed), strict=True):
        whole = engine.evaluate(runtime_, runtime_.own, mdl, compiled)
        if isinstance(row, Excluded):
            assert whole.verdict is Verdict.EXCLUDED
            assert row.failures == whole.failures
            assert row.match_index == (whole.fit.match.index if whole.fit.match is not None else -1)
        else:
            assert row == whole and whole.verdict is not Verdict.EXCLUDED


def test_an_answer_survives_every_memo_being_emptied_while_it_is_written(monkeypatch: Any) -> None:
    """The memos are bounded and may drop their tables at any time: an answer being written then
    still gets every part right."""
    docs = [runtime(f"rt-{i}", entry(format=("gguf", str(i))), classes=["a100"] if i % 2 else None) for i in range(6)]
    docs += [runtime("fits", size=("1B", "8B")), runtime("small", size=("1B", "2B")), model("m", namespace=None)]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs))
    request = pb.ExplainRuntimesRequest(
        inference_service=inference_service(isvc("m", namespace=NS, accelerator_class="a100"))
    )
    expected = _reference_rows(store.snapshot, request)
    memos = (
        caches.FIT_BASES,
        caches.FORMAT_FAILURES,
        caches.REQUEST_CHECKS,
        caches.EVALUATIONS,
        explain_wire.MODEL_PARTS,
    )
    for memo in memos:
        real_add = memo.add

        def add_then_empty(model_key: object, table: Any, key: object, value: Any, real_add: Any = real_add) -> Any:
            out = real_add(model_key, table, key, value)
            for each in memos:
                each.clear()
            return out

        monkeypatch.setattr(memo, "add", add_then_empty)
    for memo in memos:
        memo.clear()
    for _ in range(2):
        answer = selection.explain_runtimes(store.snapshot, request)
        assert list(answer.runtimes) == expected
        assert [(r.runtime.name, [pb.Check.Name(x.check) for x in r.reasons]) for r in answer.runtimes] == [
            ("fits", ["CHECK_ACCELERATOR_CLASS"]),
            ("rt-0", ["CHECK_ACCELERATOR_CLASS", "CHECK_MODEL_FORMAT"]),
            ("rt-1", ["CHECK_MODEL_FORMAT"]),
            ("rt-2", ["CHECK_ACCELERATOR_CLASS", "CHECK_MODEL_FORMAT"]),
            ("rt-3", ["CHECK_MODEL_FORMAT"]),
            ("rt-4", ["CHECK_ACCELERATOR_CLASS", "CHECK_MODEL_FORMAT"]),
            ("rt-5", ["CHECK_MODEL_FORMAT"]),
            ("small", ["CHECK_ACCELERATOR_CLASS", "CHECK_MODEL_SIZE"]),
        ]


def test_every_kind_of_row_byte_for_byte() -> None:
    """Candidates (with PRIORITY and WEIGHT), a runtime auto-selection skips, and excluded ones
    (request-side failures first, then the model-side ones; one with an entry that matches),
    on every page size and after a write that changes the priorities."""
    docs = [
        runtime("best", entry(priority=3)),
        runtime("good", entry(), namespace=NS),
        runtime("manual", entry(auto_select=False)),
        runtime("too-small", entry(), size=("1B", "2B")),
        runtime("elsewhere", entry(format=("gguf", "1")), classes=["h100"], engine_mode="MultiNode"),
        runtime("off", entry(), disabled=True, namespace=NS),
        model("m", namespace=None, framework=("transformers", "4.45.0.dev0")),
    ]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs))
    service = inference_service(isvc("m", namespace=NS, deployment_mode="OMENative"))
    for page_size in (0, 1, 2, 5):
        request = pb.ExplainRuntimesRequest(inference_service=service, page_size=page_size)
        _check_pages(store.snapshot, request)
    answer = selection.explain_runtimes(store.snapshot, pb.ExplainRuntimesRequest(inference_service=service))
    rows = [
        (r.runtime.name, pb.Verdict.Name(r.verdict), [pb.Check.Name(x.check) for x in r.reasons])
        for r in answer.runtimes
    ]
    assert rows == [
        ("good", "VERDICT_CANDIDATE", []),
        ("best", "VERDICT_CANDIDATE", []),
        ("off", "VERDICT_EXCLUDED", ["CHECK_DISABLED"]),
        ("elsewhere", "VERDICT_EXCLUDED", ["CHECK_DEPLOYMENT_MODE", "CHECK_MODEL_FORMAT"]),
        ("manual", "VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE", ["CHECK_AUTO_SELECT"]),
        ("too-small", "VERDICT_EXCLUDED", ["CHECK_MODEL_SIZE"]),
    ]
    assert [(r.priority, r.weight) for r in answer.runtimes[:2]] == [(1, 2), (3, 6)]
    assert answer.runtimes[3].reason == (
        "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative"
    )
    store.upsert(
        "v2", objects(runtime("best", entry(priority=1)), runtime("too-small", entry(priority=2), size=("1B", "2B")))
    )
    _check_pages(store.snapshot, pb.ExplainRuntimesRequest(inference_service=service))


def test_varint_and_the_length_table() -> None:
    assert [explain_wire.varint(n) for n in (0, 1, 127, 128, 300, 16383, 16384)] == [
        b"\x00",
        b"\x01",
        b"\x7f",
        b"\x80\x01",
        b"\xac\x02",
        b"\xff\x7f",
        b"\x80\x80\x01",
    ]
