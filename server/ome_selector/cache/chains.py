"""OME's walk up one inheritance chain (runtime-inheritance.md, "Chain limits"), and which chains
a write can change."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Set

from ome_selector.domain import objects as d
from ome_selector.texts import messages
from ome_selector.validation import Key

MAX_CHAIN = 5


@dataclasses.dataclass(frozen=True, slots=True)
class ChainWalk:
    """OME's walk up one inheritance chain (runtime-inheritance.md, "Chain limits").

    ``members``: the runtimes visited, the head first, then each parent as compiled (its own
    spec). ``reason``: None when the chain resolves, else where the walk stopped at the last
    member's parent (``members[-1].parent``): ``CHAIN_MAX_DEPTH`` (the chain holds
    ``MAX_CHAIN`` runtimes already), ``CHAIN_CYCLE`` (a name already in the chain) or
    ``CHAIN_NOT_FOUND``, checked in that order.
    """

    members: tuple[d.Runtime, ...]
    reason: str | None = None

    @property
    def error(self) -> str | None:
        """OME's text for the broken chain (the chain head first), or None."""
        names = [rt.name for rt in self.members]
        parent = self.members[-1].parent or ""
        if self.reason == d.CHAIN_MAX_DEPTH:
            return messages.inherit_max_depth(names)
        if self.reason == d.CHAIN_CYCLE:
            return messages.inherit_cycle([*names, parent])
        if self.reason == d.CHAIN_NOT_FOUND:
            return messages.inherit_parent_not_found(parent, names)
        return None


def walk_chain(head: d.Runtime, parent_of: Callable[[str], d.Runtime | None]) -> ChainWalk:
    """Walk from ``head`` up its ``ome.io/inherit-from`` parents, each found by
    ``parent_of(name)``, until a runtime without a parent or a problem (``ChainWalk``)."""
    members = [head]
    names = {head.name}
    while members[-1].parent:
        name = members[-1].parent
        if len(members) >= MAX_CHAIN:
            return ChainWalk(tuple(members), d.CHAIN_MAX_DEPTH)
        if name in names:
            return ChainWalk(tuple(members), d.CHAIN_CYCLE)
        parent = parent_of(name)
        if parent is None:
            return ChainWalk(tuple(members), d.CHAIN_NOT_FOUND)
        members.append(parent)
        names.add(name)
    return ChainWalk(tuple(members))


def chain_can_reach(rt: d.Runtime, changed: Set[Key], names: Set[str]) -> bool:
    """Whether the inheritance chain of ``rt`` (a runtime with a parent, as resolved) can change
    when the runtimes ``changed`` (keys; ``names`` their names) change: ``rt`` itself, its
    parent, a chain member, or a name its chain error mentions (a new parent can mend a broken
    chain)."""
    error = rt.inheritance_error
    return (
        rt.key in changed
        or rt.parent in names
        or not names.isdisjoint(rt.chain)
        or (error is not None and any(n in error for n in names))
    )
