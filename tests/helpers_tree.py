"""The world of the ``tree`` examples of reference/kubectl-ome/runtime.md, the page's expected
outputs as literals, and small builders for the tests of ``GetRuntimeTree`` / ``ome-selector tree``.

The page's world: four ClusterServingRuntimes (``vllm-base``; ``vllm-llama``, which inherits
from it; ``srt-llama-1b``; ``vllm-legacy``: the four of the page's ``explain`` example, so
``items=4``), the ServingRuntime ``team-llama`` in ``team-a``, which inherits from
``vllm-llama``, and four InferenceServices: ``llama-chat`` (team-a) and ``llama-batch``
(team-b) name ``vllm-llama``, ``llama-dev`` (team-a) names ``team-llama``, ``llama-auto``
(team-b) names no runtime.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from helpers_docs import entry, isvc, load, model, runtime, spec_of
from ome.selector.v1 import selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.rpc import tree as rpc_tree

PAGE_WORLD: list[dict[str, Any]] = [
    model(namespace="team-a"),
    runtime("vllm-base", entry(auto_select=None)),
    runtime(
        "vllm-llama", entry(format=spec_of("safetensors", "1.0.0", weight=2), priority=2), inherit_from="vllm-base"
    ),
    runtime("srt-llama-1b", entry(priority=1), size=("500M", "2B")),
    runtime("vllm-legacy", entry(), disabled=True),
    runtime("team-llama", entry(priority=1), namespace="team-a", inherit_from="vllm-llama"),
    isvc(namespace="team-a", name="llama-chat", runtime_name="vllm-llama"),
    isvc(namespace="team-b", name="llama-batch", runtime_name="vllm-llama"),
    isvc(namespace="team-a", name="llama-dev", runtime_name="team-llama", runtime_kind="ServingRuntime"),
    isvc(namespace="team-b", name="llama-auto"),
]

# `kubectl ome runtime tree vllm-llama -n team-a`, as the page prints it.
PAGE_VLLM_LLAMA_TREE = """\
RUNTIME TREE
Target: ClusterServingRuntime/vllm-llama
Context: Cluster (resolution: Complete)
Head: ClusterServingRuntime/vllm-llama
ClusterServingRuntime/vllm-base
`-- ClusterServingRuntime/vllm-llama [selected]
    |-- InferenceService/team-a/llama-chat
    `-- InferenceService/team-b/llama-batch
Context: Namespaced/team-a (resolution: Complete)
Head: ServingRuntime/team-llama
ClusterServingRuntime/vllm-base
`-- ClusterServingRuntime/vllm-llama [selected]
    `-- ServingRuntime/team-llama
        `-- InferenceService/llama-dev
Snapshot: Complete
Collection: ClusterServingRuntime scope=Cluster status=Complete pages=1 items=4
Collection: ServingRuntime scope=AllNamespaces status=Complete pages=1 items=1
Collection: InferenceService scope=AllNamespaces status=Complete pages=1 items=4
"""

# `... --show-unattributed-users`: "the same tree, with these lines before `Snapshot: Complete`".
PAGE_UNATTRIBUTED_LINES = """\
Unattributed users (not attributed to runtime tree):
  [not attributed] InferenceService/team-b/llama-auto
  state=Unresolved reason=AutomaticSelection
"""

# `kubectl ome runtime tree team-llama -n team-a`.
PAGE_TEAM_LLAMA_TREE = """\
RUNTIME TREE
Target: ServingRuntime/team-a/team-llama
Context: Namespaced/team-a (resolution: Complete)
Head: ServingRuntime/team-llama
ClusterServingRuntime/vllm-base
`-- ClusterServingRuntime/vllm-llama
    `-- ServingRuntime/team-llama [selected]
        `-- InferenceService/llama-dev
Snapshot: Complete
Collection: ClusterServingRuntime scope=Cluster status=Complete pages=1 items=4
Collection: ServingRuntime scope=Namespace/team-a
  status=Complete pages=1 items=1
Collection: InferenceService scope=Namespace/team-a
  status=Complete pages=1 items=2
"""


def with_unattributed(tree_text: str, block: str) -> str:
    """``tree_text`` with ``block`` inserted before its ``Snapshot:`` line."""
    before, snapshot, after = tree_text.partition("Snapshot: ")
    return before + block + snapshot + after


def request(
    name: str, namespace: str = "team-a", kind: str = "", show: bool = False
) -> selector_pb2.GetRuntimeTreeRequest:
    """A GetRuntimeTreeRequest (``show``: ``show_unattributed_users``)."""
    return selector_pb2.GetRuntimeTreeRequest(name=name, namespace=namespace, kind=kind, show_unattributed_users=show)


def tree(target: CacheStore | list[Any], name: str, **fields: Any) -> selector_pb2.GetRuntimeTreeResponse:
    """``rpc_tree.get_runtime_tree`` on a store, or on a new store of the sources ``target`` lists."""
    store = target if isinstance(target, CacheStore) else load(*target)
    return rpc_tree.get_runtime_tree(store.snapshot, request(name, **fields))


def write_manifests(folder: Path, documents: list[dict[str, Any]], name: str = "world.yaml") -> str:
    """``documents`` as one multi-document YAML file in ``folder``; returns its path."""
    path = folder / name
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return str(path)
