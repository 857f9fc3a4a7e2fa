"""Exact field paths, texts and defaults of ``ingest`` that no other test pinned down (found by
``scripts/mutation.py``): the object-kind violation's path, the name and namespace length limits,
the per-entry CRD requirements and the CRD defaults (ome-selection-facts.md 1.2, 1.3, 1.8)."""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2
from ome_selector import validation
from ome_selector.cache import ingest
from ome_selector.domain.errors import FieldViolation

FORMATS = {"modelFormat": {"name": "safetensors"}, "modelFramework": {"name": "transformers"}}


def sr(name: str = "rt", namespace: str = "llama-demo", **spec: Any) -> cache_pb2.CacheObject:
    message = json_format.ParseDict(
        {"metadata": {"name": name, "namespace": namespace}, "spec": spec}, types_pb2.ServingRuntime()
    )
    return cache_pb2.CacheObject(serving_runtime=message)


def csr(doc: dict[str, Any]) -> cache_pb2.CacheObject:
    return cache_pb2.CacheObject(cluster_serving_runtime=json_format.ParseDict(doc, types_pb2.ClusterServingRuntime()))


# The API server's texts (errors.py, bounds.py).
LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lowercase alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
NS64 = "n" * 64
NAME254 = "a" * 254

VALIDATE_CASES = [
    pytest.param(
        cache_pb2.CacheObject(),
        "",
        [FieldViolation("object", "exactly one object kind must be set")],
        id="no kind, no prefix",
    ),
    pytest.param(
        cache_pb2.CacheObject(),
        "objects[3].",
        [FieldViolation("objects[3]", "exactly one object kind must be set")],
        id="no kind, the prefix without its dot",
    ),
    pytest.param(sr(namespace="n" * 63), "", [], id="a 63-character namespace is valid"),
    pytest.param(
        sr(namespace=NS64),
        "objects[0].",
        [
            FieldViolation(
                "objects[0].serving_runtime.metadata.namespace",
                f'Invalid value: "{NS64}": must be no more than 63 characters',
            )
        ],
        id="a 64-character namespace is not",
    ),
    pytest.param(
        sr(namespace="Llama"),
        "",
        [FieldViolation("serving_runtime.metadata.namespace", f'Invalid value: "Llama": {LABEL_RULE}')],
        id="a namespace is a DNS label",
    ),
    pytest.param(
        sr(namespace=""),
        "",
        [FieldViolation("serving_runtime.metadata.namespace", "Required value")],
        id="namespace required",
    ),
    pytest.param(sr(name="a" * 253), "", [], id="a 253-character name is valid"),
    pytest.param(
        sr(name=NAME254),
        "",
        [
            FieldViolation(
                "serving_runtime.metadata.name",
                f'Invalid value: "{"a" * 64}…" (254 characters): must be no more than 253 characters',
            )
        ],
        id="a 254-character name is not",
    ),
    pytest.param(sr(name="a.b-c"), "", [], id="dots and dashes are valid in a name"),
    pytest.param(
        sr(name=""), "", [FieldViolation("serving_runtime.metadata.name", "Required value")], id="name required"
    ),
    pytest.param(
        csr({"metadata": {"name": "rt", "namespace": "ns"}}),
        "",
        [
            FieldViolation(
                "cluster_serving_runtime.metadata.namespace",
                "Forbidden: ClusterServingRuntime is cluster-scoped and takes no namespace",
            )
        ],
        id="a cluster-scoped kind takes no namespace",
    ),
    pytest.param(
        csr({"kind": "ServingRuntime", "apiVersion": "ome.io/v1", "metadata": {"name": "rt"}}),
        "",
        [
            FieldViolation(
                "cluster_serving_runtime.kind",
                'Unsupported value: "ServingRuntime": supported values: "ClusterServingRuntime"',
            ),
            FieldViolation(
                "cluster_serving_runtime.api_version",
                'Unsupported value: "ome.io/v1": supported values: "ome.io/v1beta1"',
            ),
        ],
        id="kind and apiVersion",
    ),
    pytest.param(
        csr({"kind": "ClusterServingRuntime", "apiVersion": "ome.io/v1beta1", "metadata": {"name": "rt"}}),
        "",
        [],
        id="the right kind and apiVersion",
    ),
    pytest.param(
        sr(supportedModelFormats=[dict(FORMATS, priority=1), dict(FORMATS, priority=0)]),
        "",
        [
            FieldViolation(
                "serving_runtime.spec.supported_model_formats[1].priority",
                "Invalid value: 0: must be greater than or equal to 1",
            )
        ],
        id="priority 1 is the minimum (CRD minimum 1)",
    ),
    pytest.param(
        sr(supportedModelFormats=[{}]),
        "",
        [
            FieldViolation("serving_runtime.spec.supported_model_formats[0].model_format", "Required value"),
            FieldViolation("serving_runtime.spec.supported_model_formats[0].model_framework", "Required value"),
        ],
        id="modelFormat and modelFramework are required",
    ),
    pytest.param(
        sr(supportedModelFormats=[FORMATS, {"modelFormat": {"version": "1"}, "modelFramework": {"version": "1"}}]),
        "",
        [
            FieldViolation("serving_runtime.spec.supported_model_formats[1].model_format.name", "Required value"),
            FieldViolation("serving_runtime.spec.supported_model_formats[1].model_framework.name", "Required value"),
        ],
        id="each with a name",
    ),
]


@pytest.mark.parametrize(("obj", "prefix", "want"), VALIDATE_CASES)
def test_validate_object(obj: cache_pb2.CacheObject, prefix: str, want: list[FieldViolation]) -> None:
    assert validation.validate_object(obj, prefix) == want


def test_base_models_take_a_namespace_and_cluster_base_models_none() -> None:
    bm = cache_pb2.CacheObject(base_model=json_format.ParseDict({"metadata": {"name": "m"}}, types_pb2.BaseModel()))
    cbm = cache_pb2.CacheObject(
        cluster_base_model=json_format.ParseDict(
            {"metadata": {"name": "m", "namespace": "x"}}, types_pb2.ClusterBaseModel()
        )
    )
    ac = cache_pb2.CacheObject(
        accelerator_class=json_format.ParseDict({"metadata": {"name": "nvidia-h100"}}, types_pb2.AcceleratorClass())
    )
    assert validation.validate_object(bm) == [FieldViolation("base_model.metadata.namespace", "Required value")]
    assert validation.validate_object(cbm) == [
        FieldViolation(
            "cluster_base_model.metadata.namespace",
            "Forbidden: ClusterBaseModel is cluster-scoped and takes no namespace",
        )
    ]
    assert validation.validate_object(ac) == []
    assert validation.object_key(ac) == ("AcceleratorClass", "", "nvidia-h100")
    assert validation.object_key(cbm) == ("ClusterBaseModel", "", "m")
    assert validation.object_key(sr()) == ("ServingRuntime", "llama-demo", "rt")


def test_crd_defaults() -> None:
    # facts 1.3: operator defaults to Equal and weight to 1; an explicit weight 0 survives.
    runtime = sr(
        supportedModelFormats=[
            {
                "modelFormat": {"name": "safetensors", "weight": 0},
                "modelFramework": {"name": "transformers", "operator": "GreaterThan"},
            }
        ]
    )
    entry = ingest.apply_defaults(runtime).serving_runtime.spec.supported_model_formats[0]
    assert (entry.model_format.operator, entry.model_format.weight) == ("Equal", 0)
    assert (entry.model_framework.operator, entry.model_framework.weight) == ("GreaterThan", 1)
    model = cache_pb2.CacheObject(
        cluster_base_model=json_format.ParseDict(
            {
                "metadata": {"name": "m"},
                "spec": {
                    "modelFormat": {"name": "safetensors"},
                    "modelFramework": {"name": "transformers", "weight": 7},
                },
            },
            types_pb2.ClusterBaseModel(),
        )
    )
    spec = ingest.apply_defaults(model).cluster_base_model.spec
    assert (
        spec.model_format.operator,
        spec.model_format.weight,
        spec.model_framework.operator,
        spec.model_framework.weight,
    ) == ("Equal", 1, "Equal", 7)
    # facts 1.8: an AcceleratorClass resource quantity defaults to "1".
    ac = cache_pb2.CacheObject(
        accelerator_class=json_format.ParseDict(
            {
                "metadata": {"name": "a"},
                "spec": {"resources": [{"name": "nvidia.com/gpu"}, {"name": "x", "quantity": "2"}]},
            },
            types_pb2.AcceleratorClass(),
        )
    )
    resources = ingest.apply_defaults(ac).accelerator_class.spec.resources
    assert [(r.name, r.quantity) for r in resources] == [("nvidia.com/gpu", "1"), ("x", "2")]
    # The input is not changed.
    assert not runtime.serving_runtime.spec.supported_model_formats[0].model_format.HasField("operator")


def test_model_label_and_compiled_model_fields() -> None:
    # TS Step 2 / facts 3.10: mt:<format>[:<version>][:<arch>][:<quant>][:<framework>[:<version>]].
    spec = json_format.ParseDict(
        {
            "modelFormat": {"name": "safetensors", "version": "1.0.0"},
            "modelArchitecture": "Qwen2ForCausalLM",
            "quantization": "fp8",
            "modelFramework": {"name": "transformers", "version": "4.40.1"},
            "modelParameterSize": "7.6B",
            "diffusionPipeline": {"className": "X"},
        },
        types_pb2.BaseModelSpec(),
    )
    model = ingest.compile_model("ClusterBaseModel", "", "qwen2-5-7b", spec)
    assert model.label == "mt:safetensors:1.0.0:Qwen2ForCausalLM:fp8:transformers:4.40.1"
    assert (model.architecture, model.quantization, model.size_text, model.size) == (
        "Qwen2ForCausalLM",
        "fp8",
        "7.6B",
        7.6e9,
    )
    assert model.model_framework is not None and (model.model_framework.name, model.model_framework.version) == (
        "transformers",
        "4.40.1",
    )
    assert model.pipeline is not None and model.pipeline.class_name == "X"
    bare = ingest.compile_model("BaseModel", "ns", "m", types_pb2.BaseModelSpec())
    assert (
        bare.label,
        bare.model_framework,
        bare.architecture,
        bare.quantization,
        bare.size_text,
        bare.size,
        bare.pipeline,
    ) == (
        "mt:",
        None,
        None,
        None,
        None,
        None,
        None,
    )


def test_compiled_entry_fields() -> None:
    spec = json_format.ParseDict(
        {
            "supportedModelFormats": [
                dict(FORMATS, modelArchitecture="A", quantization="fp8", autoSelect=False, priority=3)
            ]
        },
        types_pb2.ServingRuntimeSpec(),
    )
    (entry,) = ingest.compile_spec(spec).entries
    assert entry.model_format is not None and entry.model_format.name == "safetensors"
    assert entry.model_framework is not None and entry.model_framework.name == "transformers"
    assert (entry.architecture, entry.quantization, entry.auto_select, entry.priority, entry.pipeline) == (
        "A",
        "fp8",
        False,
        3,
        None,
    )


# ---- the bounds walk (bounds.py: at most MAX_LIST_ITEMS (1,024) items in a list or map of a
# spec, versions of at most 128 characters, at most MAX_VIOLATIONS_PER_OBJECT (16) bounds
# violations per object; metadata labels and annotations are bounded by their own rules)

TOO_MANY = "Too many: 1025: must have at most 1024 items"
VERSION_129 = "1" * 129
TOO_LONG_VERSION = f'Invalid value: "{"1" * 64}…" (129 characters): must be no more than 128 characters'


def _labels(count: int) -> dict[str, str]:
    return {f"k{i}": "v" for i in range(count)}


def _formats(version: str) -> dict[str, Any]:
    return {"modelFormat": {"name": "safetensors", "version": version}, "modelFramework": {"name": "transformers"}}


BOUNDS_CASES = [
    pytest.param(sr(engineConfig={"labels": _labels(1024)}), [], id="1024 component labels"),
    pytest.param(
        sr(engineConfig={"labels": _labels(1025)}),
        [FieldViolation("serving_runtime.spec.engine_config.labels", TOO_MANY)],
        id="1025 component labels (a map outside metadata)",
    ),
    pytest.param(
        sr(decoderConfig={"annotations": _labels(1025)}),
        [FieldViolation("serving_runtime.spec.decoder_config.annotations", TOO_MANY)],
        id="1025 component annotations",
    ),
    pytest.param(
        cache_pb2.CacheObject(
            serving_runtime=json_format.ParseDict(
                {"metadata": {"name": "rt", "namespace": "ns", "labels": _labels(1025)}}, types_pb2.ServingRuntime()
            )
        ),
        [],
        id="1025 metadata labels: bounded by the label rules only",
    ),
    pytest.param(sr(acceleratorRequirements={"acceleratorClasses": ["gpu"] * 1024}), [], id="1024 items in a list"),
    pytest.param(
        sr(acceleratorRequirements={"acceleratorClasses": ["gpu"] * 1025}),
        [FieldViolation("serving_runtime.spec.accelerator_requirements.accelerator_classes", TOO_MANY)],
        id="1025 items in a list",
    ),
    pytest.param(sr(supportedModelFormats=[_formats("1" * 128)]), [], id="a 128-character version"),
    pytest.param(
        sr(supportedModelFormats=[_formats(VERSION_129)]),
        [FieldViolation("serving_runtime.spec.supported_model_formats[0].model_format.version", TOO_LONG_VERSION)],
        id="a 129-character version",
    ),
    pytest.param(
        sr(supportedModelFormats=[_formats(VERSION_129)] * 20),
        [
            FieldViolation(f"serving_runtime.spec.supported_model_formats[{i}].model_format.version", TOO_LONG_VERSION)
            for i in range(16)
        ],
        id="20 long versions: the first 16 are reported",
    ),
]


@pytest.mark.parametrize(("obj", "want"), BOUNDS_CASES)
def test_bounds_walk(obj: cache_pb2.CacheObject, want: list[FieldViolation]) -> None:
    assert validation.validate_object(obj) == want


# ---- the intern tables are bounded (ingest._spec: 50,000 specs; ingest._format_id: 200,000 keys);
# a new entry when a table is full starts it afresh


@pytest.fixture
def saved_tables() -> Any:
    specs, format_ids = dict(ingest._SPECS), dict(ingest._FORMAT_IDS)
    yield
    ingest._SPECS.clear()
    ingest._SPECS.update(specs)
    ingest._FORMAT_IDS.clear()
    ingest._FORMAT_IDS.update(format_ids)


def _compile(version: str) -> Any:
    spec = json_format.ParseDict({"supportedModelFormats": [_formats(version)]}, types_pb2.ServingRuntimeSpec())
    return ingest.compile_spec(spec)


@pytest.mark.usefixtures("saved_tables")
def test_the_spec_table_holds_50000_specs() -> None:
    padding = _compile("9.9.9").entries[0].model_format
    ingest._SPECS.clear()
    ingest._SPECS.update({("padding", str(i), None, 1): padding for i in range(49_998)})
    first = _compile("1.0.1").entries[0]  # a new format and the framework: 50,000 specs
    assert len(ingest._SPECS) == 50_000
    assert _compile("1.0.1").entries[0].model_format is first.model_format  # shared, not parsed again
    _compile("1.0.2")  # one more: the table starts afresh with it (then the framework joins again)
    assert sorted(ingest._SPECS) == [("safetensors", "1.0.2", None, 1), ("transformers", None, None, 1)]


@pytest.mark.usefixtures("saved_tables")
def test_the_format_id_table_holds_200000_keys() -> None:
    ingest._FORMAT_IDS.clear()
    ingest._FORMAT_IDS.update({("padding", i): i for i in range(199_999)})
    first = _compile("2.0.1").format_id  # the 200,000th key
    assert len(ingest._FORMAT_IDS) == 200_000
    assert _compile("2.0.1").format_id == first  # equal entries, the same id
    second = _compile("2.0.2").format_id  # one more: the table starts afresh with it
    assert len(ingest._FORMAT_IDS) == 1
    assert second == first + 1  # ids count up by one, never reused


def test_equal_pipelines_share_a_format_id_whatever_the_order_of_their_components() -> None:
    # ingest._format_id: an id for what the model-format check reads of the entries, so equal
    # entries share it (caches.FORMAT_FAILURES); additionalComponents is a map, and its order as
    # written must not matter.
    keys = [f"component-{i}" for i in range(20)]

    def compiled(order: list[str]) -> Any:
        pipeline = {"additionalComponents": {k: {"library": "diffusers"} for k in order}}
        entry = dict(_formats("1.0.0"), diffusionPipeline=pipeline)
        return ingest.compile_spec(
            json_format.ParseDict({"supportedModelFormats": [entry]}, types_pb2.ServingRuntimeSpec())
        )

    assert compiled(keys).format_id == compiled(list(reversed(keys))).format_id


def test_equal_model_specs_share_a_cache_key_whatever_the_order_of_their_maps() -> None:
    # domain.Model.cache_key keys the fit caches (caches.py: "keyed by content"): equal specs get
    # the same key, whatever the order their map entries were written in.
    keys = [f"component-{i}" for i in range(20)]

    def compiled(order: list[str]) -> Any:
        spec = {
            "modelFormat": {"name": "safetensors"},
            "diffusionPipeline": {"additionalComponents": {k: {"library": "diffusers"} for k in order}},
        }
        return ingest.compile_model("ClusterBaseModel", "", "m", json_format.ParseDict(spec, types_pb2.BaseModelSpec()))

    assert compiled(keys).cache_key == compiled(list(reversed(keys))).cache_key
