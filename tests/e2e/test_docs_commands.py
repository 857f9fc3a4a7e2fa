"""The docs' command blocks no other test runs, run as written (tests/docs/test_docs_blocks.py
keeps the table of which test runs which block): each command of a block as a terminal runs it,
against real servers on 127.0.0.1 or a unix socket in a temp dir. A page's ``127.0.0.1:50051``
is replaced by the test server's address; a ``serve`` command as written gets its loopback
address from ``OME_SELECTOR_LISTEN`` (the flag's environment variable), so the command is the
page's."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest
from conftest import CATALOG_RUNTIMES, OME_CLUSTER, REPO_ROOT, ServerProcess, StreamLines
from helpers_markdown import Block, blocks, commands
from ome_selector_client import SelectorClient

PAGE_ADDRESS = "127.0.0.1:50051"
VENV_BIN = Path(sys.executable).parent
ENV = dict(os.environ, PATH=f"{VENV_BIN}:{os.environ['PATH']}")


def _block(path: str, section: str, starts: str) -> Block:
    """The one shell block of the section ``## <section>`` of ``path`` whose text starts with ``starts``."""
    [block] = [b for b in blocks(path) if b.section == section and b.lang == "sh" and b.body.startswith(starts)]
    return block


def _following(path: str, block: Block, lang: str) -> str:
    """The body of the first ```lang block after ``block`` on its page."""
    return next(b.body for b in blocks(path) if b.line > block.line and b.lang == lang)


def _run(command: str, address: str = PAGE_ADDRESS, **replace: str) -> subprocess.CompletedProcess[str]:
    script = command.replace(PAGE_ADDRESS, address)
    for old, new in replace.items():
        script = script.replace(old, new)
    return subprocess.run(
        ["bash", "-o", "pipefail", "-c", script],
        cwd=REPO_ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# ---- README.md --------------------------------------------------------------------------------


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def test_the_quick_start_installs_and_serves() -> None:
    """README.md "Quick start": the install command on this checkout's .venv (the one running the
    suite, so its packages are there already), then ``serve`` on loopback with the embedded
    examples, stopped with SIGTERM."""
    block = _block("README.md", "Quick start", "python3 -m venv .venv")
    [command] = commands(block.body)
    venv = REPO_ROOT / ".venv"
    assert Path(sys.prefix) == venv, f"run the suite from {venv} (the README's command): the quick start reinstalls it"
    python3 = subprocess.run(
        ["python3", "-c", "import sys; print(sys.base_prefix)"], capture_output=True, text=True, check=True, timeout=60
    ).stdout.strip()
    assert python3 == sys.base_prefix, (
        f"python3 on PATH ({python3}) is not the Python that made {venv} ({sys.base_prefix})"
    )
    process = subprocess.Popen(
        ["bash", "-c", command],
        cwd=REPO_ROOT,
        env=dict(os.environ, OME_SELECTOR_LISTEN="127.0.0.1:0", PYTHONUNBUFFERED="1"),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    stderr = StreamLines(process.stderr)
    try:
        listening = stderr.wait(
            lambda lines: next(
                (m for m in map(re.compile(r"listening on (127\.0\.0\.1:\d+)").search, lines) if m), None
            ),
            "the server's listening line",
            timeout=600,
        )
        with SelectorClient(listening.group(1)) as client:
            assert client.health() == "SERVING"
            assert client.explain_model("llama-3-2-3b-instruct", "llama-demo").total_size == 7
        # bash runs the chain's last command in its own process (exec): that is the server.
        [serve] = _children(process.pid) or [process.pid]
        os.kill(serve, signal.SIGTERM)
        assert process.wait(60) == 0, "\n".join(stderr.lines)
    finally:
        if process.poll() is None:
            for pid in _children(process.pid):
                os.kill(pid, signal.SIGKILL)
            process.kill()
            process.wait(30)


# ---- docs/cli.md ------------------------------------------------------------------------------


def test_the_query_commands_run_as_written(running_server: Callable[..., ServerProcess]) -> None:
    """docs/cli.md "Ask from the command line", its first block: offline and against a server of
    the embedded examples; the explain output is the page's (its rows before ``...``)."""
    block = _block("docs/cli.md", "Ask from the command line", "# offline, against the embedded examples")
    server = running_server()
    select, select_full, explain, explain_remote, what_if, watch = commands(block.body)

    results = [_run(c, server.address) for c in (select, select_full, explain, explain_remote, what_if)]
    assert [r.returncode for r in results] == [0, 0, 0, 0, 1], [r.stderr for r in results]
    assert "Runtimes: 1/7 runtimes are candidates: 6 accelerator class" in results[0].stdout
    assert len(results[1].stdout) > len(results[0].stdout)  # --view full adds every exclusion
    page_rows = _following("docs/cli.md", block, "output").splitlines()
    assert page_rows[-1] == "..."
    assert results[2].stdout.splitlines()[: len(page_rows) - 1] == page_rows[:-1]
    assert results[3].stdout == results[2].stdout
    assert re.search(
        r"^llama-70b-h100 +llama-demo +srt-llama-3-3-70b-instruct-hopper +none \(RuntimeNotFound\) +"
        r"ClusterServingRuntime srt-llama-3-3-70b-instruct-hopper was deleted$",
        results[4].stdout,
        re.M,
    ), results[4].stdout

    watcher = subprocess.Popen(
        ["bash", "-c", watch.replace(PAGE_ADDRESS, server.address)],
        cwd=REPO_ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert watcher.stdout is not None
    out = StreamLines(watcher.stdout)
    initial = out.wait(
        lambda lines: next((line for line in lines if line.startswith("# initial state")), None),
        "the watch's initial state",
        timeout=60,
    )
    assert initial.startswith("# initial state: 0 InferenceServices at cache version manifests-")
    assert server.stop() == 0
    assert watcher.wait(60) == 0  # the server ended the stream


def test_the_admission_commands_run_as_written() -> None:
    """docs/cli.md "Admission, reconcile, effective configuration, runtime validation", offline."""
    block = _block("docs/cli.md", "Ask from the command line", "# explain by model, without an InferenceService")
    explain, effective, admit, reconcile, validate = (_run(c) for c in commands(block.body))
    assert [r.returncode for r in (explain, effective, admit, reconcile, validate)] == [0, 0, 1, 0, 1]
    assert explain.stdout.splitlines()[1].split() == ["team-llama", "Namespaced", "Yes", "1", "2", "2", "-"]
    assert "Live      RUNTIME              CSR/llama-3-3-70b-hopper" in effective.stdout.splitlines()
    assert (admit.stdout + admit.stderr).startswith(
        'Error from server: admission webhook "inferenceservice.ome-webhook-server.validator" denied the request: '
        "no supporting runtime found for model llama-3-3-70b-instruct"
    )
    assert reconcile.stdout.splitlines()[0] == "Selected runtime: ClusterServingRuntime/srt-llama-3-3-70b-instruct"
    assert (validate.stdout + validate.stderr).startswith(
        'Error from server: admission webhook "clusterservingruntime.ome-webhook-server.validator" denied the '
        "request: unknown accelerator classes"
    )


def test_the_tree_commands_run_as_written(running_server: Callable[..., ServerProcess]) -> None:
    """docs/cli.md "The inheritance tree": the offline command prints the page's tree; the grpcurl
    call answers the same tree from a server of the same manifests."""
    offline = _block("docs/cli.md", "Ask from the command line", ".venv/bin/ome-selector tree team-llama-70b-child")
    grpcurl = _block(
        "docs/cli.md", "Ask from the command line", """grpcurl -plaintext -d '{"name": "team-llama-70b-child","""
    )
    [command] = commands(offline.body)
    done = _run(command)
    assert (done.returncode, done.stdout) == (0, _following("docs/cli.md", offline, "text"))

    server = running_server(manifests=[CATALOG_RUNTIMES, OME_CLUSTER])
    [call] = commands(grpcurl.body)
    done = _run(call, server.address)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["kind"], report["snapshot"]) == ("RuntimeTreeReport", "RUNTIME_TREE_SNAPSHOT_COMPLETE")
    [context] = report["contexts"]
    [head] = context["heads"]
    assert [n["runtime"]["name"] for n in head["chain"]] == [
        "srt-llama-3-3-70b-instruct-hopper",
        "team-llama-70b-child",
    ]
    assert head["users"] == [{"namespace": "team-a", "name": "llama-70b-named-child"}]


# ---- docs/deploy.md ---------------------------------------------------------------------------


def test_serving_the_real_catalog_runs_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/deploy.md "Serve OME's real catalog": the catalog and ome-cluster load, and every
    InferenceService of ome-cluster is cached."""
    block = _block("docs/deploy.md", "Serve OME's real catalog", ".venv/bin/ome-selector serve --manifests")
    [command] = commands(block.body)
    monkeypatch.setenv("OME_SELECTOR_LISTEN", "127.0.0.1:0")
    server = ServerProcess(shlex.split(command))
    try:
        address = server.wait_for_line(r"listening on (127\.0\.0\.1:\d+)").group(1)
        with SelectorClient(address) as client:
            assert client.health() == "SERVING"
            status = client.get_cache_status()
            assert status.synced
            assert client.explain_model("llama-3-3-70b-instruct", "llama-demo").total_size > 200
    finally:
        assert server.stop() == 0


# ---- docs/architecture.md ---------------------------------------------------------------------


def test_the_soak_runs_for_seconds() -> None:
    """docs/architecture.md "Soak": the command's tool for three seconds instead of ten minutes."""
    block = _block("docs/architecture.md", "Soak", ".venv/bin/python -m tools.soak")
    [command] = commands(block.body)
    argv = shlex.split(command, comments=True)
    assert argv == [".venv/bin/python", "-m", "tools.soak", "--minutes", "10"]
    done = _run(shlex.join([sys.executable, *argv[1:4], "0.05", "--every", "1"]))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.fullmatch(r"soak: \d+ at 127\.0\.0\.1:\d+, 427 objects, 8 InferenceServices, .*", lines[0]), lines[0]
    ticks = [line for line in lines if line.startswith("t=")]
    assert ticks and all(line.endswith("failures=0") for line in ticks), lines
    assert lines[-1].startswith("lowest RSS per minute (MB): ")


# ---- docs/go.md -------------------------------------------------------------------------------


def _go() -> str:
    found = "/usr/local/go/bin/go" if os.access("/usr/local/go/bin/go", os.X_OK) else shutil.which("go")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("no Go toolchain: client/go/bin/selectorexample cannot be built")
        pytest.skip("no Go toolchain: client/go/bin/selectorexample cannot be built")
    return found


def test_the_example_command_runs_as_written() -> None:
    """docs/go.md "Build and test": the server in the background, the example with -watch against
    it, then the server stopped (client/go/ci.sh builds client/go/bin/selectorexample; built here
    when it is missing)."""
    block = _block("docs/go.md", "Build and test", ".venv/bin/ome-selector serve --listen 127.0.0.1:50051 &")
    if not (REPO_ROOT / "client/go/bin/selectorexample").exists():
        subprocess.run(
            [_go(), "build", "-o", "bin/selectorexample", "./cmd/selectorexample"],
            cwd=REPO_ROOT / "client" / "go",
            env=dict(os.environ, GOTOOLCHAIN="local", GONOSUMDB="github.com/sgl-project/ome"),
            check=True,
            timeout=900,
        )
    done = _run(block.body, f"127.0.0.1:{_free_port()}")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert "watch: initial state: 2 InferenceServices at selectorexample-1" in lines
    assert "watch: write selectorexample-2 reevaluated=2 changed=1 matched=1" in lines


# ---- docs/run-with-ome.md ---------------------------------------------------------------------


def _embedded_examples(answer: dict[str, Any]) -> bool:
    """True when a GetCacheStatus answer (grpcurl's JSON) is the synced embedded examples."""
    status = answer["status"]
    counts = {c["kind"]: c.get("count", 0) for c in status["counts"]}
    assert (status["synced"], counts["OBJECT_KIND_CLUSTER_SERVING_RUNTIME"], counts["OBJECT_KIND_SERVING_RUNTIME"]) == (
        True,
        6,
        1,
    ), status
    return True


def test_the_sidecar_grpcurl_calls_run_on_loopback(
    running_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    """docs/run-with-ome.md "Reach the sidecar with grpcurl": the grpcurl calls, with reflection
    off as in the sidecar, against a server on loopback (for the port-forward) and one on a unix
    socket (for the debug container's mount); kubectl needs a cluster."""
    forwarded = _block("docs/run-with-ome.md", "Reach the sidecar with grpcurl", "kubectl -n ome port-forward")
    debug = _block("docs/run-with-ome.md", "Reach the sidecar with grpcurl", "pod=$(kubectl")
    port_forward, call = commands(forwarded.body)
    assert port_forward == "kubectl -n ome port-forward deploy/ome-selector 50051:50051"
    server = running_server(extra_args=["--no-reflection"])
    done = _run(call, server.address)
    assert done.returncode == 0, done.stderr
    assert _embedded_examples(json.loads(done.stdout))

    *kubectl, in_container = commands(debug.body)
    assert [c.split()[0] for c in kubectl] == ["pod=$(kubectl", "echo", "kubectl"]
    sock = tmp_path / "api.sock"
    running_server(listen=f"unix:{sock}", extra_args=["--no-reflection"])
    done = _run(in_container, **{"/tmp/protos": str(REPO_ROOT / "protos"), "/run/ome-selector/api.sock": str(sock)})
    assert done.returncode == 0, done.stderr
    assert _embedded_examples(json.loads(done.stdout))
