"""``GetRuntimeTree`` and ``ome-selector tree`` in process: every output field, table row, quoted
message and example of the ``tree`` section of reference/kubectl-ome/runtime.md (and its "Exit
codes"), with exact values, on the page's world (helpers_tree.py) and small worlds built here
where an example needs another shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml
from helpers_docs import isvc, load, runtime
from helpers_tree import (
    PAGE_TEAM_LLAMA_TREE,
    PAGE_UNATTRIBUTED_LINES,
    PAGE_VLLM_LLAMA_TREE,
    PAGE_WORLD,
    request,
    tree,
    with_unattributed,
    write_manifests,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.cli import app as cli
from ome_selector.cli import reports, tree_report
from ome_selector.domain.errors import RequestError
from ome_selector.flows import tree as tree_module
from ome_selector.rpc import tree as rpc_tree
from ome_selector.server.inprocess import InProcessServer
from ome_selector_client import SelectorClient, SelectorError

R = selector_pb2
CSR = R.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
SR = R.RUNTIME_KIND_SERVING_RUNTIME
SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)


def text(response: selector_pb2.GetRuntimeTreeResponse) -> str:
    """The default output as the CLI prints it (with its final newline)."""
    return tree_report.format_tree(response) + "\n"


def wide(response: selector_pb2.GetRuntimeTreeResponse) -> str:
    return tree_report.format_tree_wide(response) + "\n"


def failure(sources: Any, name: str, **fields: Any) -> RequestError:
    with pytest.raises(RequestError) as excinfo:
        tree(sources, name, **fields)
    return excinfo.value


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---- the page's examples ----------------------------------------------------------------------------


class TestPageExamples:
    def test_tree_of_the_cluster_runtime(self) -> None:
        """`kubectl ome runtime tree vllm-llama -n team-a`."""
        assert text(tree(PAGE_WORLD, "vllm-llama")) == PAGE_VLLM_LLAMA_TREE

    def test_show_unattributed_users_adds_the_block_before_snapshot(self) -> None:
        """`... --show-unattributed-users`: "the same tree, with these lines before Snapshot: Complete"."""
        got = text(tree(PAGE_WORLD, "vllm-llama", show=True))
        assert got == with_unattributed(PAGE_VLLM_LLAMA_TREE, PAGE_UNATTRIBUTED_LINES)

    def test_tree_of_the_serving_runtime(self) -> None:
        """`kubectl ome runtime tree team-llama -n team-a`: listed only in team-a, so llama-chat
        (which names vllm-llama) is left out, and the two long Collection lines continue."""
        assert text(tree(PAGE_WORLD, "team-llama")) == PAGE_TEAM_LLAMA_TREE

    @pytest.mark.parametrize(
        "argv, expected",
        [
            (["vllm-llama", "-n", "team-a"], PAGE_VLLM_LLAMA_TREE),
            (
                ["vllm-llama", "-n", "team-a", "--show-unattributed-users"],
                with_unattributed(PAGE_VLLM_LLAMA_TREE, PAGE_UNATTRIBUTED_LINES),
            ),
            (["team-llama", "-n", "team-a"], PAGE_TEAM_LLAMA_TREE),
        ],
    )
    def test_the_cli_prints_the_page_offline(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], expected: str
    ) -> None:
        world = write_manifests(tmp_path, PAGE_WORLD)
        assert run(capsys, "tree", *argv, "--manifests", world) == (0, expected, "")

    def test_the_report_of_the_serving_runtime(self) -> None:
        """The RuntimeTreeReport behind the third example, whole."""
        got = tree(PAGE_WORLD, "team-llama")
        vllm_base = R.RuntimeRef(kind=CSR, name="vllm-base")
        vllm_llama = R.RuntimeRef(kind=CSR, name="vllm-llama")
        team_llama = R.RuntimeRef(kind=SR, namespace="team-a", name="team-llama")

        def complete(kind: int, scope: int, items: int, namespace: str = "") -> selector_pb2.RuntimeTreeCollection:
            """A Complete list of one page."""
            status = R.RUNTIME_TREE_COLLECTION_STATUS_COMPLETE
            return R.RuntimeTreeCollection(
                kind=kind, scope=scope, namespace=namespace, status=status, pages=1, items=items
            )

        assert got == R.GetRuntimeTreeResponse(
            api_version="cli.ome.io/v1alpha1",
            kind="RuntimeTreeReport",
            target=team_llama,
            contexts=[
                R.RuntimeTreeContext(
                    scope=R.RUNTIME_TREE_CONTEXT_SCOPE_NAMESPACED,
                    namespace="team-a",
                    resolution=R.RUNTIME_TREE_RESOLUTION_COMPLETE,
                    heads=[
                        R.RuntimeTreeHead(
                            runtime=team_llama,
                            chain=[
                                R.RuntimeTreeNode(runtime=vllm_base),
                                R.RuntimeTreeNode(runtime=vllm_llama),
                                R.RuntimeTreeNode(runtime=team_llama, selected=True),
                            ],
                            users=[R.RuntimeTreeUser(namespace="team-a", name="llama-dev")],
                        )
                    ],
                )
            ],
            snapshot=R.RUNTIME_TREE_SNAPSHOT_COMPLETE,
            collections=[
                complete(cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, R.RUNTIME_TREE_COLLECTION_SCOPE_CLUSTER, 4),
                complete(cache_pb2.OBJECT_KIND_SERVING_RUNTIME, R.RUNTIME_TREE_COLLECTION_SCOPE_NAMESPACE, 1, "team-a"),
                complete(
                    cache_pb2.OBJECT_KIND_INFERENCE_SERVICE, R.RUNTIME_TREE_COLLECTION_SCOPE_NAMESPACE, 2, "team-a"
                ),
            ],
            cache_version="v1",
        )

    def test_without_the_flag_the_report_has_no_unattributed_block(self) -> None:
        assert not tree(PAGE_WORLD, "vllm-llama").HasField("unattributed")
        assert list(tree(PAGE_WORLD, "vllm-llama", show=True).unattributed.users) == [
            R.RuntimeTreeUnattributedUser(
                namespace="team-b",
                name="llama-auto",
                state=R.RUNTIME_TREE_UNATTRIBUTED_STATE_UNRESOLVED,
                reason=R.RUNTIME_TREE_UNATTRIBUTED_REASON_AUTOMATIC_SELECTION,
            )
        ]


# ---- the target ---------------------------------------------------------------------------------------

# `shared` is a ServingRuntime in team-a and a ClusterServingRuntime; `only-ns` only the first,
# `only-cluster` only the second.
SHARED = [
    runtime("shared", namespace="team-a"),
    runtime("shared"),
    runtime("only-ns", namespace="team-a"),
    runtime("only-cluster"),
]


class TestTarget:
    def test_both_kinds_of_one_name_are_ambiguous(self) -> None:
        error = failure(SHARED, "shared")
        assert (error.code, error.message) == (
            "FAILED_PRECONDITION",
            'runtime "shared" is ambiguous; pass --kind ServingRuntime or --kind ClusterServingRuntime: '
            'runtime target is ambiguous: "shared" matched 2 runtimes',
        )

    @pytest.mark.parametrize(
        "name, kind, target",
        [
            ("shared", "ServingRuntime", "ServingRuntime/team-a/shared"),
            ("shared", "ClusterServingRuntime", "ClusterServingRuntime/shared"),
            ("only-ns", "", "ServingRuntime/team-a/only-ns"),
            ("only-cluster", "", "ClusterServingRuntime/only-cluster"),
        ],
    )
    def test_kind_chooses_and_no_kind_finds_the_one_that_exists(self, name: str, kind: str, target: str) -> None:
        assert text(tree(SHARED, name, kind=kind)).splitlines()[1] == f"Target: {target}"

    @pytest.mark.parametrize(
        "name, kind", [("nope", ""), ("only-cluster", "ServingRuntime"), ("only-ns", "ClusterServingRuntime")]
    )
    def test_not_found(self, name: str, kind: str) -> None:
        error = failure(SHARED, name, kind=kind)
        assert (error.code, error.message) == (
            "NOT_FOUND",
            f'project runtime inheritance tree: runtime target was not found: "{name}"',
        )

    def test_a_serving_runtime_of_another_namespace_is_not_found(self) -> None:
        error = failure(SHARED, "only-ns", namespace="team-b")
        assert error.message == 'project runtime inheritance tree: runtime target was not found: "only-ns"'

    @pytest.mark.parametrize(
        "name, message, violation",
        [
            (
                "Bad_Name",
                f'runtime name "Bad_Name" is invalid: {SUBDOMAIN_RULE}',
                f'Invalid value: "Bad_Name": {SUBDOMAIN_RULE}',
            ),
            ("", f'runtime name "" is invalid: {SUBDOMAIN_RULE}', f'Invalid value: "": {SUBDOMAIN_RULE}'),
            (
                "a" * 254,
                'runtime name "' + "a" * 64 + '…" (254 characters) is invalid: must be no more than 253 characters',
                'Invalid value: "' + "a" * 64 + '…" (254 characters): must be no more than 253 characters',
            ),
        ],
    )
    def test_an_invalid_name(self, name: str, message: str, violation: str) -> None:
        error = failure(SHARED, name)
        assert (error.code, error.message, error.violations) == ("INVALID_ARGUMENT", message, [("name", violation)])

    def test_an_unsupported_kind(self) -> None:
        error = failure(SHARED, "shared", kind="InferenceService")
        assert (error.code, error.message) == (
            "INVALID_ARGUMENT",
            'unsupported runtime kind "InferenceService" (supported: ServingRuntime, ClusterServingRuntime)',
        )
        assert error.violations == [
            (
                "kind",
                'Unsupported value: "InferenceService": supported values: "ServingRuntime", "ClusterServingRuntime"',
            )
        ]

    def test_the_name_is_reported_before_the_kind_and_every_field_is_named(self) -> None:
        error = failure(SHARED, "Bad_Name", kind="Foo", namespace="Team_A")
        assert error.message.startswith('runtime name "Bad_Name" is invalid: ')
        assert [field for field, _ in error.violations] == ["name", "kind", "namespace"]

    def test_the_namespace_is_needed_unless_the_kind_is_cluster_scoped(self) -> None:
        error = failure(SHARED, "only-cluster", namespace="")
        assert (error.code, error.message) == ("INVALID_ARGUMENT", "invalid request: namespace: Required value")
        got = tree(SHARED, "only-cluster", namespace="", kind="ClusterServingRuntime")
        assert got.target == R.RuntimeRef(kind=CSR, name="only-cluster")

    def test_unavailable_before_the_first_sync(self) -> None:
        with pytest.raises(RequestError) as excinfo:
            rpc_tree.get_runtime_tree(CacheStore().snapshot, request("vllm-llama"))
        assert (excinfo.value.code, excinfo.value.message) == ("UNAVAILABLE", "cache not synced yet")


# ---- heads, contexts and the drawing ------------------------------------------------------------------

# base <- mid <- leaf, base <- other; in team-a `child` inherits from mid; in team-b
# `grandchild` inherits from leaf; team-c has a ServingRuntime named mid, so `shadowed`, which
# names mid too, inherits from it (a ServingRuntime's parents are looked up in its namespace
# first), not from the ClusterServingRuntime.
FAMILY = [
    runtime("base"),
    runtime("mid", inherit_from="base"),
    runtime("leaf", inherit_from="mid"),
    runtime("other", inherit_from="base"),
    runtime("child", namespace="team-a", inherit_from="mid"),
    runtime("mid", namespace="team-c"),
    runtime("shadowed", namespace="team-c", inherit_from="mid"),
    runtime("grandchild", namespace="team-b", inherit_from="leaf"),
    isvc(namespace="team-a", name="uses-child", runtime_name="child", runtime_kind="ServingRuntime"),
    isvc(namespace="team-b", name="uses-leaf", runtime_name="leaf"),
    isvc(namespace="team-a", name="uses-mid-1", runtime_name="mid"),
    isvc(namespace="team-b", name="uses-mid-2", runtime_name="mid"),
    isvc(namespace="team-b", name="uses-grandchild", runtime_name="grandchild", runtime_kind="ServingRuntime"),
    isvc(namespace="team-c", name="uses-other", runtime_name="other"),
]


class TestHeads:
    def test_a_path_for_the_target_and_each_runtime_that_inherits_from_it(self) -> None:
        """Heads: the target, then those that inherit from it, depth first; Cluster first, then
        each Namespaced context by namespace; each chain root first, one step four columns deeper."""
        assert text(tree(FAMILY, "mid")) == (
            "RUNTIME TREE\n"
            "Target: ClusterServingRuntime/mid\n"
            "Context: Cluster (resolution: Complete)\n"
            "Head: ClusterServingRuntime/mid\n"
            "ClusterServingRuntime/base\n"
            "`-- ClusterServingRuntime/mid [selected]\n"
            "    |-- InferenceService/team-a/uses-mid-1\n"
            "    `-- InferenceService/team-b/uses-mid-2\n"
            "Head: ClusterServingRuntime/leaf\n"
            "ClusterServingRuntime/base\n"
            "`-- ClusterServingRuntime/mid [selected]\n"
            "    `-- ClusterServingRuntime/leaf\n"
            "        `-- InferenceService/team-b/uses-leaf\n"
            "Context: Namespaced/team-a (resolution: Complete)\n"
            "Head: ServingRuntime/child\n"
            "ClusterServingRuntime/base\n"
            "`-- ClusterServingRuntime/mid [selected]\n"
            "    `-- ServingRuntime/child\n"
            "        `-- InferenceService/uses-child\n"
            "Context: Namespaced/team-b (resolution: Complete)\n"
            "Head: ServingRuntime/grandchild\n"
            "ClusterServingRuntime/base\n"
            "`-- ClusterServingRuntime/mid [selected]\n"
            "    `-- ClusterServingRuntime/leaf\n"
            "        `-- ServingRuntime/grandchild\n"
            "            `-- InferenceService/uses-grandchild\n"
            "Snapshot: Complete\n"
            "Collection: ClusterServingRuntime scope=Cluster status=Complete pages=1 items=4\n"
            "Collection: ServingRuntime scope=AllNamespaces status=Complete pages=1 items=4\n"
            "Collection: InferenceService scope=AllNamespaces status=Complete pages=1 items=6\n"
        )

    def test_a_root_target_without_users(self) -> None:
        assert text(tree(FAMILY, "other", namespace="default")).splitlines()[2:6] == [
            "Context: Cluster (resolution: Complete)",
            "Head: ClusterServingRuntime/other",
            "ClusterServingRuntime/base",
            "`-- ClusterServingRuntime/other [selected]",
        ]

    def test_the_users_of_a_root_head_hang_under_it(self) -> None:
        world = [
            runtime("solo"),
            isvc(namespace="a", name="one", runtime_name="solo"),
            isvc(namespace="b", name="two", runtime_name="solo"),
        ]
        assert text(tree(world, "solo")).splitlines()[3:7] == [
            "Head: ClusterServingRuntime/solo",
            "ClusterServingRuntime/solo [selected]",
            "|-- InferenceService/a/one",
            "`-- InferenceService/b/two",
        ]

    def test_a_serving_runtime_walks_its_namespace_first_for_the_whole_chain(self) -> None:
        """team-c's `shadowed` names `mid`: its namespace's ServingRuntime `mid`, not the
        ClusterServingRuntime, so it is in the tree of the ServingRuntime only."""
        namespaced = [c.namespace for c in tree(FAMILY, "mid").contexts]
        assert namespaced == ["", "team-a", "team-b"]
        assert text(tree(FAMILY, "mid", namespace="team-c", kind="ServingRuntime")).splitlines()[1:7] == [
            "Target: ServingRuntime/team-c/mid",
            "Context: Namespaced/team-c (resolution: Complete)",
            "Head: ServingRuntime/mid",
            "ServingRuntime/mid [selected]",
            "Head: ServingRuntime/shadowed",
            "ServingRuntime/mid [selected]",
        ]

    def test_the_tree_of_a_serving_runtime_has_no_cluster_context(self) -> None:
        got = tree(FAMILY, "child")
        assert [(c.scope, c.namespace) for c in got.contexts] == [(R.RUNTIME_TREE_CONTEXT_SCOPE_NAMESPACED, "team-a")]

    def test_every_context_ends_in_resolution_complete(self) -> None:
        contexts = [line for line in text(tree(FAMILY, "base")).splitlines() if line.startswith("Context: ")]
        assert contexts == [
            "Context: Cluster (resolution: Complete)",
            "Context: Namespaced/team-a (resolution: Complete)",
            "Context: Namespaced/team-b (resolution: Complete)",
        ]


# ---- issues -------------------------------------------------------------------------------------------


class TestIssues:
    def test_parent_missing(self) -> None:
        """The page's world without vllm-base (runtime-inheritance.md: deleting a parent breaks
        the chains below it)."""
        world = [doc for doc in PAGE_WORLD if doc["metadata"]["name"] != "vllm-base"]
        assert text(tree(world, "vllm-llama")) == (
            "RUNTIME TREE\n"
            "Target: ClusterServingRuntime/vllm-llama\n"
            "Context: Cluster (resolution: Complete)\n"
            "Head: ClusterServingRuntime/vllm-llama\n"
            "Issue: ParentMissing subject=ClusterServingRuntime/vllm-llama parent=vllm-base\n"
            "Issue path: ClusterServingRuntime/vllm-llama -> vllm-base\n"
            "ClusterServingRuntime/vllm-llama [selected]\n"
            "|-- InferenceService/team-a/llama-chat\n"
            "`-- InferenceService/team-b/llama-batch\n"
            "Context: Namespaced/team-a (resolution: Complete)\n"
            "Head: ServingRuntime/team-llama\n"
            "Issue: ParentMissing subject=ClusterServingRuntime/vllm-llama parent=vllm-base\n"
            "Issue path: ServingRuntime/team-llama -> ClusterServingRuntime/vllm-llama\n"
            "  -> vllm-base\n"
            "ClusterServingRuntime/vllm-llama [selected]\n"
            "`-- ServingRuntime/team-llama\n"
            "    `-- InferenceService/llama-dev\n"
            "Snapshot: Complete\n"
            "Collection: ClusterServingRuntime scope=Cluster status=Complete pages=1 items=3\n"
            "Collection: ServingRuntime scope=AllNamespaces status=Complete pages=1 items=1\n"
            "Collection: InferenceService scope=AllNamespaces status=Complete pages=1 items=4\n"
        )

    def test_the_missing_parent_has_no_kind_in_the_report(self) -> None:
        world = [doc for doc in PAGE_WORLD if doc["metadata"]["name"] != "vllm-base"]
        snapshot = load(*world).snapshot
        target = snapshot.cluster_serving_runtimes["vllm-llama"]
        [context, _] = tree_module.runtime_tree(snapshot, target, False).contexts
        assert context.heads[0].issue == tree_module.Issue(
            tree_module.IssueCode.PARENT_MISSING,
            ("ClusterServingRuntime", "", "vllm-llama"),
            ("", "", "vllm-base"),
            (("ClusterServingRuntime", "", "vllm-llama"), ("", "", "vllm-base")),
        )
        [issue] = tree(world, "vllm-llama").contexts[0].heads[0].issues
        assert issue == R.RuntimeTreeIssue(
            code=R.RUNTIME_TREE_ISSUE_CODE_PARENT_MISSING,
            subject=R.RuntimeRef(kind=CSR, name="vllm-llama"),
            parent=R.RuntimeRef(name="vllm-base"),
            path=[R.RuntimeRef(kind=CSR, name="vllm-llama"), R.RuntimeRef(name="vllm-base")],
        )

    def test_cycle_detected(self) -> None:
        world = [runtime("ping", inherit_from="pong"), runtime("pong", inherit_from="ping")]
        assert text(tree(world, "ping")).splitlines()[2:15] == [
            "Context: Cluster (resolution: Complete)",
            "Head: ClusterServingRuntime/ping",
            "Issue: CycleDetected subject=ClusterServingRuntime/pong",
            "  parent=ClusterServingRuntime/ping",
            "Issue path: ClusterServingRuntime/ping -> ClusterServingRuntime/pong",
            "  -> ClusterServingRuntime/ping",
            "ClusterServingRuntime/pong",
            "`-- ClusterServingRuntime/ping [selected]",
            "Head: ClusterServingRuntime/pong",
            "Issue: CycleDetected subject=ClusterServingRuntime/ping",
            "  parent=ClusterServingRuntime/pong",
            "Issue path: ClusterServingRuntime/pong -> ClusterServingRuntime/ping",
            "  -> ClusterServingRuntime/pong",
        ]

    def test_a_serving_runtime_naming_a_cluster_runtime_of_its_own_name_is_a_cycle(self) -> None:
        """runtime-inheritance.md: "Names alone count, so a ServingRuntime can't inherit from a
        ClusterServingRuntime with its own name." It is not in the ClusterServingRuntime's tree."""
        world = [runtime("echo"), runtime("echo", namespace="team-a", inherit_from="echo")]
        assert text(tree(world, "echo", kind="ServingRuntime")).splitlines()[2:7] == [
            "Context: Namespaced/team-a (resolution: Complete)",
            "Head: ServingRuntime/echo",
            "Issue: CycleDetected subject=ServingRuntime/echo parent=ServingRuntime/echo",
            "Issue path: ServingRuntime/echo -> ServingRuntime/echo",
            "ServingRuntime/echo [selected]",
        ]
        assert [c.scope for c in tree(world, "echo", kind="ClusterServingRuntime").contexts] == [
            R.RUNTIME_TREE_CONTEXT_SCOPE_CLUSTER
        ]

    def test_max_depth_exceeded(self) -> None:
        """d1 <- d2 <- ... <- d7: d7's chain holds five runtimes at d3, which names a parent, so
        d7 is in d3's tree with the issue; d1's tree stops at d5 (the walks of d6 and d7 stop
        before they reach d1)."""
        world = [runtime("d1"), *(runtime(f"d{i}", inherit_from=f"d{i - 1}") for i in range(2, 8))]
        got = text(tree(world, "d3"))
        assert got.split("Head: ClusterServingRuntime/d7\n")[1].split("Snapshot:")[0] == (
            "Issue: MaxDepthExceeded subject=ClusterServingRuntime/d3\n"
            "  parent=ClusterServingRuntime/d2\n"
            "Issue path: ClusterServingRuntime/d7 -> ClusterServingRuntime/d6\n"
            "  -> ClusterServingRuntime/d5 -> ClusterServingRuntime/d4\n"
            "  -> ClusterServingRuntime/d3 -> ClusterServingRuntime/d2\n"
            "ClusterServingRuntime/d3 [selected]\n"
            "`-- ClusterServingRuntime/d4\n"
            "    `-- ClusterServingRuntime/d5\n"
            "        `-- ClusterServingRuntime/d6\n"
            "            `-- ClusterServingRuntime/d7\n"
        )
        heads = [h.runtime.name for h in tree(world, "d1").contexts[0].heads]
        assert heads == ["d1", "d2", "d3", "d4", "d5"]

    def test_wide_keeps_issue_lines_whole(self) -> None:
        world = [runtime("ping", inherit_from="pong"), runtime("pong", inherit_from="ping")]
        assert wide(tree(world, "ping")).splitlines()[4:6] == [
            "Issue: CycleDetected subject=ClusterServingRuntime/pong parent=ClusterServingRuntime/ping",
            "Issue path: ClusterServingRuntime/ping -> ClusterServingRuntime/pong -> ClusterServingRuntime/ping",
        ]


# ---- attribution by spec.runtime -----------------------------------------------------------------------

ATTRIBUTION = [
    *SHARED,
    isvc(namespace="team-a", name="kind-sr", runtime_name="shared", runtime_kind="ServingRuntime"),
    isvc(namespace="team-a", name="kind-csr", runtime_name="shared", runtime_kind="ClusterServingRuntime"),
    isvc(namespace="team-a", name="kind-empty", runtime_name="shared", runtime_kind=""),
    isvc(namespace="team-a", name="kind-unset", runtime_name="shared"),  # the CRD's default: ClusterServingRuntime
    isvc(namespace="team-a", name="csr-falls-back", runtime_name="only-ns", runtime_kind="ClusterServingRuntime"),
    isvc(namespace="team-a", name="empty-falls-back", runtime_name="only-cluster", runtime_kind=""),
    isvc(namespace="team-a", name="sr-is-missing", runtime_name="only-cluster", runtime_kind="ServingRuntime"),
    isvc(namespace="team-b", name="other-namespace", runtime_name="shared", runtime_kind=""),
]


def users(response: selector_pb2.GetRuntimeTreeResponse) -> list[str]:
    return [f"{u.namespace}/{u.name}" for c in response.contexts for h in c.heads for u in h.users]


class TestAttribution:
    def test_kind_serving_runtime_looks_only_in_the_namespace(self) -> None:
        assert users(tree(ATTRIBUTION, "shared", kind="ServingRuntime")) == ["team-a/kind-empty", "team-a/kind-sr"]

    def test_kind_cluster_serving_runtime_looks_at_cluster_scope_first(self) -> None:
        assert users(tree(ATTRIBUTION, "shared", kind="ClusterServingRuntime")) == [
            "team-a/kind-csr",
            "team-a/kind-unset",
            "team-b/other-namespace",
        ]

    def test_kind_cluster_serving_runtime_then_a_serving_runtime(self) -> None:
        assert users(tree(ATTRIBUTION, "only-ns")) == ["team-a/csr-falls-back"]

    def test_no_kind_then_the_cluster_serving_runtime(self) -> None:
        """team-b has no ServingRuntime `shared`, so other-namespace gets the ClusterServingRuntime."""
        assert users(tree(ATTRIBUTION, "only-cluster")) == ["team-a/empty-falls-back"]

    def test_a_serving_runtime_that_does_not_exist(self) -> None:
        got = text(tree(ATTRIBUTION, "only-cluster", show=True))
        assert got.split("Unattributed users (not attributed to runtime tree):\n")[1].split("Snapshot:")[0] == (
            "  [not attributed] InferenceService/team-a/sr-is-missing\n"
            "  state=Unresolved reason=RuntimeNotFound\n"
            "  declared runtime=only-cluster\n"
        )


# ---- unattributed users -----------------------------------------------------------------------------------


def unattributed_block(response: selector_pb2.GetRuntimeTreeResponse) -> str:
    got = text(response)
    return got[got.index("Unattributed users") : got.index("Snapshot:")]


class TestUnattributed:
    """The page's table of states and reasons, one row each, and `none observed`."""

    def test_every_row_of_the_table(self) -> None:
        world = [
            runtime("vllm-llama"),
            isvc(namespace="team-a", name="auto"),
            isvc(namespace="team-a", name="gone", runtime_name="vllm-gone"),
            isvc(namespace="team-a", name="bad", runtime_name="Not_A_Name"),
            isvc(namespace="team-a", name="named", runtime_name="vllm-llama"),
        ]
        assert unattributed_block(tree(world, "vllm-llama", show=True)) == (
            "Unattributed users (not attributed to runtime tree):\n"
            "  [not attributed] InferenceService/team-a/auto\n"
            "  state=Unresolved reason=AutomaticSelection\n"
            "  [not attributed] InferenceService/team-a/bad\n"
            "  state=Invalid reason=InvalidRuntimeName\n"
            "  [not attributed] InferenceService/team-a/gone\n"
            "  state=Unresolved reason=RuntimeNotFound\n"
            "  declared runtime=vllm-gone\n"
        )

    def test_duplicate_inference_service_row(self) -> None:
        """The row as the report carries it (the service never reports it: below)."""
        response = R.GetRuntimeTreeResponse(
            unattributed=R.RuntimeTreeUnattributed(
                users=[
                    R.RuntimeTreeUnattributedUser(
                        namespace="team-a",
                        name="twice",
                        state=R.RUNTIME_TREE_UNATTRIBUTED_STATE_AMBIGUOUS,
                        reason=R.RUNTIME_TREE_UNATTRIBUTED_REASON_DUPLICATE_INFERENCE_SERVICE,
                    )
                ]
            )
        )
        assert unattributed_block(response) == (
            "Unattributed users (not attributed to runtime tree):\n"
            "  [not attributed] InferenceService/team-a/twice\n"
            "  state=Ambiguous reason=DuplicateInferenceService\n"
        )

    def test_an_inference_service_defined_twice_is_listed_once(self, tmp_path: Path) -> None:
        """The cache holds one object per namespace and name (the later definition wins), so
        the list never returns one twice."""
        first = write_manifests(tmp_path, [runtime("solo"), isvc(namespace="a", name="twice")], "1.yaml")
        second = write_manifests(tmp_path, [isvc(namespace="a", name="twice", runtime_name="solo")], "2.yaml")
        from ome_selector.cache.manifests import load_manifests

        store = CacheStore()
        store.apply_snapshot("v1", load_manifests([first, second]).objects)
        got = tree(store, "solo", show=True)
        assert (users(got), list(got.unattributed.users)) == (["a/twice"], [])

    def test_none_observed(self) -> None:
        assert unattributed_block(tree(PAGE_WORLD, "team-llama", show=True)) == (
            "Unattributed users (not attributed to runtime tree):\n  none observed\n"
        )

    def test_a_serving_runtime_tree_lists_its_namespace_only(self) -> None:
        """llama-auto is in team-b: not listed for team-llama's tree."""
        assert list(tree(PAGE_WORLD, "team-llama", show=True).unattributed.users) == []


# ---- the collection limit ---------------------------------------------------------------------------------


class TestCollectionLimit:
    @pytest.mark.parametrize(
        "count, status, pages, items",
        [
            (0, "complete", 1, 0),
            (1, "complete", 1, 1),
            (500, "complete", 1, 500),
            (501, "complete", 2, 501),
            (1000, "complete", 2, 1000),
            (1001, "truncated", 2, 1000),
            (25000, "truncated", 2, 1000),
        ],
    )
    def test_two_pages_of_500(self, count: int, status: str, pages: int, items: int) -> None:
        """ "Each list holds at most 1,000 objects, read in two pages of 500.\""""
        got = tree_module.collection("InferenceService", None, count)
        assert (got.status.value, got.pages, got.items) == (status, pages, items)

    def test_a_truncated_inference_service_list_gives_a_partial_snapshot(self) -> None:
        """1,001 InferenceServices name vllm-llama: the first 1,000 by namespace and name are
        listed and attributed, the tree prints with Snapshot: Partial and the warnings."""
        world = [
            *PAGE_WORLD[:5],
            *(isvc(namespace="ns", name=f"isvc-{i:04}", runtime_name="vllm-llama") for i in range(1001)),
        ]
        got = tree(world, "vllm-llama", show=True)
        assert users(got)[0] == "ns/isvc-0000"
        assert (len(users(got)), users(got)[-1]) == (1000, "ns/isvc-0999")
        assert text(got).split("  none observed\n")[1] == (
            "Snapshot: Partial\n"
            "Collection: ClusterServingRuntime scope=Cluster status=Complete pages=1 items=4\n"
            "Collection: ServingRuntime scope=AllNamespaces status=Complete pages=1 items=0\n"
            "Collection: InferenceService scope=AllNamespaces\n"
            "  status=Truncated pages=2 items=1000\n"
            "Warning: PartialData\n"
            "Warning: Truncated\n"
        )

    @pytest.mark.parametrize(
        "world, name, namespace, kind",
        [
            ([runtime(f"csr-{i:04}") for i in range(1001)], "csr-0000", "team-a", "ClusterServingRuntime"),
            (
                [runtime("vllm-llama"), *(runtime(f"sr-{i:04}", namespace=f"ns-{i % 3}") for i in range(1001))],
                "vllm-llama",
                "team-a",
                "ServingRuntime",
            ),
            ([runtime(f"sr-{i:04}", namespace="big") for i in range(1001)], "sr-0000", "big", "ServingRuntime"),
        ],
        ids=["ClusterServingRuntimes", "ServingRuntimes in every namespace", "ServingRuntimes of the namespace"],
    )
    def test_a_truncated_runtime_list_fails_the_tree(
        self, world: list[Any], name: str, namespace: str, kind: str
    ) -> None:
        error = failure(world, name, namespace=namespace)
        assert (error.code, error.message) == (
            "FAILED_PRECONDITION",
            f"runtime tree requires complete runtime evidence: {kind} collection is truncated (pages=2 items=1000); "
            "restore list access or narrow the runtime scope, then retry",
        )

    def test_a_serving_runtime_tree_counts_its_namespace_only(self) -> None:
        world = [runtime("mine", namespace="small"), *(runtime(f"sr-{i:04}", namespace="big") for i in range(1001))]
        lines = text(tree(world, "mine", namespace="small")).splitlines()
        assert "Collection: ServingRuntime scope=Namespace/small status=Complete pages=1 items=1" in lines

    def test_the_service_never_reports_unavailable_lists(self) -> None:
        """The rows the service cannot give (its cache never fails a read), as the report
        carries them."""
        response = R.GetRuntimeTreeResponse(
            snapshot=R.RUNTIME_TREE_SNAPSHOT_PARTIAL,
            collections=[
                R.RuntimeTreeCollection(
                    kind=cache_pb2.OBJECT_KIND_INFERENCE_SERVICE,
                    scope=R.RUNTIME_TREE_COLLECTION_SCOPE_NAMESPACE,
                    namespace="team-a",
                    status=R.RUNTIME_TREE_COLLECTION_STATUS_UNAVAILABLE,
                    pages=0,
                    items=0,
                )
            ],
            warnings=[R.RUNTIME_TREE_WARNING_PARTIAL_DATA, R.RUNTIME_TREE_WARNING_SOURCE_UNAVAILABLE],
        )
        assert text(response).splitlines()[2:] == [
            "Snapshot: Partial",
            "Collection: InferenceService scope=Namespace/team-a",
            "  status=Unavailable pages=0 items=0",
            "Warning: PartialData",
            "Warning: SourceUnavailable",
        ]


# ---- 80 columns -----------------------------------------------------------------------------------------------

LONG_A = "a" * 50 + "-1-" + "b" * 50
LONG_B = "a" * 50 + "-2-" + "b" * 50
LONG_NAMESPACE = "n" * 63
LONG_WORLD = [
    runtime("base" + "x" * 100),
    runtime(LONG_A, inherit_from="base" + "x" * 100),
    runtime(LONG_B, inherit_from=LONG_A),
    runtime("orphan-" + "o" * 80, inherit_from="missing-" + "m" * 80),
    runtime("child", namespace=LONG_NAMESPACE, inherit_from=LONG_A),
    isvc(namespace=LONG_NAMESPACE, name="i" * 200, runtime_name="child", runtime_kind="ServingRuntime"),
    isvc(namespace=LONG_NAMESPACE, name="u" * 200),
    isvc(namespace=LONG_NAMESPACE, name="gone", runtime_name="g" * 200),
]


class TestEightyColumns:
    def test_long_names_are_shortened_with_a_fingerprint(self) -> None:
        """A name that does not fit keeps its start and end with `...` between, then `#` and
        eight hex digits of the SHA-256 of the whole name (eab1fa06 for LONG_A): LONG_A and
        LONG_B share their start and end and stay distinct. Every line is within 80 columns;
        the unattributed block too."""
        got = text(tree(LONG_WORLD, LONG_A, show=True))
        assert got == (
            "RUNTIME TREE\n"
            "Target: ClusterServingRuntime/aaaaaaaaaaaaaaaaaaa...bbbbbbbbbbbbbbbbbbb#eab1fa06\n"
            "Context: Cluster (resolution: Complete)\n"
            "Head: ClusterServingRuntime/aaaaaaaaaaaaaaaaaaaa...bbbbbbbbbbbbbbbbbbbb#eab1fa06\n"
            "ClusterServingRuntime/basexxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxx#8998a6ce\n"
            "`-- ClusterServingRuntime/aaaaaaaaaaaaaaaa...bbbbbbbbbbbbbbb#eab1fa06 [selected]\n"
            "Head: ClusterServingRuntime/aaaaaaaaaaaaaaaaaaaa...bbbbbbbbbbbbbbbbbbbb#d6ba06c7\n"
            "ClusterServingRuntime/basexxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxx#8998a6ce\n"
            "`-- ClusterServingRuntime/aaaaaaaaaaaaaaaa...bbbbbbbbbbbbbbb#eab1fa06 [selected]\n"
            "    `-- ClusterServingRuntime/aaaaaaaaaaaaaaaaaaa...bbbbbbbbbbbbbbbbbbb#d6ba06c7\n"
            "Context: Namespaced/nnnnnnnnnnnnn...nnnnnnnnnnnn#73dcf996 (resolution: Complete)\n"
            "Head: ServingRuntime/child\n"
            "ClusterServingRuntime/basexxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxx#8998a6ce\n"
            "`-- ClusterServingRuntime/aaaaaaaaaaaaaaaa...bbbbbbbbbbbbbbb#eab1fa06 [selected]\n"
            "    `-- ServingRuntime/child\n"
            "        `-- InferenceService/iiiiiiiiiiiiiiiiiiii...iiiiiiiiiiiiiiiiiii#8dff5f6f\n"
            "Unattributed users (not attributed to runtime tree):\n"
            "  [not attributed] InferenceService/nnnnnnnnnnnnnnnn...nnnnnnnnnnn/gone#b566f5e1\n"
            "  state=Unresolved reason=RuntimeNotFound\n"
            "  declared runtime=ggggggggggggggggggggggggg...gggggggggggggggggggggggg#addb7c13\n"
            "  [not attributed] InferenceService/nnnnnnnnnnnnnnnn...uuuuuuuuuuuuuuuu#c06dcd47\n"
            "  state=Unresolved reason=AutomaticSelection\n"
            "Snapshot: Complete\n"
            "Collection: ClusterServingRuntime scope=Cluster status=Complete pages=1 items=4\n"
            "Collection: ServingRuntime scope=AllNamespaces status=Complete pages=1 items=1\n"
            "Collection: InferenceService scope=AllNamespaces status=Complete pages=1 items=3\n"
        )
        assert max(map(len, got.splitlines())) == 80

    def test_wide_prints_full_names_except_in_the_unattributed_block(self) -> None:
        response = tree(LONG_WORLD, LONG_A, show=True)
        lines = wide(response).splitlines()
        assert lines[6] == f"Head: ClusterServingRuntime/{LONG_B}"
        assert lines[10] == f"Context: Namespaced/{LONG_NAMESPACE} (resolution: Complete)"
        assert lines[15] == "        `-- InferenceService/" + "i" * 200
        unattributed = lines.index("Unattributed users (not attributed to runtime tree):")
        assert lines[unattributed:-4] == text(response).splitlines()[unattributed:-4]

    def test_long_issue_lines_continue_on_indented_lines(self) -> None:
        """`Issue:` continues with `parent=`, `Issue path:` at a ` -> `, each on a line
        indented two columns."""
        assert text(tree(LONG_WORLD, "orphan-" + "o" * 80)).splitlines()[3:8] == [
            "Head: ClusterServingRuntime/orphan-ooooooooooooo...oooooooooooooooooooo#64fc28af",
            "Issue: ParentMissing subject=ClusterServingRuntime/orphan-oo...oooooooo#64fc28af",
            "  parent=missing-mmmmmmmmmmmmmmmmmmmmmm...mmmmmmmmmmmmmmmmmmmmmmmmmmmmm#a1b6a066",
            "Issue path: ClusterServingRuntime/orphan-oooooooooo...ooooooooooooooooo#64fc28af",
            "  -> missing-mmmmmmmmmmmmmmmmmmmmmmmm...mmmmmmmmmmmmmmmmmmmmmmmmmmmmmmm#a1b6a066",
        ]

    @pytest.mark.parametrize(
        "name, width, expected",
        [
            ("vllm-llama", 10, "vllm-llama"),
            ("a" * 30, 20, "aaaa...aaaa#3a54fc0c"),
            ("vllm-llama-x", 10, "v...x#a566e075"),  # narrower than the fingerprint: two characters kept
        ],
    )
    def test_shorten_name(self, name: str, width: int, expected: str) -> None:
        assert reports.shorten_name(name, width) == expected

    @settings(max_examples=60, deadline=None)
    @given(
        names=st.lists(
            st.text("abc-", min_size=1, max_size=120).map(lambda t: f"r{t}x"), min_size=2, max_size=5, unique=True
        ),
        namespace=st.text("ab", min_size=1, max_size=63),
    )
    def test_every_line_fits_and_names_stay_distinct(self, names: list[str], namespace: str) -> None:
        """Any chain of long names (up to five runtimes, a ServingRuntime at the end, an
        InferenceService under each head): every line within 80 columns, and the shortened
        names of different runtimes differ."""
        world: list[Any] = [runtime(names[0])]
        world += [runtime(n, inherit_from=p) for p, n in zip(names, names[1:-1])]
        world += [runtime(names[-1], namespace=namespace, inherit_from=names[-2])]
        world += [isvc(namespace=namespace, name=n, runtime_name=n) for n in names]
        lines = text(tree(world, names[0], namespace=namespace, show=True)).splitlines()
        assert max(map(len, lines)) <= 80
        heads = [line for line in lines if line.startswith("Head: ")]
        assert len(heads) == len(names) == len(set(heads))


# ---- json and yaml, the CLI's exit codes -----------------------------------------------------------------------


# The page's world and a ServingRuntime vllm-legacy in team-c: `vllm-legacy -n team-c` is ambiguous.
AMBIGUOUS_WORLD = [*PAGE_WORLD, runtime("vllm-legacy", namespace="team-c")]
AMBIGUOUS = (
    'runtime "vllm-legacy" is ambiguous; pass --kind ServingRuntime or --kind ClusterServingRuntime: '
    'runtime target is ambiguous: "vllm-legacy" matched 2 runtimes'
)


class TestCli:
    def world(self, tmp_path: Path) -> str:
        return write_manifests(tmp_path, AMBIGUOUS_WORLD)

    def test_json_prints_the_runtime_tree_report(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        code, out, err = run(
            capsys, "tree", "team-llama", "-n", "team-a", "--manifests", self.world(tmp_path), "-o", "json"
        )
        report = json.loads(out)
        assert (code, err) == (0, "")
        assert (report["apiVersion"], report["kind"]) == ("cli.ome.io/v1alpha1", "RuntimeTreeReport")
        assert report["target"] == {"kind": "RUNTIME_KIND_SERVING_RUNTIME", "namespace": "team-a", "name": "team-llama"}
        assert report["snapshot"] == "RUNTIME_TREE_SNAPSHOT_COMPLETE"

    def test_yaml_prints_the_same_report(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        world = self.world(tmp_path)
        _, out_json, _ = run(capsys, "tree", "team-llama", "-n", "team-a", "--manifests", world, "-o", "json")
        code, out_yaml, _ = run(capsys, "tree", "team-llama", "-n", "team-a", "--manifests", world, "-o", "yaml")
        assert code == 0
        assert yaml.safe_load(out_yaml) == json.loads(out_json)

    def test_wide(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        got = run(capsys, "tree", "team-llama", "-n", "team-a", "--manifests", self.world(tmp_path), "-o", "wide")
        assert got == (0, PAGE_TEAM_LLAMA_TREE.replace("\n  status=", " status="), "")

    @pytest.mark.parametrize(
        "argv, message",
        [
            (["nope"], 'project runtime inheritance tree: runtime target was not found: "nope"'),
            (["Bad_Name"], f'runtime name "Bad_Name" is invalid: {SUBDOMAIN_RULE}'),
            (
                ["vllm-llama", "--kind", "Foo"],
                'unsupported runtime kind "Foo" (supported: ServingRuntime, ClusterServingRuntime)',
            ),
            (["vllm-legacy", "-n", "team-c"], AMBIGUOUS),
        ],
    )
    def test_every_error_is_status_1_with_the_pages_message(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], message: str
    ) -> None:
        got = run(capsys, "tree", *argv, "--manifests", self.world(tmp_path))
        assert got == (1, "", f"error: {message}\n")

    @pytest.mark.parametrize(
        "argv, last_line",
        [
            (["tree"], "error: the following arguments are required: RUNTIME"),
            (["tree", "x", "--bogus"], "error: unknown flag: --bogus"),
            (
                ["tree", "x", "-o", "name"],
                "error: argument -o/--output: invalid choice: 'name' (choose from 'table', 'wide', 'json', 'yaml')",
            ),
        ],
    )
    def test_bad_flags_are_status_1(self, capsys: pytest.CaptureFixture[str], argv: list[str], last_line: str) -> None:
        with pytest.raises(SystemExit) as excinfo:
            cli.main(argv)
        err = capsys.readouterr().err
        assert (excinfo.value.code, err.splitlines()[-1]) == (1, last_line)
        assert err.startswith("usage: ome-selector tree ")

    def test_a_missing_manifest_path_is_status_1(self, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
        missing = str(tmp_path / "missing")
        got = run(capsys, "tree", "x", "--manifests", missing)
        assert got == (1, "", f"error: cannot load manifests:\n  {missing}: no such file or directory\n")

    def test_an_unknown_flag_is_status_1_on_the_other_commands_too(self, capsys: pytest.CaptureFixture[str]) -> None:
        with pytest.raises(SystemExit) as excinfo:
            cli.main(["select", "-f", "x", "--bogus"])
        assert excinfo.value.code == 1
        err = capsys.readouterr().err
        assert err.startswith("usage: ome-selector select ")
        assert err.splitlines()[-1] == "error: unknown flag: --bogus"


# ---- the RPC over gRPC, in process ---------------------------------------------------------------------------


class TestRpc:
    def test_answers_and_errors_over_grpc(self) -> None:
        store = load(*AMBIGUOUS_WORLD)
        with InProcessServer(store) as server, SelectorClient(server.address, timeout=10) as client:
            assert text(client.get_runtime_tree("team-llama", "team-a")) == PAGE_TEAM_LLAMA_TREE
            got = client.get_runtime_tree("vllm-llama", "team-a", show_unattributed_users=True)
            assert text(got) == with_unattributed(PAGE_VLLM_LLAMA_TREE, PAGE_UNATTRIBUTED_LINES).replace(
                "ServingRuntime scope=AllNamespaces status=Complete pages=1 items=1",
                "ServingRuntime scope=AllNamespaces status=Complete pages=1 items=2",
            )
            cases = [
                ({"name": "nope", "namespace": "team-a"}, grpc.StatusCode.NOT_FOUND, []),
                ({"name": "vllm-legacy", "namespace": "team-c"}, grpc.StatusCode.FAILED_PRECONDITION, []),
                (
                    {"name": "Bad_Name", "namespace": "team-a"},
                    grpc.StatusCode.INVALID_ARGUMENT,
                    [("name", f'Invalid value: "Bad_Name": {SUBDOMAIN_RULE}')],
                ),
                (
                    {"name": "x", "namespace": "team-a", "kind": "Foo"},
                    grpc.StatusCode.INVALID_ARGUMENT,
                    [("kind", 'Unsupported value: "Foo": supported values: "ServingRuntime", "ClusterServingRuntime"')],
                ),
                ({"name": "x"}, grpc.StatusCode.INVALID_ARGUMENT, [("namespace", "Required value")]),
            ]
            for fields, code, violations in cases:
                with pytest.raises(SelectorError) as excinfo:
                    client.get_runtime_tree(**fields)
                assert (excinfo.value.code, list(excinfo.value.field_violations)) == (code, violations)
            with pytest.raises(SelectorError) as excinfo:
                client.get_runtime_tree("vllm-legacy", "team-c")
            assert excinfo.value.message == AMBIGUOUS
