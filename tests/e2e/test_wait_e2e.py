"""``ome-selector wait NAME -n NS --for=runtime-sync=acknowledged --request-id=ID`` end to end,
as ``kubectl ome wait`` (concepts/runtimes/runtime-revisions.md, "kubectl ome runtime sync";
reference/kubectl-ome/runtime.md, sync "Examples": "It exits ``0`` once the annotation and
``status.lastRuntimeSyncToken`` both hold the token, the InferenceService has no RuntimeDrifted
condition, and its pin is still managed. It exits ``2`` if that doesn't happen within 60 seconds,
or the ``--timeout`` you set, or if the InferenceService is missing, deleted or replaced, and
``1`` on an error."): a real ``ome-selector serve`` on 127.0.0.1, ``wait`` as a process, the
InferenceService changed with CacheService writes as the controller's status updates reach the
cache. Also ``history --gc`` and GetInferenceService against the same server.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import grpc
import pytest
import yaml
from helpers_docs import cache_object
from helpers_views import PINNED, llama_chat, page_sources
from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome_selector_client import SelectorClient, SelectorError
from sidecar_helpers import http_get, metrics_address

REQUEST_ID = "5b2e7c1a-9d4f-4e8b-a6c3-0f1d2e3b4a59"
TOKEN = f"cli-runtime-sync-{REQUEST_ID}"
ROLLED = "cr-vllm-llama-3c18f4a0"
CLI = [sys.executable, "-m", "ome_selector.cli"]


def requested() -> dict[str, Any]:
    """llama-chat right after ``sync``: the annotation holds the token, the controller has not used it."""
    doc = llama_chat()
    doc["metadata"]["annotations"] = {"ome.io/runtime-sync": TOKEN}
    return doc


def used(doc: dict[str, Any] | None = None) -> dict[str, Any]:
    """The controller used the token: pinned to the live spec, token recorded, drift removed."""
    doc = copy.deepcopy(doc or requested())
    doc["status"].update(pinnedRevisionName=ROLLED, lastRuntimeSyncToken=TOKEN, conditions=[])
    return doc


@pytest.fixture
def server(running_server: Any, tmp_path: Path) -> Iterator[tuple[Any, SelectorClient]]:
    manifests = tmp_path / "cluster.yaml"
    manifests.write_text(yaml.safe_dump_all([*page_sources(), requested()]))
    process = running_server(manifests=[str(manifests)], extra_args=["--metrics-listen", "127.0.0.1:0"])
    assert process.address.startswith("127.0.0.1:")
    process.metrics = metrics_address(process)
    with SelectorClient(process.address) as client:
        yield process, client


def start_wait(address: str, *extra: str, name: str = "llama-chat", timeout: str = "30s") -> subprocess.Popen[str]:
    argv = [*CLI, "wait", name, "-n", "team-a", "--for=runtime-sync=acknowledged", f"--request-id={REQUEST_ID}"]
    return subprocess.Popen(
        [*argv, f"--timeout={timeout}", "--server", address, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def watching(server: Any, process: subprocess.Popen[str]) -> None:
    """Until ``wait`` has opened its watch (the server's ``ome_selector_watchers`` gauge is 1),
    and a moment more for its first read, so a write after this is one it sees happen."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()
        status, body = http_get(server.metrics, "/metrics")
        if status == 200 and "\nome_selector_watchers 1.0" in body:
            time.sleep(1.0)
            return
        time.sleep(0.1)
    raise AssertionError("wait did not open its watch")


def upsert(client: SelectorClient, doc: dict[str, Any]) -> None:
    client.upsert_objects([cache_object(doc)])


def test_exits_0_once_the_controller_used_the_token(server: tuple[Any, SelectorClient]) -> None:
    served, client = server
    address = served.address
    process = start_wait(address)
    watching(served, process)
    assert process.poll() is None  # the token is only requested: still waiting
    # A status update that leaves the drift in place is not enough.
    half = requested()
    half["status"]["lastRuntimeSyncToken"] = TOKEN
    upsert(client, half)
    time.sleep(1.0)
    assert process.poll() is None
    upsert(client, used())
    assert finish(process) == (0, "inferenceservice.ome.io/llama-chat condition met\n", "")


def test_exits_0_at_once_when_already_acknowledged(server: tuple[Any, SelectorClient]) -> None:
    served, client = server
    address = served.address
    upsert(client, used())
    assert finish(start_wait(address)) == (0, "inferenceservice.ome.io/llama-chat condition met\n", "")


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda doc: doc["spec"]["runtime"].update(revision=ROLLED), id="pin no longer managed"),
        pytest.param(
            lambda doc: doc["metadata"]["annotations"].update({"ome.io/runtime-sync": "other"}), id="another token"
        ),
        pytest.param(
            lambda doc: doc["status"].update(conditions=llama_chat()["status"]["conditions"]), id="RuntimeDrifted left"
        ),
    ],
)
def test_exits_2_when_the_timeout_passes_first(server: tuple[Any, SelectorClient], change: Any) -> None:
    served, client = server
    address = served.address
    doc = used()
    change(doc)
    upsert(client, doc)
    started = time.monotonic()
    status, out, err = finish(start_wait(address, timeout="2s"))
    assert (status, out, err) == (2, "", "error: timed out waiting for the condition on inferenceservices/llama-chat\n")
    assert time.monotonic() - started >= 2


def test_exits_2_when_missing(server: tuple[Any, SelectorClient]) -> None:
    address = server[0].address
    assert finish(start_wait(address, name="llama-nope")) == (
        2,
        "",
        'error: inferenceservices.ome.io "llama-nope" not found\n',
    )


def test_exits_2_when_deleted(server: tuple[Any, SelectorClient]) -> None:
    served, client = server
    address = served.address
    process = start_wait(address)
    watching(served, process)
    key = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_INFERENCE_SERVICE, namespace="team-a", name="llama-chat")
    client.delete_objects([key])
    assert finish(process) == (2, "", "error: InferenceService team-a/llama-chat was deleted while waiting\n")


def test_exits_2_when_replaced(server: tuple[Any, SelectorClient]) -> None:
    served, client = server
    address = served.address
    process = start_wait(address)
    watching(served, process)
    doc = used()
    doc["metadata"]["uid"] = "00000000-0000-4000-8000-000000000001"
    upsert(client, doc)
    old = llama_chat()["metadata"]["uid"]
    assert finish(process) == (
        2,
        "",
        f"error: InferenceService team-a/llama-chat was replaced while waiting (uid {old} -> "
        "00000000-0000-4000-8000-000000000001)\n",
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--for=condition=Ready"],
            'error: unsupported --for "condition=Ready": only runtime-sync=acknowledged is supported',
        ),
        (["--request-id=not-a-uuid"], 'error: --request-id "not-a-uuid" is not a UUID (the request ID sync prints)'),
    ],
)
def test_exits_1_on_a_bad_flag(server: tuple[Any, SelectorClient], argv: list[str], message: str) -> None:
    address = server[0].address
    status, out, err = finish(start_wait(address, *argv))
    assert (status, out, err.splitlines()[-1]) == (1, "", message)


def test_exits_1_when_the_server_is_unreachable() -> None:
    status, _, err = finish(start_wait("127.0.0.1:1"))
    assert status == 1
    assert err.startswith("error: UNAVAILABLE: ")


def test_get_inference_service(server: tuple[Any, SelectorClient]) -> None:
    client = server[1]
    got = client.get_inference_service("team-a", "llama-chat")
    assert (got.inference_service.metadata.uid, got.inference_service.status.pinned_revision_name) == (
        llama_chat()["metadata"]["uid"],
        PINNED,
    )
    with pytest.raises(SelectorError) as caught:
        client.get_inference_service("team-a", "nope")
    assert (caught.value.code, caught.value.message) == (
        grpc.StatusCode.NOT_FOUND,
        'inferenceservices.ome.io "nope" not found',
    )
    with pytest.raises(SelectorError) as bad:
        client.get_inference_service("Team_A", "")
    assert bad.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert [field for field, _ in bad.value.field_violations] == ["namespace", "name"]


def test_history_gc_against_the_server(server: tuple[Any, SelectorClient]) -> None:
    """``history --gc --server``: the page's two revisions of vllm-llama, both among the ten
    newest; the pinned one is kept because llama-chat reports it."""
    served, client = server
    address = served.address
    done = subprocess.run(
        [*CLI, "history", "--gc", "--server", address, "--now", "2026-10-01T00:00:00Z", "-o", "wide"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows[0] == [
        "REVISION",
        "RUNTIME-OF",
        "RANK",
        "VERDICT",
        "ACTION",
        "REASON",
        "DELETE-AFTER",
        "CREATED",
        "USED-BY",
        "MESSAGE",
    ]
    assert [r[:8] for r in rows[1:]] == [
        [ROLLED, "ClusterServingRuntime/vllm-llama", "1", "Keep", "-", "Newest", "-", "2026-09-20T14:30:00Z"],
        [PINNED, "ClusterServingRuntime/vllm-llama", "2", "Keep", "-", "Reported", "-", "2026-09-01T08:00:00Z"],
    ]
    assert rows[2][8] == "team-a/llama-chat"
    plan = client.plan_revision_gc(pb.PlanRevisionGCRequest(keep_newest=1, now="2026-10-01T00:00:00Z"))
    assert [(e.name, pb.RevisionGCReason.Name(e.reason)) for e in plan.revisions] == [
        (ROLLED, "REVISION_GC_REASON_NEWEST"),
        (PINNED, "REVISION_GC_REASON_REPORTED"),
    ]


@pytest.mark.parametrize("title", ["Wait for a runtime sync", "Revision garbage collection"])
def test_the_docs_blocks_run_as_written(server: tuple[Any, SelectorClient], title: str) -> None:
    """docs/cli.md's ``wait`` and ``history --gc`` blocks against this server: llama-chat only
    requested its sync, so wait times out (status 2); vllm-llama's two revisions are both kept,
    so ``-o name`` prints no revision to delete."""
    import os
    import re

    from conftest import REPO_ROOT

    text = (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    body = re.search(rf"^### {re.escape(title)}\n(.*?)(?=^##)", text, re.S | re.M)
    assert body is not None
    [block] = re.findall(r"```sh\n(.*?)```", body.group(1), re.S)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    done = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.replace("127.0.0.1:50051", server[0].address)],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    if title == "Wait for a runtime sync":
        assert (done.stdout, done.stderr) == (
            "status 2\n",
            "error: timed out waiting for the condition on inferenceservices/llama-chat\n",
        )
    else:
        lines = done.stdout.splitlines()
        assert lines[0].split()[:3] == ["REVISION", "RUNTIME-OF", "RANK"]
        assert [line.split()[0] for line in lines[1:]] == [ROLLED, PINNED]


def test_commands_read_the_named_inferenceservice_from_the_servers_cache(server: tuple[Any, SelectorClient]) -> None:
    """``effective llama-chat -n team-a --server``: the InferenceService comes from the server's
    cache (GetInferenceService); a missing one is ``get InferenceService: <API server's error>``,
    sync's ``required Kubernetes API request failed; ...`` (reference/kubectl-ome/runtime.md)."""
    address = server[0].address

    def cli(*argv: str) -> tuple[int, str, str]:
        done = subprocess.run([*CLI, *argv, "--server", address], capture_output=True, text=True, timeout=60)
        return done.returncode, done.stdout, done.stderr

    status, out, _ = cli("effective", "llama-chat", "-n", "team-a")
    rows = [line.split(None, 2) for line in out.splitlines()[1:]]
    assert status == 0
    assert ["Active", "REVISION", PINNED] in rows
    assert ["Service", "SYNC", "Pending"] in rows  # the fixture's token, not yet used
    assert cli("effective", "llama-nope", "-n", "team-a") == (
        1,
        "",
        'error: get InferenceService: inferenceservices.ome.io "llama-nope" not found\n',
    )
    assert cli("sync", "llama-nope", "-n", "team-a", "--dry-run", "client", "--yes") == (
        1,
        "",
        "error: required Kubernetes API request failed; check access and connectivity\n",
    )
    status, _, err = cli("explain", "--isvc", "llama-chat", "-n", "team-a")
    assert (status, err.splitlines()[-1]) == (
        0,
        "Note: spec.runtime is explicit; automatic selection below is hypothetical.",
    )
