"""End to end on OME's real catalog: the real server on 127.0.0.1 with
``../shared/ome-catalog/runtimes`` and ``../shared/ome-cluster`` loaded, called through the
generated Python stubs.

Expected answers were worked out by hand from the OME v1.3 docs (runtime-selection-scoring.md:
ServingRuntimes first, then score = (format weight + framework weight) x priority, then the size
distance, then the name; the checks of troubleshoot-runtime-selection.md, Step 2) and the
catalog files themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import grpc
import pytest
import yaml
from conftest import _LISTENING, CATALOG_RUNTIMES, OME_CLUSTER, ServerProcess, server_command
from google.protobuf import json_format
from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2

CSR = selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
SR = selector_pb2.RUNTIME_KIND_SERVING_RUNTIME


@pytest.fixture(scope="module")
def server() -> Iterator[ServerProcess]:
    proc = ServerProcess(server_command([CATALOG_RUNTIMES, OME_CLUSTER]))
    proc.address = proc.wait_for_line(_LISTENING).group(1)
    yield proc
    assert proc.stop() == 0


@pytest.fixture(scope="module")
def channel(server: ServerProcess) -> Iterator[grpc.Channel]:
    with grpc.insecure_channel(server.address) as ch:
        yield ch


@pytest.fixture(scope="module")
def selection(channel: grpc.Channel) -> selector_pb2_grpc.SelectionServiceStub:
    return selector_pb2_grpc.SelectionServiceStub(channel)


def _docs(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d]


def _isvcs() -> dict[str, types_pb2.InferenceService]:
    out = {}
    for doc in _docs(str(OME_CLUSTER / "inferenceservices.yaml")):
        isvc = json_format.ParseDict(doc, types_pb2.InferenceService(), ignore_unknown_fields=True)
        out[isvc.metadata.name] = isvc
    return out


def _isvc(model: str, namespace: str = "default") -> types_pb2.InferenceService:
    isvc = types_pb2.InferenceService()
    isvc.metadata.name = f"isvc-{model}"[:63]
    isvc.metadata.namespace = namespace
    isvc.spec.model.name = model
    return isvc


def _select(
    stub: selector_pb2_grpc.SelectionServiceStub, isvc: types_pb2.InferenceService
) -> selector_pb2.SelectRuntimeResponse:
    return stub.SelectRuntime(
        selector_pb2.SelectRuntimeRequest(inference_service=isvc, view=selector_pb2.SELECT_RUNTIME_VIEW_FULL)
    )


def test_every_object_ingests_and_duplicates_are_reported(server: ServerProcess, channel: grpc.Channel) -> None:
    status = cache_pb2_grpc.CacheServiceStub(channel).GetCacheStatus(cache_pb2.GetCacheStatusRequest()).status
    counts = {cache_pb2.ObjectKind.Name(c.kind): c.count for c in status.counts}
    # 203 distinct catalog names + 3 extra ClusterServingRuntimes; 2 ServingRuntimes in team-a;
    # 207 ClusterBaseModels; 4 AcceleratorClasses; the 8 InferenceServices of ome-cluster.
    assert counts == {
        "OBJECT_KIND_SERVING_RUNTIME": 2,
        "OBJECT_KIND_CLUSTER_SERVING_RUNTIME": 206,
        "OBJECT_KIND_BASE_MODEL": 0,
        "OBJECT_KIND_CLUSTER_BASE_MODEL": 207,
        "OBJECT_KIND_ACCELERATOR_CLASS": 4,
        "OBJECT_KIND_INFERENCE_SERVICE": 8,
        "OBJECT_KIND_CONTROLLER_REVISION": 0,
    }
    assert status.synced is True
    assert re.fullmatch(r"manifests-[0-9a-f]{12}", status.version)
    duplicates = [line for line in server.lines if "is defined in" in line]
    assert len(duplicates) == 4
    for name in (
        "srt-qwen2-5-32b-instruct",
        "srt-qwen3-embedding-0-6b",
        "srt-mixtral-8x7b-instruct",
        "srt-llama-3-2-11b-vision-instruct",
    ):
        assert sum(f"ClusterServingRuntime {name} is defined in" in line for line in duplicates) == 1
    assert not [line for line in server.lines if "document" in line and "error" in line.lower()]


@pytest.mark.parametrize("namespace, expected", [("team-a", 208), ("demo", 206)])
def test_explain_has_one_row_per_distinct_runtime_in_scope(
    selection: selector_pb2_grpc.SelectionServiceStub, namespace: str, expected: int
) -> None:
    response = selection.ExplainRuntimes(
        selector_pb2.ExplainRuntimesRequest(inference_service=_isvc("qwen2-5-7b", namespace))
    )
    keys = [(r.runtime.kind, r.runtime.namespace, r.runtime.name) for r in response.runtimes]
    assert len(keys) == len(set(keys)) == expected
    assert sum(k[0] == SR for k in keys) == expected - 206


def test_every_catalog_model_gets_an_answer(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    models = [d["metadata"]["name"] for d in _docs(str(OME_CLUSTER / "clusterbasemodels-filled.yaml"))]
    assert len(models) == 207
    selected = without_format = 0
    for name in models:
        response = _select(selection, _isvc(name))
        if response.model_error:
            assert (
                response.model_error == "invalid model specification: modelFormat.name: model format name is required"
            )
            without_format += 1
            continue
        if response.HasField("selection"):
            selected += 1
            assert response.warnings == [
                f"Runtime {response.selection.runtime.name} will be auto-selected for model {name}"
            ]
            assert response.candidates[0].runtime == response.selection.runtime
            assert len(response.candidates) + len(response.exclusions) == 206
        else:
            fmt = response.model.label.split(":")[1]
            assert response.no_runtime_message.startswith(
                f"no runtime found to support model {fmt} with format {fmt} in namespace default. "
                "Checked 206 runtimes (0 namespace-scoped, 206 cluster-scoped)"
            )
            assert len(response.exclusions) == 206  # a reason for every runtime
        for exclusion in response.exclusions:
            assert len(exclusion.reasons) == 1 and exclusion.reasons[0].primary and exclusion.reasons[0].message
    assert without_format == 207 - 162  # 162 models of the file carry a modelFormat
    assert selected > 50


def test_hand_checked_ranking_llama_70b_distill(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    """deepseek-r1-distill-llama-70b: 70B, safetensors 1.0.0, transformers 4.47.0.dev0, Llama.
    Five CSRs match. Scores: omenative priority 3 -> 6, hopper priority 2 -> 4, the rest 2.
    Among the 2s: srt-deepseek-r1-distill-llama-70b's [65B, 75B] is 10B wide, ampere's and
    vllm's [60B, 75B] are 15B wide, and those two tie, so the name decides."""
    response = _select(selection, _isvc("deepseek-r1-distill-llama-70b"))
    got = [
        (c.runtime.name, c.score, c.size_distance, selector_pb2.TieBreak.Name(c.tie_break)) for c in response.candidates
    ]
    assert got == [
        ("srt-llama-3-3-70b-instruct-omenative", 6, 15e9, "TIE_BREAK_UNSPECIFIED"),
        ("srt-llama-3-3-70b-instruct-hopper", 4, 15e9, "TIE_BREAK_SCORE"),
        ("srt-deepseek-r1-distill-llama-70b", 2, 10e9, "TIE_BREAK_SCORE"),
        ("srt-llama-3-3-70b-instruct-ampere", 2, 15e9, "TIE_BREAK_SIZE_DISTANCE"),
        ("vllm-llama-3-3-70b-instruct", 2, 15e9, "TIE_BREAK_NAME"),
    ]
    assert response.selection.runtime.name == "srt-llama-3-3-70b-instruct-omenative"
    assert response.selection.runtime.kind == CSR


def test_hand_checked_ranking_e5_mistral(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    """e5-mistral-7b-instruct (7B): all three score 2; [6B, 8B] is closest (2B), then the two
    [5B, 10B] runtimes (5B) in name order."""
    response = _select(selection, _isvc("e5-mistral-7b-instruct"))
    assert [(c.runtime.name, c.size_distance) for c in response.candidates] == [
        ("srt-e5-mistral-7b-instruct", 2e9),
        ("srt-e5-7b-mistral-instruct", 5e9),
        ("vllm-e5-mistral-7b-instruct", 5e9),
    ]


def test_namespaced_runtime_comes_first_in_its_namespace(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    """In team-a the ServingRuntime team-llama-70b ([65B, 75B], priority 1, score 2) beats the
    cluster runtimes with scores 6 and 4 for a 70B Llama model."""
    response = _select(selection, _isvc("deepseek-r1-distill-llama-70b", "team-a"))
    assert [(c.runtime.kind, c.runtime.name, c.score) for c in response.candidates][:3] == [
        (SR, "team-llama-70b", 2),
        (CSR, "srt-llama-3-3-70b-instruct-omenative", 6),
        (CSR, "srt-llama-3-3-70b-instruct-hopper", 4),
    ]
    assert selector_pb2.TieBreak.Name(response.candidates[1].tie_break) == "TIE_BREAK_SCOPE"
    child = [e for e in response.exclusions if e.runtime.name == "team-llama-70b-child"]
    assert [
        (e.runtime.kind, e.runtime.namespace, selector_pb2.Verdict.Name(e.verdict), e.reasons[0].message) for e in child
    ] == [
        (
            SR,
            "team-a",
            "VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE",
            "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it (pin it explicitly via spec.runtime.name instead)",
        ),
    ]


# ---- the InferenceServices of ome-cluster -------------------------------------------------------
# Expectations below follow from the docs' rules applied to the data files, which the helpers read
# (the recorded model size and each runtime's modelSizeRange, priorities and accelerator classes),
# so a change of the data shows up as a failed precondition rather than as a wrong copied figure.

LLAMA_70B = "llama-3-3-70b-instruct"
# The five ClusterServingRuntimes whose autoSelect entry matches the model's format, framework and
# architecture (runtimes-extra.yaml and the catalog); srt-llama-3-3-70b-instruct matches too but has
# no autoSelect: true entry.
LLAMA_70B_AUTO = (
    "srt-llama-3-3-70b-instruct-omenative",
    "srt-llama-3-3-70b-instruct-hopper",
    "srt-llama-3-3-70b-instruct-ampere",
    "srt-deepseek-r1-distill-llama-70b",
    "vllm-llama-3-3-70b-instruct",
)
NOT_AUTO = (
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it "
    "(pin it explicitly via spec.runtime.name instead)"
)
CLASS_REASON = "runtime does not support the required accelerator class"


def _data_objects() -> dict[tuple[str, str, str], dict]:
    """Every object of the catalog runtimes and ome-cluster, keyed by kind, namespace, name (later wins)."""
    out: dict[tuple[str, str, str], dict] = {}
    for path in [*sorted(CATALOG_RUNTIMES.rglob("*.yaml")), *sorted(OME_CLUSTER.glob("*.yaml"))]:
        for doc in _docs(str(path)):
            if isinstance(doc, dict) and "metadata" in doc:
                out[(doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"])] = doc
    return out


def _params(text: str) -> float:
    """A modelParameterSize / modelSizeRange bound ("70B", "500M") in parameters."""
    number, unit = re.fullmatch(r"([0-9.]+)([KMBT])", str(text)).groups()  # type: ignore[union-attr]
    return float(number) * {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[unit]


def _expected_ranking(model: str, runtimes: list[tuple[str, str, str]]) -> list[tuple[str, int, float]]:
    """runtime-selection-scoring.md on the data: each runtime's model size must lie in its
    modelSizeRange (troubleshoot Step 2, "Model size"); score = (modelFormat weight +
    modelFramework weight) x priority of its first entry (both weights default to 1); ties go to
    the narrower range (the distance of a range with both bounds is its width), then the name.
    Returns (name, score, size distance) in rank order."""
    data = _data_objects()
    size = _params(data[("ClusterBaseModel", "", model)]["spec"]["modelParameterSize"])
    rows = []
    for key in runtimes:
        spec = data[key]["spec"]
        low, high = _params(spec["modelSizeRange"]["min"]), _params(spec["modelSizeRange"]["max"])
        assert low <= size <= high, f"data changed: {model} ({size:g}) no longer fits {key[2]} [{low:g}, {high:g}]"
        entry = spec["supportedModelFormats"][0]
        weights = entry["modelFormat"].get("weight", 1) + entry["modelFramework"].get("weight", 1)
        rows.append((key[2], weights * entry["priority"], high - low))
    return sorted(rows, key=lambda r: (-r[1], r[2], r[0]))


def _candidates(response: selector_pb2.SelectRuntimeResponse) -> list[tuple[str, int, float]]:
    return [(c.runtime.name, c.score, c.size_distance) for c in response.candidates]


def _reason(response: selector_pb2.SelectRuntimeResponse, name: str) -> str:
    found = [e.reasons[0].message for e in response.exclusions if e.runtime.name == name]
    assert len(found) == 1, name
    return found[0]


def test_isvc_llama_70b_auto_selects_by_score(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    """The recorded 70B fits every 70B runtime's range, so the five autoSelect runtimes rank by
    score (priority 3 -> 6, 2 -> 4, the rest 2), then range width, then name."""
    expected = _expected_ranking(LLAMA_70B, [("ClusterServingRuntime", "", n) for n in LLAMA_70B_AUTO])
    assert expected == [
        ("srt-llama-3-3-70b-instruct-omenative", 6, 15e9),
        ("srt-llama-3-3-70b-instruct-hopper", 4, 15e9),
        ("srt-deepseek-r1-distill-llama-70b", 2, 10e9),
        ("srt-llama-3-3-70b-instruct-ampere", 2, 15e9),
        ("vllm-llama-3-3-70b-instruct", 2, 15e9),
    ]
    response = _select(selection, _isvcs()["llama-70b"])
    assert _candidates(response) == expected
    assert response.selection.runtime == selector_pb2.RuntimeRef(kind=CSR, name="srt-llama-3-3-70b-instruct-omenative")
    assert list(response.warnings) == [
        f"Runtime srt-llama-3-3-70b-instruct-omenative will be auto-selected for model {LLAMA_70B}"
    ]
    assert response.no_runtime_message == ""
    # srt-llama-3-3-70b-instruct fits too, but has no autoSelect: true entry.
    assert _reason(response, "srt-llama-3-3-70b-instruct") == NOT_AUTO


def test_isvc_llama_70b_h100_only_the_runtime_listing_the_class(
    selection: selector_pb2_grpc.SelectionServiceStub,
) -> None:
    """nvidia-h100-80gb is listed by the hopper runtime only; the other 70B runtimes that list
    classes are excluded by the accelerator-class check, which comes before the format check."""
    data = _data_objects()
    listing = [
        k[2]
        for k, d in data.items()
        if k[0] == "ClusterServingRuntime"
        and "nvidia-h100-80gb" in ((d["spec"].get("acceleratorRequirements") or {}).get("acceleratorClasses") or [])
    ]
    assert listing == ["srt-llama-3-3-70b-instruct-hopper"]
    response = _select(selection, _isvcs()["llama-70b-h100"])
    assert _candidates(response) == _expected_ranking(
        LLAMA_70B, [("ClusterServingRuntime", "", "srt-llama-3-3-70b-instruct-hopper")]
    )
    assert _candidates(response) == [("srt-llama-3-3-70b-instruct-hopper", 4, 15e9)]
    assert response.selection.runtime.name == "srt-llama-3-3-70b-instruct-hopper"
    assert _reason(response, "srt-llama-3-3-70b-instruct-ampere") == CLASS_REASON
    assert _reason(response, "srt-llama-3-3-70b-instruct") == CLASS_REASON
    assert _reason(response, "vllm-llama-3-3-70b-instruct") == CLASS_REASON


def test_isvc_llama_70b_l40s_no_runtime_lists_the_class(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    response = _select(selection, _isvcs()["llama-70b-l40s"])
    assert not response.HasField("selection")
    assert {e.reasons[0].message for e in response.exclusions} == {
        "runtime does not support the required accelerator class"
    }


def test_isvc_llama_70b_native_mode(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    """OMENative: the omenative runtime declares it (ome.io/deploymentMode in engineConfig), the
    others declare no mode and so accept any; the ranking is the one without the mode."""
    response = _select(selection, _isvcs()["llama-70b-native"])
    assert _candidates(response) == _expected_ranking(
        LLAMA_70B, [("ClusterServingRuntime", "", n) for n in LLAMA_70B_AUTO]
    )
    assert response.selection.runtime.name == "srt-llama-3-3-70b-instruct-omenative"


def test_isvc_llama_70b_team_namespaced_runtime_wins(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    """In team-a the ServingRuntime team-llama-70b (priority 1, score 2) ranks before every
    ClusterServingRuntime; its child has no autoSelect: true entry."""
    response = _select(selection, _isvcs()["llama-70b-team"])
    cluster = _expected_ranking(LLAMA_70B, [("ClusterServingRuntime", "", n) for n in LLAMA_70B_AUTO])
    assert (
        _candidates(response)
        == _expected_ranking(LLAMA_70B, [("ServingRuntime", "team-a", "team-llama-70b")]) + cluster
    )
    assert _candidates(response)[0] == ("team-llama-70b", 2, 10e9)
    assert response.selection.runtime == selector_pb2.RuntimeRef(kind=SR, namespace="team-a", name="team-llama-70b")
    assert selector_pb2.TieBreak.Name(response.candidates[1].tie_break) == "TIE_BREAK_SCOPE"
    assert _reason(response, "team-llama-70b-child") == NOT_AUTO
    assert list(response.warnings) == [f"Runtime team-llama-70b will be auto-selected for model {LLAMA_70B}"]


def test_isvc_named_child_runtime_uses_inherited_classes(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    """team-llama-70b-child inherits acceleratorRequirements from the hopper runtime, so the named
    runtime passes the nvidia-h100-80gb check; the model fits its [60B, 75B] range, so every check
    passes and OME uses it without a warning (autoSelect does not matter for a named runtime)."""
    _expected_ranking(LLAMA_70B, [("ServingRuntime", "team-a", "team-llama-70b-child")])  # the size fits
    response = _select(selection, _isvcs()["llama-70b-named-child"])
    assert response.selection.runtime == selector_pb2.RuntimeRef(
        kind=SR, namespace="team-a", name="team-llama-70b-child"
    )
    assert response.selection.mode == selector_pb2.SELECTION_MODE_NAMED
    assert list(response.selection.inheritance_chain) == ["srt-llama-3-3-70b-instruct-hopper", "team-llama-70b-child"]
    assert list(response.selection.reasons) == []
    assert list(response.warnings) == []


def test_isvc_qwen2_5_7b(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    response = _select(selection, _isvcs()["qwen2-5-7b"])
    assert not response.HasField("selection")
    assert _reason(response, "srt-qwen2-5-7b") == (
        "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it "
        "(pin it explicitly via spec.runtime.name instead)"
    )
    assert " srt-qwen2-5-7b (" not in response.no_runtime_message


def test_isvc_deepseek_v3(selection: selector_pb2_grpc.SelectionServiceStub) -> None:
    response = _select(selection, _isvcs()["deepseek-v3"])
    assert not response.HasField("selection")
    assert response.model.label == "mt:safetensors:1.0.0:DeepseekV3ForCausalLM:fp8:transformers:4.33.1"
    for name in ("srt-deepseek-rdma", "srt-deepseek-rdma-pd", "srt-deepseek-v3"):
        assert (
            selector_pb2.Verdict.Name([e for e in response.exclusions if e.runtime.name == name][0].verdict)
            == "VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE"
        )


# ---- cache writes through the real server --------------------------------------------------------


def test_cache_writes_change_answers(running_server) -> None:  # type: ignore[no-untyped-def]
    server = running_server([CATALOG_RUNTIMES, OME_CLUSTER])
    with grpc.insecure_channel(server.address) as ch:
        cache = cache_pb2_grpc.CacheServiceStub(ch)
        stub = selector_pb2_grpc.SelectionServiceStub(ch)
        isvc = _isvc("qwen2-5-7b", "demo")
        assert not _select(stub, isvc).HasField("selection")

        # Upsert: give srt-qwen2-5-7b an autoSelect: true entry (Step 4 of the troubleshoot page).
        doc = next(
            d
            for p in sorted(CATALOG_RUNTIMES.rglob("*.yaml"))
            for d in _docs(str(p))
            if d.get("kind") == "ClusterServingRuntime" and d["metadata"]["name"] == "srt-qwen2-5-7b"
        )
        runtime = json_format.ParseDict(doc, types_pb2.ClusterServingRuntime(), ignore_unknown_fields=True)
        runtime.spec.supported_model_formats[0].auto_select = True
        status = cache.UpsertObjects(
            cache_pb2.UpsertObjectsRequest(
                version="v2", objects=[cache_pb2.CacheObject(cluster_serving_runtime=runtime)]
            )
        ).status
        assert status.version == "v2"
        response = _select(stub, isvc)
        assert response.selection.runtime.name == "srt-qwen2-5-7b"
        assert list(response.warnings) == ["Runtime srt-qwen2-5-7b will be auto-selected for model qwen2-5-7b"]
        assert response.cache_version == "v2"

        # A rejected write (a ServingRuntime without namespace) changes nothing.
        bad = types_pb2.ServingRuntime()
        bad.metadata.name = "bad-runtime"
        with pytest.raises(grpc.RpcError) as err:
            cache.UpsertObjects(
                cache_pb2.UpsertObjectsRequest(version="v3", objects=[cache_pb2.CacheObject(serving_runtime=bad)])
            )
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "objects[0].servingRuntime.metadata.namespace" in err.value.details()
        assert cache.GetCacheStatus(cache_pb2.GetCacheStatusRequest()).status.version == "v2"
        assert _select(stub, isvc).selection.runtime.name == "srt-qwen2-5-7b"

        # Delete it again: back to no runtime; a missing key is reported, not an error.
        key = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="srt-qwen2-5-7b")
        missing = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="no-such-runtime")
        deleted = cache.DeleteObjects(cache_pb2.DeleteObjectsRequest(version="v4", keys=[key, missing]))
        assert list(deleted.not_found) == [missing]
        response = _select(stub, isvc)
        assert not response.HasField("selection")
        assert "Checked 205 runtimes (0 namespace-scoped, 205 cluster-scoped)" in response.no_runtime_message

        # Snapshot: replace everything with two objects.
        model = json_format.ParseDict(
            {
                "metadata": {"name": "qwen2-5-7b"},
                "spec": {
                    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                    "modelFramework": {"name": "transformers", "version": "4.40.1"},
                    "modelArchitecture": "Qwen2ForCausalLM",
                },
            },
            types_pb2.ClusterBaseModel(),
        )
        cache.ApplySnapshot(
            cache_pb2.ApplySnapshotRequest(
                version="v5",
                objects=[
                    cache_pb2.CacheObject(cluster_serving_runtime=runtime),
                    cache_pb2.CacheObject(cluster_base_model=model),
                ],
            )
        )
        response = _select(stub, isvc)
        assert (response.selection.runtime.name, response.cache_version, len(response.exclusions)) == (
            "srt-qwen2-5-7b",
            "v5",
            0,
        )
