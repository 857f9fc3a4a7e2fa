"""docs/api.md, "Errors" and "Bounds": versions never raise, bounded Kubernetes-style errors, camelCase field
paths from the proto descriptors, undecodable request bytes. Each test failed before the change."""

from __future__ import annotations

import logging

import grpc
import pytest
from google.protobuf import json_format
from google.rpc import code_pb2, error_details_pb2, status_pb2
from helpers_docs import SEED_A_FILE
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2
from ome_selector import validation as bounds
from ome_selector.cache.manifests import load_inference_service
from ome_selector.cache.store import CacheStore
from ome_selector.domain import errors
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.domain.versions import MAX_VERSION_LENGTH, parse_version
from ome_selector.rpc import lifecycle, runtimes, selection, wire
from ome_selector.rpc.servicers import rich_status
from ome_selector.server.inprocess import InProcessServer, synced_store
from ome_selector.texts import fieldpaths
from ome_selector_client import SelectorClient, SelectorError

SEED_A = load_inference_service(SEED_A_FILE)
HUGE = "1" * 5000  # over Python's 4,300-digit int-conversion limit


def _runtime(version: str) -> cache_pb2.CacheObject:
    doc = {
        "metadata": {"name": "rt"},
        "spec": {
            "supportedModelFormats": [
                {
                    "modelFormat": {"name": "safetensors", "version": version},
                    "modelFramework": {"name": "transformers"},
                    "autoSelect": True,
                }
            ]
        },
    }
    return cache_pb2.CacheObject(cluster_serving_runtime=json_format.ParseDict(doc, types_pb2.ClusterServingRuntime()))


def _bad_request(status: status_pb2.Status) -> list[tuple[str, str]]:
    bad = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad)
    return [(v.field, v.description) for v in bad.field_violations]


# --- versions ----------------------------------------------------------------------------------


@pytest.mark.parametrize("text", [HUGE, "1." + HUGE, "1.0." + HUGE, "v" + HUGE, "1.0.0-" + HUGE, "1" * 21, f"{2**64}"])
def test_parse_version_never_raises_on_long_numbers(text: str) -> None:
    assert parse_version(text) is None


def test_parse_version_keeps_the_uint64_range() -> None:
    assert parse_version(f"{2**64 - 1}.0.0") is not None
    assert parse_version(f"{2**64}.0.0") is None
    assert parse_version("1.2.3-" + "a" * (MAX_VERSION_LENGTH - 6)) is not None
    assert parse_version("1.2.3-" + "a" * (MAX_VERSION_LENGTH - 5)) is None


@pytest.mark.parametrize("write", ["apply_snapshot", "upsert"])
def test_a_huge_version_is_a_violation_and_the_cache_is_unchanged(write: str) -> None:
    store = synced_store()
    before = store.snapshot
    with pytest.raises(RequestError) as caught:
        getattr(store, write)("v2", [_runtime(HUGE)])
    assert caught.value.violations == [
        FieldViolation(
            "objects[0].cluster_serving_runtime.spec.supported_model_formats[0].model_format.version",
            f'Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters',
        )
    ]
    assert store.snapshot is before
    assert (
        fieldpaths.present(caught.value)[1][0].field
        == "objects[0].clusterServingRuntime.spec.supportedModelFormats[0].modelFormat.version"
    )


def test_a_huge_version_in_an_inline_model_spec_or_a_validated_runtime_is_invalid_argument() -> None:
    snapshot = synced_store().snapshot
    spec = types_pb2.BaseModelSpec(
        model_format=types_pb2.ModelFormat(name="safetensors", version=HUGE),
        model_framework=types_pb2.ModelFrameworkSpec(name="transformers", version=HUGE),
    )
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(SEED_A)
    with pytest.raises(RequestError) as inline:  # bounded like the cached models (bounds.MAX_VERSION_LENGTH)
        selection.select_runtime(snapshot, selector_pb2.SelectRuntimeRequest(inference_service=isvc, model_spec=spec))
    too_long = f'Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters'
    assert fieldpaths.present(inline.value)[1] == [
        FieldViolation("modelSpec.modelFormat.version", too_long),
        FieldViolation("modelSpec.modelFramework.version", too_long),
    ]
    runtime = _runtime(HUGE).cluster_serving_runtime
    with pytest.raises(RequestError) as caught:  # the webhook checks it against the cache with it
        runtimes.validate_serving_runtime(
            snapshot, selector_pb2.ValidateServingRuntimeRequest(cluster_serving_runtime=runtime)
        )
    assert fieldpaths.present(caught.value)[1] == [
        FieldViolation(
            "clusterServingRuntime.spec.supportedModelFormats[0].modelFormat.version",
            f'Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters',
        )
    ]


# --- texts and bounds --------------------------------------------------------------------------


def test_texts_are_the_api_servers() -> None:
    assert errors.quote("a" * 20000) == f'"{"a" * 64}…" (20000 characters)'
    assert errors.quote('x"\n\x1by') == '"x\\"\\n\\x1by"'
    assert (
        errors.too_long_value("a" * 20000, 63)
        == f'Invalid value: "{"a" * 64}…" (20000 characters): must be no more than 63 characters'
    )
    assert (
        errors.unsupported("MultiNode", ("OMENative", "RawDeployment"))
        == 'Unsupported value: "MultiNode": supported values: "OMENative", "RawDeployment"'
    )
    assert (
        errors.invalid_value(0, "must be greater than or equal to 1")
        == "Invalid value: 0: must be greater than or equal to 1"
    )
    assert errors.bound("é" * 600, 24) == "éé… (600 characters)"
    assert errors.bound("é" * 600, 1200) == "é" * 600


@pytest.mark.parametrize(
    "value, path, what, expected",
    [
        ("", "metadata.name", "name", "Required value"),
        (
            "a" * 254,
            "metadata.name",
            "name",
            f'Invalid value: "{"a" * 64}…" (254 characters): must be no more than 253 characters',
        ),
        (
            "a" * 64,
            "metadata.namespace",
            "namespace",
            f'Invalid value: "{"a" * 64}": must be no more than 63 characters',
        ),
        ("Bad.ns", "metadata.namespace", "namespace", 'Invalid value: "Bad.ns": ' + bounds.LABEL_RULE),
        ("a\nb", "metadata.name", "name", 'Invalid value: "a\\nb": ' + bounds.SUBDOMAIN_RULE),
    ],
)
def test_names_and_namespaces(value: str, path: str, what: str, expected: str) -> None:
    from ome_selector.validation import validate_name

    assert validate_name(value, path, what) == [FieldViolation(path, expected)]


def test_labels_annotations_and_lists_are_bounded() -> None:
    runtime = _runtime("1.0.0").cluster_serving_runtime
    runtime.metadata.labels["app"] = "x" * 64
    runtime.metadata.labels["bad key!"] = "v"
    runtime.metadata.annotations["big"] = "x" * (bounds.MAX_ANNOTATIONS_BYTES)
    runtime.spec.accelerator_requirements.accelerator_classes.extend(["gpu"] * (bounds.MAX_LIST_ITEMS + 1))
    store = CacheStore()
    with pytest.raises(RequestError) as caught:
        store.apply_snapshot("v1", [cache_pb2.CacheObject(cluster_serving_runtime=runtime)])
    assert fieldpaths.present(caught.value)[1] == [
        FieldViolation(
            "objects[0].clusterServingRuntime.metadata.labels",
            f'Invalid value: "{"x" * 64}": must be no more than 63 characters',
        ),
        FieldViolation(
            "objects[0].clusterServingRuntime.metadata.labels",
            'Invalid value: "bad key!": ' + bounds.QUALIFIED_NAME_RULE,
        ),
        FieldViolation(
            "objects[0].clusterServingRuntime.metadata.annotations", "Too long: may not be more than 262144 bytes"
        ),
        FieldViolation(
            "objects[0].clusterServingRuntime.spec.acceleratorRequirements.acceleratorClasses",
            "Too many: 1025: must have at most 1024 items",
        ),
    ]
    assert store.snapshot.generation == 0


def test_an_object_over_1_5_mib_is_refused_whole() -> None:
    runtime = _runtime("1.0.0").cluster_serving_runtime
    runtime.spec.supported_model_formats[0].model_architecture = "x" * bounds.MAX_OBJECT_BYTES
    with pytest.raises(RequestError) as caught:
        CacheStore().upsert("v1", [cache_pb2.CacheObject(cluster_serving_runtime=runtime)])
    [violation] = caught.value.violations
    assert violation.field == "objects[0].cluster_serving_runtime"
    assert violation.description.startswith("Too long: 157")
    assert violation.description.endswith(" bytes: may not be more than 1572864 bytes")


def test_rich_status_is_bounded_however_many_and_long_the_violations() -> None:
    violations = [FieldViolation(f"objects[{i}].serving_runtime.metadata.namespace", "é" * 5000) for i in range(1000)]
    status = rich_status(RequestError.invalid(violations))
    assert len(status.SerializeToString()) <= fieldpaths.MAX_STATUS_BYTES
    assert len(status.message.encode()) <= fieldpaths.MAX_MESSAGE_BYTES
    got = _bad_request(status)
    assert got[0] == ("objects[0].servingRuntime.metadata.namespace", "é" * 501 + "… (5000 characters)")
    assert got[-1] == (
        f"objects[{len(got) - 1}].servingRuntime.metadata.namespace",
        f"… and {1001 - len(got)} more violations",
    )
    assert 2 <= len(got) <= 4


def test_invalid_argument_without_violations_still_names_a_field() -> None:
    status = rich_status(RequestError("INVALID_ARGUMENT", "bad\nline"))
    assert (status.message, _bad_request(status)) == ("bad\\nline", [("request", "bad\\nline")])


# --- camelCase paths ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, expected",
    [
        ("objects[0].serving_runtime.metadata.namespace", "objects[0].servingRuntime.metadata.namespace"),
        ("inference_service.spec.engine.min_replicas", "inferenceService.spec.engine.minReplicas"),
        (
            "objects[2].accelerator_class.spec.capabilities.memory_gb",
            "objects[2].acceleratorClass.spec.capabilities.memoryGB",
        ),
        (
            "objects[0].cluster_serving_runtime.spec.accelerator_requirements.min_compute_performance_tflops",
            "objects[0].clusterServingRuntime.spec.acceleratorRequirements.minComputePerformanceTFLOPS",
        ),
        (
            "inference_service.spec.engine.annotations[ome.io/deploymentMode]",
            "inferenceService.spec.engine.annotations[ome.io/deploymentMode]",
        ),
        ("keys[3].name", "keys[3].name"),
        ("model_spec.model_format.version", "modelSpec.modelFormat.version"),
        ("request", "request"),
        ("not a path", "not a path"),
    ],
)
def test_json_path(path: str, expected: str) -> None:
    assert fieldpaths.json_path(path) == expected


def test_one_rule_one_text_in_select_and_admit() -> None:
    """`spec.deploymentMode: MultiNode`: the API server's CRD-enum text, whichever command asks."""
    snapshot = synced_store().snapshot
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(SEED_A)
    isvc.spec.deployment_mode = "MultiNode"
    with pytest.raises(RequestError) as caught:
        selection.select_runtime(snapshot, selector_pb2.SelectRuntimeRequest(inference_service=isvc))
    _, [violation] = fieldpaths.present(caught.value)
    admitted = lifecycle.admit_inference_service(
        snapshot, selector_pb2.AdmitInferenceServiceRequest(inference_service=isvc)
    )
    text = 'Unsupported value: "MultiNode": supported values: "OMENative", "RawDeployment"'
    assert violation == FieldViolation("inferenceService.spec.deploymentMode", text)
    assert admitted.denial_message == f"spec.deploymentMode: {text}"


# --- end to end --------------------------------------------------------------------------------


def test_a_20000_character_namespace_gets_invalid_argument_with_details(running_server) -> None:
    """Before: the full value twice overflowed the metadata: RESOURCE_EXHAUSTED, no details."""
    server = running_server()
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(SEED_A)
    isvc.metadata.namespace = "a" * 20000
    with SelectorClient(server.address) as client:
        with pytest.raises(SelectorError) as caught:
            client.select_runtime(isvc)
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
        expected = f'Invalid value: "{"a" * 64}…" (20000 characters): must be no more than 63 characters'
        assert caught.value.field_violations == [("inferenceService.metadata.namespace", expected)]
        assert caught.value.message == f"invalid request: inferenceService.metadata.namespace: {expected}"
        with pytest.raises(SelectorError) as caught:
            client.upsert_objects([_runtime(HUGE)])
        assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert caught.value.field_violations == [
            (
                "objects[0].clusterServingRuntime.spec.supportedModelFormats[0].modelFormat.version",
                f'Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters',
            )
        ]


# --- undecodable bytes -------------------------------------------------------------------------


def test_safe_deserializer_returns_a_marker_that_is_invalid_argument() -> None:
    decode = wire.safe_deserializer(selector_pb2.SelectRuntimeRequest)
    assert decode(SEED_A.SerializeToString()[:0]) == selector_pb2.SelectRuntimeRequest()
    marker = decode(b"\x0a\xff\xff\xff")
    assert isinstance(marker, wire.UndecodableRequest)
    with pytest.raises(RequestError) as caught:
        marker.HasField("inference_service")
    assert caught.value.violations == [
        FieldViolation("request", "Invalid value: 4 bytes: cannot be decoded as ome.selector.v1.SelectRuntimeRequest")
    ]
    assert rich_status(marker.error()).code == code_pb2.INVALID_ARGUMENT


@pytest.mark.parametrize(
    "method",
    [
        "/ome.selector.v1.SelectionService/SelectRuntime",
        "/ome.selector.v1.CacheService/ApplySnapshot",
        "/ome.selector.v1.CacheService/GetCacheStatus",
    ],
)
def test_undecodable_bytes_are_invalid_argument_without_a_traceback(
    method: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    store = synced_store()
    with InProcessServer(store) as server, grpc.insecure_channel(server.address) as channel:
        call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as caught:
            call(b"\x0a\x05\xff\xff", timeout=10)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = status_pb2.Status.FromString(dict(caught.value.trailing_metadata())["grpc-status-details-bin"])
    assert _bad_request(status) == [
        ("request", f"Invalid value: 4 bytes: cannot be decoded as ome.selector.v1.{method.rsplit('/', 1)[1]}Request")
    ]
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert store.snapshot.generation == 1


def test_hooks_for_the_request_side_bounds() -> None:
    """What api.py and store.py are asked to call (see the report): model_spec and cache versions."""
    from ome_selector.validation import validate_spec

    spec = types_pb2.BaseModelSpec(model_format=types_pb2.ModelFormat(name="safetensors", version=HUGE))
    assert validate_spec(spec, "model_spec") == [
        FieldViolation(
            "model_spec.model_format.version",
            f'Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters',
        )
    ]
    assert bounds.cache_version("v1", "version") == []
    assert bounds.cache_version("v1\nFAKE", "version") == [
        FieldViolation("version", 'Invalid value: "v1\\nFAKE": must not contain control characters')
    ]
    assert bounds.cache_version("v" * 300, "version")[0].description.endswith(
        "(300 characters): must be no more than 253 characters"
    )
