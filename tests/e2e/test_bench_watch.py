"""``python -m tools.bench_watch`` (docs/architecture.md, "The watch benchmark") runs end to end on a small cluster (a
real server on 127.0.0.1, the OME catalog and ome-cluster): every section, the writes that can
move none re-evaluating none, and OME's count beside ours. Timings are printed, never asserted."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import REPO_ROOT


def test_the_watch_benchmark_reports_every_section() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "tools.bench_watch", "--runtimes", "300", "--inference-services", "100"]
        + ["--moves", "10", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split(" (asked")[0].split(":")[0] for line in lines if line.startswith("[")] == [
        "[1] load",
        "[2] memory for the cached outcomes",
        "[3] a write that moves 7 InferenceServices",
        "[3b] the widest write tried",
        "[4] writes that can move none",
    ]
    rows = [re.sub(r"\s+", " ", line.strip()) for line in lines]
    assert "idle_csr: InferenceServices re-evaluated (WriteStats), most of 1 0 calls 0 PASS" in rows
    assert "idle_sr: InferenceServices re-evaluated (WriteStats), most of 1 0 calls 0 PASS" in rows
    assert rows.count("OME: every InferenceService tried again 100 calls") == 2
    assert "SIZE 412 runtimes, 100 InferenceServices" in lines


def test_the_sustained_write_runs_print_their_tables() -> None:
    """``--rates`` and ``--watchers`` on a small cluster: one row per rate, every fresh watch
    opened after a write started at it or later (read-your-writes over gRPC), no failed write."""
    result = subprocess.run(
        [sys.executable, "-m", "tools.bench_watch", "--rates", "20", "--rate-isvcs", "40", "--seconds", "3"]
        + ["--watchers", "3", "--slow", "1", "--rate", "10"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO_ROOT,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.strip().startswith("ISVCs")))
    row = lines[header + 1].split()
    assert row[:2] == ["40", "20"]
    fresh_ok, fresh = row[8].split("/")
    assert int(fresh) >= 1 and fresh_ok == fresh
    assert any(
        line.startswith("[watchers] 3 WatchSelections of every namespace (1 reading 50 events/s)") for line in lines
    )
    assert re.search(r"writes answered\s+\d+\s+failed 0", result.stdout)
