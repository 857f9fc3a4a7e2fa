"""The events one advance of the watch tracker sends each watcher: the changed outcomes it
matches, the InferenceServices that enter or leave its namespace and label selector, and the
``WriteStats`` (rpc/watch.py). No gRPC imports; the protos are built and serialized once per
advance and shared by every watcher that gets them (never changed once built).

A watcher matches an InferenceService when it is in the watch's namespace (any, when empty) and
its labels match the watch's label selector. As Kubernetes' watch sends ``ADDED`` / ``DELETED``
when an update makes an object start or stop matching a selector, a write that changes an
InferenceService's labels sends it as added (``before`` absent, ``after`` its outcome now) to a
watcher it enters, and as removed (``before`` the outcome the watcher had, ``after`` absent) to a
watcher it leaves, whether or not its outcome changed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeAlias

from ome.selector.v1 import selector_pb2 as pb

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows import changes, labels, outcomes
from ome_selector.rpc import outcomes as rpc_outcomes
from ome_selector.rpc.common import _ref
from ome_selector.texts import messages

Event: TypeAlias = pb.WatchSelectionsResponse
Match = Callable[[outcomes.IsvcKey, Snapshot], bool]


def matches(namespace: str, selector: labels.Selector, key: outcomes.IsvcKey, snapshot: Snapshot) -> bool:
    """Whether the InferenceService ``key`` of ``snapshot`` is in the watch of ``namespace``
    (every namespace when empty) and ``selector``."""
    if namespace and key[0] != namespace:
        return False
    isvc = snapshot.inference_services.get(key)
    return isvc is not None and selector.matches(isvc.metadata.labels)


@dataclass
class AdvanceEvents:
    """The shared protos of one advance from ``old`` to ``new`` (``result`` =
    ``before.advance(old, new)``), built as watchers ask for them: ``for_watcher(match)`` is the
    list one watcher gets and ``encode(events)`` those serialized (each event once)."""

    old: Snapshot
    new: Snapshot
    before: outcomes.Selections
    result: outcomes.Advance
    _changes: list[Event] | None = None
    _crossing: dict[tuple[outcomes.IsvcKey, bool], Event] = field(default_factory=dict)
    _encoded: dict[int, bytes] = field(default_factory=dict)
    _relabelled: list[outcomes.IsvcKey] | None = None

    def _change_events(self) -> list[Event]:
        if self._changes is None:
            result = self.result
            protos = rpc_outcomes.change_pbs(self.old, self.new, self.before, result) if result.changes else []
            self._changes = [Event(change=proto) for proto in protos]
        return self._changes

    def relabelled(self) -> list[outcomes.IsvcKey]:
        """The InferenceServices of both snapshots whose labels the write changed, sorted."""
        if self._relabelled is None:
            old, new = self.old.inference_services, self.new.inference_services
            found = []
            for kind, namespace, name in self.result.touched:
                if kind != d.INFERENCE_SERVICE:
                    continue
                a, b = old.get((namespace, name)), new.get((namespace, name))
                if a is not None and b is not None and a.metadata.labels != b.metadata.labels:
                    found.append((namespace, name))
            self._relabelled = sorted(found)
        return self._relabelled

    def _crossing_event(self, key: outcomes.IsvcKey, entered: bool) -> Event:
        """The added (``entered``) or removed event of ``key`` for a watcher it enters or leaves."""
        found = self._crossing.get((key, entered))
        if found is None:
            proto = pb.SelectionChange(namespace=key[0], name=key[1], cache_version=self.new.version)
            if entered:
                proto.after.CopyFrom(rpc_outcomes.outcome_pb(key, self.result.selections.tracked[key].outcome))
                text = messages.REASON_ENTERED_SELECTION
            else:
                proto.before.CopyFrom(rpc_outcomes.outcome_pb(key, self.before.tracked[key].outcome))
                text = messages.REASON_LEFT_SELECTION
            own = (d.INFERENCE_SERVICE, *key)
            proto.causes.add(key=rpc_outcomes._object_key(own), text=changes.describe(self.old, self.new, own))
            proto.reason.CopyFrom(pb.ChangeReason(step=pb.CHANGE_STEP_INFERENCE_SERVICE, text=text))
            outcome = (self.result.selections if entered else self.before).tracked[key].outcome
            if outcome.runtime is not None:
                proto.reason.runtime.CopyFrom(_ref(outcome.runtime))
            found = self._crossing[(key, entered)] = Event(change=proto)
        return found

    def for_watcher(self, match: Match) -> list[Event]:
        """The events of a watcher whose filter is ``match``: its changes and crossings sorted by
        namespace and name, then the ``WriteStats``."""
        relabelled = set(self.relabelled())
        picked: list[tuple[outcomes.IsvcKey, Event]] = []
        if self.result.changes:
            for i, change in enumerate(self.result.changes):
                if change.key in relabelled:
                    continue  # below: both outcomes exist, the labels decide
                if match(change.key, self.new if change.after is not None else self.old):
                    picked.append((change.key, self._change_events()[i]))
        changed = {c.key: i for i, c in enumerate(self.result.changes) if c.key in relabelled}
        for key in relabelled:
            was, now = match(key, self.old), match(key, self.new)
            if was and now:
                if key in changed:
                    picked.append((key, self._change_events()[changed[key]]))
            elif was or now:
                picked.append((key, self._crossing_event(key, entered=now)))
        picked.sort(key=lambda pair: pair[0])
        stats = pb.WriteStats(
            cache_version=self.new.version,
            generation=self.new.generation,
            reevaluated=self.result.reevaluated,
            changed=len(self.result.changes),
            matched=len(picked),
            inference_services=len(self.new.inference_services),
        )
        return [*(event for _, event in picked), Event(write=stats)]

    def encode(self, events: Sequence[Event]) -> tuple[list[bytes], int]:
        """The serialized ``events`` (one of ``for_watcher``'s lists) and their bytes in all: each
        shared change serialized once per advance, while this object holds it, so watchers of
        any filter that get it share the same bytes (the stream sends them as they are)."""
        out = []
        total = 0
        for event in events:
            found = None if event.HasField("write") else self._encoded.get(id(event))  # WriteStats: per filter
            if found is None:
                found = event.SerializeToString()
                if not event.HasField("write"):
                    self._encoded[id(event)] = found
            data = found
            out.append(data)
            total += len(data)
        return out, total
