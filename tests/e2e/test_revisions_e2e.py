"""Runtime revisions, pinning and runtime status end to end: ``ome-selector serve`` on 127.0.0.1
with the OME catalog and ``../shared/ome-cluster`` (and a revision manifest written as ``kubectl
get controllerrevisions -n ome -o yaml`` prints one), every call through the typed Python client
(CacheService writes, ReconcileInferenceService, AdmitInferenceService, GetRuntimeStatus).

Pages: concepts/runtimes/runtime-revisions.md (pin, drift, roll forward, a pinned InferenceService
surviving the deletion of its runtime, the webhook's pin messages), runtime-inheritance.md ("When a
chain breaks").
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import grpc
import pytest
import yaml
from conftest import CATALOG_RUNTIMES, OME_CLUSTER
from google.protobuf import json_format
from helpers_docs import revision
from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_manifests
from ome_selector_client import SelectorClient, SelectorError

RUNTIME_FILE = CATALOG_RUNTIMES / "srt/meta/llama-3-2-3b-instruct-rt.yaml"
RUNTIME = yaml.safe_load(RUNTIME_FILE.read_text())
SHARED_REVISION = "cr-srt-llama-3-2-3b-instruct-590753e8"  # the catalog runtime's spec, as OME stored it
CATALOG_HASH = "53f7b6c8"  # this service's hash of that spec
CHANGED_HASH = "e733dc5c"  # after --mem-frac 0.9 -> 0.85
MISMATCH = (
    "pinned cr-srt-llama-3-2-3b-instruct-590753e8, live spec differs; bump ome.io/runtime-sync annotation to advance"
)


@pytest.fixture
def client(running_server: Any, tmp_path: Path) -> Iterator[SelectorClient]:
    """A server with the catalog, ome-cluster and one revision of srt-llama-3-2-3b-instruct."""
    revisions = tmp_path / "revisions.yaml"
    revisions.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [revision(SHARED_REVISION, RUNTIME)]})
    )
    server = running_server(manifests=[str(CATALOG_RUNTIMES), str(OME_CLUSTER), str(revisions)])
    assert server.address.startswith("127.0.0.1:")
    with SelectorClient(server.address) as c:
        yield c


def pinned_service(**status: str) -> types_pb2.InferenceService:
    isvc = types_pb2.InferenceService()
    isvc.metadata.name, isvc.metadata.namespace = "llama-3-2-3b-instruct", "llama-demo"
    isvc.spec.model.name = "llama-3-2-3b-instruct"
    isvc.spec.runtime.name = "srt-llama-3-2-3b-instruct"
    isvc.spec.runtime.auto_sync = False
    isvc.spec.engine.min_replicas = isvc.spec.engine.max_replicas = 1
    if "sync" in status:
        isvc.metadata.annotations["ome.io/runtime-sync"] = status.pop("sync")
    for field, value in status.items():
        setattr(isvc.status, field, value)
    return isvc


def changed_runtime() -> cache_pb2.CacheObject:
    """The catalog runtime with ``--mem-frac 0.85``, as an upsert."""
    (obj,) = load_manifests([str(RUNTIME_FILE)]).objects
    command = obj.cluster_serving_runtime.spec.engine_config.runner.command
    command[list(command).index("--mem-frac") + 1] = "0.85"
    return obj


def drift(response: pb.ReconcileInferenceServiceResponse) -> tuple[str, str, str] | None:
    c = response.runtime_drifted
    return (c.status, c.reason, c.message) if response.HasField("runtime_drifted") else None


def test_pin_drift_roll_forward_and_a_deleted_runtime(client: SelectorClient) -> None:
    status = client.get_cache_status()
    assert {cache_pb2.ObjectKind.Name(c.kind): c.count for c in status.counts}["OBJECT_KIND_CONTROLLER_REVISION"] == 1

    # Pin: the revision loaded from the manifest holds the live spec, so it is shared.
    first = client.reconcile_inference_service(pinned_service())
    assert (first.pin.pinned_revision_name, first.pin.HasField("create_revision"), drift(first)) == (
        SHARED_REVISION,
        False,
        None,
    )
    assert (first.pin.state, first.pin.live_hash, first.remove_runtime_drifted, list(first.events)) == (
        pb.PIN_STATE_AWAITING_PIN,
        CATALOG_HASH,
        True,
        [],
    )

    pinned = client.reconcile_inference_service(pinned_service(pinned_revision_name=SHARED_REVISION))
    assert (pinned.pin.state, pinned.pin.served_from_revision, pinned.pin.live_relation, drift(pinned)) == (
        pb.PIN_STATE_RESOLVED,
        True,
        pb.LIVE_RELATION_EQUAL,
        None,
    )

    # The runtime changes: RevisionMismatch, updates pause.
    client.upsert_objects([changed_runtime()])
    drifted = client.reconcile_inference_service(pinned_service(pinned_revision_name=SHARED_REVISION))
    assert (drift(drifted), drifted.workload_untouched, drifted.requeue) == (
        ("True", "RevisionMismatch", MISMATCH),
        True,
        False,
    )
    assert (drifted.pin.live_hash, drifted.pin.active_hash, drifted.pin.live_relation) == (
        CHANGED_HASH,
        CATALOG_HASH,
        pb.LIVE_RELATION_DIFFERENT,
    )

    # Roll forward: a new ome.io/runtime-sync value; the revision to create goes into the cache.
    forward = client.reconcile_inference_service(pinned_service(pinned_revision_name=SHARED_REVISION, sync="t1"))
    created = forward.pin.create_revision
    assert (forward.pin.pinned_revision_name, created.metadata.name, forward.pin.last_runtime_sync_token) == (
        f"cr-srt-llama-3-2-3b-instruct-{CHANGED_HASH}",
        f"cr-srt-llama-3-2-3b-instruct-{CHANGED_HASH}",
        "t1",
    )
    client.upsert_objects([cache_pb2.CacheObject(controller_revision=created)])
    after = client.reconcile_inference_service(
        pinned_service(pinned_revision_name=created.metadata.name, last_runtime_sync_token="t1", sync="t1")
    )
    assert (after.pin.state, after.pin.sync, drift(after), after.pin.served_from_revision) == (
        pb.PIN_STATE_RESOLVED,
        pb.SYNC_STATE_ACKNOWLEDGED,
        None,
        True,
    )

    # The runtime is deleted: the pinned InferenceService keeps serving from its revision.
    key = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="srt-llama-3-2-3b-instruct")
    client.delete_objects([key])
    survived = client.reconcile_inference_service(pinned_service(pinned_revision_name=created.metadata.name))
    assert (drift(survived), survived.workload_untouched, [c.component for c in survived.components]) == (
        (
            "True",
            "SourceRuntimeMissing",
            f"runtime srt-llama-3-2-3b-instruct not found; serving from pinned revision {created.metadata.name}",
        ),
        False,
        [pb.COMPONENT_ENGINE],
    )
    # Not pinned yet and no runtime: RuntimePinError.
    error = client.reconcile_inference_service(pinned_service())
    assert [(e.type, e.reason, e.message) for e in error.events] == [
        (
            "Warning",
            "RuntimePinError",
            "resolve live runtime srt-llama-3-2-3b-instruct: "
            "runtime srt-llama-3-2-3b-instruct not found in namespace llama-demo or at cluster scope",
        )
    ]
    # ... and the webhook rejects it (runtime-revisions.md, "The RuntimeDrifted condition").
    admitted = client.admit_inference_service(pinned_service(pinned_revision_name=created.metadata.name))
    assert (admitted.allowed, admitted.denial_message) == (
        False,
        "runtime srt-llama-3-2-3b-instruct does not support model llama-3-2-3b-instruct: "
        "runtime srt-llama-3-2-3b-instruct not found in namespace llama-demo or at cluster scope",
    )


def test_a_bad_revision_is_invalid_argument_naming_the_field(client: SelectorClient) -> None:
    before = client.get_cache_status()
    bad = revision(SHARED_REVISION, RUNTIME)
    del bad["data"]
    bad["revision"] = -1
    obj = cache_pb2.CacheObject()
    obj.controller_revision.CopyFrom(json_format.ParseDict(bad, types_pb2.ControllerRevision()))
    with pytest.raises(SelectorError) as caught:
        client.upsert_objects([obj])
    assert (caught.value.code, caught.value.field_violations) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        [
            ("objects[0].controllerRevision.data", "Required value: data is mandatory"),
            ("objects[0].controllerRevision.revision", "Invalid value: -1: must be greater than or equal to 0"),
        ],
    )
    assert client.get_cache_status() == before


def test_reconcile_reads_revisions_in_the_ome_namespace_given(client: SelectorClient) -> None:
    got = client.reconcile_inference_service(pinned_service(), ome_namespace="ome-system")
    assert (got.pin.pinned_revision_name, got.pin.create_revision.metadata.namespace) == (
        f"cr-srt-llama-3-2-3b-instruct-{CATALOG_HASH}",
        "ome-system",
    )


def test_the_webhook_pin_messages(client: SelectorClient) -> None:
    isvc = pinned_service()
    isvc.spec.runtime.revision = "r-llama-demo-srt-llama-3-2-3b-instruct-590753e8"
    denied = client.admit_inference_service(isvc)
    assert (denied.allowed, denied.denial_message) == (
        False,
        'spec.runtime.revision "r-llama-demo-srt-llama-3-2-3b-instruct-590753e8" does not match the expected naming '
        'convention for runtime "srt-llama-3-2-3b-instruct" (ClusterServingRuntime); expected the form '
        "cr-srt-llama-3-2-3b-instruct-<8 lowercase hex chars>",
    )
    isvc.spec.runtime.revision = SHARED_REVISION
    isvc.spec.runtime.ClearField("auto_sync")
    assert client.admit_inference_service(isvc).denial_message == (
        "spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin"
    )


def test_runtime_status_of_the_cluster_child_and_its_deleted_parent(client: SelectorClient) -> None:
    """ome-cluster's team-llama-70b-child inherits from srt-llama-3-3-70b-instruct-hopper."""
    resolved = client.get_runtime_status("team-llama-70b-child", "team-a")
    chain = ["srt-llama-3-3-70b-instruct-hopper", "team-llama-70b-child"]
    (ready,) = resolved.status.conditions
    assert (list(resolved.status.inheritance_chain), ready.type, ready.status, ready.reason, ready.message) == (
        chain,
        "InheritanceReady",
        "True",
        "Resolved",
        "inheritance chain resolved",
    )
    assert [(r.kind, r.name) for r in resolved.inheritance_chain] == [
        (pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, "srt-llama-3-3-70b-instruct-hopper"),
        (pb.RUNTIME_KIND_SERVING_RUNTIME, "team-llama-70b-child"),
    ]
    # The merged spec: the parent's accelerator classes, the child's size range.
    assert list(resolved.spec.accelerator_requirements.accelerator_classes) == ["nvidia-h100-80gb", "nvidia-h200-141gb"]
    assert (resolved.spec.model_size_range.min, resolved.spec.model_size_range.max) == ("60B", "75B")

    parent = cache_pb2.ObjectKey(
        kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="srt-llama-3-3-70b-instruct-hopper"
    )
    client.delete_objects([parent])
    broken = client.get_runtime_status("team-llama-70b-child", "team-a")
    message = 'inherit-from parent "srt-llama-3-3-70b-instruct-hopper" not found (chain so far: [team-llama-70b-child])'
    (ready,) = broken.status.conditions
    assert (list(broken.status.inheritance_chain), ready.status, ready.reason, ready.message) == (
        chain,
        "False",
        "ParentNotFound",
        message,
    )
    assert [(e.type, e.reason, e.message) for e in broken.events] == [("Warning", "ParentNotFound", message)]

    with pytest.raises(SelectorError) as caught:
        client.get_runtime_status("srt-llama-3-3-70b-instruct-hopper")
    assert (caught.value.code, caught.value.message) == (
        grpc.StatusCode.NOT_FOUND,
        'clusterservingruntimes.ome.io "srt-llama-3-3-70b-instruct-hopper" not found',
    )
