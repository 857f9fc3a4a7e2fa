"""Every revision check that makes a revision unusable makes a pin on it ``RevisionInvalid``
(reference/kubectl-ome/runtime.md, effective: the pin state table's ``RevisionInvalid``, "the
pinned revision fails the CLI's checks"; the REASON table's ``MalformedPayload``, "the pin is
``InvalidIntent`` or ``RevisionInvalid``"; the ISSUE table's revision codes, each shown as
``<Code>(<revision>)``), and makes history's CHECK ``BAD``.

The page's example (helpers_views): ``llama-chat`` pinned to ``cr-vllm-llama-1baf272d``.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers_docs import inference_service, load, revision
from helpers_views import PINNED, llama_chat, page_sources, vllm_runtimes
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cli import reports
from ome_selector.flows import revisions as pinning
from ome_selector.rpc import views as rpc_views


def _pinned_changed(change: Any) -> list[dict[str, Any]]:
    """The page's sources with ``change(doc)`` applied to the pinned revision's document."""
    sources = page_sources()
    [doc] = [s for s in sources if s["kind"] == "ControllerRevision" and s["metadata"]["name"] == PINNED]
    change(doc)
    return sources


def _labels(**labels: str) -> Any:
    return lambda doc: doc["metadata"]["labels"].update(labels)


def _rename(name: str) -> Any:
    return lambda doc: doc["metadata"].update(name=name)


def _ordinal(number: int) -> Any:
    return lambda doc: doc.update(revision=number)


def _not_managed(doc: dict[str, Any]) -> None:
    del doc["metadata"]["annotations"]


OTHER_NS = "r-team-a-vllm-llama-1baf272d"


# One row per revision check of the ISSUE table that a cache can see: (the change to the pinned
# revision, the name it then has, the revision codes effective reports for it).
CHECKS = [
    pytest.param(_not_managed, PINNED, ["RevisionNotOMEManaged"], id="RevisionNotOMEManaged"),
    pytest.param(
        _labels(**{"ome.io/runtime-of": "vllm-base"}),
        PINNED,
        ["RevisionSourceMismatch", "RevisionNameMismatch"],
        id="RevisionSourceMismatch: name",
    ),
    pytest.param(
        _labels(**{"ome.io/runtime-of-kind": "ServingRuntime", "ome.io/runtime-of-namespace": "team-a"}),
        PINNED,
        ["RevisionSourceMismatch", "RevisionNameMismatch"],
        id="RevisionSourceMismatch: kind and namespace",
    ),
    pytest.param(
        _labels(**{"ome.io/revision-hash": "1BAF272D"}),
        PINNED,
        ["RevisionHashInvalid", "RevisionNameMismatch"],
        id="RevisionHashInvalid: upper case",
    ),
    pytest.param(
        _labels(**{"ome.io/revision-hash": "1baf272"}),
        PINNED,
        ["RevisionHashInvalid", "RevisionNameMismatch"],
        id="RevisionHashInvalid: 7 digits",
    ),
    pytest.param(
        _labels(**{"ome.io/revision-hash": "0e6b9d3a"}),
        PINNED,
        ["RevisionNameMismatch"],
        id="RevisionNameMismatch: another hash",
    ),
    pytest.param(_ordinal(2), PINNED, ["RevisionOrdinalUnexpected"], id="RevisionOrdinalUnexpected: 2"),
    pytest.param(_ordinal(0), PINNED, ["RevisionOrdinalUnexpected"], id="RevisionOrdinalUnexpected: unset"),
]


def _effective(sources: list[Any], doc: dict[str, Any]) -> pb.GetEffectiveRuntimeResponse:
    store = load(*sources)
    request = pb.GetEffectiveRuntimeRequest(inference_service=inference_service(doc))
    return rpc_views.get_effective_runtime(store.snapshot, request)


def _history(sources: list[Any], doc: dict[str, Any]) -> pb.GetRuntimeHistoryResponse:
    store = load(*sources)
    request = pb.GetRuntimeHistoryRequest(inference_service=inference_service(doc))
    return rpc_views.get_runtime_history(store.snapshot, request)


def _service_rows(response: pb.GetEffectiveRuntimeResponse) -> tuple[str, list[str]]:
    """(PIN, ISSUE rows) of the effective table."""
    pin, issues = "", []
    for line in reports.format_effective(response).splitlines()[1:]:
        scope, field, value = line.split(None, 2)
        if scope == "Service" and field == "PIN":
            pin = value
        elif scope == "Service" and field == "ISSUE":
            issues.append(value)
    return pin, issues


def test_the_page_example_is_resolved() -> None:
    """The unchanged example passes every check: ``ManagedPin/Resolved``, no revision code."""
    pin, issues = _service_rows(_effective(page_sources(), llama_chat()))
    assert (pin, issues) == ("ManagedPin/Resolved", [])


@pytest.mark.parametrize(("change", "name", "codes"), CHECKS)
def test_each_check_makes_the_pin_revision_invalid(change: Any, name: str, codes: list[str]) -> None:
    got = _effective(_pinned_changed(change), llama_chat())
    pin, issues = _service_rows(got)
    assert pin == "ManagedPin/RevisionInvalid"
    assert pb.PinState.Name(got.service.pin_state) == "PIN_STATE_REVISION_INVALID"
    assert (got.active.state, got.active.reason, got.active.revision, got.active.hash) == (
        "Unavailable",
        "MalformedPayload",
        PINNED,
        "",
    )
    assert issues == ["ActiveRevisionUnavailable", *(f"{code}({name})" for code in codes)]


# Labelled for vllm-base, the pinned revision is no longer in vllm-llama's history.
HISTORY_CHECKS = [p for p in CHECKS if p.id != "RevisionSourceMismatch: name"]


def test_a_revision_of_another_runtime_name_leaves_the_history() -> None:
    sources = _pinned_changed(_labels(**{"ome.io/runtime-of": "vllm-base"}))
    assert [e.name for e in _history(sources, llama_chat()).revisions] == ["cr-vllm-llama-3c18f4a0"]


@pytest.mark.parametrize(("change", "name", "codes"), HISTORY_CHECKS)
def test_each_check_makes_history_check_bad(change: Any, name: str, codes: list[str]) -> None:
    """history, CHECK: ``BAD`` when the revision isn't consistent with what OME writes; the
    pinned revision is no longer the Active view (ROLES ``RH``, not ``ARH``)."""
    sources = _pinned_changed(change)
    got = _history(sources, llama_chat())
    [entry] = [e for e in got.revisions if e.name == PINNED]
    assert pb.RevisionConsistency.Name(entry.consistency) == "REVISION_CONSISTENCY_INCONSISTENT"
    assert [i.text for i in entry.issues] == [f"{code}({name})" for code in codes]
    assert [pb.RevisionRole.Name(r) for r in entry.roles] == ["REVISION_ROLE_REPORTED", "REVISION_ROLE_HISTORY"]
    [line] = [row for row in reports.format_history(got).splitlines()[1:] if "26-09-01" in row]
    assert line.split()[3:5] == ["RH", "BAD"]


def test_a_service_runtime_revision_passes_with_r_names() -> None:
    """The name check follows the kind label: ``r-<namespace>-<runtime>-<hash>`` for a
    ServingRuntime's revision is consistent (runtime-revisions.md, the revision name table)."""
    base, llama = vllm_runtimes()
    llama["kind"] = "ServingRuntime"
    llama["metadata"]["namespace"] = "team-a"
    doc = revision(OTHER_NS, llama)
    store = load(base, llama, doc)
    [compiled] = store.snapshot.revisions.values()
    assert pinning.consistency_problems(compiled, "vllm-llama", "ServingRuntime", "team-a") == ()
    assert pinning.consistency_problems(compiled, "vllm-llama", "ClusterServingRuntime", "") == (
        "RevisionSourceMismatch",
    )
