"""Loading Kubernetes manifests: the real OME catalog, load order, duplicates, bad documents."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest
from conftest import CATALOG_MODELS, CATALOG_RUNTIMES, EXAMPLE_ISVCS, EXAMPLES, OME_CLUSTER
from ome.selector.v1 import cache_pb2
from ome_selector.cache.manifest_types import ManifestError
from ome_selector.cache.manifests import load_inference_service, load_manifests, manifests_version
from ome_selector.examples import example_paths, inference_service_paths

CSR = "ClusterServingRuntime"

# The catalog's four names defined by two files each, in load order (sorted byte order of the
# path relative to runtimes/): the second file wins.
CATALOG_DUPLICATES = [
    ("srt-qwen2-5-32b-instruct", "srt/Qwen/Qwen2.5-32B-Instruct-rt.yaml", "srt/Qwen/qwen2-5-32b-instruct-rt.yaml"),
    ("srt-qwen3-embedding-0-6b", "srt/Qwen/Qwen3-Embedding-0.6B-rt.yaml", "srt/Qwen/qwen3-embedding-0-6b-rt.yaml"),
    (
        "srt-mixtral-8x7b-instruct",
        "srt/mistralai/mixtral-8x7b-instruct-v0-1-rt.yaml",
        "srt/mixtral-8x7b-instruct-rt.yaml",
    ),
    (
        "srt-llama-3-2-11b-vision-instruct",
        "srt/meta/llama-3-2-11b-vision-instruct-rt.yaml",
        "srt/unsloth/llama-3-2-11b-vision-instruct-rt.yaml",
    ),
]


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def csr_doc(name: str, priority: int = 1) -> str:
    # Eight lines (MALFORMED["yaml-syntax"] reports a line number after one of these). The CRD
    # requires modelFormat and modelFramework on every entry.
    return f"""\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata: {{name: {name}}}
spec:
  supportedModelFormats:
    - modelFormat: {{name: safetensors}}
      modelFramework: {{name: transformers}}
      priority: {priority}
"""


def kinds(result) -> Counter[str]:
    return Counter(obj.WhichOneof("object") for obj in result.objects)


# --- the real catalog --------------------------------------------------------------------------


def test_catalog_runtimes_load_with_exactly_the_four_duplicate_warnings() -> None:
    root = str(CATALOG_RUNTIMES)
    result = load_manifests([root])

    assert result.errors == []
    assert result.skipped == [f"{root}/kustomization.yaml: skipped kustomization file"]
    assert len(result.objects) == 203
    assert kinds(result) == {"cluster_serving_runtime": 203}
    assert result.inference_services == []
    assert result.warnings == [
        f"{CSR} {name} is defined in {root}/{first} and in {root}/{later}; "
        f"the definition in {root}/{later} wins (later in load order)"
        for name, first, later in CATALOG_DUPLICATES
    ]
    for name, _first, later in CATALOG_DUPLICATES:
        assert result.sources[(CSR, "", name)] == f"{root}/{later}"


def test_catalog_duplicate_keeps_the_later_definition_at_the_first_position() -> None:
    root = str(CATALOG_RUNTIMES)
    result = load_manifests([root])
    names = [obj.cluster_serving_runtime.metadata.name for obj in result.objects]

    # Expected: first-seen order over the files in sorted byte order of their relative paths.
    files = sorted((os.path.relpath(p, root) for p in CATALOG_RUNTIMES.rglob("*.yaml")), key=os.fsencode)
    first_seen: list[str] = []
    for rel in files:
        for obj in load_manifests([f"{root}/{rel}"]).objects:
            if obj.cluster_serving_runtime.metadata.name not in first_seen:
                first_seen.append(obj.cluster_serving_runtime.metadata.name)
    assert names == first_seen

    for name, _first, later in CATALOG_DUPLICATES:
        (alone_later,) = load_manifests([f"{root}/{later}"]).objects
        assert result.objects[names.index(name)] == alone_later


@pytest.mark.parametrize("folder", [CATALOG_RUNTIMES, CATALOG_MODELS, OME_CLUSTER], ids=lambda p: p.name)
def test_every_shared_manifest_file_loads_on_its_own(folder: Path) -> None:
    files = sorted(p for p in folder.rglob("*") if p.suffix in (".yaml", ".yml") and p.name != "kustomization.yaml")
    assert files
    for path in files:
        result = load_manifests([str(path)])
        assert result.errors == [], path
        assert len(result.objects) >= 1, path


def test_catalog_models_and_cluster_load_together() -> None:
    models = load_manifests([str(CATALOG_MODELS)])
    assert models.errors == [] and models.warnings == []
    assert kinds(models) == {"cluster_base_model": 207}

    result = load_manifests([str(CATALOG_RUNTIMES), str(OME_CLUSTER)])
    assert result.errors == []
    assert len(result.warnings) == 4  # the catalog's duplicates; ome-cluster redefines nothing
    assert kinds(result) == {
        "cluster_base_model": 207,
        "cluster_serving_runtime": 206,
        "accelerator_class": 4,
        "serving_runtime": 2,
        "inference_service": 8,  # cached: their outcomes are watched (docs/api.md, WatchSelections)
    }
    assert [(i.metadata.namespace, i.metadata.name) for i in result.inference_services] == [
        ("llama-demo", "llama-70b"),
        ("llama-demo", "llama-70b-h100"),
        ("llama-demo", "llama-70b-l40s"),
        ("llama-demo", "llama-70b-native"),
        ("team-a", "llama-70b-team"),
        ("team-a", "llama-70b-named-child"),
        ("demo", "qwen2-5-7b"),
        ("demo", "deepseek-v3"),
    ]
    assert result.sources[("InferenceService", "demo", "deepseek-v3")] == f"{OME_CLUSTER}/inferenceservices.yaml"
    assert result.sources[("AcceleratorClass", "", "nvidia-h100-80gb")] == f"{OME_CLUSTER}/acceleratorclasses.yaml"


def test_catalog_acceleratorclass_number_becomes_quantity_text() -> None:
    result = load_manifests([str(OME_CLUSTER / "acceleratorclasses.yaml")])
    h100 = result.objects[0].accelerator_class
    assert h100.metadata.name == "nvidia-h100-80gb"
    assert h100.spec.capabilities.memory_bandwidth_gbps == "3350"  # written as a YAML number
    assert h100.spec.capabilities.memory_gb == "80Gi"


# --- order and duplicates ----------------------------------------------------------------------


def test_folder_is_walked_in_sorted_byte_order_and_later_wins(tmp_path: Path) -> None:
    write(tmp_path / "b" / "x.yaml", csr_doc("rt", 3))
    write(tmp_path / "a.yaml", csr_doc("rt", 2))
    write(tmp_path / "B.yaml", csr_doc("rt", 1) + "---\n" + csr_doc("other"))
    write(tmp_path / "notes.txt", "not yaml: [")
    write(tmp_path / "c.yml", csr_doc("yml-runtime"))
    root = str(tmp_path)

    result = load_manifests([root])

    assert result.errors == []
    assert result.warnings == [
        f"{CSR} rt is defined in {root}/B.yaml and in {root}/a.yaml; the definition in {root}/a.yaml wins (later in load order)",
        f"{CSR} rt is defined in {root}/a.yaml and in {root}/b/x.yaml; the definition in {root}/b/x.yaml wins (later in load order)",
    ]
    assert [o.cluster_serving_runtime.metadata.name for o in result.objects] == ["rt", "other", "yml-runtime"]
    assert result.objects[0].cluster_serving_runtime.spec.supported_model_formats[0].priority == 3
    assert result.sources[(CSR, "", "rt")] == f"{root}/b/x.yaml"
    assert result.sources[(CSR, "", "other")] == f"{root}/B.yaml"


def test_paths_load_in_the_order_given(tmp_path: Path) -> None:
    one = write(tmp_path / "one.yaml", csr_doc("rt", 1))
    two = write(tmp_path / "two.yaml", csr_doc("rt", 2))

    result = load_manifests([two, one])

    assert result.warnings == [
        f"{CSR} rt is defined in {two} and in {one}; the definition in {one} wins (later in load order)"
    ]
    assert result.objects[0].cluster_serving_runtime.spec.supported_model_formats[0].priority == 1


def test_duplicate_within_one_file(tmp_path: Path) -> None:
    file = write(tmp_path / "dup.yaml", csr_doc("rt", 1) + "---\n" + csr_doc("x") + "---\n" + csr_doc("rt", 4))
    result = load_manifests([file])
    assert result.warnings == [
        f"{CSR} rt is defined twice in {file} (documents 0 and 2); the definition in document 2 wins (later in load order)"
    ]
    assert [o.cluster_serving_runtime.spec.supported_model_formats[0].priority for o in result.objects] == [4, 1]


def test_same_name_in_other_namespace_or_kind_is_not_a_duplicate(tmp_path: Path) -> None:
    file = write(
        tmp_path / "m.yaml",
        """\
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata: {name: rt, namespace: a}
---
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata: {name: rt, namespace: b}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata: {name: rt}
""",
    )
    result = load_manifests([file])
    assert result.warnings == [] and result.errors == []
    assert sorted(result.sources) == [(CSR, "", "rt"), ("ServingRuntime", "a", "rt"), ("ServingRuntime", "b", "rt")]
    assert load_manifests([file, file]).warnings == [
        f"ServingRuntime a/rt is defined in {file} and in {file}; the definition in {file} wins (later in load order)",
        f"ServingRuntime b/rt is defined in {file} and in {file}; the definition in {file} wins (later in load order)",
        f"{CSR} rt is defined in {file} and in {file}; the definition in {file} wins (later in load order)",
    ]


# --- skipped and empty documents ---------------------------------------------------------------


def test_other_kinds_kustomization_and_empty_documents(tmp_path: Path) -> None:
    file = write(
        tmp_path / "mixed.yaml",
        """\
---
apiVersion: v1
kind: ConfigMap
metadata: {name: cm}
---
---
apiVersion: ome.io/v1alpha1
kind: ClusterServingRuntime
metadata: {name: old}
---
apiVersion: ome.io/v1beta1
kind: FineTunedWeight
metadata: {name: ft}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata: {name: kept}
---
# only a comment
""",
    )
    kustomization = write(tmp_path / "kustomization.yaml", "resources: [mixed.yaml]\n")

    result = load_manifests([str(tmp_path)])

    assert result.errors == [] and result.warnings == []
    assert result.skipped == [
        f"{kustomization}: skipped kustomization file",
        f"{file}: document 0: skipped ConfigMap cm (apiVersion v1)",
        f"{file}: document 2: skipped ClusterServingRuntime old (apiVersion ome.io/v1alpha1)",
        f"{file}: document 3: skipped FineTunedWeight ft (apiVersion ome.io/v1beta1)",
    ]
    assert [o.cluster_serving_runtime.metadata.name for o in result.objects] == ["kept"]


def test_missing_path_and_empty_folder(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.yaml")
    empty = tmp_path / "empty"
    empty.mkdir()
    result = load_manifests([missing, str(empty)])
    assert result.errors == [f"{missing}: no such file or directory"]
    assert result.warnings == [f"{empty}: no .yaml or .yml files found"]
    assert result.objects == []


# --- malformed documents -----------------------------------------------------------------------

GOOD = csr_doc("good-runtime") + "---\n"

MALFORMED = {
    "yaml-syntax": (
        GOOD + "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: x\n",
        "document 1: invalid YAML: while parsing a flow mapping: did not find expected ',' or '}' (line 13, column 1)",
    ),
    "not-a-mapping": (GOOD + "- just\n- a list\n", "document 1: expected a mapping (a Kubernetes object), got a list"),
    "scalar": (GOOD + "hello\n", "document 1: expected a mapping (a Kubernetes object), got a string"),
    "wrong-type": (
        GOOD + csr_doc("bad").replace("priority: 1", "priority: high"),
        'document 1: invalid ClusterServingRuntime bad: spec.supportedModelFormats[0].priority: Invalid value: "high": must be of type integer',
    ),
    "size-is-not-int-or-string": (
        GOOD
        + "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: bad}\nspec:\n  modelSizeRange: {max: 70}\n",
        "document 1: invalid ClusterServingRuntime bad: spec.modelSizeRange.max: Invalid value: 70: must be of type string",
    ),
    "invalid-name": (
        GOOD + csr_doc("Bad_Name"),
        'document 1: invalid ClusterServingRuntime Bad_Name: metadata.name: Invalid value: "Bad_Name": '
        "a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character",
    ),
    "namespaced-without-namespace": (
        GOOD + "apiVersion: ome.io/v1beta1\nkind: BaseModel\nmetadata: {name: m}\n",
        "document 1: invalid BaseModel m: metadata.namespace: Required value",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_document_reports_file_and_index_and_loads_the_rest_of_the_file(tmp_path: Path, case: str) -> None:
    text, problem = MALFORMED[case]
    other = write(tmp_path / "a-other.yaml", csr_doc("from-other-file"))
    bad = write(tmp_path / "b-bad.yaml", text)

    result = load_manifests([str(tmp_path)])

    assert result.errors == [f"{bad}: {problem}"]
    assert result.rejected_count == 1
    assert [o.cluster_serving_runtime.metadata.name for o in result.objects] == ["from-other-file", "good-runtime"]
    assert result.sources == {(CSR, "", "from-other-file"): other, (CSR, "", "good-runtime"): bad}


def test_every_bad_document_of_a_file_is_reported(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.yaml", "[1]\n---\n" + csr_doc("ok") + "---\n" + csr_doc("Nope"))
    assert load_manifests([bad]).errors == [
        f"{bad}: document 0: expected a mapping (a Kubernetes object), got a list",
        f'{bad}: document 2: invalid ClusterServingRuntime Nope: metadata.name: Invalid value: "Nope": '
        "a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character",
    ]


def test_unreadable_file(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(b"name: \xff\n")
    result = load_manifests([str(bad)])
    assert result.errors == [f"{bad}: document 0: cannot read: not UTF-8: byte 0xff (line 1, column 7)"]


def test_a_byte_that_is_not_utf8_loses_only_its_document(tmp_path: Path) -> None:
    bad = tmp_path / "mixed.yaml"
    bad.write_bytes((csr_doc("first") + "---\nname: caf\xe9\n---\n" + csr_doc("third")).encode("latin-1"))
    result = load_manifests([str(bad)])
    lines = (csr_doc("first") + "---\n").count("\n")
    assert result.errors == [f"{bad}: document 1: cannot read: not UTF-8: byte 0xe9 (line {lines + 1}, column 10)"]
    assert [o.cluster_serving_runtime.metadata.name for o in result.objects] == ["first", "third"]
    assert (result.rejected_count, result.path_errors) == (1, [])


# --- field conversion --------------------------------------------------------------------------


def test_int_or_string_quantities_become_text(tmp_path: Path) -> None:
    file = write(
        tmp_path / "ac.yaml",
        """\
apiVersion: ome.io/v1beta1
kind: AcceleratorClass
metadata: {name: gpu}
spec:
  capabilities:
    memoryGB: 80
    memoryBandwidthGBps: 3350.5
    performance: {fp16Tflops: 989}
  resources:
    - {name: nvidia.com/gpu, quantity: 1}
    - {name: other, quantity: "2"}
    - {name: third}
  cost: {perHour: 4.5, spotPerHour: 2, perMillionTokens: "0.30", tier: low}
""",
    )
    result = load_manifests([file])
    assert result.errors == []
    spec = result.objects[0].accelerator_class.spec
    assert spec.capabilities.memory_gb == "80"
    assert spec.capabilities.memory_bandwidth_gbps == "3350.5"
    assert spec.capabilities.performance.fp16_tflops == 989
    assert [(r.name, r.quantity, r.HasField("quantity")) for r in spec.resources] == [
        ("nvidia.com/gpu", "1", True),
        ("other", "2", True),
        ("third", "", False),
    ]
    assert (spec.cost.per_hour, spec.cost.spot_per_hour, spec.cost.per_million_tokens, spec.cost.tier) == (
        "4.5",
        "2",
        "0.30",
        "low",
    )


def test_booleans_are_not_quantities(tmp_path: Path) -> None:
    file = write(
        tmp_path / "ac.yaml",
        "apiVersion: ome.io/v1beta1\nkind: AcceleratorClass\nmetadata: {name: gpu}\nspec:\n  cost: {perHour: true}\n",
    )
    assert load_manifests([file]).errors == [
        f"{file}: document 0: invalid AcceleratorClass gpu: spec.cost.perHour: Invalid value: true: must be of type string"
    ]


def test_creation_timestamp_stays_rfc3339_text(tmp_path: Path) -> None:
    file = write(
        tmp_path / "ts.yaml",
        """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: with-time
  creationTimestamp: 2024-05-01T10:00:00Z
  annotations: {built: 2024-05-01}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: null-time
  creationTimestamp: null
""",
    )
    result = load_manifests([file])
    assert result.errors == []
    with_time, null_time = (o.cluster_serving_runtime.metadata for o in result.objects)
    assert with_time.creation_timestamp.ToJsonString() == "2024-05-01T10:00:00Z"
    assert with_time.annotations["built"] == "2024-05-01"
    assert not null_time.HasField("creation_timestamp")


def test_unknown_fields_are_ignored(tmp_path: Path) -> None:
    file = write(
        tmp_path / "rt.yaml",
        csr_doc("rt")
        + "  engineConfig:\n    tolerations: [{key: a}]\n    runner: {name: c, image: i, ports: [{containerPort: 8080}]}\nstatus: {ready: true}\n",
    )
    result = load_manifests([file])
    assert result.errors == []
    assert result.objects[0].cluster_serving_runtime.spec.engine_config.runner.image == "i"


# --- InferenceServices -------------------------------------------------------------------------


def test_load_inference_service_takes_the_first_one(tmp_path: Path) -> None:
    file = write(
        tmp_path / "isvc.yaml",
        csr_doc("rt")
        + """\
---
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: first, namespace: ns}
spec:
  model: {name: m}
  deploymentMode: OMENative
---
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: second, namespace: ns}
""",
    )
    isvc = load_inference_service(file)
    assert (isvc.metadata.name, isvc.spec.model.name, isvc.spec.deployment_mode) == ("first", "m", "OMENative")


def test_inference_services_are_cached_and_judged_like_other_objects(tmp_path: Path) -> None:
    """load_manifests loads InferenceServices as cache objects; a bad one is rejected on
    its own, with the field the selection RPCs would name (camelCase), and the rest load."""
    file = write(
        tmp_path / "isvcs.yaml",
        """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: good, namespace: ns}
spec: {model: {name: m}}
---
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: multi, namespace: ns}
spec: {model: {name: m}, deploymentMode: MultiNode}
---
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata: {name: nowhere}
""",
    )
    result = load_manifests([file])
    assert [o.inference_service.metadata.name for o in result.objects] == ["good"]
    assert [(i.metadata.namespace, i.metadata.name) for i in result.inference_services] == [("ns", "good")]
    assert result.errors == [
        f'{file}: document 1: invalid InferenceService multi: spec.deploymentMode: Unsupported value: "MultiNode": supported values: "OMENative", "RawDeployment"',
        f"{file}: document 2: invalid InferenceService nowhere: metadata.namespace: Required value",
    ]
    # A query file is not judged as a cache object: the answer's validation names the field.
    assert load_inference_service(file).metadata.name == "good"


def test_load_inference_service_errors(tmp_path: Path) -> None:
    none = write(tmp_path / "none.yaml", csr_doc("rt"))
    with pytest.raises(ManifestError) as excinfo:
        load_inference_service(none)
    assert str(excinfo.value) == f"{none}: no InferenceService (ome.io/v1beta1) found"

    bad = write(
        tmp_path / "bad.yaml", "apiVersion: ome.io/v1beta1\nkind: InferenceService\nspec: {deploymentMode: [a]}\n"
    )
    with pytest.raises(ManifestError) as excinfo:
        load_inference_service(bad)
    assert (
        str(excinfo.value)
        == f'{bad}: document 0: invalid InferenceService <no name>: spec.deploymentMode: Invalid value: "[a]": must be of type string'
    )

    missing = str(tmp_path / "missing.yaml")
    with pytest.raises(ManifestError) as excinfo:
        load_inference_service(missing)
    assert str(excinfo.value) == f"{missing}: cannot read: No such file or directory"

    with pytest.raises(ManifestError) as excinfo:
        load_inference_service(str(tmp_path))
    assert str(excinfo.value) == f"{tmp_path}: is a directory, expected an InferenceService file"


# --- the embedded examples ---------------------------------------------------------------------


def test_example_catalog_files() -> None:
    assert [Path(p).name for p in example_paths()] == [
        "accelerator-classes.yaml",
        "llama-3-3-70b-hopper.yaml",
        "models.yaml",
        "scoring-worked-example.yaml",
        "srt-llama-3-3-70b-instruct-multinode.yaml",
        "srt-llama-3-3-70b-instruct.yaml",
    ]
    assert all(Path(p).parent == EXAMPLES for p in example_paths())
    assert [Path(p).name for p in inference_service_paths()] == [
        "llama-3-2-3b.yaml",
        "llama-3-3-70b-a100.yaml",
        "llama-3-3-70b-named.yaml",
        "llama-3-3-70b.yaml",
        "llama-3-70b.yaml",
    ]
    assert all(Path(p).parent == EXAMPLE_ISVCS for p in inference_service_paths())


def test_example_catalog_loads_cleanly() -> None:
    result = load_manifests(example_paths())
    assert (result.errors, result.warnings, result.skipped, result.inference_services) == ([], [], [], [])
    assert sorted(result.sources) == [
        ("AcceleratorClass", "", "nvidia-a100"),
        ("AcceleratorClass", "", "nvidia-h100"),
        ("AcceleratorClass", "", "nvidia-h200"),
        ("BaseModel", "llama-demo", "llama-3-2-3b-instruct"),
        ("ClusterBaseModel", "", "llama-3-3-70b-instruct"),
        (CSR, "", "llama-3-3-70b-hopper"),
        (CSR, "", "srt-llama-3-3-70b-instruct"),
        (CSR, "", "srt-llama-3-3-70b-instruct-multinode"),
        (CSR, "", "srt-llama-large"),
        (CSR, "", "srt-llama-small"),
        (CSR, "", "vllm-llama"),
        ("ServingRuntime", "llama-demo", "team-llama"),
    ]
    h100 = next(o.accelerator_class for o in result.objects if o.accelerator_class.metadata.name == "nvidia-h100")
    assert h100.spec.capabilities.memory_bandwidth_gbps == "3350"
    assert h100.spec.resources[0].quantity == "1"
    model = next(o.cluster_base_model for o in result.objects if o.HasField("cluster_base_model")).spec
    assert (
        model.model_format.name,
        model.model_format.version,
        model.model_framework.version,
        model.model_parameter_size,
    ) == (
        "safetensors",
        "1.0.0",
        "4.47.0.dev0",
        "70B",
    )


def test_example_inference_services() -> None:
    loaded = {Path(p).name: load_inference_service(p) for p in inference_service_paths()}
    assert {name: (i.metadata.namespace, i.metadata.name, i.spec.model.name) for name, i in loaded.items()} == {
        "llama-3-2-3b.yaml": ("llama-demo", "llama-3-2-3b", "llama-3-2-3b-instruct"),
        "llama-3-3-70b-a100.yaml": ("llama-demo", "llama-3-3-70b-a100", "llama-3-3-70b-instruct"),
        "llama-3-3-70b-named.yaml": ("llama-demo", "llama-3-3-70b-named", "llama-3-3-70b-instruct"),
        "llama-3-3-70b.yaml": ("llama-demo", "llama-3-3-70b", "llama-3-3-70b-instruct"),
        "llama-3-70b.yaml": ("llama-demo", "llama-3-70b", "llama-3-3-70b-instruct"),
    }
    assert loaded["llama-3-3-70b.yaml"].spec.accelerator_selector.accelerator_class == "nvidia-h100"
    assert loaded["llama-3-70b.yaml"].spec.deployment_mode == "OMENative"


# --- version -----------------------------------------------------------------------------------


def test_manifests_version_follows_content_not_formatting(tmp_path: Path) -> None:
    a = load_manifests([write(tmp_path / "a.yaml", csr_doc("rt"))]).objects
    b = load_manifests(
        [write(tmp_path / "b.yaml", "# comment\n" + csr_doc("rt").replace("  name: rt", "  name: 'rt'"))]
    ).objects
    c = load_manifests([write(tmp_path / "c.yaml", csr_doc("rt", 2))]).objects
    assert manifests_version(a) == manifests_version(b)
    assert manifests_version(a) != manifests_version(c)
    assert manifests_version(a).startswith("manifests-") and len(manifests_version(a)) == len("manifests-") + 12
    assert manifests_version([]) == "manifests-e3b0c44298fc"  # sha256 of nothing


def test_manifests_version_of_the_examples_is_stable() -> None:
    objects = load_manifests(example_paths()).objects
    assert manifests_version(objects) == manifests_version(load_manifests(example_paths()).objects)
    assert isinstance(objects[0], cache_pb2.CacheObject)
