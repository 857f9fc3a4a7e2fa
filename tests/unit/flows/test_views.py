"""``kubectl ome runtime effective`` (Active view, Service rows, ISSUE codes) in process:
``rpc_views.get_effective_runtime`` and its renderer, on the page's examples (helpers_views);
``history`` and ``sync`` are in test_history.py and test_sync_plan.py.

Page: reference/kubectl-ome/runtime.md, "effective" (Output fields: every table).
Hashes are this service's (``LIVE_HASH`` for vllm-llama's merged spec, ``PINNED_HASH`` for the
older spec the page's pinned revision holds); revision names are the page's.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers_docs import entry, inference_service, isvc, load, model, revision, runtime
from helpers_views import (
    DRIFTED,
    LIVE_HASH,
    LIVE_REVISION,
    PINNED,
    PINNED_HASH,
    TEAM_A,
    chat,
    effective,
    history,
    llama_chat,
    merged_spec,
    page_revisions,
    page_sources,
    rows,
    service,
    vllm_runtimes,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cli import labels, reports
from ome_selector.domain import objects as domain
from ome_selector.domain.errors import RequestError
from ome_selector.flows import views
from ome_selector.rpc import enums
from ome_selector.rpc import views as rpc_views
from ome_selector.texts import messages

# --- effective: the page's example --------------------------------------------------------------


def test_effective_example_llama_chat() -> None:
    """runtime.md, effective "Examples": every Live, Active and Service row (then ours)."""
    got = effective(page_sources(), llama_chat())
    assert reports.format_effective(got).splitlines() == [
        "SCOPE     FIELD                VALUE",
        "Live      STATE                Available",
        "Live      RUNTIME              CSR/vllm-llama",
        f"Live      HASH                 {LIVE_HASH}",
        "Live      ENGINE               RawDeployment (Default)",
        "Live      ENGINE-ACCELERATOR   - (RuntimeListsNone)",
        "Active    STATE                Available",
        "Active    RUNTIME              CSR/vllm-llama",
        f"Active    REVISION             {PINNED}",
        f"Active    HASH                 {PINNED_HASH}",
        "Active    ENGINE               RawDeployment (Default)",
        "Service   PIN                  ManagedPin/Resolved",
        "Service   SYNC                 Absent",
        "Service   STATUS               Current",
        "Service   DRIFT                ReportedTrue/RevisionMismatch",
        "Service   LIVE-RELATION        Different",
        "Source    INHERITANCE          Observed",
        "Source    ROOT-FIRST           CSR/vllm-base",
        "Source    ROOT-FIRST           CSR/vllm-llama",
    ]
    assert (got.api_version, got.kind) == ("cli.ome.io/v1alpha1", "RuntimeEffectiveReport")
    assert (got.active.runtime_ref.kind, got.active.runtime_ref.name) == (
        pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME,
        "vllm-llama",
    )


def test_effective_example_wide() -> None:
    """runtime.md, effective -o wide: the page's columns, one row per view (llama-chat has only an
    engine), the Service fields repeated; then ours."""
    got = effective(page_sources(), llama_chat())
    lines = reports.format_effective_wide(got).splitlines()
    assert [line.split() for line in lines] == [
        list(labels.EFFECTIVE_WIDE_HEADERS),
        ["Live", "Available", "-", "ClusterServingRuntime/vllm-llama", "-", LIVE_HASH, "engine", "RawDeployment",
         "Default", "ManagedPin", "Resolved", "Absent", "Current", "ReportedTrue/RevisionMismatch", "Different", "-",
         "-", "RuntimeListsNone", "-", "-"],
        ["Active", "Available", "-", "ClusterServingRuntime/vllm-llama", PINNED, PINNED_HASH, "engine",
         "RawDeployment", "Default", "ManagedPin", "Resolved", "Absent", "Current", "ReportedTrue/RevisionMismatch",
         "Different", "-", "-", "RuntimeListsNone", "-", "-"],
    ]  # fmt: skip
    assert lines[0].startswith(
        "VIEW     STATE       REASON   RUNTIME                            REVISION                 HASH       "
        "COMPONENT   MODE            MODE-SOURCE   PIN          PIN-STATE   SYNC     STATUS    DRIFT"
    )


# --- effective: the pin mode and state tables ----------------------------------------------------


@pytest.mark.parametrize(
    "doc, extra, pin, active",
    [
        # AutoSync: autoSync unset -> NotApplicable, Active = Live.
        (chat(runtime={"autoSync": True}), [], "AutoSync/NotApplicable", ("Available", "", "", LIVE_HASH)),
        # ManagedPin not reported yet: AwaitingPin, Active = Live.
        (chat(status={}), [], "ManagedPin/AwaitingPin", ("Available", "", "", LIVE_HASH)),
        (llama_chat(), [], "ManagedPin/Resolved", ("Available", "", PINNED, PINNED_HASH)),
        # ExplicitPin on the live revision while the status reports the older one.
        (
            chat(runtime={"revision": LIVE_REVISION}),
            [],
            "ExplicitPin/DesiredReportedMismatch",
            ("Available", "", LIVE_REVISION, LIVE_HASH),
        ),
        (
            chat(runtime={"revision": "cr-vllm-llama-00000000"}),
            [],
            "ExplicitPin/RevisionMissing",
            ("Unavailable", "NotFound", "cr-vllm-llama-00000000", ""),
        ),
        (chat(runtime={"kind": "Other"}), [], "InvalidPin/InvalidIntent", ("Unavailable", "MalformedPayload", "", "")),
    ],
)
def test_pin_modes_and_states(doc: dict[str, Any], extra: list[Any], pin: str, active: tuple[str, ...]) -> None:
    """runtime.md, effective: the pin mode table, the pin state table, the Active view."""
    got = effective([*page_sources(), *extra], doc)
    assert service(got)["PIN"] == pin
    assert (got.active.state, got.active.reason, got.active.revision, got.active.hash) == active


def _sources_with_pinned(**options: Any) -> list[Any]:
    """The page's sources with the pinned revision replaced (``revision()`` options)."""
    sources = [*vllm_runtimes(), model(namespace=TEAM_A)]
    old = copy.deepcopy(merged_spec(sources))
    old["modelSizeRange"] = {"min": "1B", "max": "10B"}
    old.update(options.pop("data", {}))
    return [*sources, revision(PINNED, vllm_runtimes()[1], data=old, **options), page_revisions(sources)[1]]


def test_revision_invalid_and_disabled() -> None:
    """RevisionInvalid (not written by OME) -> Active MalformedPayload; RevisionDisabled ->
    Active Disabled; each with its revision code."""
    invalid = effective(_sources_with_pinned(ome_managed=False), llama_chat())
    assert service(invalid)["PIN"] == "ManagedPin/RevisionInvalid"
    assert (invalid.active.state, invalid.active.reason) == ("Unavailable", "MalformedPayload")
    assert service(invalid)["ISSUE"] == ["ActiveRevisionUnavailable", f"RevisionNotOMEManaged({PINNED})"]
    disabled = effective(_sources_with_pinned(data={"disabled": True}), llama_chat())
    assert service(disabled)["PIN"] == "ManagedPin/RevisionDisabled"
    assert (disabled.active.state, disabled.active.reason) == ("Unavailable", "Disabled")
    assert service(disabled)["ISSUE"] == ["ActiveRevisionUnavailable", f"RevisionDisabled({PINNED})"]


def test_live_runtime_disabled_makes_the_pin_unavailable() -> None:
    """Pin state Unavailable: the live runtime is disabled; Live and Active Disabled."""
    base, llama = vllm_runtimes()
    llama["spec"]["disabled"] = True
    got = effective([base, llama, model(namespace=TEAM_A), *page_revisions()], llama_chat())
    assert (got.state, got.reason, got.active.state, got.active.reason) == (
        "Unavailable",
        "Disabled",
        "Unavailable",
        "Disabled",
    )
    assert service(got)["PIN"] == "ManagedPin/Unavailable"
    assert service(got)["ISSUE"] == ["LiveRuntimeUnavailable", "ActiveRevisionUnavailable"]


def test_live_not_configured() -> None:
    """REASON NotConfigured: neither a runtime nor a model."""
    got = effective(page_sources(), isvc(None, namespace=TEAM_A))
    assert rows(got, "Live")[:2] == [("STATE", "Unavailable"), ("REASON", "NotConfigured")]
    assert service(got)["PIN"] == "AutoSync/Unavailable"


# --- effective: SYNC, STATUS, DRIFT, LIVE-RELATION ----------------------------------------------


@pytest.mark.parametrize(
    "annotation, token, sync",
    [(None, "", "Absent"), (None, "t1", "StatusOnly"), ("t1", "t1", "Acknowledged"), ("t2", "t1", "Pending")],
)
def test_sync_table(annotation: str | None, token: str, sync: str) -> None:
    status = {"observedGeneration": 3, "pinnedRevisionName": PINNED, "lastRuntimeSyncToken": token}
    doc = chat(status=status, annotations={"ome.io/runtime-sync": annotation} if annotation else {})
    assert service(effective(page_sources(), doc))["SYNC"] == sync


@pytest.mark.parametrize(
    "observed, status, issue",
    [(None, "Unobserved", ["StatusUnobserved"]), (3, "Current", []), (2, "Stale", ["StatusStale"]),
     (4, "Invalid", ["StatusInvalid"])],
)  # fmt: skip
def test_status_table(observed: int | None, status: str, issue: list[str]) -> None:
    body: dict[str, Any] = {"pinnedRevisionName": PINNED, "conditions": [DRIFTED]}
    if observed is not None:
        body["observedGeneration"] = observed
    got = service(effective(page_sources(), chat(status=body)))
    assert (got["STATUS"], got["ISSUE"]) == (status, issue)


@pytest.mark.parametrize(
    "conditions, drift",
    [
        ([], "NotReported"),
        ([DRIFTED], "ReportedTrue/RevisionMismatch"),
        ([{**DRIFTED, "status": "False"}], "ReportedFalse/RevisionMismatch"),
        ([{**DRIFTED, "status": "Unknown", "reason": "RevisionMissing"}], "ReportedUnknown/RevisionMissing"),
        ([{**DRIFTED, "reason": "SourceRuntimeMissing"}], "ReportedTrue/SourceRuntimeMissing"),
        ([{**DRIFTED, "reason": "RuntimeMismatch"}], "ReportedTrue/RuntimeMismatch"),
        ([{**DRIFTED, "reason": ""}], "ReportedTrue/Other"),
        ([{**DRIFTED, "reason": "Whatever"}], "ReportedTrue/Other"),
        ([{**DRIFTED, "status": "Maybe"}], "Malformed/RevisionMismatch"),
        ([DRIFTED, DRIFTED], "Malformed"),
    ],
)
def test_drift_table(conditions: list[dict[str, str]], drift: str) -> None:
    body = {"observedGeneration": 3, "pinnedRevisionName": PINNED, "conditions": conditions}
    got = service(effective(page_sources(), chat(status=body)))
    assert got["DRIFT"] == drift
    assert ("ReportedDriftConflict" in got["ISSUE"]) == drift.startswith("Malformed")


def test_live_relation_table() -> None:
    """Equal (pinned to the live spec), Different, Unknown (no active hash), Ambiguous (the same
    short hash, different full hashes)."""
    equal = chat(status={"observedGeneration": 3, "pinnedRevisionName": LIVE_REVISION})
    assert service(effective(page_sources(), equal))["LIVE-RELATION"] == "Equal"
    assert service(effective(page_sources(), llama_chat()))["LIVE-RELATION"] == "Different"
    missing = chat(runtime={"revision": "cr-vllm-llama-00000000"})
    assert service(effective(page_sources(), missing))["LIVE-RELATION"] == "Unknown"
    assert views.pinning.live_relation("abcd1234" + "0" * 56, "abcd1234" + "1" * 56).name == "AMBIGUOUS"
    response = pb.GetEffectiveRuntimeResponse(service=pb.EffectiveService(live_relation=pb.LIVE_RELATION_AMBIGUOUS))
    assert service(response)["LIVE-RELATION"] == "Ambiguous"


# --- effective: the ISSUE codes -------------------------------------------------------------------


def test_every_issue_code_maps_to_its_proto_value() -> None:
    assert [code.value for code in views.IssueCode] == list(messages.ISSUE_CODES)
    assert sorted(enums.ISSUE_CODE_TO_PB.values()) == [v for v in pb.IssueCode.values() if v]
    assert enums.ISSUE_CODE_TO_PB[views.IssueCode.REVISION_NOT_OME_MANAGED] == pb.ISSUE_CODE_REVISION_NOT_OME_MANAGED


@pytest.mark.parametrize(
    "doc, sources, issues",
    [
        # an unknown kind: revisions are labelled for a ClusterServingRuntime, as the controller reads it
        (chat(runtime={"kind": "Other"}), None, ["InvalidDeclaredKind", "ActiveRevisionUnavailable"]),
        # named, followed live, fails the accelerator class check
        (isvc(namespace=TEAM_A, runtime_name="vllm-llama", accelerator_class="nvidia-h100",
              spec={"runtime": {"name": "vllm-llama"}}) | {"status": {"observedGeneration": 0}},
         None, ["DeclaredCompatibilityMismatch"]),
        # named with autoSync: false, its pin waiting to be recorded: it does not follow the runtime
        # live, so the failing accelerator class check is no issue
        (isvc(namespace=TEAM_A, runtime_name="vllm-llama", accelerator_class="nvidia-h100",
              spec={"runtime": {"name": "vllm-llama", "autoSync": False}}) | {"status": {"observedGeneration": 0}},
         None, ["ActiveRevisionUnreported"]),
        (chat(runtime={"name": "vllm-gone"}), None,
         ["InheritanceUnavailable", "LiveRuntimeUnavailable", "ActiveRevisionUnavailable",
          f"RevisionSourceMismatch({PINNED})"]),
        (chat(status={"observedGeneration": 3}), None, ["ActiveRevisionUnreported"]),
        (chat(status={"observedGeneration": 3, "pinnedRevisionName": "cr-vllm-llama-00000000"}), None,
         ["ActiveRevisionUnavailable", "RevisionNotFound(cr-vllm-llama-00000000)"]),
    ],
)  # fmt: skip
def test_issue_codes(doc: dict[str, Any], sources: list[Any] | None, issues: list[str]) -> None:
    """runtime.md, effective, the ISSUE codes table (the service-level codes), each as its row."""
    got = effective(sources if sources is not None else page_sources(), doc)
    assert service(got)["ISSUE"] == issues
    assert [i.text for i in got.service.issues] == issues


def test_revision_check_codes() -> None:
    """The revision codes: hash label invalid, name not the derived one, revision number not 1,
    another runtime's labels, two revisions with the same spec."""
    llama = vllm_runtimes()[1]
    sources = [*vllm_runtimes(), model(namespace=TEAM_A)]
    bad = revision("cr-vllm-llama-zzzzzzzz", llama, data=merged_spec(sources))
    bad["revision"] = 2
    renamed = revision("cr-vllm-llama-abcdef12", llama, data=merged_spec(sources))
    renamed["metadata"]["labels"]["ome.io/revision-hash"] = "12345678"
    foreign = revision("r-team-a-vllm-llama-1baf272d", runtime("vllm-llama", namespace=TEAM_A))
    docs = [*sources, *page_revisions(sources), bad, renamed, foreign]
    for name, expected in (
        ("cr-vllm-llama-zzzzzzzz", ["RevisionHashInvalid", "RevisionOrdinalUnexpected", "DuplicateRevisionContent"]),
        ("cr-vllm-llama-abcdef12", ["RevisionNameMismatch", "DuplicateRevisionContent"]),
        ("r-team-a-vllm-llama-1baf272d", ["RevisionSourceMismatch"]),
    ):
        got = effective(docs, chat(runtime={"revision": name}))
        codes = [i.text for i in got.service.issues if i.revision == name]
        assert codes == [f"{code}({name})" for code in expected], name


def test_revision_hash_collision() -> None:
    """RevisionHashCollision: two revisions of a runtime, different specs, the same short hash."""
    store = load(*page_sources())
    pinned = store.snapshot.revisions[("ome", PINNED)]
    twin = views.d.Revision(**{**{f: getattr(pinned, f) for f in pinned.__slots__}, "name": "cr-vllm-llama-twin"})
    other = views.d.Revision(
        **{**{f: getattr(pinned, f) for f in pinned.__slots__}, "name": "x", "full_hash": pinned.short_hash + "f" * 56}
    )
    source = (domain.CLUSTER_SERVING_RUNTIME, "", "vllm-llama")
    codes = [i.text for i in views.revision_issues(store.snapshot, pinned, source, [pinned, twin, other])]
    assert codes == [f"DuplicateRevisionContent({PINNED})", f"RevisionHashCollision({PINNED})"]


# --- effective: the 54-character rule and the collection limit -----------------------------------


def test_values_within_54_characters() -> None:
    """runtime.md, effective: a long name keeps its start and end, ``...`` between, then ``#`` and
    eight hex digits; another long value keeps 51 characters and ``...``."""
    name = "cr-" + "a" * 30 + "-middle-" + "b" * 30
    short = reports.effective_value(name, True)
    assert short == name[:21] + "..." + name[-21:] + reports.fingerprint(name)
    assert (len(short), short[-9]) == (54, "#")
    assert reports.fingerprint("cr-vllm-llama-3c18f4a0") == "#1c63d586"
    assert reports.effective_value("x" * 60, False) == "x" * 51 + "..."
    assert reports.effective_value("x" * 54, False) == "x" * 54


def test_live_view_unavailable_beyond_the_collection_limit() -> None:
    """runtime.md, effective: selection "from at most 1,000 runtimes in all. With more, the Live
    view is Unavailable" (here with a limit of 2 and 3 runtimes in scope); a named runtime is
    read whatever the limit."""
    auto = isvc(namespace=TEAM_A, name="llama-auto")
    sources = [*vllm_runtimes(), runtime("team-llama", entry(), namespace=TEAM_A), model(namespace=TEAM_A)]
    assert effective(sources, auto, collection_limit=3).state == "Available"
    got = effective(sources, auto, collection_limit=2)
    assert (got.state, got.reason, got.runtime) == ("Unavailable", "Unreadable", "")
    assert ("INHERITANCE", "Unavailable") in rows(got, "Source")
    assert service(got)["ISSUE"] == ["LiveRuntimeUnavailable", "StatusUnobserved"]
    assert effective(sources, llama_chat(), collection_limit=1).state == "Available"


def test_bad_effective_requests_name_the_field() -> None:
    store = load(*page_sources())
    for fields, path in (
        ({"ome_namespace": "Bad_NS"}, "ome_namespace"),
        ({"collection_limit": -1}, "collection_limit"),
    ):
        request = pb.GetEffectiveRuntimeRequest(inference_service=inference_service(llama_chat()), **fields)
        with pytest.raises(RequestError) as excinfo:
            rpc_views.get_effective_runtime(store.snapshot, request)
        assert excinfo.value.code == "INVALID_ARGUMENT"
        assert [v.field for v in excinfo.value.violations] == [path]


def test_effective_and_history_lines_keep_within_80_columns() -> None:
    """runtime.md: effective keeps values within 54 characters (80 columns with the page's
    FIELD names; fewer characters when our longer rows widen FIELD); history keeps each line
    within 80 columns."""
    long_name = "vllm-llama-" + "x" * 80
    base, llama = vllm_runtimes()
    llama["metadata"]["name"] = long_name
    doc = isvc(namespace=TEAM_A, name="llama-chat", runtime_name=long_name)
    got = effective([base, llama, model(namespace=TEAM_A)], doc)
    lines = reports.format_effective(got).splitlines()
    assert max(len(line) for line in lines) == 80
    [runtime_row] = [line for line in lines if line.startswith("Live      RUNTIME")]
    shown = runtime_row.split()[-1]
    assert (len(shown), shown.startswith("CSR/vllm-llama-"), shown[-9:]) == (
        49,
        True,
        reports.fingerprint(f"CSR/{long_name}"),
    )
    report = history(page_sources(), llama_chat())
    assert max(len(line) for line in reports.format_history(report).splitlines()) <= 80
