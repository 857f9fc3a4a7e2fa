"""Every command block of README.md and docs/*.md is run somewhere, and ``RUNS`` says where.

A command block is a fenced ```sh, ```bash, ```console or ```shell block, a ```python block that
is a program (it imports something) or a ```go block that is one (``package main``); output
(```text, ```output), diffs and fragments are not. ``RUNS`` maps (page, ``## `` section title
("" before the page's first one), index of the command block within that section, from 0) to where it runs:

* a pytest node id (``tests/e2e/test_x.py::test_name``): the file must hold ``def test_name(``
  and name the page;
* ``.ci/run``: each command of the block is a line of .ci/run, verbatim and in order;
* a file of ``client/go`` (a Go test, a script .ci/run calls): it must name the page; with
  ``verbatim=True`` the block's commands are its lines, verbatim and in order.

Each row also gives how the block's first line starts (``starts``), so a block inserted before
another in its section shows as renumbered rows instead of a silent mix-up.

Blocks that cannot run here as written (``why`` says so in their row):

* docs/go.md ``go get ...@latest``: the module is fetched from its published import path;
  client/go/ci.sh builds and tests this checkout of it;
* docs/run-with-ome.md ``ome-selector-sync ...``: it needs a cluster's API server and the pod's
  socket; client/go/run-with-ome.sh builds it and checks the flag;
* docs/run-with-ome.md "Reach the sidecar with grpcurl": ``kubectl port-forward`` / ``kubectl
  debug`` need a cluster; their grpcurl calls run against a server on loopback and a unix socket;
* docs/api.md's stub scripts and docs/go.md's ``client/go/ci.sh`` write into the checkout: the
  drift checks run them into temp dirs (test_stubs_drift, client/go/ci.sh, which .ci/run runs);
* docs/architecture.md's benchmark, fuzz and soak commands run for minutes: their flags are
  parsed as written here (``test_the_tool_commands_parse_as_written``), and the tests in their
  rows run each tool small.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO_ROOT
from helpers_markdown import Block, blocks, commands

SHELL = frozenset({"sh", "bash", "console", "shell"})
THIS_FILE = "tests/docs/test_docs_blocks.py"
DOCS = "tests/e2e/test_docs_commands.py"


@dataclass(frozen=True)
class Run:
    """Where a block runs (see the module doc), how its first line starts, and why a block is run
    only in part."""

    where: str
    starts: str
    why: str = ""
    verbatim: bool = False


RUNS: dict[tuple[str, str, int], Run] = {
    # README.md
    ("README.md", "Quick start", 0): Run(f"{DOCS}::test_the_quick_start_installs_and_serves", "python3 -m venv .venv"),
    ("README.md", "Quick start", 1): Run(".ci/run", ".venv/bin/python -m pytest -q"),
    # docs/api.md
    ("docs/api.md", "Services", 0): Run(
        "tests/e2e/test_stubs_drift.py::test_generated_python_stubs_match_protos",
        "python protos/crdgen.py",
        why="the scripts write into the checkout: test_stubs_drift runs protos/crdgen.py --check and "
        "protos/generate.sh into a temp dir, .ci/run protos/check.sh, client/go/ci.sh client/go/generate.sh; "
        "update-baseline.sh is for an intended break",
    ),
    ("docs/api.md", "Calling from Python", 0): Run(
        "tests/e2e/test_readme.py::test_python_section_runs_as_written", "from ome_selector_client import"
    ),
    ("docs/api.md", "Watch selections and preview a change", 0): Run(
        "tests/e2e/test_watch_e2e.py::test_the_readme_section_runs_as_written", "from ome.selector.v1 import"
    ),
    ("docs/api.md", "Watch selections and preview a change", 1): Run(
        "tests/e2e/test_watch_e2e.py::test_the_readme_section_runs_as_written", 'export PATH="$PWD/.venv/bin:$PATH"'
    ),
    ("docs/api.md", "Debugging with grpcurl", 0): Run(
        "tests/e2e/test_readme.py::test_grpcurl_section_runs_as_written", 'export PATH="$PWD/.venv/bin:$PATH"'
    ),
    # docs/architecture.md
    ("docs/architecture.md", "Benchmark and performance", 0): Run(
        f"{THIS_FILE}::test_the_tool_commands_parse_as_written",
        ".venv/bin/python -m tools.bench --quick",
        why="minutes long: parsed as written; tests/e2e/test_sidecar_drain.py loads its catalog sizes",
    ),
    ("docs/architecture.md", "Benchmark and performance", 1): Run(
        f"{THIS_FILE}::test_the_tool_commands_parse_as_written",
        ".venv/bin/python -m tools.bench_watch ",
        why="minutes long: parsed as written; tests/e2e/test_bench_watch.py runs it small",
    ),
    ("docs/architecture.md", "Benchmark and performance", 2): Run(
        f"{THIS_FILE}::test_the_tool_commands_parse_as_written",
        ".venv/bin/python -m tools.bench_watch --rates",
        why="minutes long: parsed as written; tests/e2e/test_bench_watch.py runs it small",
    ),
    ("docs/architecture.md", "Fuzzing", 0): Run(
        f"{THIS_FILE}::test_the_tool_commands_parse_as_written",
        ".venv/bin/python -m tools.fuzz --examples 100000",
        why="minutes long: parsed as written; tests/unit/rpc/test_robust_fuzz.py runs each property small",
    ),
    ("docs/architecture.md", "Soak", 0): Run(
        f"{THIS_FILE}::test_the_tool_commands_parse_as_written",
        ".venv/bin/python -m tools.soak --minutes 10",
        why="ten minutes long: parsed as written; test_docs_commands.py::test_the_soak_runs_for_seconds runs it",
    ),
    ("docs/architecture.md", "Reproducible installs", 0): Run(".ci/run", "python3 -m venv .venv"),
    # docs/cli.md
    ("docs/cli.md", "Ask from the command line", 0): Run(
        f"{DOCS}::test_the_query_commands_run_as_written", "# offline, against the embedded examples"
    ),
    ("docs/cli.md", "Ask from the command line", 1): Run(
        f"{DOCS}::test_the_admission_commands_run_as_written", "# explain by model, without an InferenceService"
    ),
    ("docs/cli.md", "Ask from the command line", 2): Run(
        "tests/e2e/test_views_e2e.py::test_the_effective_history_sync_commands_run_as_written",
        "# kubectl ome runtime effective / history / sync",
    ),
    ("docs/cli.md", "Ask from the command line", 3): Run(
        "tests/e2e/test_views_e2e.py::test_the_readme_grpcurl_calls_run_as_written",
        """grpcurl -plaintext -d '{"omeNamespace": "ome",""",
    ),
    ("docs/cli.md", "Ask from the command line", 4): Run(
        "tests/e2e/test_wait_e2e.py::test_the_docs_blocks_run_as_written",
        "# Which runtime revisions OME's garbage collection keeps and deletes",
    ),
    ("docs/cli.md", "Ask from the command line", 5): Run(
        "tests/e2e/test_wait_e2e.py::test_the_docs_blocks_run_as_written",
        "# kubectl ome wait: after `sync` printed its request ID",
    ),
    ("docs/cli.md", "Ask from the command line", 6): Run(
        f"{DOCS}::test_the_tree_commands_run_as_written", ".venv/bin/ome-selector tree team-llama-70b-child"
    ),
    ("docs/cli.md", "Ask from the command line", 7): Run(
        f"{DOCS}::test_the_tree_commands_run_as_written", """grpcurl -plaintext -d '{"name": "team-llama-70b-child","""
    ),
    ("docs/cli.md", "Watch and what-if from the command line", 0): Run(
        "tests/e2e/test_cli_watch_e2e.py::test_the_readme_section_runs_as_written", "# What would a new ServingRuntime"
    ),
    ("docs/cli.md", "Watch and what-if from the command line", 1): Run(
        "tests/e2e/test_cli_watch_e2e.py::test_the_readme_section_runs_as_written",
        "# Every cached InferenceService's outcome",
    ),
    ("docs/cli.md", "Watch and what-if from the command line", 2): Run(
        "tests/e2e/test_cli_watch_e2e.py::test_the_readme_section_runs_as_written", "# watch (the JSON of each event"
    ),
    # docs/deploy.md
    ("docs/deploy.md", "Serve OME's real catalog", 0): Run(
        f"{DOCS}::test_serving_the_real_catalog_runs_as_written", ".venv/bin/ome-selector serve --manifests"
    ),
    ("docs/deploy.md", "Deploy on Kubernetes", 0): Run(
        "tests/e2e/test_sidecar_deploy.py::test_readme_deploy_commands_run_as_written",
        'export PATH="$PWD/.venv/bin:$PATH"',
    ),
    ("docs/deploy.md", "Deploy on Kubernetes", 1): Run(
        "tests/e2e/test_sidecar_deploy.py::test_readme_deploy_commands_run_as_written",
        "OME_SELECTOR_LISTEN=unix:/tmp/ome-selector.sock",
    ),
    # docs/go.md
    ("docs/go.md", "", 0): Run(
        "client/go/ci.sh",
        "go get github.com/ome-selector/ome-selector/client/go@latest",
        why="fetches the module from its published import path; client/go/ci.sh builds and tests this checkout",
    ),
    ("docs/go.md", "A whole program", 0): Run("client/go/cmd/selectordoc/main_test.go", "// Command selectordoc"),
    ("docs/go.md", "Build and test", 0): Run(
        "client/go/ci.sh",
        "client/go/ci.sh",
        why="ci.sh is .ci/run's `bash client/go/ci.sh`; it runs client/go/generate.sh into a temp dir (drift)",
    ),
    ("docs/go.md", "Build and test", 1): Run(
        f"{DOCS}::test_the_example_command_runs_as_written", ".venv/bin/ome-selector serve --listen 127.0.0.1:50051 &"
    ),
    # docs/run-with-ome.md
    ("docs/run-with-ome.md", "A modified OME manager: the adapter and cachesync", 0): Run(
        "client/go/run-with-ome.sh", "tmp=$(mktemp -d)", verbatim=True
    ),
    ("docs/run-with-ome.md", "An unmodified OME manager: ome-selector-sync", 0): Run(
        "client/go/run-with-ome.sh",
        "ome-selector-sync --selector-address",
        why="needs a cluster's API server and the pod's socket; the script builds it and checks the flag",
    ),
    ("docs/run-with-ome.md", "Reach the sidecar with grpcurl", 0): Run(
        f"{DOCS}::test_the_sidecar_grpcurl_calls_run_on_loopback",
        "kubectl -n ome port-forward",
        why="kubectl port-forward needs a cluster: the grpcurl call runs against a server on loopback",
    ),
    ("docs/run-with-ome.md", "Reach the sidecar with grpcurl", 1): Run(
        f"{DOCS}::test_the_sidecar_grpcurl_calls_run_on_loopback",
        "pod=$(kubectl -n ome get pod",
        why="kubectl debug needs a cluster: the grpcurl call runs against a server on a unix socket",
    ),
}

PAGES = ["README.md", *sorted(f"docs/{p.name}" for p in (REPO_ROOT / "docs").glob("*.md"))]


def is_command_block(block: Block) -> bool:
    """A shell block, a Python program (one that imports) or a Go program (``package main``)."""
    if block.lang in SHELL:
        return True
    if block.lang == "python":
        return any(isinstance(node, (ast.Import, ast.ImportFrom)) for node in ast.parse(block.body).body)
    if block.lang == "go":
        return re.search(r"^package main$", block.body, re.M) is not None
    return False


def command_blocks() -> dict[tuple[str, str, int], Block]:
    """Every command block of the pages, keyed as ``RUNS`` is."""
    found: dict[tuple[str, str, int], Block] = {}
    counts: dict[tuple[str, str], int] = {}
    for path in PAGES:
        for block in blocks(path):
            if is_command_block(block):
                index = counts.get((path, block.section), 0)
                counts[(path, block.section)] = index + 1
                found[(path, block.section, index)] = block
    return found


def first_line(block: Block) -> str:
    return block.body.splitlines()[0] if block.body.strip() else ""


def row_for(key: tuple[str, str, int], block: Block) -> str:
    """The ``RUNS`` row to add for a block (the test to run it is the caller's to name)."""
    starts = first_line(block)[:60]
    return f"    {key!r}: Run({'tests/e2e/test_<file>.py::test_<name>'!r}, {starts!r}),"


def in_order(wanted: list[str], lines: list[str]) -> list[str]:
    """The commands of ``wanted`` not found as lines of ``lines`` (stripped) after the previous one."""
    missing, at = [], 0
    stripped = [line.strip() for line in lines]
    for command in wanted:
        try:
            at = stripped.index(command.strip(), at) + 1
        except ValueError:
            missing.append(command)
    return missing


# ---- the table against the pages --------------------------------------------------------------


def match_rows() -> tuple[dict[tuple[str, str, int], tuple[str, str, int]], list[str]]:
    """Each row's block: the block at the row's index when it starts as the row says, else the
    nearest unclaimed block of the row's section that does (a block inserted before it renumbers
    it). Returns {row key: block key} and one message per row whose block is gone."""
    found = command_blocks()
    claimed: dict[tuple[str, str, int], tuple[str, str, int]] = {}
    for key, run in RUNS.items():
        block = found.get(key)
        if block is not None and first_line(block).startswith(run.starts):
            claimed[key] = key
    gone = []
    for key, run in RUNS.items():
        if key in claimed:
            continue
        taken = set(claimed.values())
        candidates = [
            k for k, b in found.items() if k[:2] == key[:2] and k not in taken and first_line(b).startswith(run.starts)
        ]
        if candidates:
            claimed[key] = min(candidates, key=lambda k: abs(k[2] - key[2]))
        else:
            section = [f"{k[2]}: {first_line(b)[:60]!r}" for k, b in found.items() if k[:2] == key[:2]]
            gone.append(
                f"RUNS row {key!r} (a block starting {run.starts!r}) names no command block of that section "
                f"(its blocks: {section or 'none'}): remove the row or fix its page, section title, index or starts"
            )
    return claimed, gone


def test_every_command_block_has_a_row() -> None:
    found = command_blocks()
    claimed, _ = match_rows()
    covered = set(claimed.values())
    missing = [
        f"{key[0]} line {block.line}, section {key[1]!r}, command block {key[2]} (```{block.lang}: "
        f"{first_line(block)[:70]!r}) is run nowhere: run it in a test, then add to RUNS in {THIS_FILE}:\n"
        f"{row_for(key, block)}"
        for key, block in found.items()
        if key not in covered
    ]
    assert not missing, "\n".join(missing)


def test_every_row_names_its_block_by_its_index() -> None:
    found = command_blocks()
    claimed, gone = match_rows()
    renumbered = [
        f"RUNS row {row!r}: its block ({found[block].page} line {found[block].line}) is now command block "
        f"{block[2]} of its section: change the row's key to {block!r}"
        for row, block in claimed.items()
        if row != block
    ]
    assert not gone + renumbered, "\n".join(gone + renumbered)


def test_the_command_block_rule_sees_programs_and_leaves_fragments() -> None:
    found = command_blocks()
    langs = sorted({(key[0], block.lang) for key, block in found.items() if block.lang not in SHELL})
    assert langs == [("docs/api.md", "python"), ("docs/go.md", "go")]
    # docs/go.md's one-line constructor swap is a fragment, not a program.
    assert [b.lang for b in blocks("docs/go.md") if not is_command_block(b)] == ["text", "go"]


# ---- where each row says the block runs -------------------------------------------------------


@pytest.mark.parametrize("key", sorted(RUNS), ids=lambda key: f"{key[0]}:{key[1]}:{key[2]}")
def test_the_place_a_row_names_runs_its_block(key: tuple[str, str, int]) -> None:
    run = RUNS[key]
    page = Path(key[0]).name
    if run.where == ".ci/run" or run.verbatim:
        claimed, _ = match_rows()
        assert key in claimed, f"RUNS row {key!r} names no block (test_every_row_names_its_block_by_its_index)"
        block = command_blocks()[claimed[key]]
        lines = (REPO_ROOT / run.where).read_text(encoding="utf-8").splitlines()
        missing = in_order(commands(block.body), lines)
        assert not missing, f"{run.where} lacks these commands of {key!r}, verbatim and in that order: {missing}"
        return
    path, _, name = run.where.partition("::")
    text = (REPO_ROOT / path).read_text(encoding="utf-8")  # a missing file fails here
    assert run.why or page in text, f"{path} does not name {key[0]}, the page it should run"
    if name:
        assert re.search(rf"^def {re.escape(name)}\(", text, re.M), f"{path} has no test function {name}"


def test_every_partly_run_block_says_why() -> None:
    partial = {key for key, run in RUNS.items() if run.why}
    assert partial == {
        ("docs/architecture.md", "Benchmark and performance", 0),
        ("docs/architecture.md", "Benchmark and performance", 1),
        ("docs/architecture.md", "Benchmark and performance", 2),
        ("docs/architecture.md", "Fuzzing", 0),
        ("docs/architecture.md", "Soak", 0),
        ("docs/api.md", "Services", 0),
        ("docs/go.md", "", 0),
        ("docs/go.md", "Build and test", 0),
        ("docs/run-with-ome.md", "An unmodified OME manager: ome-selector-sync", 0),
        ("docs/run-with-ome.md", "Reach the sidecar with grpcurl", 0),
        ("docs/run-with-ome.md", "Reach the sidecar with grpcurl", 1),
    }


# ---- the minutes-long tools: their flags as written -------------------------------------------


class _Parsed(Exception):
    def __init__(self, namespace: argparse.Namespace) -> None:
        self.namespace = namespace


def _parse(module_name: str, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> argparse.Namespace:
    """The tool's own parser applied to ``argv``; the tool stops right after parsing."""
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        raise _Parsed(original(self, args, namespace))

    module = importlib.import_module(module_name)
    with monkeypatch.context() as patch:
        patch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
        with pytest.raises(_Parsed) as parsed:
            module.main(argv)
    return parsed.value.namespace


def test_the_tool_commands_parse_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/architecture.md's benchmark, fuzz and soak commands: each is ``.venv/bin/python -m
    tools.X FLAGS``, and tools.X's parser takes FLAGS as written."""
    found = command_blocks()
    keys = [key for key, run in RUNS.items() if run.where.endswith("::test_the_tool_commands_parse_as_written")]
    parsed = []
    for key in keys:
        for command in commands(found[key].body):
            argv = shlex.split(command, comments=True)
            assert argv[:3] == [".venv/bin/python", "-m", argv[2]] and argv[2].startswith("tools."), command
            parsed.append((argv[2], _parse(argv[2], argv[3:], monkeypatch)))
    assert [name for name, _ in parsed] == ["tools.bench"] * 3 + ["tools.bench_watch"] * 4 + [
        "tools.fuzz",
        "tools.soak",
    ]
    assert parsed[0][1].quick is True
    assert parsed[7][1].examples == 100000
    assert parsed[8][1].minutes == 10.0
