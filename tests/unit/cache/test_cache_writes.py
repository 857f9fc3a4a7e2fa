"""``CacheStore``: validated all-or-nothing writes, CRD defaults, and the request errors of
``selection.select_runtime`` / ``selection.explain_runtimes`` (UNAVAILABLE, INVALID_ARGUMENT, NOT_FOUND).
"""

from __future__ import annotations

import pytest
from helpers_docs import (
    LLAMA_3_2_3B_BASEMODEL,
    NS,
    cache_object,
    entry,
    explain,
    inference_service,
    isvc,
    load,
    model,
    objects,
    runtime,
    select,
    worked_example_runtimes,
)
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import selection
from ome_selector.texts import messages

K = cache_pb2.ObjectKind


def answer(store: CacheStore) -> bytes:
    return select(store, isvc()).SerializeToString(deterministic=True) + explain(store, isvc()).SerializeToString(
        deterministic=True
    )


def worked_store() -> CacheStore:
    return load(*worked_example_runtimes(), LLAMA_3_2_3B_BASEMODEL)


BAD_OBJECTS = [
    runtime("Bad_Name"),  # objects[0]: not a Kubernetes name
    {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime",
        "metadata": {"name": "no-namespace"},
        "spec": {},
    },  # objects[1]
    runtime("good"),  # objects[2]
    runtime("good"),  # objects[3]: the same key again
    runtime("zero", entry(priority=0)),  # objects[4]: priority must be at least 1
    runtime("cluster-with-namespace"),  # objects[5]: namespace set below
]


def bad_objects() -> list[cache_pb2.CacheObject]:
    out = objects(*BAD_OBJECTS)
    out[5].cluster_serving_runtime.metadata.namespace = "llama-demo"
    return out


EXPECTED_FIELDS = [
    "objects[0].cluster_serving_runtime.metadata.name",
    "objects[1].serving_runtime.metadata.namespace",
    "objects[3]",
    "objects[4].cluster_serving_runtime.spec.supported_model_formats[0].priority",
    "objects[5].cluster_serving_runtime.metadata.namespace",
]


class TestRejectedWrites:
    @pytest.mark.parametrize("write", ["apply_snapshot", "upsert"])
    def test_every_bad_field_is_named(self, write: str) -> None:
        store = worked_store()
        with pytest.raises(RequestError) as caught:
            getattr(store, write)("v2", bad_objects())
        assert caught.value.code == "INVALID_ARGUMENT"
        assert [v.field for v in caught.value.violations] == EXPECTED_FIELDS
        descriptions = {v.field: v.description for v in caught.value.violations}
        assert descriptions["objects[1].serving_runtime.metadata.namespace"] == "Required value"
        assert (
            descriptions["objects[4].cluster_serving_runtime.spec.supported_model_formats[0].priority"]
            == "Invalid value: 0: must be greater than or equal to 1"
        )
        assert descriptions["objects[3]"] == "duplicate ClusterServingRuntime good (also objects[2])"
        assert descriptions["objects[0].cluster_serving_runtime.metadata.name"].startswith(
            'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'
        )
        for field in EXPECTED_FIELDS:
            assert field in caught.value.message

    @pytest.mark.parametrize("write", ["apply_snapshot", "upsert"])
    @pytest.mark.parametrize("bad_index", range(len(BAD_OBJECTS)))
    def test_a_rejected_write_changes_nothing(self, write: str, bad_index: int) -> None:
        store = worked_store()
        before_snapshot, before_answer, before_status = store.snapshot, answer(store), store.status()
        batch = objects(runtime("would-win", entry(priority=50), namespace=NS))
        bad = bad_objects()
        if bad_index == 3:
            batch += [bad[2], bad[3]]
        else:
            batch.append(bad[bad_index])
        if bad_index == 2:  # objects[2] alone is fine: make it a duplicate of itself
            batch.append(bad[2])
        with pytest.raises(RequestError) as caught:
            getattr(store, write)("v2", batch)
        assert caught.value.code == "INVALID_ARGUMENT"
        assert store.snapshot is before_snapshot
        assert answer(store) == before_answer
        assert store.status() == before_status

    def test_apply_snapshot_needs_a_version(self) -> None:
        store = worked_store()
        before = store.snapshot
        with pytest.raises(RequestError) as caught:
            store.apply_snapshot("", [])
        assert ([v.field for v in caught.value.violations], store.snapshot) == (["version"], before)

    def test_an_object_without_a_kind(self) -> None:
        store = CacheStore()
        with pytest.raises(RequestError) as caught:
            store.apply_snapshot("v1", [cache_pb2.CacheObject()])
        assert [v.field for v in caught.value.violations] == ["objects[0]"]


class TestWritesChangeTheAnswer:
    def test_upsert_changes_the_answer(self) -> None:
        store = worked_store()
        assert select(store, isvc()).selection.runtime.name == "team-llama"
        status = store.upsert("v2", objects(runtime("team-better", entry(priority=5), namespace=NS)))
        assert (status.version, status.generation) == ("v2", 2)
        got = select(store, isvc())
        assert (got.selection.runtime.name, got.cache_version) == ("team-better", "v2")

    def test_upsert_replaces_an_object_with_the_same_key(self) -> None:
        store = worked_store()
        store.upsert("", objects(runtime("team-llama", disabled=True, namespace=NS)))
        got = select(store, isvc())
        assert got.selection.runtime.name == "vllm-llama"
        assert got.cache_version == "v1+2"

    def test_delete_changes_the_answer_and_reports_missing_keys(self) -> None:
        store = worked_store()
        keys = [
            cache_pb2.ObjectKey(kind=K.OBJECT_KIND_SERVING_RUNTIME, namespace=NS, name="team-llama"),
            cache_pb2.ObjectKey(kind=K.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="not-there"),
            cache_pb2.ObjectKey(kind=K.OBJECT_KIND_SERVING_RUNTIME, namespace="other", name="vllm-llama"),
        ]
        status, missing = store.delete("v3", keys)
        assert (status.version, list(missing)) == ("v3", keys[1:])
        assert select(store, isvc()).selection.runtime.name == "vllm-llama"

    def test_delete_the_model_gives_not_found(self) -> None:
        store = worked_store()
        store.delete(
            "v2", [cache_pb2.ObjectKey(kind=K.OBJECT_KIND_BASE_MODEL, namespace=NS, name="llama-3-2-3b-instruct")]
        )
        with pytest.raises(RequestError) as caught:
            select(store, isvc())
        assert caught.value.code == "NOT_FOUND"

    def test_a_rejected_delete_changes_nothing(self) -> None:
        store = worked_store()
        before = store.snapshot
        keys = [
            cache_pb2.ObjectKey(kind=K.OBJECT_KIND_SERVING_RUNTIME, namespace=NS, name="team-llama"),
            cache_pb2.ObjectKey(kind=K.OBJECT_KIND_SERVING_RUNTIME, name="team-llama"),  # namespace missing
            cache_pb2.ObjectKey(name="no-kind"),
        ]
        with pytest.raises(RequestError) as caught:
            store.delete("v2", keys)
        assert (caught.value.code, [v.field for v in caught.value.violations]) == (
            "INVALID_ARGUMENT",
            ["keys[1].namespace", "keys[2].kind"],
        )
        assert store.snapshot is before
        assert select(store, isvc()).selection.runtime.name == "team-llama"

    def test_upsert_and_delete_of_a_parent_change_a_named_child(self) -> None:
        profile = runtime("profile", classes=["nvidia-h100"], disabled=True, spec={"supportedModelFormats": []})
        store = load(profile, runtime("child", inherit_from="profile", disabled=False), model())
        service = isvc(runtime_name="child", accelerator_class="nvidia-a100")
        assert len(select(store, service).warnings) == 1
        store.upsert(
            "v2",
            objects(runtime("profile", classes=["nvidia-a100"], disabled=True, spec={"supportedModelFormats": []})),
        )
        assert (list(select(store, service).warnings), select(store, service).selection.runtime.name) == ([], "child")
        store.delete("v3", [cache_pb2.ObjectKey(kind=K.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="profile")])
        assert select(store, service).runtime_error == 'inherit-from parent "profile" not found (chain so far: [child])'

    def test_apply_snapshot_replaces_everything(self) -> None:
        store = worked_store()
        store.apply_snapshot("v2", objects(runtime("only-one"), model()))
        got = select(store, isvc())
        assert ([c.runtime.name for c in got.candidates], [e.runtime.name for e in got.exclusions]) == (
            ["only-one"],
            [],
        )


class TestCrdDefaults:
    YAML_RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: plain
spec:
  supportedModelFormats:
    - modelFormat:
        name: safetensors
        version: "1.0"
      modelFramework:
        name: transformers
        version: "4.45.0.dev0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
"""

    def test_a_yaml_runtime_without_weights_scores_2(self) -> None:
        got = select(load(self.YAML_RUNTIME, LLAMA_3_2_3B_BASEMODEL), isvc())
        assert (got.selection.runtime.name, got.selection.score) == ("plain", 2)

    def test_defaults_are_stored_on_ingestion(self) -> None:
        store = load(self.YAML_RUNTIME)
        stored = store.snapshot.cluster_serving_runtimes["plain"].spec.supported_model_formats[0]
        assert (
            stored.model_format.weight,
            stored.model_format.operator,
            stored.model_framework.weight,
            stored.model_framework.operator,
        ) == (1, "Equal", 1, "Equal")
        assert stored.HasField("priority") is False

    def test_the_caller_object_is_not_modified(self) -> None:
        obj = cache_object(runtime("plain"))
        CacheStore().apply_snapshot("v1", [obj])
        assert obj.cluster_serving_runtime.spec.supported_model_formats[0].model_format.HasField("weight") is False

    def test_explicit_values_are_kept(self) -> None:
        rt = runtime(
            "rt", entry(format={"name": "safetensors", "version": "1.0.0", "weight": 3, "operator": "GreaterThan"})
        )
        store = load(rt)
        stored = store.snapshot.cluster_serving_runtimes["rt"].spec.supported_model_formats[0]
        assert (stored.model_format.weight, stored.model_format.operator) == (3, "GreaterThan")


class TestRequestErrors:
    @pytest.mark.parametrize("call", ["select", "explain"])
    def test_unavailable_before_the_first_snapshot(self, call: str) -> None:
        store = CacheStore()
        with pytest.raises(RequestError) as caught:
            (select if call == "select" else explain)(store, isvc())
        assert caught.value.code == "UNAVAILABLE"

    def test_available_after_an_empty_snapshot(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", [])
        with pytest.raises(RequestError) as caught:
            select(store, isvc())
        assert caught.value.code == "NOT_FOUND"

    @pytest.mark.parametrize("call", ["select", "explain"])
    @pytest.mark.parametrize(
        ("service", "field"),
        [
            (isvc(namespace=None), "inference_service.metadata.namespace"),
            (isvc(deployment_mode="MultiNode"), "inference_service.spec.deployment_mode"),
            (isvc(None), "inference_service.spec.model.name"),
        ],
        ids=["missing-namespace", "deployment-mode-multinode", "missing-model"],
    )
    def test_invalid_inference_services(self, call: str, service: dict, field: str) -> None:
        store = worked_store()
        with pytest.raises(RequestError) as caught:
            (select if call == "select" else explain)(store, service)
        assert caught.value.code == "INVALID_ARGUMENT"
        assert [v.field for v in caught.value.violations] == [field]

    def test_multinode_in_spec_deployment_mode_needs_the_annotation(self) -> None:
        store = worked_store()
        got = select(store, isvc(engine={"annotations": {"ome.io/deploymentMode": "MultiNode"}}))
        assert got.selection.runtime.name == "team-llama"

    def test_missing_inference_service(self) -> None:
        store = worked_store()
        with pytest.raises(RequestError) as caught:
            selection.select_runtime(store.snapshot, selector_pb2.SelectRuntimeRequest())
        assert (caught.value.code, [v.field for v in caught.value.violations]) == (
            "INVALID_ARGUMENT",
            ["inference_service"],
        )

    @pytest.mark.parametrize("call", ["select", "explain"])
    def test_unknown_model(self, call: str) -> None:
        store = worked_store()
        with pytest.raises(RequestError) as caught:
            (select if call == "select" else explain)(store, isvc("nope"))
        assert caught.value.code == "NOT_FOUND"
        if call == "select":
            assert caught.value.message == messages.model_not_found("nope", "llama-demo")
            assert caught.value.message == (
                'referenced model "nope" not found in namespace "llama-demo": ensure a BaseModel exists in this namespace '
                "or a ClusterBaseModel exists cluster-wide with this name"
            )
        else:  # explain looks the model up as --model does: the API server's error (kubectl-ome runtime.md)
            assert caught.value.message == 'clusterbasemodels.ome.io "nope" not found'

    def test_a_base_model_in_another_namespace_is_not_found(self) -> None:
        store = worked_store()
        with pytest.raises(RequestError) as caught:
            select(store, isvc(namespace="other"))
        assert caught.value.message == messages.model_not_found("llama-3-2-3b-instruct", "other")

    def test_a_base_model_wins_over_a_cluster_base_model_whatever_the_kind(self) -> None:
        store = load(runtime("rt"), model(size="3.21B"), model(namespace=None, size="500B", format=("gguf", "1")))
        service = inference_service(isvc())
        service.spec.model.kind = "ClusterBaseModel"
        got = select(store, service)
        assert (got.model.kind, got.selection.runtime.name) == ("BaseModel", "rt")


class TestInferenceServicesInTheCache:
    """InferenceServices are a cached kind, validated as the selection RPCs validate one."""

    def test_upsert_and_delete_an_inference_service(self) -> None:
        store = worked_store()
        status = store.upsert("v2", objects(isvc(name="a"), isvc(name="b", namespace="team-a")))
        counts = {K.Name(c.kind): c.count for c in status.counts}
        assert counts["OBJECT_KIND_INFERENCE_SERVICE"] == 2
        assert sorted(store.snapshot.inference_services) == [("llama-demo", "a"), ("team-a", "b")]
        key = cache_pb2.ObjectKey(kind=K.OBJECT_KIND_INFERENCE_SERVICE, namespace="team-a", name="b")
        status, missing = store.delete("v3", [key])
        assert (missing, sorted(store.snapshot.inference_services)) == ([], [("llama-demo", "a")])
        assert {K.Name(c.kind): c.count for c in status.counts}["OBJECT_KIND_INFERENCE_SERVICE"] == 1

    def test_an_inference_service_does_not_change_any_answer(self) -> None:
        store = worked_store()
        before = answer(store)
        store.upsert("v1", objects(isvc(name="cached")))
        assert answer(store) == before

    @pytest.mark.parametrize("write", ["apply_snapshot", "upsert"])
    def test_bad_inference_services_are_rejected_with_their_fields(self, write: str) -> None:
        store = worked_store()
        before = store.snapshot
        bad_policy = isvc(name="policy", spec={"acceleratorSelector": {"policy": "Fastest"}})
        with pytest.raises(RequestError) as caught:
            getattr(store, write)(
                "v2",
                objects(
                    isvc(name="ok"), isvc(name="mode", deployment_mode="MultiNode"), isvc(namespace=None), bad_policy
                ),
            )
        assert [(v.field, v.description) for v in caught.value.violations] == [
            (
                "objects[1].inference_service.spec.deployment_mode",
                'Unsupported value: "MultiNode": supported values: "OMENative", "RawDeployment"',
            ),
            ("objects[2].inference_service.metadata.namespace", "Required value"),
            (
                "objects[3].inference_service.spec.accelerator_selector.policy",
                'Unsupported value: "Fastest": supported values: "BestFit", "Cheapest", "MostCapable", "FirstAvailable"',
            ),
        ]
        assert store.snapshot is before

    def test_the_selection_rpcs_reject_the_same_fields(self) -> None:
        store = worked_store()
        with pytest.raises(RequestError) as caught:
            select(store, isvc(deployment_mode="MultiNode"))
        assert [(v.field, v.description) for v in caught.value.violations] == [
            (
                "inference_service.spec.deployment_mode",
                'Unsupported value: "MultiNode": supported values: "OMENative", "RawDeployment"',
            )
        ]
