"""/metrics scraped from a real server after unary, server-stream and bidi-stream calls: every
gRPC family has go-grpc-prometheus's name, type and labels, codes are grpc-go's names, the
standard collectors are there, no ``_created`` series, and every family is in docs/metrics.md's
metrics table with its type and labels."""

from __future__ import annotations

import re
from typing import Callable

import grpc
import pytest
from conftest import EXAMPLE_ISVCS, REPO_ROOT, ServerProcess
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from ome.selector.v1 import selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_inference_service
from ome_selector.server.metrics import GO_CODE_NAMES, go_code
from ome_selector.server.options import version
from ome_selector_client import SelectorClient, SelectorError
from prometheus_client.parser import text_string_to_metric_families
from sidecar_helpers import http_get, metrics_address

Start = Callable[..., ServerProcess]
SELECTION = "ome.selector.v1.SelectionService"
HEALTH = "grpc.health.v1.Health"
REFLECTION = "grpc.reflection.v1alpha.ServerReflection"

# go-grpc-prometheus's server metrics (its README, "Metrics"): name -> (type, label names).
GO_GRPC_PROMETHEUS = {
    "grpc_server_started_total": ("counter", {"grpc_type", "grpc_service", "grpc_method"}),
    "grpc_server_handled_total": ("counter", {"grpc_type", "grpc_service", "grpc_method", "grpc_code"}),
    "grpc_server_msg_received_total": ("counter", {"grpc_type", "grpc_service", "grpc_method"}),
    "grpc_server_msg_sent_total": ("counter", {"grpc_type", "grpc_service", "grpc_method"}),
    "grpc_server_handling_seconds": ("histogram", {"grpc_type", "grpc_service", "grpc_method"}),
}
GRPC_TYPES = {"unary", "client_stream", "server_stream", "bidi_stream"}
# grpc-go's codes.Code.String() for codes 0..16.
GO_CODES = [
    "OK",
    "Canceled",
    "Unknown",
    "InvalidArgument",
    "DeadlineExceeded",
    "NotFound",
    "AlreadyExists",
    "PermissionDenied",
    "ResourceExhausted",
    "FailedPrecondition",
    "Aborted",
    "OutOfRange",
    "Unimplemented",
    "Internal",
    "Unavailable",
    "DataLoss",
    "Unauthenticated",
]


def test_every_status_code_has_grpc_gos_name() -> None:
    assert [go_code(code.name) for code in sorted(grpc.StatusCode, key=lambda c: c.value[0])] == GO_CODES
    assert sorted(GO_CODE_NAMES.values()) == sorted(GO_CODES)


def _families(address: str) -> dict[str, tuple[str, list[tuple[str, dict[str, str], float]]]]:
    status, body = http_get(address, "/metrics")
    assert status == 200, body
    return {  # by the exposed name: a counter family's samples end in _total
        f.name + ("_total" if f.type == "counter" else ""): (
            f.type,
            [(s.name, dict(s.labels), s.value) for s in f.samples],
        )
        for f in text_string_to_metric_families(body)
    }


def _by_labels(samples: list[tuple[str, dict[str, str], float]], name: str) -> dict[tuple[str, ...], float]:
    return {
        (labels["grpc_type"], labels["grpc_method"], *([labels["grpc_code"]] if "grpc_code" in labels else [])): value
        for sample_name, labels, value in samples
        if sample_name == name
    }


def _readme_table() -> dict[str, tuple[str, str]]:
    """docs/metrics.md's table: metric name (or ``prefix_*``) -> (type, labels column)."""
    text = (REPO_ROOT / "docs" / "metrics.md").read_text()
    [table] = [block for block in text.split("\n\n") if block.startswith("| Metric | Type | Labels |")]
    rows: dict[str, tuple[str, str]] = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        for name in re.findall(r"`([a-z_*]+)`", cells[0]):
            rows[name] = (cells[1], cells[2])
    return rows


def test_metrics_follow_go_grpc_prometheus(running_server: Start) -> None:
    server = running_server(extra_args=["--metrics-listen", "127.0.0.1:0"])
    metrics = metrics_address(server)
    isvc = load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
    with SelectorClient(server.address) as client:
        assert client.select_runtime(isvc).selection.runtime.name == "llama-3-3-70b-hopper"
        with pytest.raises(SelectorError):
            client.select_runtime(types_pb2.InferenceService())
    with grpc.insecure_channel(server.address) as channel:
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        answers = list(
            reflection.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")] * 2), timeout=10
            )
        )
        assert len(answers) == 2
        health_watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""), timeout=60)
        assert next(health_watch).status == health_pb2.HealthCheckResponse.SERVING
        watch = selector_pb2_grpc.SelectionServiceStub(channel).WatchSelections(
            selector_pb2.WatchSelectionsRequest(), timeout=60
        )
        received = 0
        for event in watch:
            received += 1
            if event.HasField("initial_events_end"):
                break
        families = _families(metrics)  # both streams still open: started, not handled
        watch.cancel()
        health_watch.cancel()

    for name, (kind, labels) in GO_GRPC_PROMETHEUS.items():
        assert name in families, name
        family_type, samples = families[name]
        assert family_type == kind, name
        base = {k for s_name, s_labels, _ in samples for k in s_labels if k != "le"}
        assert base == labels, name
        assert {s_labels["grpc_type"] for _, s_labels, _ in samples} <= GRPC_TYPES
    codes = {labels["grpc_code"] for _, labels, _ in families["grpc_server_handled_total"][1]}
    assert codes == {"OK", "InvalidArgument"}

    started = _by_labels(families["grpc_server_started_total"][1], "grpc_server_started_total")
    assert {k: v for k, v in started.items() if k[1] != "Check"} == {
        ("unary", "SelectRuntime"): 2.0,
        ("bidi_stream", "ServerReflectionInfo"): 1.0,
        ("server_stream", "Watch"): 1.0,
        ("server_stream", "WatchSelections"): 1.0,
    }
    handled = _by_labels(families["grpc_server_handled_total"][1], "grpc_server_handled_total")
    assert handled == {
        ("unary", "SelectRuntime", "OK"): 1.0,
        ("unary", "SelectRuntime", "InvalidArgument"): 1.0,
        ("bidi_stream", "ServerReflectionInfo", "OK"): 1.0,
    }
    assert _by_labels(families["grpc_server_msg_received_total"][1], "grpc_server_msg_received_total") == {
        ("unary", "SelectRuntime"): 2.0,
        ("bidi_stream", "ServerReflectionInfo"): 2.0,
        ("server_stream", "Watch"): 1.0,
        ("server_stream", "WatchSelections"): 1.0,
    }
    assert _by_labels(families["grpc_server_msg_sent_total"][1], "grpc_server_msg_sent_total") == {
        ("unary", "SelectRuntime"): 1.0,
        ("bidi_stream", "ServerReflectionInfo"): 2.0,
        ("server_stream", "Watch"): 1.0,  # written with context.write()
        ("server_stream", "WatchSelections"): float(received),
    }

    assert families["ome_selector_build_info"][1] == [
        (
            "ome_selector_build_info",
            {"version": version(), "revision": "unknown", "python": families["python_info"][1][0][1]["version"]},
            1.0,
        )
    ]
    assert {
        "python_info",
        "python_gc_objects_collected_total",
        "python_gc_collections_total",
        "process_resident_memory_bytes",
    } <= set(families)
    assert [s for _, samples in families.values() for s, _, _ in samples if s.endswith("_created")] == []

    readme = _readme_table()
    for name, (family_type, samples) in families.items():
        if name.startswith(("python_", "process_")):
            assert f"{name.split('_')[0]}_*" in readme, name
            continue
        assert name in readme, name
        readme_type, readme_labels = readme[name]
        assert readme_type.split(",")[0] == family_type, name
        labels = {k for _, s_labels, _ in samples for k in s_labels if k != "le"}
        assert set(re.findall(r"`(grpc_[a-z]+|kind|outcome|version|revision|python)`", readme_labels)) >= labels, name
