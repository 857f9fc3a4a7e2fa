"""``GetRuntimeTree`` and ``ome-selector tree`` end to end: the real server on 127.0.0.1
(``serve --manifests``), the CLI as a process with ``--server`` and offline, the typed client
and grpcurl, on the page's world (helpers_tree.py, written to tmp_path) and on OME's real data
(the catalog's runtimes and ome-cluster, whose ServingRuntime team-llama-70b-child in team-a
inherits from the ClusterServingRuntime srt-llama-3-3-70b-instruct-hopper)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import CATALOG_RUNTIMES, OME_CLUSTER, REPO_ROOT
from helpers_docs import cache_object, runtime
from helpers_tree import (
    PAGE_TEAM_LLAMA_TREE,
    PAGE_UNATTRIBUTED_LINES,
    PAGE_VLLM_LLAMA_TREE,
    PAGE_WORLD,
    with_unattributed,
    write_manifests,
)
from ome_selector.cli import tree_report
from ome_selector_client import SelectorClient
from test_grpcurl import SELECTION_SERVICE, Grpcurl

REAL_DATA = [str(CATALOG_RUNTIMES), str(OME_CLUSTER)]

# `tree srt-llama-3-3-70b-instruct-hopper --show-unattributed-users` on the real data: no
# InferenceService names the hopper runtime itself; team-a's llama-70b-named-child names its
# child; the others name no runtime. 206 ClusterServingRuntimes make the first Collection line
# 81 columns, so it continues on an indented line.
REAL_HOPPER_TREE = """\
RUNTIME TREE
Target: ClusterServingRuntime/srt-llama-3-3-70b-instruct-hopper
Context: Cluster (resolution: Complete)
Head: ClusterServingRuntime/srt-llama-3-3-70b-instruct-hopper
ClusterServingRuntime/srt-llama-3-3-70b-instruct-hopper [selected]
Context: Namespaced/team-a (resolution: Complete)
Head: ServingRuntime/team-llama-70b-child
ClusterServingRuntime/srt-llama-3-3-70b-instruct-hopper [selected]
`-- ServingRuntime/team-llama-70b-child
    `-- InferenceService/llama-70b-named-child
Unattributed users (not attributed to runtime tree):
  [not attributed] InferenceService/demo/deepseek-v3
  state=Unresolved reason=AutomaticSelection
  [not attributed] InferenceService/demo/qwen2-5-7b
  state=Unresolved reason=AutomaticSelection
  [not attributed] InferenceService/llama-demo/llama-70b
  state=Unresolved reason=AutomaticSelection
  [not attributed] InferenceService/llama-demo/llama-70b-h100
  state=Unresolved reason=AutomaticSelection
  [not attributed] InferenceService/llama-demo/llama-70b-l40s
  state=Unresolved reason=AutomaticSelection
  [not attributed] InferenceService/llama-demo/llama-70b-native
  state=Unresolved reason=AutomaticSelection
  [not attributed] InferenceService/team-a/llama-70b-team
  state=Unresolved reason=AutomaticSelection
Snapshot: Complete
Collection: ClusterServingRuntime scope=Cluster
  status=Complete pages=1 items=206
Collection: ServingRuntime scope=AllNamespaces status=Complete pages=1 items=2
Collection: InferenceService scope=AllNamespaces status=Complete pages=1 items=8
"""

REAL_CHILD_TREE = """\
RUNTIME TREE
Target: ServingRuntime/team-a/team-llama-70b-child
Context: Namespaced/team-a (resolution: Complete)
Head: ServingRuntime/team-llama-70b-child
ClusterServingRuntime/srt-llama-3-3-70b-instruct-hopper
`-- ServingRuntime/team-llama-70b-child [selected]
    `-- InferenceService/llama-70b-named-child
Snapshot: Complete
Collection: ClusterServingRuntime scope=Cluster
  status=Complete pages=1 items=206
Collection: ServingRuntime scope=Namespace/team-a
  status=Complete pages=1 items=2
Collection: InferenceService scope=Namespace/team-a
  status=Complete pages=1 items=2
"""


def cli(*argv: str) -> tuple[int, str, str]:
    """``python -m ome_selector.cli tree ...`` as a process: (status, stdout, stderr)."""
    process = subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", "tree", *argv], capture_output=True, text=True, timeout=120
    )
    return process.returncode, process.stdout, process.stderr


def test_the_pages_examples_through_the_server(running_server: Any, tmp_path: Path) -> None:
    server = running_server(manifests=[write_manifests(tmp_path, PAGE_WORLD)])
    address = server.address
    assert cli("vllm-llama", "-n", "team-a", "--server", address) == (0, PAGE_VLLM_LLAMA_TREE, "")
    got = cli("vllm-llama", "-n", "team-a", "--server", address, "--show-unattributed-users")
    assert got == (0, with_unattributed(PAGE_VLLM_LLAMA_TREE, PAGE_UNATTRIBUTED_LINES), "")
    assert cli("team-llama", "-n", "team-a", "--server", address) == (0, PAGE_TEAM_LLAMA_TREE, "")
    code, out, err = cli("team-llama", "-n", "team-a", "--server", address, "-o", "json")
    report = json.loads(out)
    assert (code, err, report["apiVersion"], report["kind"]) == (0, "", "cli.ome.io/v1alpha1", "RuntimeTreeReport")
    with SelectorClient(address, timeout=10) as client:
        assert tree_report.format_tree(client.get_runtime_tree("team-llama", "team-a")) + "\n" == PAGE_TEAM_LLAMA_TREE


def test_errors_through_the_server_are_status_1_with_the_pages_messages(running_server: Any, tmp_path: Path) -> None:
    server = running_server(manifests=[write_manifests(tmp_path, PAGE_WORLD)])
    address = server.address
    assert cli("nope", "-n", "team-a", "--server", address) == (
        1,
        "",
        'error: project runtime inheritance tree: runtime target was not found: "nope"\n',
    )
    assert cli("vllm-llama", "--kind", "ServingRuntime", "-n", "team-a", "--server", address)[0] == 1
    assert cli("vllm-llama", "--kind", "Foo", "--server", address) == (
        1,
        "",
        'error: unsupported runtime kind "Foo" (supported: ServingRuntime, ClusterServingRuntime)\n',
    )
    code, out, err = cli("Bad_Name", "--server", address)
    assert (code, out) == (1, "")
    assert err.startswith('error: runtime name "Bad_Name" is invalid: a lowercase RFC 1123 subdomain must consist')
    # The controller adds a ServingRuntime vllm-legacy to team-c: the name is ambiguous there.
    with SelectorClient(address, timeout=10) as client:
        client.upsert_objects([cache_object(runtime("vllm-legacy", namespace="team-c"))], "v2")
    assert cli("vllm-legacy", "-n", "team-c", "--server", address) == (
        1,
        "",
        'error: runtime "vllm-legacy" is ambiguous; pass --kind ServingRuntime or --kind ClusterServingRuntime: '
        'runtime target is ambiguous: "vllm-legacy" matched 2 runtimes\n',
    )
    code, out, _ = cli("vllm-legacy", "-n", "team-c", "--kind", "ServingRuntime", "--server", address)
    assert (code, out.splitlines()[1]) == (0, "Target: ServingRuntime/team-c/vllm-legacy")


def test_an_unreachable_server_is_status_1() -> None:
    code, out, err = cli("vllm-llama", "--server", "127.0.0.1:1", "--timeout", "2")
    assert (code, out) == (1, "")
    assert err.startswith("error: failed to connect to all addresses") and err.count("\n") == 1


def test_real_data_through_the_server_and_offline(running_server: Any) -> None:
    server = running_server(manifests=REAL_DATA)
    hopper = ("srt-llama-3-3-70b-instruct-hopper", "--show-unattributed-users")
    assert cli(*hopper, "--server", server.address) == (0, REAL_HOPPER_TREE, "")
    assert cli("team-llama-70b-child", "-n", "team-a", "--server", server.address) == (0, REAL_CHILD_TREE, "")
    # docs/cli.md's example ("The inheritance tree") is this output.
    assert f"```text\n{REAL_CHILD_TREE}```" in (REPO_ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    # Offline from the same manifests: the same answer (the loader warns about the catalog's
    # names defined twice on stderr).
    code, out, _ = cli(*hopper, "--manifests", *REAL_DATA)
    assert (code, out) == (0, REAL_HOPPER_TREE)


def test_grpcurl(running_server: Any) -> None:
    server = running_server(manifests=REAL_DATA)
    got = Grpcurl(server.address).call(
        f"{SELECTION_SERVICE}/GetRuntimeTree", '{"name": "team-llama-70b-child", "namespace": "team-a"}'
    )
    assert (got["api_version"], got["kind"], got["snapshot"]) == (
        "cli.ome.io/v1alpha1",
        "RuntimeTreeReport",
        "RUNTIME_TREE_SNAPSHOT_COMPLETE",
    )
    [context] = got["contexts"]
    [head] = context["heads"]
    assert [node["runtime"]["name"] for node in head["chain"]] == [
        "srt-llama-3-3-70b-instruct-hopper",
        "team-llama-70b-child",
    ]
    assert head["users"] == [{"namespace": "team-a", "name": "llama-70b-named-child"}]
