"""End-to-end: the Go example client (client/go/cmd/selectorexample) against the real server.

The binary is built by ``client/go/ci.sh``. Without it the tests are skipped locally, but fail
when the ``CI`` environment variable is set, so CI cannot silently lose the Go coverage.
The server runs as ``ome-selector serve --listen 127.0.0.1:0`` (conftest.py's
``running_server`` reads the port from the ``listening on 127.0.0.1:PORT`` log line). The Go
program applies its own snapshot (the docs' hopper runtime, the catalog runtime
srt-llama-3-3-70b-instruct that lists no classes, the ClusterBaseModel llama-3-3-70b-instruct,
three AcceleratorClasses, two InferenceServices of llama-demo), so nothing here depends on the
embedded example catalog. With ``-watch`` it then watches those InferenceServices, makes one
runtime write and prints the events the server streams for it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import ServerProcess

ROOT = Path(__file__).resolve().parents[2]
GO_BINARY = ROOT / "client" / "go" / "bin" / "selectorexample"
ACCELERATOR_REASON = "runtime does not support the required accelerator class"
# runtime-accelerator-class-matching.md, with both runtimes of the Go program's snapshot
# (listed newest first: the hopper runtime is the newer one).
A100_NO_RUNTIME_MESSAGE = (
    "no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
    "Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: "
    f"llama-3-3-70b-hopper ({ACCELERATOR_REASON}); srt-llama-3-3-70b-instruct ({ACCELERATOR_REASON})"
)


# --- helpers --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def go_binary() -> Path:
    if not GO_BINARY.is_file():
        reason = f"{GO_BINARY.relative_to(ROOT)} is missing: build it with client/go/ci.sh"
        if os.environ.get("CI"):
            pytest.fail(f"{reason} (CI is set, so the Go client tests must run)")
        pytest.skip(reason)
    return GO_BINARY


@pytest.fixture
def server(running_server: Callable[..., ServerProcess]) -> ServerProcess:
    """``ome-selector serve --listen 127.0.0.1:0`` with the embedded catalog (conftest.py)."""
    return running_server()


def run_example(binary: Path, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(binary), *args], capture_output=True, text=True, timeout=timeout, check=False)


def output_lines(result: subprocess.CompletedProcess[str], srv: ServerProcess) -> list[str]:
    assert result.returncode == 0, (
        f"selectorexample rc={result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}\n"
        "server log:\n" + "\n".join(srv.lines[-60:])
    )
    return result.stdout.splitlines()


# --- tests ----------------------------------------------------------------------------------------


def test_h100_selects_the_hopper_runtime(go_binary: Path, server: ServerProcess) -> None:
    lines = output_lines(run_example(go_binary, "-addr", server.address, "-class", "nvidia-h100"), server)

    assert "health: SERVING" in lines
    assert (
        "model: ClusterBaseModel/llama-3-3-70b-instruct label=mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0"
        in lines
    )
    assert "selected: ClusterServingRuntime/llama-3-3-70b-hopper score=2" in lines
    assert [line for line in lines if line.startswith("summary: ")] == [
        "summary: 1/2 runtimes are candidates: 1 accelerator class"
    ]
    assert [line for line in lines if line.startswith("excluded: ")] == [
        f"excluded: srt-llama-3-3-70b-instruct: {ACCELERATOR_REASON}",
    ]
    assert not any(line.startswith("no_runtime_message: ") for line in lines)
    assert "explain: ClusterServingRuntime/llama-3-3-70b-hopper verdict=CANDIDATE rank=1 score=2 reason=-" in lines
    assert (
        f"explain: ClusterServingRuntime/srt-llama-3-3-70b-instruct verdict=EXCLUDED rank=0 score=0 reason={ACCELERATOR_REASON}"
        in lines
    )


def test_a100_selects_nothing_and_reports_ome_message(go_binary: Path, server: ServerProcess) -> None:
    lines = output_lines(run_example(go_binary, "-addr", server.address, "-class", "nvidia-a100"), server)

    assert "selected: none" in lines
    assert f"no_runtime_message: {A100_NO_RUNTIME_MESSAGE}" in lines
    assert [line for line in lines if line.startswith("summary: ")] == [
        "summary: 0/2 runtimes are candidates: 2 accelerator class"
    ]
    assert [line for line in lines if line.startswith("excluded: ")] == [
        f"excluded: llama-3-3-70b-hopper: {ACCELERATOR_REASON}",
        f"excluded: srt-llama-3-3-70b-instruct: {ACCELERATOR_REASON}",
    ]


def test_unreachable_server_fails_within_the_timeout(go_binary: Path) -> None:
    # A port nothing listens on: bind one, then close it before the client dials.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{sock.getsockname()[1]}"
    started = time.monotonic()
    result = run_example(go_binary, "-addr", address, "-timeout", "2s", timeout=30)
    elapsed = time.monotonic() - started

    assert result.returncode == 1, result
    assert "ApplySnapshot" in result.stderr
    assert "selected:" not in result.stdout
    assert elapsed < 15, f"took {elapsed:.1f}s with -timeout 2s"


def test_waits_for_serving_and_gives_up_on_an_unsynced_cache(
    go_binary: Path, running_server: Callable[..., ServerProcess]
) -> None:
    # -skip-snapshot: the program only waits for health, which stays NOT_SERVING on a server
    # that waits for a controller's first ApplySnapshot.
    srv = running_server(wait_for_sync=True)
    started = time.monotonic()
    result = run_example(go_binary, "-addr", srv.address, "-skip-snapshot", "-timeout", "2s", timeout=30)
    elapsed = time.monotonic() - started

    assert result.returncode == 1, result
    assert "ome.selector.v1.SelectionService did not become SERVING (last: NOT_SERVING)" in result.stderr
    assert "selected:" not in result.stdout
    assert 1.5 < elapsed < 15, f"took {elapsed:.1f}s with -timeout 2s"


def test_the_watcher_prints_the_events_of_its_runtime_write(go_binary: Path, server: ServerProcess) -> None:
    """-watch: the two cached InferenceServices of the program's snapshot, then its one write
    (srt-llama-3-3-70b-instruct auto-selectable at priority 2) moves the one that asks for no
    accelerator class, and the stream ends after that write's stats."""
    lines = output_lines(run_example(go_binary, "-addr", server.address, "-watch"), server)
    hopper, srt = "ClusterServingRuntime/llama-3-3-70b-hopper", "ClusterServingRuntime/srt-llama-3-3-70b-instruct"
    assert lines[lines.index("health: SERVING") :][-8:] == [
        f"watch: current llama-demo/llama-3-3-70b runtime={hopper} ready=-",
        f"watch: current llama-demo/llama-3-3-70b-h100 runtime={hopper} ready=-",
        "watch: initial state: 2 InferenceServices at selectorexample-1",
        f"upserted: {srt} version=selectorexample-2",
        f"watch: change llama-demo/llama-3-3-70b {hopper} -> {srt} step=CHANGE_STEP_CHECK_PASSED",
        "watch:   reason: ClusterServingRuntime srt-llama-3-3-70b-instruct passes the autoSelect check now (before: "
        "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips "
        "it (pin it explicitly via spec.runtime.name instead))",
        "watch:   cause: ClusterServingRuntime srt-llama-3-3-70b-instruct: autoSelect false → true, priority 1 → 2",
        "watch: write selectorexample-2 reevaluated=2 changed=1 matched=1",
    ]
    # Another namespace sees the write's stats and none of its changes.
    lines = output_lines(run_example(go_binary, "-addr", server.address, "-watch", "-namespace", "team-b"), server)
    assert [line for line in lines if line.startswith(("watch:", "upserted:"))] == [
        "watch: initial state: 0 InferenceServices at selectorexample-1",
        f"upserted: {srt} version=selectorexample-2",
        "watch: write selectorexample-2 reevaluated=2 changed=1 matched=0",
    ]
