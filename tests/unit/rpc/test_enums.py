"""Every enum table of rpc/enums.py is complete both ways: each domain member has its proto value,
each proto value but ``*_UNSPECIFIED`` is reached, and no two domain members share one."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from ome.selector.v1 import selector_pb2 as pb
from ome_selector import validation
from ome_selector.domain import objects as d
from ome_selector.engine.evaluation import TieBreak, Verdict
from ome_selector.flows import history, reasons, revisions, sync_plan, tree, views
from ome_selector.flows.admission import AdmissionPath
from ome_selector.rpc import enums
from ome_selector.rules.results import Check

# (table, proto enum, the domain's members: an Enum class, a tuple, or None when the domain
# side is an open set of strings)
TO_PB: list[tuple[str, str, Any]] = [
    ("RUNTIME_KIND_TO_PB", "RuntimeKind", validation.RUNTIME_KINDS),
    ("CHECK_TO_PB", "Check", Check),
    ("VERDICT_TO_PB", "Verdict", Verdict),
    ("TIE_BREAK_TO_PB", "TieBreak", TieBreak),
    ("COMPONENT_TO_PB", "Component", ("", "engine", "decoder", "router")),
    ("MODE_SOURCE_TO_PB", "ModeSource", None),
    ("ACCELERATOR_SOURCE_TO_PB", "AcceleratorSource", None),
    ("ADMISSION_PATH_TO_PB", "AdmissionPath", AdmissionPath),
    ("CHANGE_STEP_TO_PB", "ChangeStep", reasons.ChangeStep),
    ("PIN_MODE_TO_PB", "PinMode", revisions.PinMode),
    ("PIN_STATE_TO_PB", "PinState", revisions.PinState),
    ("SYNC_STATE_TO_PB", "SyncState", revisions.SyncState),
    ("LIVE_RELATION_TO_PB", "LiveRelation", revisions.LiveRelation),
    ("DRIFT_REASON_TO_PB", "DriftReason", revisions.DriftReason),
    ("TREE_ISSUE_TO_PB", "RuntimeTreeIssueCode", tree.IssueCode),
    ("TREE_UNATTRIBUTED_STATE_TO_PB", "RuntimeTreeUnattributedState", tree.UnattributedState),
    ("TREE_UNATTRIBUTED_REASON_TO_PB", "RuntimeTreeUnattributedReason", tree.UnattributedReason),
    ("TREE_COLLECTION_STATUS_TO_PB", "RuntimeTreeCollectionStatus", tree.CollectionStatus),
    ("TREE_WARNING_TO_PB", "RuntimeTreeWarning", tree.TreeWarning),
    ("GENERATION_STATUS_TO_PB", "GenerationStatus", views.GenerationStatus),
    ("DRIFT_STATE_TO_PB", "DriftState", views.DriftState),
    ("DRIFT_CAUSE_TO_PB", "DriftCause", (None, *views.DriftCause)),
    ("ISSUE_CODE_TO_PB", "IssueCode", views.IssueCode),
    ("OBSERVATION_TO_PB", "HistoryObservation", history.Observation),
    ("COMPLETENESS_TO_PB", "HistoryCompleteness", history.Completeness),
    ("ROLE_TO_PB", "RevisionRole", history.Role),
    ("CONSISTENCY_TO_PB", "RevisionConsistency", history.Consistency),
    ("RELATION_TO_PB", "RevisionRelation", history.Relation),
    ("SYNC_REFUSAL_TO_PB", "SyncRefusal", sync_plan.SyncRefusal),
]
FROM_PB: list[tuple[str, str, Any]] = [
    ("OPERATION_FROM_PB", "AdmissionOperation", d.Operation),
    ("RUNTIME_KIND_FROM_PB", "RuntimeKind", validation.RUNTIME_KINDS),
]


def _named(proto_enum: str) -> set[int]:
    """The values of ``proto_enum`` but its ``*_UNSPECIFIED``."""
    values = pb.DESCRIPTOR.enum_types_by_name[proto_enum].values
    return {v.number for v in values if not v.name.endswith("_UNSPECIFIED")}


def _members(domain: Any) -> set[Any]:
    return (
        set(domain.__members__.values()) if isinstance(domain, type) and issubclass(domain, enum.Enum) else set(domain)
    )


def test_every_table_of_the_module_is_listed_here() -> None:
    tables = {name for name in vars(enums) if name.endswith(("_TO_PB", "_FROM_PB"))}
    assert tables == {name for name, _, _ in TO_PB + FROM_PB}
    assert len(tables) == 31


@pytest.mark.parametrize(("name", "proto_enum", "domain"), TO_PB, ids=[row[0] for row in TO_PB])
def test_a_domain_to_proto_table_is_complete_both_ways(name: str, proto_enum: str, domain: Any) -> None:
    table = getattr(enums, name)
    values = list(table.values())
    assert _named(proto_enum) <= set(values) <= _named(proto_enum) | {0}
    assert len(set(values)) == len(values)  # no two members share a proto value
    if domain is not None:
        assert set(table) == _members(domain)


@pytest.mark.parametrize(("name", "proto_enum", "domain"), FROM_PB, ids=[row[0] for row in FROM_PB])
def test_a_proto_to_domain_table_is_complete_both_ways(name: str, proto_enum: str, domain: Any) -> None:
    table = getattr(enums, name)
    assert _named(proto_enum) <= set(table) <= _named(proto_enum) | {0}
    assert set(table.values()) == _members(domain)
