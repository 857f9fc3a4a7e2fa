"""The ``tree`` command's report (reference/kubectl-ome/runtime.md, "tree")."""

from __future__ import annotations

from ome.selector.v1 import selector_pb2

from ome_selector.cli.labels import _KIND, _OBJECT_KIND, _camel, _labels
from ome_selector.cli.tables import shorten_name

# --- the runtime tree (kubectl-ome runtime.md, "tree") -------------------------------------------

TREE_TITLE = "RUNTIME TREE"
TREE_WIDTH = 80  # "The default output keeps each line within 80 columns."
UNATTRIBUTED_HEADING = "Unattributed users (not attributed to runtime tree):"
NONE_OBSERVED = "none observed"
_TREE_INDENT = "    "
_CONTINUATION = "  "
_TREE_ISSUE = _labels(selector_pb2.RuntimeTreeIssueCode, "RUNTIME_TREE_ISSUE_CODE_", _camel)  # ParentMissing ...
_TREE_STATE = _labels(selector_pb2.RuntimeTreeUnattributedState, "RUNTIME_TREE_UNATTRIBUTED_STATE_", _camel)
_TREE_REASON = _labels(selector_pb2.RuntimeTreeUnattributedReason, "RUNTIME_TREE_UNATTRIBUTED_REASON_", _camel)
_TREE_SNAPSHOT = _labels(selector_pb2.RuntimeTreeSnapshot, "RUNTIME_TREE_SNAPSHOT_", _camel)  # Complete, Partial
_TREE_COLLECTION_SCOPE = _labels(selector_pb2.RuntimeTreeCollectionScope, "RUNTIME_TREE_COLLECTION_SCOPE_", _camel)
_TREE_COLLECTION_STATUS = _labels(selector_pb2.RuntimeTreeCollectionStatus, "RUNTIME_TREE_COLLECTION_STATUS_", _camel)
_TREE_WARNING = _labels(selector_pb2.RuntimeTreeWarning, "RUNTIME_TREE_WARNING_", _camel)  # PartialData ...
_TREE_RESOLUTION = _labels(selector_pb2.RuntimeTreeResolution, "RUNTIME_TREE_RESOLUTION_", _camel)

# A name on a line: (the part kept whole, such as ``ServingRuntime/``; the part that may be shortened).
_Name = tuple[str, str]


def format_tree(response: selector_pb2.GetRuntimeTreeResponse) -> str:
    """``tree``'s default output (runtime.md, "tree"): ``RUNTIME TREE``, ``Target:``, each
    context with its paths, the unattributed block when the response has one, ``Snapshot:``,
    ``Collection:`` and ``Warning:`` lines, every line within ``TREE_WIDTH`` columns: a long
    ``Issue:`` line continues with ``parent=`` on an indented line, a long ``Issue path:`` at
    a `` -> ``, a long ``Collection:`` line with ``status=``, and a name that does not fit is
    shortened (``shorten_name``)."""
    return "\n".join(_tree_lines(response, TREE_WIDTH))


def format_tree_wide(response: selector_pb2.GetRuntimeTreeResponse) -> str:
    """``tree -o wide``: the same lines with full names, none wrapped, except the unattributed
    block, which is as in ``format_tree``."""
    return "\n".join(_tree_lines(response, None))


def _fitted(prefix: str, name: _Name, suffix: str, width: int | None) -> str:
    """``prefix``, ``name`` (its second part shortened so the line fits ``width``; whole for
    None) and ``suffix``."""
    kept, rest = name
    if width is not None:
        rest = shorten_name(rest, width - len(prefix) - len(kept) - len(suffix))
    return f"{prefix}{kept}{rest}{suffix}"


def _tree_name(ref: selector_pb2.RuntimeRef, namespaced: bool) -> _Name:
    """``ServingRuntime/<namespace>/<name>`` or ``ClusterServingRuntime/<name>`` as a ``_Name``;
    inside a Namespaced context without the namespace; a parent that does not exist (kind
    unspecified) as its bare name."""
    if ref.kind == selector_pb2.RUNTIME_KIND_UNSPECIFIED:
        return "", ref.name
    return f"{_KIND[ref.kind]}/", ref.name if namespaced or not ref.namespace else f"{ref.namespace}/{ref.name}"


def _user_name(namespace: str, name: str, namespaced: bool) -> _Name:
    return "InferenceService/", name if namespaced else f"{namespace}/{name}"


def _tree_lines(response: selector_pb2.GetRuntimeTreeResponse, width: int | None) -> list[str]:
    lines = [TREE_TITLE, _fitted("Target: ", _tree_name(response.target, False), "", width)]
    for context in response.contexts:
        namespaced = context.scope == selector_pb2.RUNTIME_TREE_CONTEXT_SCOPE_NAMESPACED
        resolution = f" (resolution: {_TREE_RESOLUTION.get(context.resolution, '-')})"
        if namespaced:
            lines.append(_fitted("Context: Namespaced/", ("", context.namespace), resolution, width))
        else:
            lines.append(f"Context: Cluster{resolution}")
        for head in context.heads:
            lines += _head_lines(head, namespaced, width)
    if response.HasField("unattributed"):
        lines += _unattributed_lines(response.unattributed)
    lines.append(f"Snapshot: {_TREE_SNAPSHOT.get(response.snapshot, '-')}")
    for listed in response.collections:
        lines += _collection_lines(listed, width)
    lines += [f"Warning: {_TREE_WARNING.get(w, '-')}" for w in response.warnings]
    return lines


def _head_lines(head: selector_pb2.RuntimeTreeHead, namespaced: bool, width: int | None) -> list[str]:
    """``Head:``, its issue lines, the chain root first (each runtime after `` `-- ``, four
    columns deeper than the one above), then the InferenceServices one level deeper."""
    lines = [_fitted("Head: ", _tree_name(head.runtime, namespaced), "", width)]
    for issue in head.issues:
        lines += _issue_lines(issue, namespaced, width)
    for depth, node in enumerate(head.chain):
        prefix = _TREE_INDENT * (depth - 1) + "`-- " if depth else ""
        selected = " [selected]" if node.selected else ""
        lines.append(_fitted(prefix, _tree_name(node.runtime, namespaced), selected, width))
    indent = _TREE_INDENT * max(0, len(head.chain) - 1)
    for i, user in enumerate(head.users):
        connector = "`-- " if i == len(head.users) - 1 else "|-- "
        lines.append(_fitted(indent + connector, _user_name(user.namespace, user.name, namespaced), "", width))
    return lines


def _issue_lines(issue: selector_pb2.RuntimeTreeIssue, namespaced: bool, width: int | None) -> list[str]:
    """``Issue: <code> subject=<runtime> parent=<runtime>`` (``parent=`` on an indented line
    when it does not fit), then ``Issue path:`` with the runtimes joined by `` -> `` (continued
    on indented lines at a `` -> `` when it does not fit)."""
    code = _TREE_ISSUE.get(issue.code, "-")
    subject, parent = _tree_name(issue.subject, namespaced), _tree_name(issue.parent, namespaced)
    whole = _fitted(f"Issue: {code} subject=", subject, " parent=" + "".join(parent), None)
    if width is None or len(whole) <= width:
        lines = [whole]
    else:
        lines = [
            _fitted(f"Issue: {code} subject=", subject, "", width),
            _fitted(f"{_CONTINUATION}parent=", parent, "", width),
        ]
    names = [_tree_name(ref, namespaced) for ref in issue.path]
    path = "Issue path: " + " -> ".join("".join(name) for name in names)
    if width is None or len(path) <= width:
        return [*lines, path]
    current = _fitted("Issue path: ", names[0], "", width) if names else "Issue path:"
    for name in names[1:]:
        piece = " -> " + "".join(name)
        if len(current) + len(piece) <= width:
            current += piece
        else:
            lines.append(current)
            current = _fitted(f"{_CONTINUATION}-> ", name, "", width)
    return [*lines, current]


def _unattributed_lines(block: selector_pb2.RuntimeTreeUnattributed) -> list[str]:
    """The ``--show-unattributed-users`` block, within ``TREE_WIDTH`` columns in every output."""
    lines = [UNATTRIBUTED_HEADING]
    for user in block.users:
        lines.append(
            _fitted(f"{_CONTINUATION}[not attributed] ", _user_name(user.namespace, user.name, False), "", TREE_WIDTH)
        )
        lines.append(
            f"{_CONTINUATION}state={_TREE_STATE.get(user.state, '-')} reason={_TREE_REASON.get(user.reason, '-')}"
        )
        if user.declared_runtime:
            lines.append(_fitted(f"{_CONTINUATION}declared runtime=", ("", user.declared_runtime), "", TREE_WIDTH))
    if not block.users:
        lines.append(f"{_CONTINUATION}{NONE_OBSERVED}")
    return lines


def _collection_lines(listed: selector_pb2.RuntimeTreeCollection, width: int | None) -> list[str]:
    """``Collection: <kind> scope=<scope> status=<status> pages=<n> items=<n>``; from
    ``status=`` on an indented line when it does not fit."""
    scope = _TREE_COLLECTION_SCOPE.get(listed.scope, "-")
    start = f"Collection: {_OBJECT_KIND.get(listed.kind, '-')} scope={scope}"
    rest = f"status={_TREE_COLLECTION_STATUS.get(listed.status, '-')} pages={listed.pages} items={listed.items}"
    in_namespace = listed.scope == selector_pb2.RUNTIME_TREE_COLLECTION_SCOPE_NAMESPACE
    namespace = ("/", listed.namespace) if in_namespace else ("", "")
    whole = _fitted(start, namespace, " " + rest, None)
    if width is None or len(whole) <= width:
        return [whole]
    return [_fitted(start, namespace, "", width), _CONTINUATION + rest]
