"""The SelectionOutcome and SelectionChange protos of the cached InferenceServices' outcomes
(flows/outcomes.py), shared by PreviewCacheChange and WatchSelections."""

from __future__ import annotations

from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb

from ome_selector.cache.snapshot import Snapshot
from ome_selector.flows import changes, outcomes, reasons
from ome_selector.rpc.common import _ref
from ome_selector.rpc.enums import CHANGE_STEP_TO_PB, CHECK_TO_PB, TIE_BREAK_TO_PB
from ome_selector.rpc.lifecycle import _components, _condition, _events
from ome_selector.validation import KIND_TO_ENUM

# ---- outcomes of cached InferenceServices (README, "Watch selections and preview a change") ----


def outcome_pb(key: outcomes.IsvcKey, outcome: outcomes.Outcome) -> pb.SelectionOutcome:
    """The SelectionOutcome proto of one cached InferenceService's outcome."""
    out = pb.SelectionOutcome(
        namespace=key[0],
        name=key[1],
        mode=pb.SELECTION_MODE_NAMED if outcome.named else pb.SELECTION_MODE_AUTO,
        warnings=_events(outcome.warnings),
        components=_components(outcome.components),
    )
    if outcome.runtime is not None:
        out.runtime.CopyFrom(_ref(outcome.runtime))
    if outcome.condition is not None:
        out.runtime_ready.CopyFrom(_condition(outcome.condition))
    return out


def _reason_pb(reason: reasons.Reason) -> pb.ChangeReason:
    out = pb.ChangeReason(step=CHANGE_STEP_TO_PB[reason.step], text=reason.text)
    if reason.runtime is not None:
        out.runtime.CopyFrom(_ref(reason.runtime))
    if reason.check is not None:
        out.check = CHECK_TO_PB[reason.check]
    if reason.tie_break is not None:
        out.tie_break = TIE_BREAK_TO_PB[reason.tie_break]
    return out


def change_pbs(
    old: Snapshot, new: Snapshot, before: outcomes.Selections, advance: outcomes.Advance
) -> list[pb.SelectionChange]:
    """The SelectionChange protos of every change of ``advance`` (``before.advance(old, new)``),
    in its order: the outcomes, the write's objects behind each (one line each,
    ``changes.describe``, once per object) and the reason (``reasons.Explanations``: once per
    distinct reason)."""
    explanations = reasons.Explanations(old, new, before, advance)
    texts: dict[tuple[str, str, str], str] = {}
    built: dict[int, pb.SelectionOutcome] = {}  # id of an Outcome (shared between InferenceServices) -> its proto

    def set_outcome(target: pb.SelectionOutcome, key: outcomes.IsvcKey, outcome: outcomes.Outcome) -> None:
        template = built.get(id(outcome))
        if template is None:
            template = built[id(outcome)] = outcome_pb(("", ""), outcome)
        target.CopyFrom(template)
        target.namespace, target.name = key

    out = []
    for change in advance.changes:  # they hold every outcome ``built`` names while it lives
        proto = pb.SelectionChange(namespace=change.key[0], name=change.key[1], cache_version=new.version)
        if change.before is not None:
            set_outcome(proto.before, change.key, change.before)
        if change.after is not None:
            set_outcome(proto.after, change.key, change.after)
        for key in explanations.causes(change):
            text = texts.get(key)
            if text is None:
                text = texts[key] = changes.describe(old, new, key)
            proto.causes.add(key=_object_key(key), text=text)
        proto.reason.CopyFrom(_reason_pb(explanations.reason(change)))
        out.append(proto)
    return out


def _object_key(key: tuple[str, str, str]) -> cache_pb2.ObjectKey:
    return cache_pb2.ObjectKey(kind=KIND_TO_ENUM[key[0]], namespace=key[1], name=key[2])
