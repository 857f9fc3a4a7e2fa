"""Runtime revisions and pinning (concepts/runtimes/runtime-revisions.md; ome-selection-facts.md
8.8; reference/kubectl-ome/runtime.md, ``effective``: the pin mode and state, SYNC and
LIVE-RELATION). Pure Python, no gRPC.

- ``pin_mode``: AutoSync, ManagedPin, ExplicitPin or InvalidPin, from ``spec.runtime``.
- ``report``: the pin as the InferenceService reports it (``PinReport``): mode, state, sync
  state, live and active hashes and their relation, the revision a roll forward or a rollback
  would use.
- ``resolve``: what the controller does with a pinned InferenceService (``autoSync: false``) in
  one reconcile (``PinOutcome``): the spec the pods are rendered from (a revision, or the live
  runtime), the ``RuntimeDrifted`` condition to set or remove, the status to record, the
  revision to create, or a ``RuntimePinError``.

Revisions are ControllerRevisions in OME's namespace (``ome`` by default), named
``cr-<runtime>-<hash>`` (``kind: ClusterServingRuntime``, the default) or
``r-<namespace>-<runtime>-<hash>`` (``kind: ServingRuntime``); hashes are ``domain.spec_hash``.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows.resolution import lookup_named
from ome_selector.texts import messages

PinMode = enum.Enum("PinMode", "AUTO_SYNC MANAGED_PIN EXPLICIT_PIN INVALID_PIN")
PinState = enum.Enum(
    "PinState",
    "NOT_APPLICABLE AWAITING_PIN RESOLVED DESIRED_REPORTED_MISMATCH REVISION_MISSING REVISION_INVALID "
    "REVISION_DISABLED UNAVAILABLE INVALID_INTENT",
)
SyncState = enum.Enum("SyncState", "ABSENT STATUS_ONLY ACKNOWLEDGED PENDING")
LiveRelation = enum.Enum("LiveRelation", "UNKNOWN EQUAL DIFFERENT AMBIGUOUS")
# How the live runtime reads: found and usable, missing, disabled (its merged spec), or a chain
# that does not resolve.
Live = enum.Enum("Live", "AVAILABLE NOT_FOUND DISABLED UNREADABLE")


class DriftReason(enum.Enum):
    """The reasons of the ``RuntimeDrifted`` condition (runtime-revisions.md, "The RuntimeDrifted
    condition"); the value is the condition's ``reason``."""

    REVISION_MISMATCH = messages.DRIFT_REVISION_MISMATCH
    REVISION_MISSING = messages.DRIFT_REVISION_MISSING
    RUNTIME_MISMATCH = messages.DRIFT_RUNTIME_MISMATCH
    SOURCE_RUNTIME_MISSING = messages.DRIFT_SOURCE_RUNTIME_MISSING


SHORT_HASH = 8
# ``ome.io/revision-hash``: 8 lowercase hex digits (runtime-revisions.md, the revision name table).
_HASH_LABEL = re.compile(r"[0-9a-f]{8}")


def auto_sync(ref: types_pb2.ServingRuntimeRef) -> bool:
    """``spec.runtime.autoSync``; unset means ``true``."""
    return not ref.HasField("auto_sync") or ref.auto_sync


def pinned(isvc: types_pb2.InferenceService) -> bool:
    """True when the controller serves the InferenceService from a revision: it names its runtime
    and sets ``autoSync: false`` ("Only an InferenceService that names its runtime in
    ``spec.runtime.name`` can pin it")."""
    ref = isvc.spec.runtime
    return bool(ref.name) and not auto_sync(ref)


def pin_mode(ref: types_pb2.ServingRuntimeRef) -> PinMode:
    """kubectl-ome runtime.md, effective, the pin mode table: ``AutoSync`` (no runtime named, or
    ``autoSync`` unset or ``true``), ``InvalidPin`` (``autoSync: false`` with a ``kind`` other than
    ``ServingRuntime`` or ``ClusterServingRuntime``), ``ExplicitPin`` (a ``revision``), else
    ``ManagedPin``."""
    if not ref.name or auto_sync(ref):
        return PinMode.AUTO_SYNC
    if ref.HasField("kind") and ref.kind not in (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME):
        return PinMode.INVALID_PIN
    return PinMode.EXPLICIT_PIN if ref.revision else PinMode.MANAGED_PIN


def source_kind(ref: types_pb2.ServingRuntimeRef) -> str:
    """The kind revisions of the named runtime are named and labelled for, as the controller
    reads ``spec.runtime.kind``: ``ClusterServingRuntime`` when unset or so, else ``ServingRuntime``."""
    if not ref.HasField("kind") or ref.kind == d.CLUSTER_SERVING_RUNTIME:
        return d.CLUSTER_SERVING_RUNTIME
    return d.SERVING_RUNTIME


def revision_prefix(kind: str, namespace: str, runtime: str) -> str:
    """runtime-revisions.md, the revision name table: ``cr-<runtime>-`` for a
    ClusterServingRuntime, ``r-<namespace>-<runtime>-`` for a ServingRuntime (then 8 lowercase
    hex digits)."""
    return f"cr-{runtime}-" if kind == d.CLUSTER_SERVING_RUNTIME else f"r-{namespace}-{runtime}-"


def short(full_hash: str) -> str:
    """The 8-character short hash revision names and kubectl-ome's HASH show."""
    return full_hash[:SHORT_HASH]


def sync_state(isvc: types_pb2.InferenceService) -> SyncState:
    """kubectl-ome runtime.md, effective SYNC: the ``ome.io/runtime-sync`` annotation against
    ``status.lastRuntimeSyncToken``."""
    token = isvc.metadata.annotations.get(d.RUNTIME_SYNC_ANNOTATION, "")
    last = isvc.status.last_runtime_sync_token
    if not token:
        return SyncState.STATUS_ONLY if last else SyncState.ABSENT
    return SyncState.ACKNOWLEDGED if token == last else SyncState.PENDING


def live_relation(live_hash: str, active_hash: str) -> LiveRelation:
    """kubectl-ome runtime.md, effective LIVE-RELATION: full hashes equal, different, different
    with the same short hash (``Ambiguous``), or ``Unknown`` when either is missing."""
    if not live_hash or not active_hash:
        return LiveRelation.UNKNOWN
    if live_hash == active_hash:
        return LiveRelation.EQUAL
    return LiveRelation.AMBIGUOUS if short(live_hash) == short(active_hash) else LiveRelation.DIFFERENT


def live_state(runtime: d.Runtime | None) -> Live:
    """How a live runtime reads: missing, a chain that does not resolve, disabled (its merged
    spec), or available."""
    if runtime is None:
        return Live.NOT_FOUND
    if runtime.inheritance_error is not None:
        return Live.UNREADABLE
    return Live.DISABLED if runtime.named_compiled.disabled else Live.AVAILABLE


@dataclass(frozen=True, slots=True)
class Choice:
    """A revision a pin would use: its name, whether it is cached, the full hash of its spec."""

    name: str
    exists: bool
    full_hash: str


@dataclass(frozen=True, slots=True)
class PinReport:
    """The pin as the InferenceService reports it (kubectl-ome runtime.md, effective; ``Service``
    rows PIN, SYNC, LIVE-RELATION). Hashes are full (``short`` gives the 8-character form)."""

    mode: PinMode
    state: PinState
    sync: SyncState
    live_hash: str
    active_hash: str
    relation: LiveRelation
    roll_forward: Choice | None
    rollback: Choice | None
    # The pinned revision's name (``spec.runtime.revision`` for an explicit pin, else
    # ``status.pinnedRevisionName``; empty when not pinned or not reported yet), and the revision
    # the Active view uses (state ``Resolved`` or ``DesiredReportedMismatch``).
    revision_name: str = ""
    active_revision: d.Revision | None = None


def source_matches(revision: d.Revision, runtime: str, kind: str, namespace: str) -> bool:
    """The revision's ``ome.io/runtime-of``, ``-kind`` and ``-namespace`` labels name this runtime."""
    return revision.owner_name == runtime and revision.owner_kind == kind and revision.owner_namespace == namespace


def consistency_problems(revision: d.Revision, runtime: str, kind: str, namespace: str) -> tuple[str, ...]:
    """The checks of one revision against what OME writes (kubectl-ome runtime.md, effective ISSUE
    codes; history CHECK ``BAD``), as the codes kubectl-ome prints, in the page's order:

    - ``RevisionNotOMEManaged``: no ``ome.io/created-by: ome-controller``;
    - ``RevisionSourceMismatch``: ``ome.io/runtime-of``, ``-kind``, ``-namespace`` name another
      runtime than (``runtime``, ``kind``, ``namespace``);
    - ``RevisionHashInvalid``: ``ome.io/revision-hash`` is not 8 lowercase hex digits;
    - ``RevisionNameMismatch``: the name is not ``cr-<runtime>-<hash>`` /
      ``r-<namespace>-<runtime>-<hash>`` from its own labels;
    - ``RevisionOrdinalUnexpected``: its ``revision`` number is not 1.

    Empty: the revision is consistent. ``RevisionHashMismatch`` (the label against the spec's
    hash) cannot be checked: this service hashes specs its own way."""
    out: list[str] = []
    if not revision.ome_managed:
        out.append(messages.ISSUE_REVISION_NOT_OME_MANAGED)
    if not source_matches(revision, runtime, kind, namespace):
        out.append(messages.ISSUE_REVISION_SOURCE_MISMATCH)
    if not _HASH_LABEL.fullmatch(revision.hash_label):
        out.append(messages.ISSUE_REVISION_HASH_INVALID)
    owner_kind = d.SERVING_RUNTIME if revision.owner_kind == d.SERVING_RUNTIME else d.CLUSTER_SERVING_RUNTIME
    expected = revision_prefix(owner_kind, revision.owner_namespace, revision.owner_name) + revision.hash_label
    if revision.name != expected:
        out.append(messages.ISSUE_REVISION_NAME_MISMATCH)
    if revision.number != 1:
        out.append(messages.ISSUE_REVISION_ORDINAL_UNEXPECTED)
    return tuple(out)


def _usable(revision: d.Revision, runtime: str, kind: str, namespace: str) -> bool:
    """A revision the pin can use ("RevisionInvalid: the pinned revision fails the CLI's
    checks", runtime.md, the pin state table): every ``consistency_problems`` check passes."""
    return not consistency_problems(revision, runtime, kind, namespace)


def declared(isvc: types_pb2.InferenceService) -> tuple[str, str]:
    """(kind, namespace) of the runtime the pin declares: a ServingRuntime in the
    InferenceService's namespace when ``kind: ServingRuntime``, else a ClusterServingRuntime."""
    ref = isvc.spec.runtime
    if ref.HasField("kind") and ref.kind == d.SERVING_RUNTIME:
        return d.SERVING_RUNTIME, isvc.metadata.namespace
    return d.CLUSTER_SERVING_RUNTIME, ""


def _revision_state(
    revision: d.Revision | None, isvc: types_pb2.InferenceService, explicit: bool
) -> tuple[PinState, d.Revision | None]:
    """The state of a pin on ``revision`` (kubectl-ome runtime.md, the pin state table)."""
    if revision is None:
        return PinState.REVISION_MISSING, None
    kind, namespace = declared(isvc)
    if not _usable(revision, isvc.spec.runtime.name, kind, namespace):
        return PinState.REVISION_INVALID, None
    state = PinState.RESOLVED
    reported = isvc.status.pinned_revision_name
    if explicit and reported and reported != revision.name:
        state = PinState.DESIRED_REPORTED_MISMATCH
    if revision.disabled:
        return PinState.REVISION_DISABLED, None
    return state, revision


def roll_forward_choice(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, live: d.Runtime, ome_namespace: str
) -> Choice:
    """The revision a roll forward (or a first pin) uses for the live spec, as the controller
    finds or creates it: a revision in OME's namespace labelled for the runtime's name that holds
    the live spec (InferenceServices pinned to the same spec share it; one labelled for the
    declared kind and namespace first, then by name), else ``cr-<runtime>-<hash>`` /
    ``r-<namespace>-<runtime>-<hash>`` to create."""
    ref = isvc.spec.runtime
    kind = source_kind(ref)
    namespace = isvc.metadata.namespace if kind == d.SERVING_RUNTIME else ""
    full_hash = live.named_hash
    found = snapshot.revisions_holding(ome_namespace, ref.name, full_hash)
    if found:
        best = min(found, key=lambda r: (r.owner_kind != kind or r.owner_namespace != namespace, r.name))
        return Choice(best.name, True, full_hash)
    return Choice(revision_prefix(kind, namespace, ref.name) + short(full_hash), False, full_hash)


def _live_of(snapshot: Snapshot, isvc: types_pb2.InferenceService, selected: d.Runtime | None) -> d.Runtime | None:
    """The live runtime: the one ``spec.runtime`` names, else the one OME selected."""
    if isvc.spec.runtime.name:
        return lookup_named(snapshot, isvc.spec.runtime, isvc.metadata.namespace)[0]
    return selected


def report(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, ome_namespace: str, selected: d.Runtime | None = None
) -> PinReport:
    """The pin as the InferenceService reports it, in kubectl-ome's order (runtime.md, effective):
    a live runtime that is disabled or whose chain does not resolve makes the state
    ``Unavailable``; AutoSync is ``NotApplicable`` (``Unavailable`` without a live runtime);
    InvalidPin is ``InvalidIntent``; a managed pin not reported yet is ``AwaitingPin``; else the
    pinned revision (``status.pinnedRevisionName``, or ``spec.runtime.revision`` for an explicit
    pin) decides: ``RevisionMissing``, ``RevisionInvalid``, ``RevisionDisabled``,
    ``DesiredReportedMismatch`` or ``Resolved``. ``selected`` is the runtime OME auto-selected
    (no ``spec.runtime.name``)."""
    mode = pin_mode(isvc.spec.runtime)
    live = _live_of(snapshot, isvc, selected)
    availability = live_state(live)
    live_hash = live.named_hash if live is not None and availability is not Live.UNREADABLE else ""
    active: d.Revision | None = None
    name = ""
    follows_live = False
    if availability in (Live.UNREADABLE, Live.DISABLED):
        state = PinState.UNAVAILABLE
    elif mode is PinMode.AUTO_SYNC:
        state, follows_live = (
            (PinState.NOT_APPLICABLE, True) if availability is Live.AVAILABLE else (PinState.UNAVAILABLE, False)
        )
    elif mode is PinMode.INVALID_PIN:
        state = PinState.INVALID_INTENT
    else:
        explicit = mode is PinMode.EXPLICIT_PIN
        name = isvc.spec.runtime.revision if explicit else isvc.status.pinned_revision_name
        if not name:
            state, follows_live = (
                (PinState.AWAITING_PIN, True) if availability is Live.AVAILABLE else (PinState.UNAVAILABLE, False)
            )
        else:
            state, active = _revision_state(snapshot.revisions.get((ome_namespace, name)), isvc, explicit)
    active_hash = live_hash if follows_live else (active.full_hash if active is not None else "")
    roll_forward = None
    if mode is not PinMode.AUTO_SYNC and live is not None and availability is not Live.UNREADABLE:
        roll_forward = roll_forward_choice(snapshot, isvc, live, ome_namespace)
    rollback = None
    requested = isvc.spec.runtime.revision
    if requested:
        found = snapshot.revisions.get((ome_namespace, requested))
        rollback = Choice(requested, found is not None, found.full_hash if found is not None else "")
    return PinReport(
        mode,
        state,
        sync_state(isvc),
        live_hash,
        active_hash,
        live_relation(live_hash, active_hash),
        roll_forward,
        rollback,
        name,
        active,
    )


@dataclass(frozen=True, slots=True)
class PinOutcome:
    """What the controller does with a pinned InferenceService in one reconcile.

    Exactly one of: ``error`` (a ``RuntimePinError`` event, an error requeue, the workload left as
    it is); ``paused`` (``RuntimeDrifted`` set with a reason that pauses updates: the workload is
    left as it is, no requeue); else ``runtime`` is what the pods are rendered from (a revision's
    spec when ``from_revision``, else the live runtime's merged spec), with ``drift`` set
    (``SourceRuntimeMissing``) or ``clear_drift``. ``pinned`` / ``token`` are the
    ``status.pinnedRevisionName`` / ``status.lastRuntimeSyncToken`` to record (``""`` / None leave
    them); ``create`` is a revision to create first (``exists`` False)."""

    live: d.Runtime | None
    runtime: d.Runtime | None = None
    error: str = ""
    drift: DriftReason | None = None
    drift_message: str = ""
    clear_drift: bool = False
    paused: bool = False
    from_revision: bool = False
    pinned: str = ""
    token: str | None = None
    create: Choice | None = None


def _paused(live: d.Runtime | None, reason: DriftReason, message: str) -> PinOutcome:
    return PinOutcome(live, drift=reason, drift_message=message, paused=True)


def _advance(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, live: d.Runtime, ome_namespace: str, token: str
) -> PinOutcome:
    """Pin the live spec: find the revision that holds it, or create one; record the token."""
    choice = roll_forward_choice(snapshot, isvc, live, ome_namespace)
    return PinOutcome(
        live,
        runtime=live,
        clear_drift=True,
        pinned=choice.name,
        token=token,
        create=None if choice.exists else choice,
    )


def resolve(snapshot: Snapshot, isvc: types_pb2.InferenceService, ome_namespace: str) -> PinOutcome:
    """The controller's pinned path (``autoSync: false``; runtime-revisions.md; the order is OME's
    controller's, ome-selection-facts.md 8.8):

    1. The live runtime is read first; a chain that does not resolve is a ``RuntimePinError``.
    2. ``spec.runtime.revision`` set: that revision, whatever the live runtime says (no drift from
       runtime changes, ``ome.io/runtime-sync`` ignored); missing: ``RevisionMissing``; labelled
       for another runtime name: ``RuntimeMismatch``; the runtime missing: ``SourceRuntimeMissing``
       and the revision serves.
    3. Nothing pinned yet: the live spec is pinned (a shared revision, or a new one) and the
       current ``ome.io/runtime-sync`` value recorded; a missing runtime is a ``RuntimePinError``.
    4. Pinned: the revision missing is ``RevisionMissing``; the runtime missing is
       ``SourceRuntimeMissing`` (the revision serves); the live spec equal to the revision's: the
       revision serves, no drift; else a new ``ome.io/runtime-sync`` value rolls forward, and
       without one ``RevisionMismatch`` pauses updates.
    """
    ref = isvc.spec.runtime
    live, not_found = lookup_named(snapshot, ref, isvc.metadata.namespace)
    if live is not None and live.inheritance_error is not None:
        return PinOutcome(live, error=messages.pin_error_live_runtime(ref.name, live.inheritance_error))
    token = isvc.metadata.annotations.get(d.RUNTIME_SYNC_ANNOTATION, "")
    if ref.revision:
        revision = snapshot.revisions.get((ome_namespace, ref.revision))
        if revision is None:
            message = messages.drift_explicit_revision_missing(ref.revision, ome_namespace)
            return _paused(live, DriftReason.REVISION_MISSING, message)
        if revision.owner_name != ref.name:
            message = messages.drift_runtime_mismatch(ref.revision, revision.owner_name, ref.name)
            return _paused(live, DriftReason.RUNTIME_MISMATCH, message)
        return _serve_revision(live, revision, ref.name)
    reported = isvc.status.pinned_revision_name
    if not reported:
        if live is None:
            return PinOutcome(None, error=messages.pin_error_live_runtime(ref.name, not_found))
        return _advance(snapshot, isvc, live, ome_namespace, token)
    revision = snapshot.revisions.get((ome_namespace, reported))
    if revision is None:
        return _paused(
            live, DriftReason.REVISION_MISSING, messages.drift_pinned_revision_missing(reported, ome_namespace)
        )
    if live is None or live.named_hash == revision.full_hash:
        return _serve_revision(live, revision, ref.name)
    if token and token != isvc.status.last_runtime_sync_token:
        return _advance(snapshot, isvc, live, ome_namespace, token)
    return _paused(live, DriftReason.REVISION_MISMATCH, messages.drift_revision_mismatch(reported))


def _serve_revision(live: d.Runtime | None, revision: d.Revision, runtime: str) -> PinOutcome:
    """The pods render from ``revision``; with the live runtime gone, ``SourceRuntimeMissing``
    ("a pinned InferenceService survives the deletion of its source runtime")."""
    if live is None:
        return PinOutcome(
            None,
            runtime=revision.runtime,
            drift=DriftReason.SOURCE_RUNTIME_MISSING,
            drift_message=messages.drift_source_runtime_missing(runtime, revision.name),
            from_revision=True,
            pinned=revision.name,
        )
    return PinOutcome(live, runtime=revision.runtime, clear_drift=True, from_revision=True, pinned=revision.name)
