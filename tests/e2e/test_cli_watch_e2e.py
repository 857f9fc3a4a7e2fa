"""``ome-selector watch`` and ``ome-selector what-if --server`` against the real server (docs/cli.md, "Watch and what-if
from the command line"): ``serve --manifests`` of the OME catalog's runtimes and ome-cluster (eight cached
InferenceServices) on 127.0.0.1, the CLI as a process, its exact lines as each event comes,
``-o json`` lines, the exit status when the server ends the stream (0), when the stream fails (1)
and on Ctrl-C (130); and the docs/cli.md section "Watch and what-if from the command line" as written
(its what-if and watch lines and their output, and its grpcurl lines)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CATALOG_RUNTIMES, OME_CLUSTER, REPO_ROOT, ServerProcess, StreamLines
from helpers_docs import objects
from helpers_markdown import page, section
from helpers_watch import HOPPER, OMENATIVE, hopper
from ome_selector.cache.manifests import load_manifests, manifests_version
from ome_selector_client import SelectorClient

VERSION = manifests_version(load_manifests([str(CATALOG_RUNTIMES), str(OME_CLUSTER)]).objects)
RANKED = f"ClusterServingRuntime {HOPPER} ranks above ClusterServingRuntime {OMENATIVE} now: score 8 > 6"
HEADING = (
    "INFERENCESERVICE           NAMESPACE      BEFORE                                 AFTER"
    "                                  WHY / CAUSE"
    "                                                                VERSION"
)
CURRENT = "(current)" + " " * 66 + "-"
INITIAL = [
    HEADING,
    "deepseek-v3                demo           -                                      none (RuntimeNotFound)"
    + " " * 17
    + CURRENT,
    "qwen2-5-7b                 demo           -                                      none (RuntimeNotFound)"
    + " " * 17
    + CURRENT,
    f"llama-70b                  llama-demo     -                                      {OMENATIVE}   {CURRENT}",
    f"llama-70b-h100             llama-demo     -                                      {HOPPER}      {CURRENT}",
    "llama-70b-l40s             llama-demo     -                                      none (RuntimeNotFound)"
    + " " * 17
    + CURRENT,
    f"llama-70b-native           llama-demo     -                                      {OMENATIVE}   {CURRENT}",
    "llama-70b-named-child      team-a         -                                      team-llama-70b-child"
    + " " * 19
    + CURRENT,
    "llama-70b-team             team-a         -                                      team-llama-70b"
    + " " * 25
    + CURRENT,
    f"# initial state: 8 InferenceServices at cache version {VERSION} (generation 1); changes follow as cache writes come",
]


# The table (no -o): every line within 120 columns, the catalog's long names shortened.
OMENATIVE_SHORT = "srt-llam...menative#d086cfa0"
HOPPER_SHORT = "srt-llam...t-hopper#22ad26b9"
TABLE_INITIAL = [
    "INFERENCESERVICE           NAMESPACE      BEFORE                         AFTER                          STEP",
    "deepseek-v3                demo           -                              none (RuntimeNotFound)         (current)",
    "qwen2-5-7b                 demo           -                              none (RuntimeNotFound)         (current)",
    f"llama-70b                  llama-demo     -                              {OMENATIVE_SHORT}   (current)",
    f"llama-70b-h100             llama-demo     -                              {HOPPER_SHORT}   (current)",
    "llama-70b-l40s             llama-demo     -                              none (RuntimeNotFound)         (current)",
    f"llama-70b-native           llama-demo     -                              {OMENATIVE_SHORT}   (current)",
    "llama-70b-named-child      team-a         -                              team-llama-70b-child           (current)",
    "llama-70b-team             team-a         -                              team-llama-70b                 (current)",
    f"# initial state: 8 InferenceServices at cache version {VERSION} (generation 1); changes follow",
]


class Watch:
    """``ome-selector watch --server ADDR ...`` as a process; its stdout lines as they come."""

    def __init__(self, address: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ome_selector.cli", "watch", "--server", address, *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
        )
        assert self.process.stdout is not None
        self.out = StreamLines(self.process.stdout)
        self._taken = 0

    def until(self, prefix: str, timeout: float = 60.0) -> list[str]:
        """The lines after the last ``until``, up to and including the next one starting with ``prefix``."""

        def find(lines: list[str]) -> int | None:
            return next((i for i in range(self._taken, len(lines)) if lines[i].startswith(prefix)), None)

        end = self.out.wait(find, repr(prefix), timeout, ended=lambda: "the watch ended")
        out, self._taken = self.out.lines[self._taken : end + 1], end + 1
        return out

    def finish(self) -> tuple[int, list[str], str]:
        """(exit status, the lines not taken yet, stderr) once the process ends."""
        code = self.process.wait(timeout=60)
        self.out.join(timeout=30)
        assert self.process.stderr is not None
        return code, self.out.lines[self._taken :], self.process.stderr.read()


@pytest.fixture
def server(running_server: Callable[..., ServerProcess]) -> ServerProcess:
    return running_server(manifests=[CATALOG_RUNTIMES, OME_CLUSTER])


@pytest.fixture
def watch(server: ServerProcess) -> Iterator[Watch]:
    watcher = Watch(server.address, "-o", "wide")
    yield watcher
    if watcher.process.poll() is None:
        watcher.process.kill()
        watcher.process.wait(timeout=30)


def what_if(address: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", "what-if", "--server", address, *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
    )


def test_watch_prints_the_state_then_each_writes_changes_until_the_server_ends(
    server: ServerProcess, watch: Watch, tmp_path: Path
) -> None:
    assert watch.until("# initial state") == INITIAL
    with SelectorClient(server.address) as client:
        client.upsert_objects(objects(hopper(4)), "v2")
        assert watch.until("# write") == [
            f"llama-70b                  llama-demo     {OMENATIVE}   {HOPPER}      {RANKED} / "
            f"ClusterServingRuntime {HOPPER}: priority 2 → 4   v2",
            f"llama-70b-native           llama-demo     {OMENATIVE}   {HOPPER}      {RANKED} / "
            f"ClusterServingRuntime {HOPPER}: priority 2 → 4   v2",
            "# write v2 (generation 2): 6 re-evaluated, 2 changed, 2 in this watch; 8 InferenceServices cached",
        ]
        # what-if against the same server: the priority back to 2 would move them back; nothing applied.
        back = tmp_path / "hopper-2.yaml"
        back.write_text(yaml.safe_dump(hopper(2)))
        preview = what_if(server.address, "-f", str(back))
        ranked_back = f"ClusterServingRuntime {OMENATIVE} ranks above ClusterServingRuntime {HOPPER} now: score 6 > 4"
        assert (preview.returncode, preview.stdout.splitlines(), preview.stderr.splitlines()) == (
            1,
            [
                "INFERENCESERVICE   NAMESPACE    BEFORE                              AFTER                                  WHY",
                f"llama-70b          llama-demo   {HOPPER}   {OMENATIVE}   {ranked_back}",
                f"llama-70b-native   llama-demo   {HOPPER}   {OMENATIVE}   {ranked_back}",
            ],
            [
                "Note: 2 of 8 cached InferenceServices would change (6 re-evaluated) at cache version v2; nothing was applied."
            ],
        )
        assert client.get_cache_status().version == "v2"
        client.upsert_objects(objects(hopper(4)), "v3")  # the same object again: nothing to evaluate
        assert watch.until("# write") == [
            "# write v3 (generation 3): 0 re-evaluated, 0 changed, 0 in this watch; 8 InferenceServices cached"
        ]
    assert server.stop() == 0  # the server drains: the stream ends with OK
    assert watch.finish() == (0, [], "")


def test_the_watch_table_fits_120_columns(server: ServerProcess, tmp_path: Path) -> None:
    """The table on the OME catalog and ome-cluster: the exact lines, each within 120 columns;
    the priority change's rows name the step (Ranking)."""
    watch = Watch(server.address)
    try:
        assert watch.until("# initial state") == TABLE_INITIAL
        with SelectorClient(server.address) as client:
            client.upsert_objects(objects(hopper(4)), "v2")
            changes = watch.until("# write")
        assert changes == [
            f"llama-70b                  llama-demo     {OMENATIVE_SHORT}   {HOPPER_SHORT}   Ranking",
            f"llama-70b-native           llama-demo     {OMENATIVE_SHORT}   {HOPPER_SHORT}   Ranking",
            "# write v2 (generation 2): 6 re-evaluated, 2 changed, 2 in this watch; 8 InferenceServices cached",
        ]
        assert max(len(line) for line in TABLE_INITIAL + changes) <= 120
        assert server.stop() == 0
        assert watch.finish() == (0, [], "")
    finally:
        if watch.process.poll() is None:
            watch.process.kill()
            watch.process.wait(timeout=30)


def test_watch_json_lines_of_one_namespace(server: ServerProcess) -> None:
    watch = Watch(server.address, "-n", "team-a", "-o", "json")
    events = [json.loads(line) for line in watch.until('{"initialEventsEnd"')]
    assert [(e["current"]["name"], e["current"]["runtime"]["name"]) for e in events[:-1]] == [
        ("llama-70b-named-child", "team-llama-70b-child"),
        ("llama-70b-team", "team-llama-70b"),
    ]
    assert events[-1] == {"initialEventsEnd": {"cacheVersion": VERSION, "generation": "1", "inferenceServices": 2}}
    with SelectorClient(server.address) as client:
        client.upsert_objects(objects(hopper(4)), "v2")  # moves nothing in team-a
    assert [json.loads(line) for line in watch.until('{"write"')] == [
        {"write": {"cacheVersion": "v2", "generation": "2", "reevaluated": 6, "changed": 2, "inferenceServices": 8}}
    ]
    watch.process.send_signal(signal.SIGINT)  # Ctrl-C
    assert watch.finish() == (130, [], "")


def test_a_failed_watch_exits_1(server: ServerProcess) -> None:
    watch = Watch(server.address, "-l", "team in x")
    assert watch.finish() == (
        1,
        [],
        'error: INVALID_ARGUMENT: invalid request: labelSelector: Invalid value: "team in x": not a label selector '
        "requirement (k=v, k!=v, k in (a,b), k notin (a,b), k, !k)\n",
    )
    assert server.stop() == 0
    code, out, err = Watch(server.address).finish()
    assert (code, out, err.startswith("error: UNAVAILABLE: ")) == (1, [], True)


CLI_PAGE = page("docs/cli.md")
README_ADDRESS = "127.0.0.1:50051"


def _section(title: str) -> str:
    return section(CLI_PAGE, title)


def _command_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line and not line.startswith("#")]


def test_the_readme_section_runs_as_written(server: ServerProcess) -> None:
    section = _section("Watch and what-if from the command line")
    what_if_block, watch_block, grpcurl_block = re.findall(r"```sh\n(.*?)```", section, re.S)
    what_if_out, watch_out = re.findall(r"```text\n(.*?)```", section, re.S)
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")

    def bash(script: str, **options: Any) -> subprocess.Popen[str]:
        return subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script.replace(README_ADDRESS, server.address)],
            cwd=REPO_ROOT,
            env=env,
            text=True,
            **options,
        )

    what_if = bash(what_if_block, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = what_if.communicate(timeout=120)
    assert (what_if.returncode, out) == (0, what_if_out), err
    assert [line.split(" at cache version ")[0] for line in err.splitlines()] == [
        "Note: 3 of 8 cached InferenceServices would change (4 re-evaluated)",
        "Note: 5 of 8 cached InferenceServices would change (8 re-evaluated)",
    ]

    [watch_line] = _command_lines(watch_block)
    cli_watch = Watch(server.address, *watch_line.split()[4:])  # the flags after `watch --server ADDR`
    assert watch_line.split()[:4] == [".venv/bin/ome-selector", "watch", "--server", README_ADDRESS]
    # The cache version is a hash of the loaded objects: the page's stands for the server's.
    expected = re.sub(r"manifests-[0-9a-f]{12}", VERSION, watch_out).splitlines()
    marker = next(i for i, line in enumerate(expected) if line.startswith("# initial state"))
    assert cli_watch.until("# initial state") == expected[: marker + 1]

    grpcurl_watch_line = next(line for line in grpcurl_block.splitlines() if "WatchSelections" in line)
    grpcurl_watch = bash(grpcurl_watch_line, stdout=subprocess.PIPE)
    assert grpcurl_watch.stdout is not None
    stuck = threading.Timer(120, grpcurl_watch.kill)  # a stream that never comes fails, never hangs
    stuck.start()
    seen = []
    for line in grpcurl_watch.stdout:  # grpcurl prints each message as it arrives
        seen.append(line)
        if '"initial_events_end"' in line:  # grpcurl prints proto field names
            break
    rest = bash(grpcurl_block.replace(grpcurl_watch_line + "\n", ""), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = rest.communicate(timeout=120)
    assert rest.returncode == 0, err
    previews = [json.loads(doc) for doc in re.split(r"(?m)^(?=\{$)", out) if doc.strip()]
    assert [[c["name"] for c in p.get("changes", [])] for p in previews[:2]] == [
        ["llama-70b", "llama-70b-l40s", "llama-70b-native"],
        ["deepseek-v3", "qwen2-5-7b", "llama-70b-h100", "llama-70b-l40s", "llama-70b-named-child"],
    ]
    assert previews[2]["status"]["version"] == "v2"  # the UpsertObjects

    assert cli_watch.until("# write") == expected[marker + 1 :]
    assert server.stop() == 0
    assert cli_watch.finish() == (0, [], "")
    text = "".join(seen) + grpcurl_watch.stdout.read()
    assert grpcurl_watch.wait(timeout=30) == 0
    stuck.cancel()
    assert text.count('"current"') == 4 and text.count('"change"') == 3 and '"name": "demo-llama-70b"' in text
