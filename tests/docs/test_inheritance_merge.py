"""runtime-inheritance.md, "What merges": each row of the table and each of the three things to
watch, on the whole runtime spec (env, resources, volumes, probes, ports ...), read back through
GetRuntimeStatus's merged spec and GetEffectiveRuntime.

Each case is a parent ClusterServingRuntime (a profile) and a child ServingRuntime that inherits
from it; the expected value is the merged spec's JSON at one field."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from google.protobuf import json_format
from helpers_docs import load
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2
from ome_selector.cli.documents import document
from ome_selector.rpc import runtimes, views

CHILD = pb.RuntimeRef(kind=pb.RUNTIME_KIND_SERVING_RUNTIME, namespace="llama-demo", name="child")
FORMATS = [{"name": "llama", "modelFormat": {"name": "safetensors"}, "modelFramework": {"name": "transformers"}}]


def pair(parent_spec: dict[str, Any], child_spec: dict[str, Any]) -> list[dict[str, Any]]:
    parent = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ClusterServingRuntime",
        "metadata": {"name": "profile", "annotations": {"ome.io/runtime-profile": "true"}},
        "spec": {"disabled": True, "supportedModelFormats": FORMATS, **parent_spec},
    }
    child = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime",
        "metadata": {"name": "child", "namespace": "llama-demo", "annotations": {"ome.io/inherit-from": "profile"}},
        "spec": child_spec,
    }
    return [parent, child]


def merged(parent_spec: dict[str, Any], child_spec: dict[str, Any]) -> dict[str, Any]:
    """The child's merged spec as JSON, from GetRuntimeStatus."""
    got = runtimes.get_runtime_status(
        load(pair(parent_spec, child_spec)).snapshot, pb.GetRuntimeStatusRequest(runtime=CHILD)
    )
    return document(got.spec)


def runner(**fields: Any) -> dict[str, Any]:
    return {"engineConfig": {"runner": {"name": "ome-container", **fields}}}


def at(spec: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        spec = spec[part]
    return spec


ROWS = [
    pytest.param(
        runner(image="sglang:v1"),
        runner(image="sglang:v2"),
        "engineConfig.runner.image",
        "sglang:v2",
        id="single values: image, the child's replaces the parent's",
    ),
    pytest.param(
        {"disabled": True},
        {"disabled": False},
        "disabled",
        False,
        id="single values: disabled",
    ),
    pytest.param(
        {"modelSizeRange": {"min": "2B", "max": "4B"}},
        {"modelSizeRange": {"max": "8B"}},
        "modelSizeRange",
        {"min": "2B", "max": "8B"},
        id="objects: modelSizeRange field by field",
    ),
    pytest.param(
        runner(image="sglang:v1", workingDir="/srv"),
        runner(command=["python3"]),
        "engineConfig.runner",
        {"name": "ome-container", "image": "sglang:v1", "command": ["python3"], "workingDir": "/srv"},
        id="objects: runner field by field",
    ),
    pytest.param(
        {"engineConfig": {"nodeSelector": {"pool": "gpu", "zone": "a"}}},
        {"engineConfig": {"nodeSelector": {"zone": "b", "tier": "1"}}},
        "engineConfig.nodeSelector",
        {"pool": "gpu", "zone": "b", "tier": "1"},
        id="nodeSelector by key",
    ),
    pytest.param(
        runner(resources={"requests": {"cpu": 2, "memory": "8Gi"}, "limits": {"nvidia.com/gpu": 1}}),
        runner(resources={"requests": {"cpu": "4"}, "limits": {"memory": "16Gi"}}),
        "engineConfig.runner.resources",
        {"requests": {"cpu": "4", "memory": "8Gi"}, "limits": {"nvidia.com/gpu": 1, "memory": "16Gi"}},
        id="resource requests and limits by key",
    ),
    pytest.param(
        {"labels": {"team": "a", "tier": "x"}, "annotations": {"prometheus.io/scrape": "true"}},
        {"labels": {"tier": "y"}, "annotations": {"prometheus.io/port": "8080"}},
        "labels",
        {"team": "a", "tier": "y"},
        id="the spec's labels by key",
    ),
    pytest.param(
        {"labels": {"team": "a"}, "annotations": {"prometheus.io/scrape": "true"}},
        {"annotations": {"prometheus.io/port": "8080"}},
        "annotations",
        {"prometheus.io/scrape": "true", "prometheus.io/port": "8080"},
        id="the spec's annotations by key",
    ),
    pytest.param(
        runner(env=[{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]),
        runner(env=[{"name": "B", "value": "20"}, {"name": "C", "value": "3"}]),
        "engineConfig.runner.env",
        [{"name": "A", "value": "1"}, {"name": "B", "value": "20"}, {"name": "C", "value": "3"}],
        id="env item by item by name",
    ),
    pytest.param(
        {"engineConfig": {"volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]}},
        {
            "engineConfig": {
                "volumes": [
                    {"name": "dshm", "emptyDir": {"sizeLimit": "16Gi"}},
                    {"name": "models", "hostPath": {"path": "/mnt"}},
                ]
            }
        },
        "engineConfig.volumes",
        [
            {"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
            {"name": "models", "hostPath": {"path": "/mnt"}},
        ],
        id="volumes item by item by name",
    ),
    pytest.param(
        {"engineConfig": {"imagePullSecrets": [{"name": "registry-a"}]}},
        {"engineConfig": {"imagePullSecrets": [{"name": "registry-b"}, {"name": "registry-a"}]}},
        "engineConfig.imagePullSecrets",
        [{"name": "registry-a"}, {"name": "registry-b"}],
        id="imagePullSecrets item by item by name",
    ),
    pytest.param(
        {
            "containers": [
                {"name": "ome-container", "image": "base:1", "args": ["--a"]},
                {"name": "sidecar", "image": "s:1"},
            ]
        },
        {"containers": [{"name": "ome-container", "image": "base:2"}]},
        "containers",
        [{"name": "ome-container", "image": "base:2", "args": ["--a"]}, {"name": "sidecar", "image": "s:1"}],
        id="containers item by item by name",
    ),
    pytest.param(
        {"engineConfig": {"initContainers": [{"name": "fetch", "image": "f:1"}]}},
        {"engineConfig": {"initContainers": [{"name": "fetch", "command": ["sh"]}, {"name": "warm", "image": "w:1"}]}},
        "engineConfig.initContainers",
        [{"name": "fetch", "image": "f:1", "command": ["sh"]}, {"name": "warm", "image": "w:1"}],
        id="initContainers item by item by name",
    ),
    pytest.param(
        runner(ports=[{"containerPort": 8080, "name": "http1", "protocol": "TCP"}]),
        runner(ports=[{"containerPort": 8080, "name": "http"}, {"containerPort": 9090, "name": "metrics"}]),
        "engineConfig.runner.ports",
        [{"containerPort": 8080, "name": "http", "protocol": "TCP"}, {"containerPort": 9090, "name": "metrics"}],
        id="ports item by item by containerPort",
    ),
    pytest.param(
        runner(volumeMounts=[{"name": "dshm", "mountPath": "/dev/shm"}]),
        runner(
            volumeMounts=[
                {"name": "shm2", "mountPath": "/dev/shm", "readOnly": False},
                {"name": "m", "mountPath": "/mnt/models"},
            ]
        ),
        "engineConfig.runner.volumeMounts",
        [{"name": "shm2", "mountPath": "/dev/shm", "readOnly": False}, {"name": "m", "mountPath": "/mnt/models"}],
        id="volumeMounts item by item by mountPath",
    ),
    pytest.param(
        {
            "engineConfig": {
                "topologySpreadConstraints": [
                    {"topologyKey": "zone", "maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"}
                ]
            }
        },
        {
            "engineConfig": {
                "topologySpreadConstraints": [
                    {"topologyKey": "zone", "maxSkew": 2},
                    {"topologyKey": "host", "maxSkew": 1},
                ]
            }
        },
        "engineConfig.topologySpreadConstraints",
        [
            {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 1, "topologyKey": "host"},
        ],
        id="topologySpreadConstraints item by item by topologyKey",
    ),
    pytest.param(
        runner(command=["python3", "-m", "sglang.launch_server"]),
        runner(command=["sglang"]),
        "engineConfig.runner.command",
        ["sglang"],
        id="other lists: command replaced",
    ),
    pytest.param(
        runner(args=["--tp-size=1", "--mem-frac=0.9"]),
        runner(args=["--tp-size=2"]),
        "engineConfig.runner.args",
        ["--tp-size=2"],
        id="other lists: args replaced",
    ),
    pytest.param(
        {"engineConfig": {"tolerations": [{"key": "gpu", "operator": "Exists"}, {"key": "a", "operator": "Exists"}]}},
        {"engineConfig": {"tolerations": [{"key": "gpu", "operator": "Equal", "value": "h100"}]}},
        "engineConfig.tolerations",
        [{"key": "gpu", "operator": "Equal", "value": "h100"}],
        id="other lists: tolerations replaced",
    ),
]


@pytest.mark.parametrize(("parent", "child", "path", "want"), ROWS)
def test_what_merges(parent: dict[str, Any], child: dict[str, Any], path: str, want: Any) -> None:
    assert at(merged(parent, child), path) == want


class TestWatchForThreeThings:
    def test_a_child_cannot_remove_what_its_parent_sets(self) -> None:
        """``[]``, ``{}`` and ``""`` count as leaving the field unset."""
        parent = runner(image="sglang:v1", args=["--a"], env=[{"name": "A", "value": "1"}])
        parent["engineConfig"]["nodeSelector"] = {"pool": "gpu"}
        child = runner(image="", args=[], env=[])
        child["engineConfig"]["nodeSelector"] = {}
        got = merged(parent, child)["engineConfig"]
        assert got["runner"] == {
            "name": "ome-container",
            "image": "sglang:v1",
            "args": ["--a"],
            "env": [{"name": "A", "value": "1"}],
        }
        assert got["nodeSelector"] == {"pool": "gpu"}

    def test_a_raised_request_keeps_the_inherited_limit(self) -> None:
        """requests and limits merge by key: a child raising a request above the inherited limit
        gets both as they are (Kubernetes then rejects the pod spec)."""
        parent = runner(resources={"requests": {"memory": "8Gi"}, "limits": {"memory": "16Gi"}})
        child = runner(resources={"requests": {"memory": "32Gi"}})
        assert at(merged(parent, child), "engineConfig.runner.resources") == {
            "requests": {"memory": "32Gi"},
            "limits": {"memory": "16Gi"},
        }

    def test_switching_a_source_ends_up_with_both(self) -> None:
        """Items with the same key merge field by field: a volume switched to another source, and
        a probe switched to another check, keep the parent's too."""
        parent = {
            "engineConfig": {
                "volumes": [{"name": "cache", "emptyDir": {}}],
                "runner": {"name": "ome-container", "readinessProbe": {"httpGet": {"path": "/health", "port": 8080}}},
            }
        }
        child = {
            "engineConfig": {
                "volumes": [{"name": "cache", "hostPath": {"path": "/mnt/cache"}}],
                "runner": {"name": "ome-container", "readinessProbe": {"tcpSocket": {"port": "http"}}},
            }
        }
        got = merged(parent, child)["engineConfig"]
        assert got["volumes"] == [{"name": "cache", "emptyDir": {}, "hostPath": {"path": "/mnt/cache"}}]
        assert got["runner"]["readinessProbe"] == {
            "httpGet": {"path": "/health", "port": 8080},
            "tcpSocket": {"port": "http"},
        }


def test_the_effective_runtime_carries_the_whole_merged_spec() -> None:
    """GetEffectiveRuntime of an InferenceService naming the child: the merged spec, env,
    resources and volumes included."""
    parent = runner(image="sglang:v1", env=[{"name": "A", "value": "1"}], resources={"limits": {"nvidia.com/gpu": 1}})
    parent["engineConfig"]["volumes"] = [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]
    child = {"disabled": False, **runner(env=[{"name": "B", "value": "2"}])}
    isvc = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {"name": "svc", "namespace": "llama-demo"},
        "spec": {"runtime": {"name": "child", "kind": "ServingRuntime"}, "engine": {}},
    }
    store = load(pair(parent, child))
    request = pb.GetEffectiveRuntimeRequest(inference_service=json_format.ParseDict(isvc, types_pb2.InferenceService()))
    got = document(views.get_effective_runtime(store.snapshot, request))
    assert got["active"]["spec"] == got["spec"]
    assert got["spec"]["engineConfig"] == {
        "runner": {
            "name": "ome-container",
            "image": "sglang:v1",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}],
            "resources": {"limits": {"nvidia.com/gpu": 1}},
        },
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}],
    }


def test_merging_leaves_both_specs_as_they_were() -> None:
    parent = runner(env=[{"name": "A", "value": "1"}])
    child = runner(env=[{"name": "A", "value": "2"}])
    before = copy.deepcopy((parent, child))
    store = load(pair(parent, child))
    got = runtimes.get_runtime_status(
        store.snapshot,
        pb.GetRuntimeStatusRequest(runtime=pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="profile")),
    )
    assert document(got.spec)["engineConfig"]["runner"]["env"] == [{"name": "A", "value": "1"}]
    assert (parent, child) == before
