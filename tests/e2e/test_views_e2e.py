"""``effective``, ``history`` and ``sync --dry-run client`` end to end: ``ome-selector serve`` on
127.0.0.1 with the OME catalog, ``../shared/ome-cluster`` and a revision manifest (as ``kubectl get
controllerrevisions -n ome -o yaml`` prints one), asked through the CLI (``--server``, in process
and as a process) and the typed client; the runtime changed with a CacheService upsert.

Pages: reference/kubectl-ome/runtime.md (effective, history, sync, Exit codes, the explain
collection limit); concepts/runtimes/runtime-revisions.md (pin, drift).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from conftest import CATALOG_RUNTIMES, OME_CLUSTER
from helpers_docs import cache_object, entry, revision, runtime
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cache.manifests import load_manifests, read_inference_services
from ome_selector.cli import app as cli
from ome_selector_client import SelectorClient

RUNTIME_FILE = CATALOG_RUNTIMES / "srt/meta/llama-3-2-3b-instruct-rt.yaml"
RUNTIME = yaml.safe_load(RUNTIME_FILE.read_text())
SHARED_REVISION = "cr-srt-llama-3-2-3b-instruct-590753e8"  # the catalog runtime's spec, as OME stored it
CATALOG_HASH = "53f7b6c8"  # this service's hash of that spec
CHANGED_HASH = "e733dc5c"  # after --mem-frac 0.9 -> 0.85
DRIFTED = {
    "type": "RuntimeDrifted",
    "status": "True",
    "reason": "RevisionMismatch",
    "message": f"pinned {SHARED_REVISION}, live spec differs; bump ome.io/runtime-sync annotation to advance",
}


@pytest.fixture
def server(running_server: Any, tmp_path: Path) -> Iterator[tuple[str, SelectorClient]]:
    revisions = tmp_path / "revisions.yaml"
    shared = revision(SHARED_REVISION, RUNTIME, created="2026-09-28T14:15:57Z")
    shared["metadata"].update(uid="c8f4a2e6-1d9b-4b7a-8e3c-5a0f7d2b9e64", resourceVersion="101")
    revisions.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [shared]}))
    process = running_server(manifests=[str(CATALOG_RUNTIMES), str(OME_CLUSTER), str(revisions)])
    assert process.address.startswith("127.0.0.1:")
    with SelectorClient(process.address) as client:
        yield process.address, client


def pinned_file(tmp_path: Path, name: str, conditions: list[dict[str, str]]) -> str:
    """runtime-revisions.md's pinned isvc.yaml on the catalog runtime, pinned to SHARED_REVISION."""
    doc = {
        "apiVersion": "ome.io/v1beta1",
        "kind": "InferenceService",
        "metadata": {
            "name": "llama-3-2-3b-instruct",
            "namespace": "llama-demo",
            "uid": "7d3f9b2e-5c1a-4e8f-9a6b-2f4c8d1e0a37",
            "resourceVersion": "4711",
            "generation": 1,
        },
        "spec": {
            "model": {"name": "llama-3-2-3b-instruct"},
            "runtime": {"name": "srt-llama-3-2-3b-instruct", "autoSync": False},
            "engine": {"minReplicas": 1, "maxReplicas": 1},
        },
        "status": {"observedGeneration": 1, "pinnedRevisionName": SHARED_REVISION, "conditions": conditions},
    }
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def changed_runtime() -> Any:
    (obj,) = load_manifests([str(RUNTIME_FILE)]).objects
    command = obj.cluster_serving_runtime.spec.engine_config.runner.command
    command[list(command).index("--mem-frac") + 1] = "0.85"
    return obj


def test_effective_history_and_sync_before_and_after_the_runtime_changes(
    server: tuple[str, SelectorClient], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    address, client = server
    pinned = pinned_file(tmp_path, "pinned.yaml", [])

    code, out, err = run(capsys, "effective", "-f", pinned, "--server", address)
    assert (code, err) == (0, "")
    assert out.splitlines()[1:5] == [
        "Live      STATE                Available",
        "Live      RUNTIME              CSR/srt-llama-3-2-3b-instruct",
        f"Live      HASH                 {CATALOG_HASH}",
        "Live      ENGINE               RawDeployment (Default)",
    ]
    service = [line for line in out.splitlines() if line.startswith(("Active", "Service"))]
    assert service == [
        "Active    STATE                Available",
        "Active    RUNTIME              CSR/srt-llama-3-2-3b-instruct",
        f"Active    REVISION             {SHARED_REVISION}",
        f"Active    HASH                 {CATALOG_HASH}",
        "Active    ENGINE               RawDeployment (Default)",
        "Service   PIN                  ManagedPin/Resolved",
        "Service   SYNC                 Absent",
        "Service   STATUS               Current",
        "Service   DRIFT                NotReported",
        "Service   LIVE-RELATION        Equal",
    ]
    # Not drifted: sync refuses, status 1.
    assert run(capsys, "sync", "-f", pinned, "--server", address, "--dry-run", "client", "--yes") == (
        1,
        "",
        "error: action refused: managed runtime sync safety evidence is unavailable or inconsistent\n",
    )

    # The runtime changes (runtime-revisions.md, "When the runtime changes"); OME reports the drift.
    client.upsert_objects([changed_runtime()])
    drifted = pinned_file(tmp_path, "drifted.yaml", [DRIFTED])
    code, out, _ = run(capsys, "effective", "-f", drifted, "--server", address)
    lines = out.splitlines()
    assert (code, lines[3]) == (0, f"Live      HASH                 {CHANGED_HASH}")
    assert "Service   DRIFT                ReportedTrue/RevisionMismatch" in lines
    assert "Service   LIVE-RELATION        Different" in lines

    code, out, _ = run(capsys, "history", "-f", drifted, "--server", address)
    assert (code, out) == (
        0,
        "WINDOW    REVISION         CREATED           ROLES   CHECK   LIVE   ISSUES\n"
        "C/B/1/1   cr...#b506b7f3   26-09-28T14:15Z   ARH     OK      DIFF   R0/G0\n",
    )

    code, out, err = run(
        capsys, "sync", "-f", drifted, "--server", address, "--dry-run", "client", "--yes", "--context", "kind-ome"
    )
    assert code == 0
    assert err.splitlines()[0] == "ALPHA runtime sync preview (acceptance is not convergence)"
    fields = [line.split("  ")[0] for line in err.splitlines()[1:] if "   " in line]
    assert fields[:4] == ["FIELD", "Action", "Context", "Workload NS"]
    assert f"Predicted pin     cr-srt-llama-3-2-3b-instruct-{CHANGED_HASH}" in err.splitlines()
    assert "Target evidence   NotFound" in err.splitlines()
    assert f"Current hash      {CATALOG_HASH}" in err.splitlines()
    assert "Pin UID           c8f4a2e6-1d9b-4b7a-8e3c-5a0f7d2b9e64" in err.splitlines()
    assert not any(line.startswith("Target UID") for line in err.splitlines())
    assert f"revision-hash   {CHANGED_HASH}" in out.splitlines()
    assert "follow-up       kubectl ome runtime effective llama-3-2-3b-instruct -..." in out.splitlines()

    # The typed client: the same plan with the caller's request ID.
    (service_message,), _ = read_inference_services(drifted)
    got = client.plan_runtime_sync(service_message, request_id="5b2e7c1a-9d4f-4e8b-a6c3-0f1d2e3b4a59")
    assert (got.token, got.result.request_id, got.refusal) == (
        "cli-runtime-sync-5b2e7c1a-9d4f-4e8b-a6c3-0f1d2e3b4a59",
        "5b2e7c1a-9d4f-4e8b-a6c3-0f1d2e3b4a59",
        pb.SYNC_REFUSAL_UNSPECIFIED,
    )
    report = client.get_runtime_history(service_message, collection_limit=1000)
    assert [(r.name, r.hash, r.relation) for r in report.revisions] == [
        (SHARED_REVISION, CATALOG_HASH, pb.REVISION_RELATION_DIFFERS_FROM_LIVE)
    ]
    view = client.get_effective_runtime(service_message, ome_namespace="elsewhere")
    assert [i.text for i in view.service.issues] == [
        "ActiveRevisionUnavailable",
        f"RevisionNotFound({SHARED_REVISION})",
    ]


def test_the_cli_as_a_process_exits_1_on_a_refusal(server: tuple[str, SelectorClient], tmp_path: Path) -> None:
    address, _ = server
    pinned = pinned_file(tmp_path, "pinned.yaml", [])
    done = subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", "sync", "-f", pinned, "--server", address, "--dry-run", "client",
         "--yes"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (
        1,
        "",
        "error: action refused: managed runtime sync safety evidence is unavailable or inconsistent\n",
    )


def test_explain_beyond_the_collection_limit_through_the_server(
    server: tuple[str, SelectorClient], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI refuses more than 1,000 runtimes; the RPC answers them all (the controller's
    selection has no limit)."""
    address, client = server
    before = client.explain_model("llama-3-2-3b-instruct", "llama-demo")
    assert before.total_size <= 1000
    extra = [cache_object(runtime(f"crowd-{i:04d}", entry())) for i in range(1001 - before.total_size)]
    client.upsert_objects(extra)
    assert client.explain_model("llama-3-2-3b-instruct", "llama-demo").total_size == 1001
    assert run(capsys, "explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo", "--server", address) == (
        1,
        "",
        "error: runtime candidate snapshot exceeds the CLI collection limit\n",
    )


def test_the_readme_grpcurl_calls_run_as_written(running_server: Any) -> None:
    """docs/cli.md, "Effective, history and sync": the grpcurl block against the embedded examples."""
    import os
    import re

    from conftest import REPO_ROOT

    readme = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```sh\n(.*?)```", readme, re.S) if "GetRuntimeHistory" in b]
    process = running_server()
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.replace("127.0.0.1:50051", process.address)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert '"pin_state": "PIN_STATE_AWAITING_PIN"' in out
    assert '"kind": "RuntimeEffectiveReport"' in out
    assert '"observation": "HISTORY_OBSERVATION_COMPLETE"' in out
    assert '"runtime_name": "vllm-llama"' in out
    assert (
        '"refusal_message": "action refused: managed runtime sync safety evidence is unavailable or inconsistent"'
        in out
    )


def test_the_effective_history_sync_commands_run_as_written(running_server: Any) -> None:
    """docs/cli.md, "Effective, history and sync": the CLI block on docs/examples/llama-chat.yaml,
    offline and against a server of the embedded examples (which hold no revisions)."""
    import os
    import re

    from conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "docs/examples/llama-chat.yaml" in b]
    process = running_server()
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.replace("127.0.0.1:50051", process.address)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # effective: the Live view of vllm-llama, awaiting its first pin.
    assert "Live      RUNTIME              CSR/vllm-llama" in lines
    assert "Service   PIN                  ManagedPin/AwaitingPin" in lines
    # history -o wide: one complete window and no revision rows.
    assert lines[-2].split() == ["OBSERVATION", "COMPLETENESS", "PAGES", "REVISION", "CREATED", "HASH", "ROLES",
                                 "SOURCE", "CONSISTENCY", "RELATION", "REVISION-ISSUES", "REPORT-ISSUES"]  # fmt: skip
    assert lines[-1].split() == ["Complete", "RetentionBounded", "1/1", *["-"] * 9]
    # sync refuses, status 1 (the block goes on with `|| true`).
    assert done.stderr.splitlines()[-1] == (
        "error: action refused: managed runtime sync safety evidence is unavailable or inconsistent"
    )
