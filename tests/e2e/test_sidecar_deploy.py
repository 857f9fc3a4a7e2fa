"""deploy/: the kustomize manifests render, validate against the Kubernetes schema, and agree
with the server (probe paths and ports, env var names, socket paths, drain timing, hardening);
the README's "Deploy on Kubernetes" commands run as written."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import REPO_ROOT
from ome_selector.server.options import SERVE_FLAGS

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
ENV_NAMES = {flag.env for flag in SERVE_FLAGS}
HARDENED = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:  # .ci/run installs Debian's kubernetes-client first, and says so when it cannot
        pytest.skip("kubectl not installed: manifests not rendered")
    return found


def render(overlay: str) -> list[dict[str, Any]]:
    out = subprocess.run(
        [kubectl(), "kustomize", str(REPO_ROOT / "deploy" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def selector_container(pod: dict[str, Any]) -> dict[str, Any]:
    [container] = [c for c in pod.get("initContainers", []) + pod["containers"] if c["name"] == "ome-selector"]
    return container


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", [])}


def check_selector_container(pod: dict[str, Any]) -> dict[str, str]:
    container = selector_container(pod)
    env = env_of(container)
    assert set(env) <= ENV_NAMES, set(env) - ENV_NAMES  # no misspelt variable
    http_port = int(env["OME_SELECTOR_HTTP_LISTEN"].rpartition(":")[2])
    assert env["OME_SELECTOR_HTTP_LISTEN"].startswith("0.0.0.0:")  # kubelet probes the pod IP
    assert {p["name"]: p["containerPort"] for p in container["ports"]}["http"] == http_port
    metrics_port = int(env["OME_SELECTOR_METRICS_LISTEN"].rpartition(":")[2])  # /metrics, apart from the probes
    assert {p["name"]: p["containerPort"] for p in container["ports"]}["metrics"] == metrics_port
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["startupProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert container["securityContext"] == HARDENED
    assert set(container["resources"]) == {"requests", "limits"}
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    drain, grace = float(env["OME_SELECTOR_DRAIN_DELAY"]), float(env["OME_SELECTOR_GRACE"])
    assert pod["terminationGracePeriodSeconds"] >= drain + grace + 5
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/tmp" in mounts
    return env


def test_sidecar_manifest() -> None:
    [deployment] = render("sidecar")
    assert (deployment["kind"], deployment["metadata"]["name"], deployment["metadata"]["namespace"]) == (
        "Deployment",
        "ome-controller-manager",
        "ome",
    )
    pod = deployment["spec"]["template"]["spec"]
    env = check_selector_container(pod)
    assert selector_container(pod)["restartPolicy"] == "Always"  # native sidecar: up before, down after the controller
    socket_path = env["OME_SELECTOR_LISTEN"].removeprefix("unix:")
    assert env["OME_SELECTOR_LISTEN"].startswith("unix:")
    [manager] = pod["containers"]
    assert env_of(manager)["OME_SELECTOR_ADDRESS"] == env["OME_SELECTOR_LISTEN"]
    assert manager["securityContext"] == HARDENED
    shared = {
        m["name"] for m in selector_container(pod)["volumeMounts"] if m["mountPath"] == str(Path(socket_path).parent)
    }
    assert shared and shared <= {
        m["name"] for m in manager["volumeMounts"] if m["mountPath"] == str(Path(socket_path).parent)
    }
    [volume] = [v for v in pod["volumes"] if v["name"] in shared]
    assert "emptyDir" in volume
    assert env["OME_SELECTOR_SOCKET_MODE"] == "0660" and pod["securityContext"]["runAsGroup"] == 65532


def test_standalone_manifest() -> None:
    docs = {d["kind"]: d for d in render("standalone")}
    assert sorted(docs) == ["Deployment", "NetworkPolicy", "Service"]
    pod = docs["Deployment"]["spec"]["template"]["spec"]
    env = check_selector_container(pod)
    assert env["OME_SELECTOR_LISTEN"] == "0.0.0.0:50051"
    tls_dir = {m["mountPath"] for m in selector_container(pod)["volumeMounts"] if m["name"] == "tls"}
    for name in (
        "OME_SELECTOR_TLS_CERT",
        "OME_SELECTOR_TLS_KEY",
        "OME_SELECTOR_TLS_CLIENT_CA",
    ):  # mTLS: CacheService is on the network
        assert str(Path(env[name]).parent) in tls_dir
    service = docs["Service"]["spec"]
    assert service["selector"] == docs["Deployment"]["spec"]["selector"]["matchLabels"]
    assert {p["name"]: p["targetPort"] for p in service["ports"]} == {
        "grpc": "grpc",
        "http": "http",
        "metrics": "metrics",
    }


def test_readme_deploy_commands_run_as_written(tmp_path: Path) -> None:
    kubectl()
    match = re.search(r"^## Deploy on Kubernetes\n(.*?)(?=^## )", README, re.S | re.M)
    assert match, "README has no section 'Deploy on Kubernetes'"
    render_block, local_block = re.findall(r"```sh\n(.*?)```", match.group(1), re.S)
    [expected_block] = re.findall(r"```text\n(.*?)```", match.group(1), re.S)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    rendered = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", render_block],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    assert rendered.stdout.count(" passed for resource ") == 4, rendered.stdout

    ports = []
    for _ in range(2):  # free ports for the probes and the metrics
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            ports.append(probe.getsockname()[1])
    port, metrics_port = ports
    block = (
        local_block.replace("127.0.0.1:8081", f"127.0.0.1:{port}")
        .replace("127.0.0.1:9090", f"127.0.0.1:{metrics_port}")
        .replace("/tmp/ome-selector.sock", str(tmp_path / "api.sock"))
    )
    local = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert local.returncode == 0, local.stdout + local.stderr
    assert local.stdout.splitlines() == expected_block.strip().splitlines()
