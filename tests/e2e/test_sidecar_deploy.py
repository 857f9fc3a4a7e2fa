"""deploy/: the kustomize trees render the way an operator installs them (scripts/render-deploy.sh:
deploy/sidecar and deploy/sidecar-sync over OME v0.1.5's own config/default, deploy/standalone with
and without deploy/servicemonitor), validate against the Kubernetes schema, keep everything of
OME's manager Deployment, and agree with the server (probe paths and ports, env var names, socket
paths, drain timing, hardening); docs/deploy.md's "Deploy on Kubernetes" commands run as written."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import REPO_ROOT
from ome_selector.server.options import SERVE_FLAGS

DEPLOY_PAGE = (REPO_ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
VERSION = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
ENV_NAMES = {flag.env for flag in SERVE_FLAGS}
HARDENED = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}
# In the sidecar, whose pod runs OME's securityContext (runAsNonRoot: false), the user is the container's.
HARDENED_IN_OMES_POD = {**HARDENED, "runAsUser": 65532, "runAsGroup": 65532}
OME_SELECTOR = "ome-controller-manager"
OME_SELECTOR_LABELS = {"control-plane": "ome-controller-manager", "controller-tools.k8s.io": "1.0"}
SOCKET = "unix:/run/ome-selector/api.sock"
SYNC_PROBES = {
    "livenessProbe": {
        "httpGet": {"path": "/healthz", "port": "sync-probes"},
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "failureThreshold": 3,
    },
    "readinessProbe": {
        "httpGet": {"path": "/readyz", "port": "sync-probes"},
        "periodSeconds": 5,
        "timeoutSeconds": 2,
        "failureThreshold": 1,
    },
}
SYNC_PORTS = [
    {"name": "sync-probes", "containerPort": 8091, "protocol": "TCP"},
    {"name": "sync-metrics", "containerPort": 8092, "protocol": "TCP"},
]
# What cachesync lists and watches (ome.io kinds, and OME's runtime ControllerRevisions).
SYNCED = {
    ("ome.io", "servingruntimes"),
    ("ome.io", "clusterservingruntimes"),
    ("ome.io", "basemodels"),
    ("ome.io", "clusterbasemodels"),
    ("ome.io", "acceleratorclasses"),
    ("ome.io", "inferenceservices"),
    ("apps", "controllerrevisions"),
}
READ = {"get", "list", "watch"}
APP_LABELS = {
    "app.kubernetes.io/name": "ome-selector",
    "app.kubernetes.io/instance": "ome-selector",
    "app.kubernetes.io/version": VERSION,
    "app.kubernetes.io/component": "selector",
    "app.kubernetes.io/part-of": "ome",
}
SELECTOR_LABELS = {"app.kubernetes.io/name": "ome-selector", "app.kubernetes.io/instance": "ome-selector"}
# The prometheus-operator release whose ServiceMonitor CRD validates deploy/servicemonitor.
PROMETHEUS_OPERATOR = "github.com/prometheus-operator/prometheus-operator@v0.85.0"


def kubectl() -> str:
    found = shutil.which("kubectl")
    if found is None:  # .ci/run installs one first, and fails when it cannot
        if os.environ.get("CI"):
            pytest.fail("kubectl not installed: manifests not rendered")
        pytest.skip("kubectl not installed: manifests not rendered")
    return found


def go() -> str:
    found = "/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else shutil.which("go")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("no Go toolchain: OME's config/ comes from its Go module")
        pytest.skip("no Go toolchain: OME's config/ comes from its Go module")
    return found


def render_all(out: Path) -> Path:
    kubectl()
    subprocess.run(
        ["bash", str(REPO_ROOT / "scripts" / "render-deploy.sh"), str(out)],
        env=dict(os.environ, GO=go()),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return out


@pytest.fixture(scope="module")
def render_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render_all(tmp_path_factory.mktemp("deploy"))


@pytest.fixture(scope="module")
def rendered(render_dir: Path) -> dict[str, list[dict[str, Any]]]:
    return {
        name: [doc for doc in yaml.safe_load_all((render_dir / f"{name}.yaml").read_text(encoding="utf-8")) if doc]
        for name in ("ome", "sidecar", "sidecar-sync", "standalone", "standalone-servicemonitor")
    }


def key(doc: dict[str, Any]) -> tuple[str, str, str]:
    return doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]


def by_key(docs: list[dict[str, Any]]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {key(d): d for d in docs}


def manager_deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return by_key(docs)[("Deployment", "ome", OME_SELECTOR)]


def named(items: list[dict[str, Any]], name: str) -> dict[str, Any]:
    [item] = [i for i in items if i["name"] == name]
    return item


def env_of(container: dict[str, Any]) -> dict[str, str]:
    return {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}


def check_selector_container(pod: dict[str, Any], container: dict[str, Any], http_port: int, hardened: dict) -> None:
    env = env_of(container)
    assert set(env) <= ENV_NAMES, set(env) - ENV_NAMES  # no misspelt variable
    assert env["OME_SELECTOR_HTTP_LISTEN"] == f"0.0.0.0:{http_port}"  # kubelet probes the pod IP
    [http] = [p for p in container["ports"] if p["containerPort"] == http_port]
    assert container["startupProbe"] == {
        "httpGet": {"path": "/healthz", "port": http["name"]},
        "periodSeconds": 1,
        "failureThreshold": 30,
    }
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": http["name"]}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": http["name"]}
    assert container["securityContext"] == hardened
    assert set(container["resources"]) == {"requests", "limits"}
    drain, grace = float(env["OME_SELECTOR_DRAIN_DELAY"]), float(env["OME_SELECTOR_GRACE"])
    assert pod["terminationGracePeriodSeconds"] >= drain + grace + 5
    assert "/tmp" in {m["mountPath"] for m in container["volumeMounts"]}
    assert env["OME_SELECTOR_WAIT_FOR_SYNC"] == "true"  # NOT_SERVING until the first snapshot


def rules_of(role: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for rule in role["rules"]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                found.setdefault((group, resource), set()).update(rule["verbs"])
    return found


def omes_ports(deployment: dict[str, Any]) -> set[int]:
    """Every port OME's manager pod listens on: containerPorts, probe ports, and ports in its args."""
    pod = deployment["spec"]["template"]["spec"]
    found: set[int] = set()
    for container in pod["containers"]:
        found |= {p["containerPort"] for p in container.get("ports", [])}
        found |= {c[probe]["httpGet"]["port"] for c in [container] for probe in ("livenessProbe", "readinessProbe")}
        found |= {int(m) for arg in container.get("args", []) for m in re.findall(r":(\d+)$", arg)}
    return found


# ---- deploy/sidecar over OME's manager Deployment ------------------------------------------


def test_sidecar_keeps_everything_of_omes_install(rendered: dict[str, list[dict[str, Any]]]) -> None:
    ome, sidecar = by_key(rendered["ome"]), by_key(rendered["sidecar"])
    added = {k for k in sidecar if k not in ome}
    assert added == {
        ("ClusterRole", "", "ome-selector-sync-revisions"),
        ("ClusterRoleBinding", "", "ome-selector-sync-revisions"),
    }
    assert set(ome) <= set(sidecar)
    changed = {k for k in ome if ome[k] != sidecar[k]}
    assert changed == {("Deployment", "ome", OME_SELECTOR)}

    # Take the component's additions out again: what is left is OME's Deployment, field for field.
    deployment = copy.deepcopy(sidecar[("Deployment", "ome", OME_SELECTOR)])
    pod = deployment["spec"]["template"]["spec"]
    assert [c["name"] for c in pod.pop("initContainers")] == ["ome-selector"]
    assert pod["securityContext"].pop("fsGroup") == 65532
    pod["volumes"] = [v for v in pod["volumes"] if v["name"] not in ("ome-selector-socket", "ome-selector-tmp")]
    manager = named(pod["containers"], "manager")
    assert manager["env"][0] == {"name": "OME_SELECTOR_ADDRESS", "value": SOCKET}
    manager["env"] = manager["env"][1:]
    assert manager["volumeMounts"][0] == {"name": "ome-selector-socket", "mountPath": "/run/ome-selector"}
    manager["volumeMounts"] = manager["volumeMounts"][1:]
    assert deployment == ome[("Deployment", "ome", OME_SELECTOR)]


def test_sidecar_is_a_native_sidecar_on_a_socket(rendered: dict[str, list[dict[str, Any]]]) -> None:
    ome_deployment = manager_deployment(rendered["ome"])
    deployment = manager_deployment(rendered["sidecar"])
    assert deployment["spec"]["selector"] == {"matchLabels": OME_SELECTOR_LABELS}  # immutable on an install
    assert deployment["spec"]["template"]["metadata"]["labels"] == OME_SELECTOR_LABELS
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "ome-controller-manager"
    assert pod["terminationGracePeriodSeconds"] == 10  # OME's, unchanged
    assert pod["securityContext"] == {"runAsNonRoot": False, "fsGroup": 65532}

    [selector] = pod["initContainers"]
    assert (selector["name"], selector["image"], selector["restartPolicy"]) == (
        "ome-selector",
        f"registry.example.com/ome-selector:{VERSION}",
        "Always",  # native sidecar: up before the manager, down after it
    )
    assert env_of(selector) == {
        "OME_SELECTOR_LISTEN": SOCKET,
        "OME_SELECTOR_SOCKET_MODE": "0660",
        "OME_SELECTOR_HTTP_LISTEN": "0.0.0.0:8090",
        "OME_SELECTOR_METRICS_LISTEN": "0.0.0.0:9090",  # /metrics apart from the probes
        "OME_SELECTOR_WAIT_FOR_SYNC": "true",
        "OME_SELECTOR_LOG_FORMAT": "json",
        "OME_SELECTOR_DRAIN_DELAY": "0",
        "OME_SELECTOR_GRACE": "5",
        "OME_SELECTOR_NO_REFLECTION": "true",
    }
    assert selector["ports"] == [
        {"name": "selector-http", "containerPort": 8090, "protocol": "TCP"},
        {"name": "selector-metrics", "containerPort": 9090, "protocol": "TCP"},
    ]
    assert omes_ports(ome_deployment) == {8080, 8081, 9443}
    assert 8090 not in omes_ports(ome_deployment)
    check_selector_container(pod, selector, 8090, HARDENED_IN_OMES_POD)

    # The socket's folder: an in-memory emptyDir that the manager mounts too.
    manager = named(pod["containers"], "manager")
    assert env_of(manager)["OME_SELECTOR_ADDRESS"] == SOCKET
    assert {"name": "ome-selector-socket", "mountPath": "/run/ome-selector"} in selector["volumeMounts"]
    assert {"name": "ome-selector-socket", "mountPath": "/run/ome-selector"} in manager["volumeMounts"]
    assert named(pod["volumes"], "ome-selector-socket") == {
        "name": "ome-selector-socket",
        "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"},
    }


def test_sidecar_rbac_covers_the_synced_kinds(rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs = by_key(rendered["sidecar"])
    omes = rules_of(docs[("ClusterRole", "", "ome-manager-role")])
    ours = rules_of(docs[("ClusterRole", "", "ome-selector-sync-revisions")])
    assert ours == {("apps", "controllerrevisions"): READ}
    assert all(READ <= omes[kind] for kind in SYNCED - set(ours))  # OME's role has the ome.io kinds
    assert ("apps", "controllerrevisions") not in omes
    binding = docs[("ClusterRoleBinding", "", "ome-selector-sync-revisions")]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "ome-selector-sync-revisions",
    }
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "ome-controller-manager", "namespace": "ome"}]


def test_sidecar_sync_adds_only_the_sync_container(rendered: dict[str, list[dict[str, Any]]]) -> None:
    sidecar, with_sync = by_key(rendered["sidecar"]), by_key(rendered["sidecar-sync"])
    assert {k for k in sidecar if sidecar[k] != with_sync.get(k)} == {("Deployment", "ome", OME_SELECTOR)}
    assert set(with_sync) == set(sidecar)
    deployment = copy.deepcopy(with_sync[("Deployment", "ome", OME_SELECTOR)])
    pod = deployment["spec"]["template"]["spec"]
    sync = named(pod["containers"], "ome-selector-sync")
    pod["containers"].remove(sync)
    assert deployment == sidecar[("Deployment", "ome", OME_SELECTOR)]

    selector = named(pod["initContainers"], "ome-selector")
    assert sync["image"] == f"registry.example.com/ome-selector-sync:{VERSION}"
    assert sync["args"] == [
        f"--selector-address={env_of(selector)['OME_SELECTOR_LISTEN']}",  # the pod-local socket
        "--health-probe-bind-address=:8091",
        "--metrics-bind-address=:8092",
    ]
    assert sync["ports"] == SYNC_PORTS
    assert {p: sync[p] for p in SYNC_PROBES} == SYNC_PROBES
    assert sync["securityContext"] == HARDENED_IN_OMES_POD
    assert sync["volumeMounts"] == [{"name": "ome-selector-socket", "mountPath": "/run/ome-selector"}]
    ports = omes_ports(manager_deployment(rendered["ome"])) | {8090}
    assert not ports & {8091, 8092}
    # The manager's own service account (OME's ClusterRole plus ome-selector-sync-revisions).
    assert pod["serviceAccountName"] == "ome-controller-manager"
    assert "automountServiceAccountToken" not in pod


# ---- deploy/standalone ------------------------------------------------------------------------


def test_standalone_manifest(rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs = {d["kind"]: d for d in rendered["standalone"]}
    assert sorted(docs) == [
        "ClusterRole",
        "ClusterRoleBinding",
        "Deployment",
        "NetworkPolicy",
        "PodDisruptionBudget",
        "Service",
        "ServiceAccount",
    ]
    for doc in docs.values():
        assert doc["metadata"]["labels"] == APP_LABELS, doc["kind"]
        assert doc["metadata"].get("namespace", "ome") == "ome"
    deployment = docs["Deployment"]
    assert deployment["spec"]["replicas"] == 2
    assert deployment["spec"]["selector"] == {"matchLabels": SELECTOR_LABELS}  # no version in the selector
    assert deployment["spec"]["template"]["metadata"]["labels"] == APP_LABELS
    assert docs["Service"]["spec"]["selector"] == SELECTOR_LABELS
    assert docs["PodDisruptionBudget"]["spec"] == {"maxUnavailable": 1, "selector": {"matchLabels": SELECTOR_LABELS}}
    policy = docs["NetworkPolicy"]["spec"]
    assert policy["podSelector"] == {"matchLabels": SELECTOR_LABELS}
    assert policy["ingress"][0]["from"] == [
        {"podSelector": {"matchLabels": {"control-plane": "ome-controller-manager"}}},
        {"podSelector": {"matchLabels": {"ome-selector-client": "true"}}},
    ]
    assert [p["port"] for rule in policy["ingress"] for p in rule["ports"]] == [
        "grpc",
        "http",
        "sync-metrics",
        "metrics",
    ]
    assert {p["name"]: (p["port"], p["targetPort"]) for p in docs["Service"]["spec"]["ports"]} == {
        "grpc": (50051, "grpc"),
        "http": (8090, "http"),
        "sync-metrics": (8092, "sync-metrics"),
        "metrics": (9090, "metrics"),
    }

    pod = deployment["spec"]["template"]["spec"]
    assert pod["securityContext"] == {
        "runAsNonRoot": True,
        "runAsUser": 65532,
        "runAsGroup": 65532,
        "fsGroup": 65532,  # the non-root user reads the mounted Secret (mode 0440) and opens the socket
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    assert named(pod["volumes"], "tls")["secret"] == {"secretName": "ome-selector-tls", "defaultMode": 0o440}
    selector, sync = pod["containers"]
    assert (selector["name"], sync["name"]) == ("ome-selector", "ome-selector-sync")
    assert selector["image"] == f"registry.example.com/ome-selector:{VERSION}"
    assert sync["image"] == f"registry.example.com/ome-selector-sync:{VERSION}"
    check_selector_container(pod, selector, 8090, HARDENED)
    env = env_of(selector)
    assert env["OME_SELECTOR_LISTEN"] == "0.0.0.0:50051"
    assert env["OME_SELECTOR_METRICS_LISTEN"] == "0.0.0.0:9090"  # /metrics apart from the probes
    assert {p["name"]: p["containerPort"] for p in selector["ports"]}["metrics"] == 9090
    tls_dir = {m["mountPath"] for m in selector["volumeMounts"] if m["name"] == "tls"}
    for name in ("OME_SELECTOR_TLS_CERT", "OME_SELECTOR_TLS_KEY", "OME_SELECTOR_TLS_CLIENT_CA"):
        assert str(Path(env[name]).parent) in tls_dir  # mTLS on the network API

    # A readiness that can be met: the first snapshot goes over a pod-local socket that carries
    # CacheService (only there), not through the Service, which routes only to Ready pods.
    assert env["OME_SELECTOR_CACHE_LISTEN"] == "unix:/run/ome-selector/cache.sock"
    assert env["OME_SELECTOR_SOCKET_MODE"] == "0660"
    assert sync["args"] == [
        "--selector-address=unix:/run/ome-selector/cache.sock",
        "--health-probe-bind-address=:8091",
        "--metrics-bind-address=:8092",
    ]
    run = {"name": "run", "mountPath": "/run/ome-selector"}
    assert run in selector["volumeMounts"] and run in sync["volumeMounts"]
    assert named(pod["volumes"], "run")["emptyDir"] == {"medium": "Memory", "sizeLimit": "1Mi"}
    assert sync["ports"] == SYNC_PORTS
    assert {p: sync[p] for p in SYNC_PROBES} == SYNC_PROBES
    assert sync["securityContext"] == HARDENED

    # The ServiceAccount's token only in the sync container.
    assert pod["serviceAccountName"] == "ome-selector"
    assert pod["automountServiceAccountToken"] is False
    assert docs["ServiceAccount"]["automountServiceAccountToken"] is False
    token = {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True}
    assert token in sync["volumeMounts"] and token not in selector["volumeMounts"]
    sources = named(pod["volumes"], "kube-api-access")["projected"]["sources"]
    assert [next(iter(s)) for s in sources] == ["serviceAccountToken", "configMap", "downwardAPI"]


def test_standalone_rbac_is_exactly_read_on_the_synced_kinds(rendered: dict[str, list[dict[str, Any]]]) -> None:
    docs = {d["kind"]: d for d in rendered["standalone"]}
    assert rules_of(docs["ClusterRole"]) == {kind: READ for kind in SYNCED}
    assert all(set(rule["verbs"]) == READ for rule in docs["ClusterRole"]["rules"])
    assert docs["ClusterRoleBinding"]["roleRef"]["name"] == docs["ClusterRole"]["metadata"]["name"]
    assert docs["ClusterRoleBinding"]["subjects"] == [
        {"kind": "ServiceAccount", "name": docs["ServiceAccount"]["metadata"]["name"], "namespace": "ome"}
    ]
    assert docs["Deployment"]["spec"]["template"]["spec"]["serviceAccountName"] == "ome-selector"
    # The synced kinds exist as OME's CRDs say (group, plural).
    crds = [
        yaml.safe_load(p.read_text()) for p in sorted((REPO_ROOT.parent / "shared/ome-catalog/crd/full").glob("*.yaml"))
    ]
    plurals = {
        (c["spec"]["group"], c["spec"]["names"]["plural"]) for c in crds if c.get("kind") == "CustomResourceDefinition"
    }
    assert {kind for kind in SYNCED if kind[0] == "ome.io"} <= plurals


def strict(schema: Any) -> Any:
    """The CRD's schema with unknown fields rejected (the API server prunes them; here they fail)."""
    if isinstance(schema, dict):
        out = {k: strict(v) for k, v in schema.items() if not k.startswith("x-kubernetes-")}
        if "properties" in schema and "additionalProperties" not in schema:
            if not schema.get("x-kubernetes-preserve-unknown-fields"):
                out["additionalProperties"] = False
        return out
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


def servicemonitor_schema() -> dict[str, Any]:
    out = subprocess.run(
        [go(), "mod", "download", "-json", PROMETHEUS_OPERATOR],
        env=dict(os.environ, GOFLAGS="-mod=mod", GOWORK="off"),
        cwd=REPO_ROOT.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    directory = Path(json.loads(out.stdout)["Dir"])
    crd = yaml.safe_load(
        (directory / "example/prometheus-operator-crd/monitoring.coreos.com_servicemonitors.yaml").read_text()
    )
    [v1] = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    return strict(v1["schema"]["openAPIV3Schema"])


def test_servicemonitor_component(rendered: dict[str, list[dict[str, Any]]]) -> None:
    standalone, monitored = by_key(rendered["standalone"]), by_key(rendered["standalone-servicemonitor"])
    assert {k: v for k, v in monitored.items() if k[0] != "ServiceMonitor"} == standalone
    [monitor] = [v for k, v in monitored.items() if k[0] == "ServiceMonitor"]
    schema = servicemonitor_schema()
    jsonschema.validate(monitor, schema)
    with pytest.raises(jsonschema.ValidationError, match="'scrapeInterval' was unexpected"):
        jsonschema.validate({**monitor, "spec": {**monitor["spec"], "scrapeInterval": "30s"}}, schema)
    assert (monitor["apiVersion"], key(monitor)) == (
        "monitoring.coreos.com/v1",
        ("ServiceMonitor", "ome", "ome-selector"),
    )
    service = standalone[("Service", "ome", "ome-selector")]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert [(e["port"], e["path"]) for e in monitor["spec"]["endpoints"]] == [
        ("metrics", "/metrics"),
        ("sync-metrics", "/metrics"),
    ]
    assert {e["port"] for e in monitor["spec"]["endpoints"]} <= {p["name"] for p in service["spec"]["ports"]}


# ---- images and the version -------------------------------------------------------------------


def test_an_overlays_images_set_the_registry(render_dir: Path, tmp_path: Path) -> None:
    out = render_dir
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    (overlay / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "resources": [os.path.relpath(out / "overlays" / "sidecar-sync", overlay)],
                "images": [
                    {"name": f"registry.example.com/{name}", "newName": f"ghcr.io/acme/{name}"}
                    for name in ("ome-selector", "ome-selector-sync")
                ],
            }
        )
    )
    result = subprocess.run(
        [kubectl(), "kustomize", str(overlay)], capture_output=True, text=True, timeout=120, check=True
    )
    pod = manager_deployment(list(yaml.safe_load_all(result.stdout)))["spec"]["template"]["spec"]
    assert [c["image"] for c in pod["initContainers"] + pod["containers"]] == [
        f"ghcr.io/acme/ome-selector:{VERSION}",
        f"ghcr.io/acme/ome-selector-sync:{VERSION}",
        "ghcr.io/moirai-internal/ome-manager:v0.1.4",  # OME's, untouched
    ]


def test_the_version_is_written_in_pyproject_only(tmp_path: Path) -> None:
    check = subprocess.run(
        [sys.executable, str(REPO_ROOT / "scripts" / "version.py"), "--check"], capture_output=True, text=True
    )
    assert (check.returncode, check.stdout) == (0, "")
    generated = {REPO_ROOT / "deploy/version/kustomization.yaml", REPO_ROOT / "deploy/standalone/version.yaml"}
    written = {
        path
        for path in [REPO_ROOT / "Dockerfile", REPO_ROOT / "sync.Dockerfile", *(REPO_ROOT / "deploy").rglob("*.yaml")]
        if re.search(rf"(?<![\d.]){re.escape(VERSION)}(?![\d.])", path.read_text(encoding="utf-8"))
    }
    assert written == generated

    # A version bump without regenerating fails the check, naming the command.
    for rel in ("scripts/version.py", "pyproject.toml", *(str(p.relative_to(REPO_ROOT)) for p in generated)):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO_ROOT / rel, tmp_path / rel)
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(pyproject.read_text().replace(f'version = "{VERSION}"', 'version = "9.8.7"', 1))
    drifted = subprocess.run(
        [sys.executable, str(tmp_path / "scripts/version.py"), "--check"], capture_output=True, text=True
    )
    assert drifted.returncode == 1
    assert '-    newTag: "0.1.0"\n+    newTag: "9.8.7"' in drifted.stdout.replace(VERSION, "0.1.0")
    assert drifted.stdout.endswith("run python3 scripts/version.py --write\n")
    wrote = subprocess.run([sys.executable, str(tmp_path / "scripts/version.py"), "--write"], capture_output=True)
    assert wrote.returncode == 0
    assert 'version: "9.8.7"' in (tmp_path / "deploy/standalone/version.yaml").read_text()


# ---- docs/deploy.md -----------------------------------------------------------------------------


def test_readme_deploy_commands_run_as_written(tmp_path: Path) -> None:
    kubectl()
    match = re.search(r"^## Deploy on Kubernetes\n(.*?)(?=^## |\Z)", DEPLOY_PAGE, re.S | re.M)
    assert match, "docs/deploy.md has no section 'Deploy on Kubernetes'"
    render_block, local_block = re.findall(r"```sh\n(.*?)```", match.group(1), re.S)
    [expected_block] = re.findall(r"```text\n(.*?)```", match.group(1), re.S)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}", GO=go())
    rendered = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", render_block],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rendered.returncode == 0, rendered.stdout + rendered.stderr
    passed = re.findall(r"(\S+) passed for resource (\S+) against", rendered.stdout + rendered.stderr)
    assert sorted({(Path(f).name, r) for f, r in passed if "ome-selector" in r}) == [
        ("sidecar-sync.yaml", "clusterrole/ome-selector-sync-revisions"),
        ("sidecar-sync.yaml", "clusterrolebinding/ome-selector-sync-revisions"),
        ("sidecar.yaml", "clusterrole/ome-selector-sync-revisions"),
        ("sidecar.yaml", "clusterrolebinding/ome-selector-sync-revisions"),
        *(
            (Path(f).name, r)
            for f in ("standalone-servicemonitor.yaml", "standalone.yaml")
            for r in (
                "clusterrole/ome-selector-sync",
                "clusterrolebinding/ome-selector-sync",
                "deployment/ome-selector",
                "networkpolicy/ome-selector",
                "poddisruptionbudget/ome-selector",
                "service/ome-selector",
                "serviceaccount/ome-selector",
            )
        ),
    ]
    assert {Path(f).name for f, r in passed if r == "deployment/ome-controller-manager"} == {
        "ome.yaml",
        "sidecar.yaml",
        "sidecar-sync.yaml",
    }

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    block = local_block.replace("127.0.0.1:8090", f"127.0.0.1:{port}").replace(
        "/tmp/ome-selector.sock", str(tmp_path / "api.sock")
    )
    local = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert local.returncode == 0, local.stdout + local.stderr
    assert local.stdout.splitlines() == expected_block.strip().splitlines()
