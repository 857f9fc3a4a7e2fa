"""What ``kubectl ome runtime effective`` reports beyond the Live view
(reference/kubectl-ome/runtime.md, effective): the Active view, Service rows and the ISSUE codes
(``history.py`` and ``sync_plan.py`` report with them too). Pure Python, no gRPC; the pin rules
are ``revisions``'.

- ``effective_report(snapshot, isvc, ome_namespace, limit)`` -> ``EffectiveReport``.

``limit`` is kubectl-ome's collection limit (1,000) or 0 for none: the RPCs take it from the
request, the CLI sends 1,000 (the controller's selection has no such limit).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows import revisions as pinning
from ome_selector.flows.components import ComponentConfig, components
from ome_selector.flows.effective import Effective, effective
from ome_selector.flows.resolution import SelectQuery, decide
from ome_selector.flows.revisions import PinMode, PinReport, PinState
from ome_selector.texts import messages


class IssueCode(enum.Enum):
    """The ISSUE codes (runtime.md, effective; history's two last), valued by the code kubectl-ome
    prints (``messages.ISSUE_CODES``, in the page's order); members named as the proto's
    ``ISSUE_CODE_*``."""

    INVALID_DECLARED_KIND = messages.ISSUE_CODES[0]
    DECLARED_COMPATIBILITY_MISMATCH = messages.ISSUE_CODES[1]
    INHERITANCE_UNAVAILABLE = messages.ISSUE_CODES[2]
    LIVE_RUNTIME_UNAVAILABLE = messages.ISSUE_CODES[3]
    STATUS_UNOBSERVED = messages.ISSUE_CODES[4]
    STATUS_STALE = messages.ISSUE_CODES[5]
    STATUS_INVALID = messages.ISSUE_CODES[6]
    REPORTED_DRIFT_CONFLICT = messages.ISSUE_CODES[7]
    ACTIVE_REVISION_UNREPORTED = messages.ISSUE_CODES[8]
    ACTIVE_REVISION_UNAVAILABLE = messages.ISSUE_CODES[9]
    REVISION_NOT_FOUND = messages.ISSUE_CODES[10]
    REVISION_UNAVAILABLE = messages.ISSUE_CODES[11]
    REVISION_DISABLED = messages.ISSUE_CODES[12]
    REVISION_NOT_OME_MANAGED = messages.ISSUE_CODES[13]
    REVISION_SOURCE_MISMATCH = messages.ISSUE_CODES[14]
    REVISION_HASH_INVALID = messages.ISSUE_CODES[15]
    REVISION_HASH_MISMATCH = messages.ISSUE_CODES[16]
    REVISION_NAME_MISMATCH = messages.ISSUE_CODES[17]
    REVISION_ORDINAL_UNEXPECTED = messages.ISSUE_CODES[18]
    REVISION_PAYLOAD_NON_CANONICAL = messages.ISSUE_CODES[19]
    REVISION_DATA_OBJECT_PRESENT = messages.ISSUE_CODES[20]
    REVISION_PAYLOAD_MALFORMED = messages.ISSUE_CODES[21]
    REVISION_IDENTITY_MISMATCH = messages.ISSUE_CODES[22]
    DUPLICATE_REVISION = messages.ISSUE_CODES[23]
    CONFLICTING_REVISION = messages.ISSUE_CODES[24]
    DUPLICATE_REVISION_CONTENT = messages.ISSUE_CODES[25]
    REVISION_HASH_COLLISION = messages.ISSUE_CODES[26]
    HISTORY_UNAVAILABLE = messages.ISSUE_CODES[27]
    HISTORY_TRUNCATED = messages.ISSUE_CODES[28]


GenerationStatus = enum.Enum("GenerationStatus", "UNOBSERVED CURRENT STALE INVALID")
DriftState = enum.Enum("DriftState", "NOT_REPORTED REPORTED_TRUE REPORTED_FALSE REPORTED_UNKNOWN MALFORMED")
DriftCause = enum.Enum("DriftCause", "REVISION_MISMATCH REVISION_MISSING SOURCE_RUNTIME_MISSING RUNTIME_MISMATCH OTHER")
_DRIFT_CAUSES = {
    messages.DRIFT_REVISION_MISMATCH: DriftCause.REVISION_MISMATCH,
    messages.DRIFT_REVISION_MISSING: DriftCause.REVISION_MISSING,
    messages.DRIFT_SOURCE_RUNTIME_MISSING: DriftCause.SOURCE_RUNTIME_MISSING,
    messages.DRIFT_RUNTIME_MISMATCH: DriftCause.RUNTIME_MISMATCH,
}
_DRIFT_STATES = {
    "True": DriftState.REPORTED_TRUE,
    "False": DriftState.REPORTED_FALSE,
    "Unknown": DriftState.REPORTED_UNKNOWN,
}


@dataclass(frozen=True, slots=True)
class Issue:
    """One ISSUE row: a code, and the revision a revision code is about."""

    code: IssueCode
    revision: str = ""

    @property
    def text(self) -> str:
        """``<Code>`` or ``<Code>(<revision>)``."""
        return messages.issue_text(self.code.value, self.revision)


# --- effective ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ActiveView:
    """effective's Active view: the spec the InferenceService is meant to run (the pinned
    revision, or the Live view when it is not pinned). ``full_hash`` is empty when Unavailable."""

    state: str
    reason: str
    runtime: d.Runtime | None
    revision: str
    full_hash: str
    components: tuple[ComponentConfig, ...]


@dataclass(frozen=True, slots=True)
class EffectiveReport:
    """The RuntimeEffectiveReport: the Live view, the Active view, the Service rows."""

    live: Effective
    active: ActiveView
    pin: PinReport
    status: GenerationStatus
    drift_state: DriftState
    drift_cause: DriftCause | None
    issues: tuple[Issue, ...]


def generation_status(isvc: types_pb2.InferenceService) -> GenerationStatus:
    """runtime.md, effective STATUS: ``status.observedGeneration`` against ``metadata.generation``."""
    if not isvc.status.HasField("observed_generation"):
        return GenerationStatus.UNOBSERVED
    observed, generation = isvc.status.observed_generation, isvc.metadata.generation
    if observed == generation:
        return GenerationStatus.CURRENT
    return GenerationStatus.STALE if observed < generation else GenerationStatus.INVALID


def drift(isvc: types_pb2.InferenceService) -> tuple[DriftState, DriftCause | None]:
    """runtime.md, effective DRIFT: the ``RuntimeDrifted`` condition's state and cause. More than
    one such condition is ``Malformed`` with no cause; another status is ``Malformed`` with its
    cause; an empty or unknown reason is ``Other``."""
    found = [c for c in isvc.status.conditions if c.type == messages.CONDITION_RUNTIME_DRIFTED]
    if not found:
        return DriftState.NOT_REPORTED, None
    if len(found) > 1:
        return DriftState.MALFORMED, None
    condition = found[0]
    return (
        _DRIFT_STATES.get(condition.status, DriftState.MALFORMED),
        _DRIFT_CAUSES.get(condition.reason, DriftCause.OTHER),
    )


def revisions_of(snapshot: Snapshot, ome_namespace: str, runtime_name: str) -> list[d.Revision]:
    """The revisions in OME's namespace labelled ``ome.io/runtime-of: <runtime_name>``, newest
    first (a revision without a creation time last), then by name."""
    found = [r for (ns, _), r in snapshot.revisions.items() if ns == ome_namespace and r.owner_name == runtime_name]
    return sorted(found, key=lambda r: (r.created is None, -(r.created or 0.0), r.name))


def revision_issues(
    snapshot: Snapshot, revision: d.Revision, source: tuple[str, str, str], siblings: list[d.Revision]
) -> list[Issue]:
    """The revision codes of ``revision`` (runtime.md, effective ISSUE), in the page's order.
    ``source``: (kind, namespace, name) of the runtime the revision should belong to;
    ``siblings``: every revision of that runtime name (``revisions_of``).

    ``RevisionHashMismatch`` is never reported: this service hashes specs its own way, so a hash
    label OME wrote cannot be checked against the spec (README, deviations). The payload and
    identity codes cannot arise from a cache (every cached revision parsed, is keyed by name and
    held once)."""
    name = revision.name
    out: list[Issue] = []
    kind, namespace, runtime = source
    if revision.disabled:
        out.append(Issue(IssueCode.REVISION_DISABLED, name))
    out += [Issue(IssueCode(code), name) for code in pinning.consistency_problems(revision, runtime, kind, namespace)]
    others = [r for r in siblings if r.name != name]
    if any(r.full_hash == revision.full_hash for r in others):
        out.append(Issue(IssueCode.DUPLICATE_REVISION_CONTENT, name))
    if any(r.short_hash == revision.short_hash and r.full_hash != revision.full_hash for r in others):
        out.append(Issue(IssueCode.REVISION_HASH_COLLISION, name))
    return out


def _live(snapshot: Snapshot, isvc: types_pb2.InferenceService, limit: int) -> Effective:
    """The Live view; auto-selection beyond ``limit`` runtimes in scope is ``Unavailable``
    (``Unreadable``), as kubectl-ome's collection limit makes it."""
    if limit and not isvc.spec.runtime.name and isvc.spec.model.name:
        namespaced, cluster = snapshot.runtimes_in_scope(isvc.metadata.namespace)
        if len(namespaced) + len(cluster) > limit:
            return Effective(
                messages.VIEW_UNAVAILABLE,
                messages.VIEW_UNREADABLE,
                None,
                "Selected",
                (),
                "",
                components(snapshot, isvc, None, False),
            )
    return effective(snapshot, isvc)


def revision_source(isvc: types_pb2.InferenceService, live: Effective) -> tuple[str, str, str]:
    """(kind, namespace, name) the revisions should belong to: the runtime ``spec.runtime``
    declares (its kind as the controller reads it), else the one OME selected."""
    ref = isvc.spec.runtime
    if ref.name:
        kind, namespace = pinning.declared(isvc)
        return kind, namespace, ref.name
    if live.runtime is not None:
        return live.runtime.key
    return d.CLUSTER_SERVING_RUNTIME, "", ""


def _selected(live: Effective, isvc: types_pb2.InferenceService) -> d.Runtime | None:
    return live.runtime if not isvc.spec.runtime.name else None


def _active(snapshot: Snapshot, isvc: types_pb2.InferenceService, live: Effective, pin: PinReport) -> ActiveView:
    """The Active view from the pin state (runtime.md, effective REASON and pin state tables)."""
    follows = pin.state in (PinState.NOT_APPLICABLE, PinState.AWAITING_PIN)
    if follows and live.state == messages.VIEW_AVAILABLE:
        return ActiveView(live.state, "", live.runtime, "", pin.live_hash, live.components)
    revision = pin.active_revision
    if revision is not None:
        configs = components(snapshot, isvc, revision.runtime, True)
        return ActiveView(messages.VIEW_AVAILABLE, "", revision.runtime, revision.name, revision.full_hash, configs)
    reason = {
        PinState.REVISION_MISSING: messages.VIEW_NOT_FOUND,
        PinState.REVISION_DISABLED: messages.VIEW_DISABLED,
        PinState.REVISION_INVALID: messages.VIEW_MALFORMED_PAYLOAD,
        PinState.INVALID_INTENT: messages.VIEW_MALFORMED_PAYLOAD,
    }.get(pin.state, live.reason or messages.VIEW_NOT_FOUND)
    return ActiveView(
        messages.VIEW_UNAVAILABLE, reason, None, pin.revision_name, "", components(snapshot, isvc, None, True)
    )


def effective_report(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, ome_namespace: str, limit: int = 0
) -> EffectiveReport:
    """``kubectl ome runtime effective`` (runtime.md, "Output fields"): the Live view
    (effective.py), the Active view, PIN / SYNC / LIVE-RELATION (``pinning.report``), STATUS,
    DRIFT and the ISSUE codes in the page's table order; the revision codes only for the
    revisions named in ``spec.runtime.revision`` and ``status.pinnedRevisionName``."""
    live = _live(snapshot, isvc, limit)
    pin = pinning.report(snapshot, isvc, ome_namespace, _selected(live, isvc))
    active = _active(snapshot, isvc, live, pin)
    status = generation_status(isvc)
    drift_state, drift_cause = drift(isvc)
    ref = isvc.spec.runtime
    issues: list[Issue] = []
    if ref.HasField("kind") and ref.kind not in (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME):
        issues.append(Issue(IssueCode.INVALID_DECLARED_KIND))
    # Only an InferenceService that "names a runtime and follows it live" (runtime.md, ISSUE
    # codes): with ``autoSync: false`` it follows a revision, recorded or not yet.
    follows = pin.mode is PinMode.AUTO_SYNC
    available = live.state == messages.VIEW_AVAILABLE
    if ref.name and follows and available and decide(snapshot, SelectQuery(isvc)).compatibility_error:
        issues.append(Issue(IssueCode.DECLARED_COMPATIBILITY_MISMATCH))
    if live.inheritance_reason:
        issues.append(Issue(IssueCode.INHERITANCE_UNAVAILABLE))
    if live.state != messages.VIEW_AVAILABLE and live.reason in (
        messages.VIEW_NOT_FOUND,
        messages.VIEW_DISABLED,
        messages.VIEW_UNREADABLE,
    ):
        issues.append(Issue(IssueCode.LIVE_RUNTIME_UNAVAILABLE))
    status_issue = {
        GenerationStatus.UNOBSERVED: IssueCode.STATUS_UNOBSERVED,
        GenerationStatus.STALE: IssueCode.STATUS_STALE,
        GenerationStatus.INVALID: IssueCode.STATUS_INVALID,
    }.get(status)
    if status_issue is not None:
        issues.append(Issue(status_issue))
    if drift_state is DriftState.MALFORMED:
        issues.append(Issue(IssueCode.REPORTED_DRIFT_CONFLICT))
    if pin.state is PinState.AWAITING_PIN:
        issues.append(Issue(IssueCode.ACTIVE_REVISION_UNREPORTED))
    if pin.mode is not PinMode.AUTO_SYNC and active.state != messages.VIEW_AVAILABLE:
        issues.append(Issue(IssueCode.ACTIVE_REVISION_UNAVAILABLE))
    source = revision_source(isvc, live)
    names = tuple(dict.fromkeys(n for n in (ref.revision, isvc.status.pinned_revision_name) if n))
    siblings = revisions_of(snapshot, ome_namespace, source[2]) if names and source[2] else []
    for name in names:
        revision = snapshot.revisions.get((ome_namespace, name))
        if revision is None:
            issues.append(Issue(IssueCode.REVISION_NOT_FOUND, name))
        else:
            issues += revision_issues(snapshot, revision, source, siblings)
    return EffectiveReport(live, active, pin, status, drift_state, drift_cause, tuple(issues))
