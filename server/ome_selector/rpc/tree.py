"""GetRuntimeTree: the RuntimeTreeReport of ``kubectl ome runtime tree`` (reference/kubectl-ome/runtime.md,
tree; flows/tree.py)."""

from __future__ import annotations

from ome.selector.v1 import selector_pb2 as pb

from ome_selector import validation as bounds
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.flows import tree
from ome_selector.rpc.common import Rpc, _ref, _require_synced
from ome_selector.rpc.enums import (
    TREE_COLLECTION_STATUS_TO_PB,
    TREE_ISSUE_TO_PB,
    TREE_UNATTRIBUTED_REASON_TO_PB,
    TREE_UNATTRIBUTED_STATE_TO_PB,
    TREE_WARNING_TO_PB,
)
from ome_selector.texts import messages
from ome_selector.validation import KIND_TO_ENUM, validate_name

# ---- the runtime tree (kubectl-ome runtime.md, tree) ----------------------------------------------


def decode_tree(snapshot: Snapshot, request: pb.GetRuntimeTreeRequest) -> pb.GetRuntimeTreeRequest:
    """GetRuntimeTree: the RuntimeTreeReport of ``kubectl ome runtime tree`` (tree.py;
    reference/kubectl-ome/runtime.md, "tree"). Raises ``RequestError`` with the page's texts:
    INVALID_ARGUMENT for an invalid ``name`` or ``kind`` (the message names the first, the
    violations every bad field) or a missing or invalid ``namespace`` (required unless ``kind``
    is ``ClusterServingRuntime``); UNAVAILABLE before the first sync. The request, validated."""
    _require_synced(snapshot)
    texts, violations = [], []
    problem = bounds.name_problem(request.name)
    if problem:
        texts.append(messages.tree_invalid_name(errors.quote(request.name), problem))
        violations.append(FieldViolation("name", errors.invalid_value(request.name, problem)))
    if request.kind and request.kind not in messages.TREE_SUPPORTED_KINDS:
        texts.append(messages.tree_unsupported_kind(errors.quote(request.kind)))
        violations.append(FieldViolation("kind", errors.unsupported(request.kind, messages.TREE_SUPPORTED_KINDS)))
    if request.namespace or request.kind != d.CLUSTER_SERVING_RUNTIME:
        violations += validate_name(request.namespace, "namespace", "namespace")
    if violations:
        if not texts:
            raise RequestError.invalid(violations)
        raise RequestError("INVALID_ARGUMENT", texts[0], violations)
    return request


def run_tree(snapshot: Snapshot, request: pb.GetRuntimeTreeRequest) -> tree.RuntimeTree:
    """The target (NOT_FOUND, FAILED_PRECONDITION as ``tree.find_target`` raises them), then its
    RuntimeTreeReport."""
    target = tree.find_target(snapshot, request.name, request.namespace, request.kind)
    return tree.runtime_tree(snapshot, target, request.show_unattributed_users)


def encode_tree(
    snapshot: Snapshot, request: pb.GetRuntimeTreeRequest, report: tree.RuntimeTree
) -> pb.GetRuntimeTreeResponse:
    response = pb.GetRuntimeTreeResponse(
        api_version=tree.API_VERSION,
        kind=tree.REPORT_KIND,
        target=_ref(report.target),
        contexts=[_tree_context(context, report.target) for context in report.contexts],
        snapshot=pb.RUNTIME_TREE_SNAPSHOT_PARTIAL if report.partial else pb.RUNTIME_TREE_SNAPSHOT_COMPLETE,
        collections=[_tree_collection(c) for c in report.collections],
        warnings=[TREE_WARNING_TO_PB[w] for w in report.warnings],
        cache_version=snapshot.version,
    )
    if report.unattributed is not None:
        response.unattributed.SetInParent()
        for user in report.unattributed:
            response.unattributed.users.add(
                namespace=user.key[0],
                name=user.key[1],
                state=TREE_UNATTRIBUTED_STATE_TO_PB[user.state],
                reason=TREE_UNATTRIBUTED_REASON_TO_PB[user.reason],
                declared_runtime=user.declared,
            )
    return response


TREE = Rpc(decode_tree, run_tree, encode_tree)
get_runtime_tree = TREE


def _tree_context(context: tree.Context, target: tree.Key) -> pb.RuntimeTreeContext:
    """The RuntimeTreeContext proto of a context; ``target`` is marked selected in every chain."""
    out = pb.RuntimeTreeContext(
        scope=pb.RUNTIME_TREE_CONTEXT_SCOPE_CLUSTER
        if context.namespace is None
        else pb.RUNTIME_TREE_CONTEXT_SCOPE_NAMESPACED,
        namespace=context.namespace or "",
        resolution=pb.RUNTIME_TREE_RESOLUTION_COMPLETE,
    )
    for head in context.heads:
        issues = [head.issue] if head.issue is not None else []
        out.heads.add(
            runtime=_ref(head.runtime),
            chain=[pb.RuntimeTreeNode(runtime=_ref(key), selected=key == target) for key in head.chain],
            issues=[
                pb.RuntimeTreeIssue(
                    code=TREE_ISSUE_TO_PB[issue.code],
                    subject=_ref(issue.subject),
                    parent=_ref(issue.parent),
                    path=[_ref(key) for key in issue.path],
                )
                for issue in issues
            ],
            users=[pb.RuntimeTreeUser(namespace=ns, name=name) for ns, name in head.users],
        )
    return out


def _tree_collection(listed: tree.Collection) -> pb.RuntimeTreeCollection:
    if listed.namespace == "":
        scope = pb.RUNTIME_TREE_COLLECTION_SCOPE_CLUSTER
    elif listed.namespace is None:
        scope = pb.RUNTIME_TREE_COLLECTION_SCOPE_ALL_NAMESPACES
    else:
        scope = pb.RUNTIME_TREE_COLLECTION_SCOPE_NAMESPACE
    return pb.RuntimeTreeCollection(
        kind=KIND_TO_ENUM[listed.kind],
        scope=scope,
        namespace=listed.namespace or "",
        status=TREE_COLLECTION_STATUS_TO_PB[listed.status],
        pages=listed.pages,
        items=listed.items,
    )
