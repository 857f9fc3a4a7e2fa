"""What OME's controller writes on a runtime (concepts/runtimes/runtime-inheritance.md, "What
admission checks" and "When a chain breaks"): the merged spec with its chain, the
``InheritanceReady`` condition, ``status.inheritanceChain`` (the last chain that resolved, kept
when it breaks), and the Warning event it records on a runtime whose chain is broken. Pure
Python, no gRPC.
"""

from __future__ import annotations

from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.domain import objects as d
from ome_selector.domain.objects import Event
from ome_selector.texts import messages

# runtime-inheritance.md, "What admission checks": how a chain breaks -> InheritanceReady reason.
# A failure the resolver cannot name is ResolverError (none arises from cached runtimes).
_REASONS = {
    d.CHAIN_NOT_FOUND: messages.INHERITANCE_PARENT_NOT_FOUND,
    d.CHAIN_CYCLE: messages.INHERITANCE_CYCLE,
    d.CHAIN_MAX_DEPTH: messages.INHERITANCE_MAX_DEPTH_EXCEEDED,
}


@dataclass(frozen=True, slots=True)
class RuntimeStatus:
    """A runtime's status as OME's controller writes it.

    ``spec`` is the merged spec (the runtime's own when it names no parent), None when the chain
    is broken; ``chain`` the chain as it resolves now, root first (empty when broken);
    ``inheritance_chain`` what ``status.inheritanceChain`` holds; ``ready`` / ``reason`` /
    ``message`` the ``InheritanceReady`` condition; ``events`` the events recorded on the runtime;
    ``spec_hash`` the full hash of ``spec`` (empty when broken).
    """

    runtime: d.Runtime
    spec: types_pb2.ServingRuntimeSpec | None
    chain: tuple[tuple[str, str, str], ...]
    inheritance_chain: tuple[str, ...]
    ready: bool
    reason: str
    message: str
    events: tuple[Event, ...]
    spec_hash: str


def runtime_status(runtime: d.Runtime) -> RuntimeStatus:
    """The status of a cached runtime (runtime-inheritance.md, "When a chain breaks"): a chain
    that resolves (a runtime without ``ome.io/inherit-from`` is its own chain) is
    ``InheritanceReady: True`` with ``Resolved``; a broken one is ``False`` with
    ``ParentNotFound``, ``InheritanceCycle`` or ``MaxDepthExceeded`` and the chain's error as
    message, a Warning event of the same reason and message, and ``inheritanceChain`` keeping the
    last chain that resolved."""
    error = runtime.inheritance_error
    if error is not None:
        reason = _REASONS.get(runtime.inheritance_reason or "", messages.INHERITANCE_RESOLVER_ERROR)
        return RuntimeStatus(
            runtime,
            None,
            (),
            runtime.status_chain,
            False,
            reason,
            error,
            (Event("Warning", reason, error),),
            "",
        )
    return RuntimeStatus(
        runtime,
        runtime.named_spec,
        runtime.chain_keys or (runtime.key,),
        runtime.status_chain,
        True,
        messages.INHERITANCE_RESOLVED,
        messages.INHERITANCE_RESOLVED_MESSAGE,
        (),
        runtime.named_hash,
    )
