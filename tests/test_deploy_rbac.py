"""deploy/standalone's RBAC on a real kube-apiserver and etcd (scripts/kube-binaries.sh, found
through KUBEBUILDER_ASSETS): with OME's CRDs installed and the rendered ServiceAccount, ClusterRole
and ClusterRoleBinding applied, the ServiceAccount (impersonated) lists and watches every synced
kind cluster-wide, and the API server's own authorizer (SubjectAccessReview) allows it exactly
get, list and watch on those kinds and nothing else."""

from __future__ import annotations

import json
import os
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from conftest import REPO_ROOT, SHARED

CRDS = SHARED / "ome-catalog" / "crd" / "full"
TOKEN = "ome-selector-rbac-test"
SERVICE_ACCOUNT = "system:serviceaccount:ome:ome-selector"
SA_GROUPS = ["system:serviceaccounts", "system:serviceaccounts:ome", "system:authenticated"]
# (group, version, plural, namespaced): what ome-selector-sync lists and watches.
SYNCED = [
    ("ome.io", "v1beta1", "servingruntimes", True),
    ("ome.io", "v1beta1", "clusterservingruntimes", False),
    ("ome.io", "v1beta1", "basemodels", True),
    ("ome.io", "v1beta1", "clusterbasemodels", False),
    ("ome.io", "v1beta1", "acceleratorclasses", False),
    ("ome.io", "v1beta1", "inferenceservices", True),
    ("apps", "v1", "controllerrevisions", True),
]
VERBS = ["get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def assets() -> Path:
    folder = os.environ.get("KUBEBUILDER_ASSETS")
    if not folder:
        reason = "KUBEBUILDER_ASSETS unset: export KUBEBUILDER_ASSETS=$(scripts/kube-binaries.sh)"
        if os.environ.get("CI"):
            pytest.fail(reason)  # .ci/run exports it before the tests
        pytest.skip(reason)
    return Path(folder)


class ApiServer:
    """kube-apiserver on 127.0.0.1 with a static admin token (system:masters) and RBAC."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.context = ssl.create_default_context()
        self.context.check_hostname = False
        self.context.verify_mode = ssl.CERT_NONE  # its self-signed serving certificate, on loopback

    def call(
        self, method: str, path: str, body: Any = None, impersonate: bool = False, timeout: float = 30
    ) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.url + path,
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        if impersonate:
            request.add_header("Impersonate-User", SERVICE_ACCOUNT)
            for group in SA_GROUPS:
                request.add_header("Impersonate-Group", group)
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(request, context=self.context, timeout=timeout) as answer:
                    return answer.status, answer.read()
            except urllib.error.HTTPError as error:
                body = error.read()
                # 429 while a new CRD's storage starts: the server says when to come back.
                if error.code != 429 or time.monotonic() > deadline:
                    return error.code, body
                time.sleep(float(error.headers.get("Retry-After") or 1))

    def apply(self, doc: dict[str, Any]) -> None:
        group, _, version = doc["apiVersion"].rpartition("/")
        base = f"/apis/{group}/{version}" if group else f"/api/{version}"
        plural = {
            "CustomResourceDefinition": "customresourcedefinitions",
            "Namespace": "namespaces",
            "ServiceAccount": "serviceaccounts",
            "ClusterRole": "clusterroles",
            "ClusterRoleBinding": "clusterrolebindings",
        }[doc["kind"]]
        namespace = doc["metadata"].get("namespace")
        path = f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"
        status, body = self.call("POST", path, doc)
        assert status == 201, (doc["kind"], doc["metadata"]["name"], body[:500])


@pytest.fixture(scope="module")
def apiserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiServer]:
    folder = assets()
    work = tmp_path_factory.mktemp("kube")
    (work / "tokens.csv").write_text(f"{TOKEN},admin,admin,system:masters\n")
    subprocess.run(
        ["openssl", "genrsa", "-out", str(work / "sa.key"), "2048"], check=True, capture_output=True, timeout=60
    )
    client, peer, secure = free_port(), free_port(), free_port()
    logs = [open(work / "etcd.log", "wb"), open(work / "apiserver.log", "wb")]
    etcd = subprocess.Popen(
        [
            str(folder / "etcd"),
            f"--data-dir={work / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{client}",
            f"--advertise-client-urls=http://127.0.0.1:{client}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
            f"--initial-cluster=default=http://127.0.0.1:{peer}",
        ],
        stdout=logs[0],
        stderr=subprocess.STDOUT,
    )
    server = subprocess.Popen(
        [
            str(folder / "kube-apiserver"),
            f"--etcd-servers=http://127.0.0.1:{client}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            f"--secure-port={secure}",
            f"--cert-dir={work / 'certs'}",
            f"--token-auth-file={work / 'tokens.csv'}",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={work / 'sa.key'}",
            f"--service-account-signing-key-file={work / 'sa.key'}",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--disable-admission-plugins=ServiceAccount",
        ],
        stdout=logs[1],
        stderr=subprocess.STDOUT,
    )
    api = ApiServer(f"https://127.0.0.1:{secure}")
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if api.call("GET", "/readyz", timeout=5)[0] == 200:
                    break
            except OSError:
                pass
            assert server.poll() is None and etcd.poll() is None, (work / "apiserver.log").read_text()[-3000:]
            assert time.monotonic() < deadline, (work / "apiserver.log").read_text()[-3000:]
            time.sleep(0.5)
        yield api
    finally:
        for process in (server, etcd):
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for log in logs:
            log.close()


def standalone_rbac() -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl not installed: deploy/standalone not rendered")
        pytest.skip("kubectl not installed: deploy/standalone not rendered")
    out = subprocess.run(
        [kubectl, "kustomize", str(REPO_ROOT / "deploy" / "standalone")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    docs = [d for d in yaml.safe_load_all(out.stdout) if d]
    return [d for d in docs if d["kind"] in ("ServiceAccount", "ClusterRole", "ClusterRoleBinding")]


def without_schema(crd: dict[str, Any]) -> dict[str, Any]:
    """OME's CRD with its group, names, scope and versions, and an open schema: RBAC never looks at the
    schema, and OME's (tens of thousands of lines each) take the API server minutes to load."""
    versions = [
        {
            "name": v["name"],
            "served": v["served"],
            "storage": v["storage"],
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
        }
        for v in crd["spec"]["versions"]
    ]
    return {**crd, "spec": {**crd["spec"], "versions": versions}}


def allowed(api: ApiServer, group: str, plural: str, verb: str, namespace: str = "") -> bool:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": SERVICE_ACCOUNT,
            "groups": SA_GROUPS,
            "resourceAttributes": {"group": group, "resource": plural, "verb": verb, "namespace": namespace},
        },
    }
    status, body = api.call("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    assert status == 201, body
    return bool(json.loads(body)["status"].get("allowed"))


def test_the_standalone_service_account_reads_exactly_the_synced_kinds(apiserver: ApiServer) -> None:
    rbac = standalone_rbac()
    assert sorted(d["kind"] for d in rbac) == ["ClusterRole", "ClusterRoleBinding", "ServiceAccount"]
    for plural in sorted({plural for group, _, plural, _ in SYNCED if group == "ome.io"}):
        apiserver.apply(without_schema(yaml.safe_load((CRDS / f"ome.io_{plural}.yaml").read_text())))
    apiserver.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ome"}})
    # Before the ClusterRole: nothing is allowed (the test can fail).
    assert not allowed(apiserver, "ome.io", "servingruntimes", "list")
    for doc in rbac:
        apiserver.apply(doc)

    def established() -> bool:
        status, body = apiserver.call("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        items = json.loads(body)["items"]
        return status == 200 and all(
            any(
                c["type"] == "Established" and c["status"] == "True"
                for c in (i.get("status") or {}).get("conditions") or []
            )
            for i in items
        )

    deadline = time.monotonic() + 30
    while not established():
        assert time.monotonic() < deadline, "CRDs not established"
        time.sleep(0.2)

    for group, version, plural, namespaced in SYNCED:
        base = f"/apis/{group}/{version}/{plural}"
        status, body = apiserver.call("GET", base, impersonate=True)
        assert (status, json.loads(body)["kind"].endswith("List")) == (200, True), (plural, body[:300])
        status, _ = apiserver.call("GET", f"{base}?watch=1&timeoutSeconds=1", impersonate=True)
        assert status == 200, plural
        scope = "ome" if namespaced else ""
        for verb in VERBS:
            assert allowed(apiserver, group, plural, verb, scope) == (verb in ("get", "list", "watch")), (plural, verb)
        # Cluster-wide too (the informers list every namespace).
        assert allowed(apiserver, group, plural, "list") and allowed(apiserver, group, plural, "watch")
        create = {"apiVersion": f"{group}/{version}", "kind": "Unused", "metadata": {"name": "x"}}
        path = f"/apis/{group}/{version}/namespaces/ome/{plural}" if namespaced else base
        assert apiserver.call("POST", path, create, impersonate=True)[0] == 403, plural

    # Nothing beyond the synced kinds: not the other OME kinds, not Secrets, not the status subresource.
    assert not allowed(apiserver, "ome.io", "benchmarkjobs", "list")
    assert not allowed(apiserver, "ome.io", "finetunedweights", "list")
    assert not allowed(apiserver, "", "secrets", "list", "ome")
    assert not allowed(apiserver, "apps", "deployments", "list")
    assert apiserver.call("GET", "/api/v1/namespaces/ome/secrets", impersonate=True)[0] == 403
