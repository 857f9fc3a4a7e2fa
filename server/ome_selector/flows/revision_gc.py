"""Runtime-revision garbage collection, planned (concepts/runtimes/runtime-revisions.md,
"Garbage collection"; reference/api/labels-and-annotations.md, "ControllerRevisions":
``ome.io/created-by`` and ``ome.io/gc-eligible-since``). Pure Python, no gRPC.

``plan(snapshot, ome_namespace, runtime, keep_newest, grace_seconds, now)`` -> ``GCPlan``: for
each runtime revision in OME's namespace, whether OME's retention rules keep it or delete it,
why, and what the controller would write (mark, unmark, delete). The service changes nothing:
the caller acts, as with ``sync``.

The rules, in the order they are applied to a revision:

1. Not written by OME (no ``ome.io/created-by: ome-controller``): garbage collection leaves it
   alone ("garbage collection handles only those").
2. An InferenceService names it in ``spec.runtime.revision`` or ``status.pinnedRevisionName``:
   kept, whatever its age.
3. Among the ``keep_newest`` (10 by default) newest revisions of its runtime name (the
   ``ome.io/runtime-of`` label; newest by ``creationTimestamp``, then by name, one without a time
   last): kept.
4. Else eligible: without ``ome.io/gc-eligible-since`` (or with a value that is not an RFC 3339
   time) the controller marks it now; marked less than the grace period (24 h by default) ago it
   waits; marked at least that long ago it is deleted. A kept revision that carries the
   annotation is unmarked.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

from google.protobuf import timestamp_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.texts import revision_gc as texts

DEFAULT_KEEP_NEWEST = 10
DEFAULT_GRACE_SECONDS = 24 * 3600

Verdict = enum.Enum("Verdict", "KEEP DELETE")
# What the controller writes for the revision: nothing, remove ``ome.io/gc-eligible-since``, set
# it to ``now``, nothing yet (marked, in its grace period), or delete the revision.
Action = enum.Enum("Action", "NONE UNMARK MARK WAIT DELETE")


# Why: the rule that decided (its words: ``texts.revision_gc.RULES``).
Reason = enum.Enum("Reason", "NOT_OME_MANAGED REQUESTED REPORTED NEWEST ELIGIBLE")


@dataclass(frozen=True, slots=True)
class GCEntry:
    """One revision's verdict. ``rank``: its place among its runtime name's revisions, newest
    first, from 1. ``users``: ``<namespace>/<name>`` of the InferenceServices that name it (with
    ``REQUESTED`` / ``REPORTED``). ``eligible_since`` / ``delete_after``: epoch seconds, None when
    not marked (``delete_after`` only for ``WAIT`` and ``DELETE``)."""

    revision: d.Revision
    verdict: Verdict
    action: Action
    reason: Reason
    rank: int
    users: tuple[str, ...]
    eligible_since: float | None
    delete_after: float | None

    @property
    def message(self) -> str:
        """The decision in the page's words (``texts.revision_gc.message``)."""
        return texts.message(
            self.reason.name,
            self.action.name,
            self.users,
            self.rank,
            self.revision.owner_name,
            format_time(self.delete_after) if self.delete_after is not None else "",
        )


@dataclass(frozen=True, slots=True)
class GCPlan:
    """The plan: the parameters it was made with and the revisions, by runtime name then newest
    first."""

    ome_namespace: str
    keep_newest: int
    grace_seconds: int
    now: float
    entries: tuple[GCEntry, ...]


def parse_time(value: str) -> float | None:
    """An RFC 3339 time (``2026-09-28T14:15:57Z``) as epoch seconds, as
    ``google.protobuf.Timestamp`` parses it; None when it is not one."""
    timestamp = timestamp_pb2.Timestamp()
    try:
        timestamp.FromJsonString(value)
    except ValueError:
        return None
    return timestamp.seconds + timestamp.nanos / 1e9


def format_time(epoch: float) -> str:
    """Epoch seconds as RFC 3339 in UTC, whole seconds (``2026-09-28T14:15:57Z``)."""
    return datetime.fromtimestamp(int(epoch), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _users(snapshot: Snapshot) -> dict[str, dict[Reason, list[str]]]:
    """Revision name -> the InferenceServices that name it, by field."""
    out: dict[str, dict[Reason, list[str]]] = {}
    for (namespace, name), isvc in sorted(snapshot.inference_services.items()):
        for reason, revision in (
            (Reason.REQUESTED, isvc.spec.runtime.revision),
            (Reason.REPORTED, isvc.status.pinned_revision_name),
        ):
            if revision:
                out.setdefault(revision, {}).setdefault(reason, []).append(f"{namespace}/{name}")
    return out


def _newest_first(revisions: Iterable[d.Revision]) -> list[d.Revision]:
    return sorted(revisions, key=lambda r: (r.created is None, -(r.created or 0.0), r.name))


def _marked(snapshot: Snapshot, revision: d.Revision) -> float | None:
    obj = snapshot.objects.get((d.CONTROLLER_REVISION, revision.namespace, revision.name))
    if obj is None:
        return None
    value = obj.controller_revision.metadata.annotations.get(texts.GC_ELIGIBLE_SINCE_ANNOTATION, "")
    return parse_time(value)


def plan(
    snapshot: Snapshot,
    ome_namespace: str,
    runtime: tuple[str, str, str] | None = None,
    keep_newest: int = DEFAULT_KEEP_NEWEST,
    grace_seconds: int = DEFAULT_GRACE_SECONDS,
    now: float = 0.0,
) -> GCPlan:
    """The garbage-collection plan for the revisions in ``ome_namespace``; ``runtime`` (kind,
    namespace, name) lists only the revisions labelled for it (kind and namespace empty: every
    revision of the name), while the newest are still counted over the whole runtime name, as OME
    counts them."""
    users = _users(snapshot)
    groups: dict[str, list[d.Revision]] = {}
    for (namespace, _), revision in snapshot.revisions.items():
        if namespace == ome_namespace and revision.ome_managed:
            groups.setdefault(revision.owner_name, []).append(revision)
    ranks = {r.name: i for group in groups.values() for i, r in enumerate(_newest_first(group), 1)}
    listed = [r for (namespace, _), r in snapshot.revisions.items() if namespace == ome_namespace]
    if runtime is not None:
        kind, namespace, name = runtime
        listed = [
            r
            for r in listed
            if r.owner_name == name
            and (not kind or r.owner_kind == kind)
            and (not kind or kind == d.CLUSTER_SERVING_RUNTIME or r.owner_namespace == namespace)
        ]
    entries = []
    for revision in sorted(listed, key=lambda r: (r.owner_name, r.created is None, -(r.created or 0.0), r.name)):
        entries.append(_entry(snapshot, revision, users.get(revision.name, {}), ranks, keep_newest, grace_seconds, now))
    return GCPlan(ome_namespace, keep_newest, grace_seconds, now, tuple(entries))


def _entry(
    snapshot: Snapshot,
    revision: d.Revision,
    named_by: dict[Reason, list[str]],
    ranks: dict[str, int],
    keep_newest: int,
    grace_seconds: int,
    now: float,
) -> GCEntry:
    rank = ranks.get(revision.name, 0)
    if not revision.ome_managed:
        return GCEntry(revision, Verdict.KEEP, Action.NONE, Reason.NOT_OME_MANAGED, rank, (), None, None)
    since = _marked(snapshot, revision)
    for reason in (Reason.REQUESTED, Reason.REPORTED):
        if reason in named_by:
            action = Action.UNMARK if since is not None else Action.NONE
            return GCEntry(revision, Verdict.KEEP, action, reason, rank, tuple(named_by[reason]), since, None)
    if rank <= keep_newest:
        action = Action.UNMARK if since is not None else Action.NONE
        return GCEntry(revision, Verdict.KEEP, action, Reason.NEWEST, rank, (), since, None)
    if since is None:
        return GCEntry(revision, Verdict.DELETE, Action.MARK, Reason.ELIGIBLE, rank, (), now, now + grace_seconds)
    due = since + grace_seconds
    action = Action.DELETE if now >= due else Action.WAIT
    return GCEntry(revision, Verdict.DELETE, action, Reason.ELIGIBLE, rank, (), since, due)
