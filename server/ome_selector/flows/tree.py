"""The RuntimeTreeReport of ``kubectl ome runtime tree`` (reference/kubectl-ome/runtime.md,
"tree"): how a runtime fits into runtime inheritance (concepts/runtimes/runtime-inheritance.md).
Pure Python, no gRPC.

``runtime_tree(snapshot, target, show_unattributed)`` lists what the CLI lists, from the cache,
as the API server would return it: the ClusterServingRuntimes; for a ServingRuntime target the
ServingRuntimes and InferenceServices of its namespace, for a ClusterServingRuntime target those
of every namespace. Each list holds at most ``LIST_LIMIT`` objects, read in pages of
``PAGE_SIZE`` (``collection``). Then:

- a **head** is a listed runtime whose chain, walked as OME walks it (``Snapshot.walk``: at most
  five runtimes, names alone count, a ServingRuntime's parents looked up in its namespace first
  for the whole walk), reaches the target: the target itself, and every runtime that inherits
  from it; each gets its chain root first and the problem that stops it (``Issue``);
- heads are grouped in **contexts**: ``Cluster`` for ClusterServingRuntimes, ``Namespaced/<ns>``
  for the ServingRuntimes of one namespace;
- every listed InferenceService is **attributed** by its ``spec.runtime`` (``attribute``): to a
  head, to another runtime (left out), or to none (``Unattributed``).

``find_target`` resolves the name (and kind) first: ``RequestError`` NOT_FOUND or
FAILED_PRECONDITION with the page's texts, as are runtime lists over the limit.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import RequestError
from ome_selector.flows.resolution import lookup_named
from ome_selector.texts import messages

Key = tuple[str, str, str]  # (kind, namespace, name); kind "" for a parent that does not exist
IsvcKey = tuple[str, str]  # (namespace, name)

API_VERSION = "cli.ome.io/v1alpha1"
REPORT_KIND = "RuntimeTreeReport"
# "Each list holds at most 1,000 objects, read in two pages of 500."
PAGE_SIZE = 500
LIST_LIMIT = 1000


# The ``Issue:`` codes (runtime.md, "tree", Output fields: ParentMissing, CycleDetected,
# MaxDepthExceeded); api.TREE_ISSUE_TO_PB maps them to the proto enum the renderer labels.
IssueCode = enum.Enum("IssueCode", "PARENT_MISSING CYCLE_DETECTED MAX_DEPTH_EXCEEDED")


# How OME's chain walk stops (``domain.CHAIN_*``) -> the tree's issue code.
ISSUE_OF_CHAIN_REASON = {
    d.CHAIN_NOT_FOUND: IssueCode.PARENT_MISSING,
    d.CHAIN_CYCLE: IssueCode.CYCLE_DETECTED,
    d.CHAIN_MAX_DEPTH: IssueCode.MAX_DEPTH_EXCEEDED,
}


# The ``state=`` and ``reason=`` of an unattributed InferenceService (runtime.md, "tree", the
# table of states and reasons: Unresolved, Invalid, Ambiguous; AutomaticSelection,
# RuntimeNotFound, InvalidRuntimeName, DuplicateInferenceService). A list that returns the same
# InferenceService twice is DUPLICATE_INFERENCE_SERVICE; the cache holds one object per
# namespace and name, so ``runtime_tree`` never gives it.
UnattributedState = enum.Enum("UnattributedState", "UNRESOLVED INVALID AMBIGUOUS")
UnattributedReason = enum.Enum(
    "UnattributedReason", "AUTOMATIC_SELECTION RUNTIME_NOT_FOUND INVALID_RUNTIME_NAME DUPLICATE_INFERENCE_SERVICE"
)


# The page's table: each reason with its state.
STATE_OF_REASON = {
    UnattributedReason.AUTOMATIC_SELECTION: UnattributedState.UNRESOLVED,
    UnattributedReason.RUNTIME_NOT_FOUND: UnattributedState.UNRESOLVED,
    UnattributedReason.INVALID_RUNTIME_NAME: UnattributedState.INVALID,
    UnattributedReason.DUPLICATE_INFERENCE_SERVICE: UnattributedState.AMBIGUOUS,
}


class CollectionStatus(enum.Enum):
    """The ``status=`` of a ``Collection:`` line, as the failure text of an incomplete runtime
    list says it. The cache never fails a read, so ``UNAVAILABLE`` is never given."""

    COMPLETE = "complete"
    TRUNCATED = "truncated"
    UNAVAILABLE = "unavailable"


# The ``Warning:`` codes (PartialData, SourceUnavailable, Truncated). SOURCE_UNAVAILABLE (a
# failed list) is never given.
TreeWarning = enum.Enum("TreeWarning", "PARTIAL_DATA SOURCE_UNAVAILABLE TRUNCATED")


@dataclass(frozen=True, slots=True)
class Collection:
    """One list read (``Collection:``): ``kind``, ``namespace`` (None for every namespace, ""
    for a cluster-scoped kind), ``status``, ``pages``, ``items``."""

    kind: str
    namespace: str | None
    status: CollectionStatus
    pages: int
    items: int


def collection(kind: str, namespace: str | None, count: int) -> Collection:
    """The list of ``count`` objects as the CLI reads it: pages of ``PAGE_SIZE``, at most
    ``LIST_LIMIT`` objects (one page for an empty list); ``TRUNCATED`` beyond the limit."""
    items = min(count, LIST_LIMIT)
    pages = max(1, -(-items // PAGE_SIZE))
    status = CollectionStatus.TRUNCATED if count > LIST_LIMIT else CollectionStatus.COMPLETE
    return Collection(kind, namespace, status, pages, items)


@dataclass(frozen=True, slots=True)
class Issue:
    """The problem that stops a chain: ``subject`` is the runtime whose parent the walk cannot
    take, ``parent`` that parent (kind "" when it does not exist), ``path`` the runtimes from
    the head up to ``parent``, in OME's walk order."""

    code: IssueCode
    subject: Key
    parent: Key
    path: tuple[Key, ...]


@dataclass(frozen=True, slots=True)
class Head:
    """One path of a context: the head, its chain root first (ending with the head), the issue
    of its chain, and the InferenceServices attributed to it, by namespace and name."""

    runtime: Key
    chain: tuple[Key, ...]
    issue: Issue | None
    users: tuple[IsvcKey, ...]


@dataclass(frozen=True, slots=True)
class Context:
    """``Cluster`` (``namespace`` None) or ``Namespaced/<namespace>``, with its heads."""

    namespace: str | None
    heads: tuple[Head, ...]


@dataclass(frozen=True, slots=True)
class Unattributed:
    """A listed InferenceService whose runtime its spec does not tell; ``declared`` is the name
    it gives for ``RUNTIME_NOT_FOUND``."""

    key: IsvcKey
    reason: UnattributedReason
    declared: str = ""

    @property
    def state(self) -> UnattributedState:
        """The state the page's table gives the reason."""
        return STATE_OF_REASON[self.reason]


@dataclass(frozen=True, slots=True)
class RuntimeTree:
    """The RuntimeTreeReport. ``unattributed`` is None unless asked for; ``partial`` when the
    InferenceService list was truncated (``Snapshot: Partial``, with ``warnings``)."""

    target: Key
    contexts: tuple[Context, ...]
    unattributed: tuple[Unattributed, ...] | None
    partial: bool
    collections: tuple[Collection, ...]
    warnings: tuple[TreeWarning, ...]


def find_target(snapshot: Snapshot, name: str, namespace: str, kind: str) -> d.Runtime:
    """The runtime ``tree`` is about: with ``kind`` ``ServingRuntime`` the one of ``namespace``,
    with ``ClusterServingRuntime`` the cluster's, with no kind whichever exists. Raises
    ``RequestError``: FAILED_PRECONDITION when both exist (the page's ambiguity text), NOT_FOUND
    when none does. ``kind`` must be one of ``messages.TREE_SUPPORTED_KINDS`` or empty."""
    found = [
        rt
        for rt in (
            snapshot.serving_runtimes.get((namespace, name)) if kind != d.CLUSTER_SERVING_RUNTIME else None,
            snapshot.cluster_serving_runtimes.get(name) if kind != d.SERVING_RUNTIME else None,
        )
        if rt is not None
    ]
    if len(found) > 1:
        raise RequestError("FAILED_PRECONDITION", messages.tree_ambiguous(errors.quote(name), len(found)))
    if not found:
        raise RequestError("NOT_FOUND", messages.tree_target_not_found(errors.quote(name)))
    return found[0]


def runtime_tree(snapshot: Snapshot, target: d.Runtime, show_unattributed: bool) -> RuntimeTree:
    """The tree around ``target`` (see the module docstring). Raises ``RequestError``
    FAILED_PRECONDITION when a runtime list is over ``LIST_LIMIT``: the tree needs every
    runtime (the page's ``runtime tree requires complete runtime evidence`` text)."""
    scope = None if target.is_cluster else target.namespace
    if scope is None:
        serving = sorted(snapshot.serving_runtimes.items())
    else:
        serving = sorted(((scope, rt.name), rt) for rt in snapshot.runtimes_in_scope(scope)[0].order)
    isvcs = sorted((key, isvc) for key, isvc in snapshot.inference_services.items() if scope is None or key[0] == scope)
    collections = (
        collection(d.CLUSTER_SERVING_RUNTIME, "", len(snapshot.cluster_serving_runtimes)),
        collection(d.SERVING_RUNTIME, scope, len(serving)),
        collection(d.INFERENCE_SERVICE, scope, len(isvcs)),
    )
    for listed in collections[:2]:
        if listed.status is not CollectionStatus.COMPLETE:
            raise RequestError(
                "FAILED_PRECONDITION",
                messages.tree_incomplete_runtimes(listed.kind, listed.status.value, listed.pages, listed.items),
            )
    candidates = [*(snapshot.cluster_serving_runtimes.values() if scope is None else ()), *(rt for _, rt in serving)]
    # head key -> (the keys from the target down to the head, the chain's Issue, the chain root first)
    paths: dict[Key, tuple[tuple[Key, ...], Issue | None, tuple[Key, ...]]] = {}
    for rt in candidates:
        walk = snapshot.walk(rt)
        keys = [member.key for member in walk.members]
        if target.key in keys:
            down = tuple(reversed(keys[: keys.index(target.key) + 1]))
            paths[rt.key] = (down, _issue(snapshot, rt, walk.members, walk.reason), tuple(reversed(keys)))
    users: dict[Key, list[IsvcKey]] = {key: [] for key in paths}
    unattributed: list[Unattributed] = []
    listed_isvcs = isvcs[: collections[2].items]
    for isvc_key, isvc in listed_isvcs:
        runtime, missing = attribute(snapshot, isvc_key, isvc)
        if missing is not None:
            unattributed.append(missing)
        elif runtime is not None and runtime in users:
            users[runtime].append(isvc_key)
    contexts: dict[str | None, list[Head]] = {}
    for key in sorted(paths, key=lambda k: paths[k][0]):
        _, issue, chain = paths[key]
        context = None if key[0] == d.CLUSTER_SERVING_RUNTIME else key[1]
        contexts.setdefault(context, []).append(Head(key, chain, issue, tuple(users[key])))
    partial = collections[2].status is not CollectionStatus.COMPLETE
    return RuntimeTree(
        target=target.key,
        contexts=tuple(
            Context(namespace, tuple(heads))
            for namespace, heads in sorted(contexts.items(), key=lambda item: item[0] or "")
        ),
        unattributed=tuple(unattributed) if show_unattributed else None,
        partial=partial,
        collections=collections,
        warnings=(TreeWarning.PARTIAL_DATA, TreeWarning.TRUNCATED) if partial else (),
    )


def _issue(snapshot: Snapshot, head: d.Runtime, members: tuple[d.Runtime, ...], reason: str | None) -> Issue | None:
    """The ``Issue`` of a walk that stopped for ``reason`` (None when the chain resolves)."""
    if reason is None:
        return None
    subject = members[-1]
    name = subject.parent
    assert name is not None  # a walk stops only at a parent
    if reason == d.CHAIN_CYCLE:
        parent = next(m.key for m in members if m.name == name)
    else:
        found = snapshot.parent(head, name) if reason == d.CHAIN_MAX_DEPTH else None
        parent = found.key if found is not None else ("", "", name)
    return Issue(ISSUE_OF_CHAIN_REASON[reason], subject.key, parent, (*(m.key for m in members), parent))


def attribute(
    snapshot: Snapshot, key: IsvcKey, isvc: types_pb2.InferenceService
) -> tuple[Key | None, Unattributed | None]:
    """(runtime, None) for an InferenceService whose ``spec.runtime`` names a runtime that
    exists, found as the page says (``resolution.lookup_named``: ``kind: ServingRuntime`` only
    in its namespace; ``ClusterServingRuntime``, the CRD's default, the cluster's first; an
    empty kind the namespace's first); else (None, why): it names none, an invalid name, or a
    runtime that does not exist."""
    ref = isvc.spec.runtime
    if not ref.name:
        return None, Unattributed(key, UnattributedReason.AUTOMATIC_SELECTION)
    if bounds.name_problem(ref.name):
        return None, Unattributed(key, UnattributedReason.INVALID_RUNTIME_NAME)
    runtime, _ = lookup_named(snapshot, ref, key[0])
    if runtime is None:
        return None, Unattributed(key, UnattributedReason.RUNTIME_NOT_FOUND, ref.name)
    return runtime.key, None
