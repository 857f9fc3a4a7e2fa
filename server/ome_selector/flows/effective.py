"""The Live view of ``kubectl ome runtime effective`` (reference/kubectl-ome/runtime.md): the
runtime an InferenceService uses, its inheritance chain, and each component's configuration.
Pure Python, no gRPC.
"""

from __future__ import annotations

from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows.components import ComponentConfig, components
from ome_selector.flows.resolution import SelectQuery, decide, lookup_named


@dataclass(frozen=True, slots=True)
class Effective:
    """The Live view of ``kubectl ome runtime effective``."""

    state: str
    reason: str
    runtime: d.Runtime | None
    selection: str
    chain: tuple[tuple[str, str, str], ...]  # (kind, namespace, name), root first, ending with the runtime
    inheritance_error: str
    components: tuple[ComponentConfig, ...]
    inheritance_reason: str = ""  # NotFound, Cycle or MaxDepthExceeded when the chain is broken


def effective(snapshot: Snapshot, isvc: types_pb2.InferenceService) -> Effective:
    """The Live view of ``kubectl ome runtime effective`` (reference/kubectl-ome/runtime.md): the
    runtime ``spec.runtime`` names, or the one OME selects for the model, merged with every
    runtime it inherits from; its chain, root first; each component's mode and class from the
    merged spec. ``Unavailable`` reasons: ``NotConfigured`` (neither runtime nor model),
    ``NotFound`` (the runtime or a parent is missing, or no runtime is selected), ``Disabled``
    (the merged spec is disabled), ``Unreadable`` (a cycle or a chain over the depth limit).
    ``inheritance_reason`` is what ``explain --with-effective`` shows for a broken chain:
    ``NotFound``, ``Cycle`` or ``MaxDepthExceeded``."""
    named = bool(isvc.spec.runtime.name)
    selection = "Explicit" if named else "Selected"

    def unavailable(
        reason: str, runtime: d.Runtime | None = None, error: str = "", chain_reason: str = ""
    ) -> Effective:
        return Effective(
            "Unavailable", reason, runtime, selection, (), error, components(snapshot, isvc, None, named), chain_reason
        )

    if named:
        runtime, _ = lookup_named(snapshot, isvc.spec.runtime, isvc.metadata.namespace)
        if runtime is None:
            return unavailable("NotFound", chain_reason="NotFound")
    elif not isvc.spec.model.name:
        return unavailable("NotConfigured")
    else:
        runtime = decide(snapshot, SelectQuery(isvc)).runtime
        if runtime is None:  # unknown, disabled or format-less model, or no runtime qualifies
            return unavailable("NotFound")
    error = runtime.inheritance_error
    if error is not None:
        chain_reason = runtime.inheritance_reason or d.CHAIN_NOT_FOUND
        return unavailable(
            "NotFound" if chain_reason == d.CHAIN_NOT_FOUND else "Unreadable", runtime, error, chain_reason
        )
    chain = runtime.chain_keys or (runtime.key,)
    state, reason = ("Unavailable", "Disabled") if runtime.named_compiled.disabled else ("Available", "")
    return Effective(state, reason, runtime, selection, chain, "", components(snapshot, isvc, runtime, True))
