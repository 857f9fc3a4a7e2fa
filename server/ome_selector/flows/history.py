"""``kubectl ome runtime history`` (reference/kubectl-ome/runtime.md, history): the
RuntimeHistoryReport of the revisions of the runtime ``effective`` finds, newest first. Pure
Python, no gRPC.

- ``history(snapshot, isvc, ome_namespace, limit)`` -> ``HistoryReport``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows import revisions as pinning
from ome_selector.flows.views import (
    Issue,
    IssueCode,
    effective_report,
    revision_issues,
    revision_source,
    revisions_of,
)

Observation = enum.Enum("Observation", "COMPLETE PARTIAL UNAVAILABLE")
Completeness = enum.Enum("Completeness", "RETENTION_BOUNDED INCOMPLETE")
Role = enum.Enum("Role", "ACTIVE REQUESTED REPORTED HISTORY")
Consistency = enum.Enum("Consistency", "CONSISTENT INCONSISTENT UNKNOWN")
Relation = enum.Enum("Relation", "MATCHES_LIVE DIFFERS_FROM_LIVE AMBIGUOUS_LIVE UNKNOWN")
HISTORY_PAGE_SIZE = 500  # kubectl-ome lists "at most 1,000 revisions, in two pages of 500"


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One revision of the history (runtime.md, history "Output fields")."""

    revision: d.Revision
    roles: tuple[Role, ...]
    consistency: Consistency
    relation: Relation
    issues: tuple[Issue, ...]


@dataclass(frozen=True, slots=True)
class HistoryReport:
    """The RuntimeHistoryReport: WINDOW (observation, completeness, pages seen / asked), the
    revisions newest first, and the report issues."""

    runtime_name: str
    observation: Observation
    completeness: Completeness
    pages_seen: int
    pages_asked: int
    entries: tuple[HistoryEntry, ...]
    report_issues: tuple[Issue, ...]
    total: int


def _relation(live_hash: str, revision_hash: str) -> Relation:
    relation = pinning.live_relation(live_hash, revision_hash)
    return {
        pinning.LiveRelation.EQUAL: Relation.MATCHES_LIVE,
        pinning.LiveRelation.DIFFERENT: Relation.DIFFERS_FROM_LIVE,
        pinning.LiveRelation.AMBIGUOUS: Relation.AMBIGUOUS_LIVE,
    }.get(relation, Relation.UNKNOWN)


def history(snapshot: Snapshot, isvc: types_pb2.InferenceService, ome_namespace: str, limit: int = 0) -> HistoryReport:
    """``kubectl ome runtime history`` (runtime.md, history): the revisions labelled
    ``ome.io/runtime-of=<runtime name>`` in OME's namespace, newest first, the runtime found as
    ``effective`` finds it. With no runtime name there is no list: ``Unavailable`` with
    ``HistoryUnavailable``. More than ``limit`` revisions: the newest ``limit``, ``Partial`` /
    ``Incomplete`` with ``HistoryTruncated``. Pages: a cache is read at once, counted in pages
    of ``HISTORY_PAGE_SIZE`` as kubectl-ome lists them (at least one)."""
    report = effective_report(snapshot, isvc, ome_namespace, limit)
    source = revision_source(isvc, report.live)
    if not source[2]:
        issues: tuple[Issue, ...] = (Issue(IssueCode.HISTORY_UNAVAILABLE),)
        return HistoryReport("", Observation.UNAVAILABLE, Completeness.INCOMPLETE, 0, 1, (), issues, 0)
    every = revisions_of(snapshot, ome_namespace, source[2])
    listed = every[:limit] if limit else every
    truncated = len(listed) < len(every)
    pages = max(1, -(-len(listed) // HISTORY_PAGE_SIZE))
    active = report.pin.active_revision.name if report.pin.active_revision is not None else ""
    ref = isvc.spec.runtime
    entries = []
    for revision in listed:
        roles = tuple(
            role
            for role, holds in (
                (Role.ACTIVE, revision.name == active),
                (Role.REQUESTED, revision.name == ref.revision),
                (Role.REPORTED, revision.name == isvc.status.pinned_revision_name),
                (Role.HISTORY, True),
            )
            if holds
        )
        issues = tuple(revision_issues(snapshot, revision, source, every))
        consistency = Consistency.INCONSISTENT if issues else Consistency.CONSISTENT
        entries.append(
            HistoryEntry(revision, roles, consistency, _relation(report.pin.live_hash, revision.full_hash), issues)
        )
    report_issues = (Issue(IssueCode.HISTORY_TRUNCATED),) if truncated else ()
    return HistoryReport(
        source[2],
        Observation.PARTIAL if truncated else Observation.COMPLETE,
        Completeness.INCOMPLETE if truncated else Completeness.RETENTION_BOUNDED,
        pages,
        pages,
        tuple(entries),
        report_issues,
        len(every),
    )
