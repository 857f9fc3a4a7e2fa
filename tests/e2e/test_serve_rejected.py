"""serve --manifests with a bad object: it is named in the log, left out, counted in the log and in
``/metrics``, and everything else is served; ``--strict`` refuses to start (docs/deploy.md, "What the loader reads, and what it rejects")."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

import grpc
from conftest import REPO_ROOT, ServerProcess, server_command
from helpers_docs import inference_service, isvc
from ome.selector.v1 import selector_pb2, selector_pb2_grpc
from sidecar_helpers import metrics_address, sample, scrape

GOOD_AND_BAD = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: good-runtime
spec:
  supportedModelFormats:
  - modelFormat: {name: safetensors, version: "1.0.0"}
    modelFramework: {name: transformers, version: "4.45.0.dev0"}
    modelArchitecture: LlamaForCausalLM
    autoSelect: true
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: bad-runtime
spec:
  supportedModelFormats:
  - modelFormat: {name: safetensors, version: "%s"}
    modelFramework: {name: transformers}
---
apiVersion: ome.io/v1beta1
kind: BaseModel
metadata:
  name: llama-3-2-3b-instruct
  namespace: llama-demo
spec:
  modelFormat: {name: safetensors, version: "1.0.0"}
  modelFramework: {name: transformers, version: "4.45.0.dev0"}
  modelArchitecture: LlamaForCausalLM
""" % ("1" * 5000)


def test_a_bad_object_is_left_out_and_counted(running_server: Callable[..., ServerProcess], tmp_path: Path) -> None:
    manifest = tmp_path / "cluster.yaml"
    manifest.write_text(GOOD_AND_BAD)
    server = running_server([manifest], extra_args=["--metrics-listen", "127.0.0.1:0"])
    assert any(
        line.endswith("objects=2 rejected=1 path_errors=0") and "cache loaded from manifests" in line
        for line in server.lines
    )
    assert any(
        "bad-runtime" in line and "(5000 characters): must be no more than 128 characters" in line
        for line in server.lines
    )
    assert sample(scrape(metrics_address(server)), "ome_selector_manifest_objects_rejected") == 1.0
    with grpc.insecure_channel(server.address) as channel:
        response = selector_pb2_grpc.SelectionServiceStub(channel).SelectRuntime(
            selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc())), timeout=10
        )
    assert response.selection.runtime.name == "good-runtime"
    assert response.exclusion_summary.text == "1/1 runtimes are candidates"


def test_strict_refuses_to_start(tmp_path: Path) -> None:
    manifest = tmp_path / "cluster.yaml"
    manifest.write_text(GOOD_AND_BAD)
    command = server_command(
        [manifest], listen="127.0.0.1:0", log_format="text", wait_for_sync=False, extra_args=["--strict"]
    )
    result = subprocess.run(
        command, cwd=REPO_ROOT, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL
    )
    assert result.returncode == 1, result.stderr
    assert "--strict: 1 objects rejected, 0 paths unreadable" in result.stderr
    assert "listening on" not in result.stderr
