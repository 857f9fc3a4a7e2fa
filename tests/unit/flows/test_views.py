"""``kubectl ome runtime effective`` (Active view, Service rows, ISSUE codes), ``history`` and
``sync`` in process: ``rpc_views.get_effective_runtime``, ``rpc_views.get_runtime_history``,
``rpc_views.plan_runtime_sync`` and their renderers, on the page's examples (helpers_views).

Page: reference/kubectl-ome/runtime.md, "effective" (Output fields: every table), "history"
(Output fields, examples), "sync" (How the action runs, Refusals, examples), "Exit codes".
Hashes are this service's (``LIVE_HASH`` for vllm-llama's merged spec, ``PINNED_HASH`` for the
older spec the page's pinned revision holds); revision names are the page's.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from helpers_docs import entry, inference_service, isvc, load, model, revision, runtime
from helpers_views import (
    LIVE_REVISION,
    PINNED,
    REQUEST_ID,
    TEAM_A,
    UID,
    llama_chat,
    merged_spec,
    page_revisions,
    page_sources,
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

LIVE_HASH = "2b492efa"
PINNED_HASH = "60d7abfc"


def effective(sources: list[Any], service: Any, **fields: Any) -> pb.GetEffectiveRuntimeResponse:
    store = load(*sources)
    request = pb.GetEffectiveRuntimeRequest(inference_service=inference_service(service), **fields)
    return rpc_views.get_effective_runtime(store.snapshot, request)


def history(sources: list[Any], service: Any, **fields: Any) -> pb.GetRuntimeHistoryResponse:
    store = load(*sources)
    request = pb.GetRuntimeHistoryRequest(inference_service=inference_service(service), **fields)
    return rpc_views.get_runtime_history(store.snapshot, request)


def plan(sources: list[Any], service: Any, **fields: Any) -> pb.PlanRuntimeSyncResponse:
    store = load(*sources)
    fields.setdefault("request_id", REQUEST_ID)
    request = pb.PlanRuntimeSyncRequest(inference_service=inference_service(service), **fields)
    return rpc_views.plan_runtime_sync(store.snapshot, request)


def rows(response: pb.GetEffectiveRuntimeResponse, scope: str) -> list[tuple[str, str]]:
    """The (FIELD, VALUE) rows of one SCOPE of the effective table."""
    lines = reports.format_effective(response).splitlines()[1:]
    return [(line.split()[1], line.split(None, 2)[2]) for line in lines if line.split()[0] == scope]


def service(response: pb.GetEffectiveRuntimeResponse) -> dict[str, Any]:
    """The Service rows as a dict (ISSUE rows as a list)."""
    out: dict[str, Any] = {"ISSUE": []}
    for name, value in rows(response, "Service"):
        if name == "ISSUE":
            out["ISSUE"].append(value)
        else:
            out[name] = value
    return out


def chat(**changes: Any) -> dict[str, Any]:
    """llama-chat with ``spec.runtime`` / metadata / status changes."""
    doc = llama_chat()
    doc["spec"]["runtime"].update(changes.pop("runtime", {}))
    for key in ("annotations", "labels"):
        if key in changes:
            doc["metadata"][key] = changes.pop(key)
    doc["metadata"].update(changes.pop("metadata", {}))
    status = changes.pop("status", None)
    if status is not None:
        doc["status"] = status
    assert not changes
    return doc


DRIFTED = {
    "type": "RuntimeDrifted",
    "status": "True",
    "reason": "RevisionMismatch",
    "message": f"pinned {PINNED}, live spec differs; bump ome.io/runtime-sync annotation to advance",
}


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


# --- history ----------------------------------------------------------------------------------------


def test_history_example() -> None:
    """runtime.md, history "Examples": the table and -o wide."""
    got = history(page_sources(), llama_chat(), collection_limit=1000)
    assert reports.format_history(got).splitlines() == [
        "WINDOW    REVISION         CREATED           ROLES   CHECK   LIVE    ISSUES",
        "C/B/1/1   cr...#1c63d586   26-09-20T14:30Z   H       OK      MATCH   R0/G0",
        "C/B/1/1   cr...#fd54e47d   26-09-01T08:00Z   ARH     OK      DIFF    R0/G0",
    ]
    assert [line.split() for line in reports.format_history_wide(got).splitlines()] == [
        list(labels.HISTORY_WIDE_HEADERS),
        ["Complete", "RetentionBounded", "1/1", LIVE_REVISION, "2026-09-20T14:30:00Z", LIVE_HASH, "History",
         "ClusterServingRuntime/vllm-llama", "Consistent", "MatchesLive", "-", "-"],
        ["Complete", "RetentionBounded", "1/1", PINNED, "2026-09-01T08:00:00Z", PINNED_HASH, "Active,Reported,History",
         "ClusterServingRuntime/vllm-llama", "Consistent", "DiffersFromLive", "-", "-"],
    ]  # fmt: skip
    assert (got.api_version, got.kind, got.runtime_name, got.total_size) == (
        "cli.ome.io/v1alpha1",
        "RuntimeHistoryReport",
        "vllm-llama",
        2,
    )


def test_history_requested_role_and_a_foreign_revision() -> None:
    """ROLES Q for ``spec.runtime.revision``; a same-named ServingRuntime's revision shows up and
    fails the check with RevisionSourceMismatch (BAD)."""
    foreign = revision(
        "r-team-a-vllm-llama-1baf272d", runtime("vllm-llama", namespace=TEAM_A), created="2026-09-30T00:00:00Z"
    )
    got = history([*page_sources(), foreign], chat(runtime={"revision": LIVE_REVISION}))
    table = reports.format_history(got).splitlines()
    assert table[1:] == [
        "C/B/1/1   r-...#" + reports.fingerprint("r-team-a-vllm-llama-1baf272d")[1:]
        + "   26-09-30T00:00Z   H       BAD     DIFF    R1/G1",
        "C/B/1/1   cr...#1c63d586   26-09-20T14:30Z   AQH     OK      MATCH   R0/G1",
        "C/B/1/1   cr...#fd54e47d   26-09-01T08:00Z   RH      OK      DIFF    R0/G1",
    ]  # fmt: skip
    assert "RevisionSourceMismatch(r-team-a-vllm-llama-1baf272d)" in reports.format_history_wide(got)


def test_history_unavailable_without_a_runtime_name() -> None:
    """No runtime to list by (auto-selection finds none): one row with the window, ``-`` and
    the issues; -o wide: HistoryUnavailable."""
    got = history(page_sources(), isvc("no-such-model", namespace=TEAM_A))
    assert reports.format_history(got).splitlines() == [
        "WINDOW    REVISION   CREATED   ROLES   CHECK   LIVE   ISSUES",
        "U/I/0/1   -          -         -       -       -      R0/G1",
    ]
    assert reports.format_history_wide(got).splitlines()[1].split() == [
        "Unavailable", "Incomplete", "0/1", *["-"] * 8, "HistoryUnavailable"
    ]  # fmt: skip


def test_history_truncated_at_the_limit() -> None:
    """More revisions than the limit: the newest ones, P/I, HistoryTruncated."""
    got = history(page_sources(), llama_chat(), collection_limit=1)
    assert reports.format_history(got).splitlines()[1:] == [
        "P/I/1/1   cr...#1c63d586   26-09-20T14:30Z   H       OK      MATCH   R0/G1"
    ]
    assert [i.text for i in got.report_issues] == ["HistoryTruncated"]
    assert got.total_size == 2


def test_history_short_names_and_nine_plus() -> None:
    assert reports.history_revision("cr-a-12345678") == "cr-a-12345678"
    response = pb.GetRuntimeHistoryResponse(
        revisions=[pb.HistoryRevision(name="r", issues=[pb.Issue(text="x")] * 10)],
        observation=pb.HISTORY_OBSERVATION_COMPLETE,
        completeness=pb.HISTORY_COMPLETENESS_RETENTION_BOUNDED,
        pages_seen=1,
        pages_asked=1,
    )
    assert reports.format_history(response).splitlines()[1].split()[-1] == "R9+/G9+"


# --- sync ---------------------------------------------------------------------------------------------


def test_sync_example_preview_and_result() -> None:
    """runtime.md, sync "Examples": the preview (stderr) and the ActionResult (stdout)."""
    got = plan(page_sources(), llama_chat(), context="prod-us-east")
    assert reports.sync_preview(got)[0] == "ALPHA runtime sync preview (acceptance is not convergence)"
    assert reports.sync_preview(got)[1].splitlines() == [
        "FIELD             VALUE",
        "Action            runtime sync",
        "Context           prod-us-east",
        "Workload NS       team-a",
        "OME NS            ome",
        "Target            InferenceService/llama-chat",
        f"UID               {UID}",
        "ResourceVersion   4711",
        "Dry-run           client",
        "Generation        3",
        "Reported gen      3",
        "Freshness         Unverifiable (advisory global status)",
        f"Pin               {PINNED}",
        "Pin source        ClusterServingRuntime//vllm-llama",
        "Source            ClusterServingRuntime//vllm-base",
        "Source UID        a41c7e9d-2b5f-4c83-9e6a-1f8d3b7c05e2",
        "Source RV         187",
        "Source gen        1",
        "Source            ClusterServingRuntime//vllm-llama",
        "Source UID        3b8e1f6a-9c2d-4a7e-8f15-6d0b4c9a2e81",
        "Source RV         212",
        "Source gen        2",
        "Pin UID           c8f4a2e6-1d9b-4b7a-8e3c-5a0f7d2b9e64",
        "Pin RV            101",
        f"Current hash      {PINNED_HASH}",
        f"Target hash       {LIVE_HASH}",
        f"Predicted pin     {LIVE_REVISION}",
        "Target evidence   Existing",
        "Old sync token    Absent",
        "Target UID        0e6b9d3a-4f2c-4e1b-b7a8-3c5d9f1e8a20",
        "Target RV         102",
        "Pause state       Not recognized",
        f"Request UUID      {REQUEST_ID}",
        "Set annotation    ome.io/runtime-sync",
        f"New token         cli-runtime-sync-{REQUEST_ID}",
    ]
    assert reports.sync_preview(got)[2:] == [
        "API acceptance is not convergence or serving-revision readiness.",
        "Requests latest merged live runtime when controller consumes the token.",
        "Previewed content is not locked by this annotation.",
        "Parent CAS is not an atomic transaction across runtimes, revisions and IRs.",
        "Global observed generation is advisory; freshness is Unverifiable.",
        "Existing pause/freeze and lifecycle/rollout policies remain in effect.",
    ]
    assert reports.format_sync_result(got).splitlines() == [
        "FIELD           VALUE",
        "action          runtime sync",
        "target          InferenceService/team-a/llama-chat",
        "dry-run         client",
        "accepted        No",
        "applied         No",
        f"request-id      {REQUEST_ID}",
        f"revision-hash   {LIVE_HASH}",
        "message         Validated locally; no patch sent.",
        "follow-up       kubectl ome runtime effective llama-chat -n team-a --...",
        "hint            Use -o json or -o yaml for full values.",
    ]
    assert got.result.follow_up == (
        "kubectl ome runtime effective llama-chat -n team-a --context=prod-us-east --ome-namespace=ome"
    )
    assert (got.annotation, got.token) == ("ome.io/runtime-sync", f"cli-runtime-sync-{REQUEST_ID}")


def test_sync_cuts_values_to_56_characters() -> None:
    """runtime.md, sync: "the accepted message prints as ``API accepted annotation request;
    consumption and conv...``"."""
    text = "API accepted annotation request; consumption and convergence not observed."
    assert reports.cut(text, labels.SYNC_VALUE_WIDTH) == "API accepted annotation request; consumption and conv..."


def test_sync_target_not_found_and_pause_states() -> None:
    """``Target evidence`` NotFound (no revision holds the live spec: the controller creates
    ``cr-vllm-llama-<hash>``), no Target UID/RV; ``Pause state`` Paused and Freeze."""
    sources = [*vllm_runtimes(), model(namespace=TEAM_A), page_revisions()[0]]
    fields = dict((f.field, f.value) for f in plan(sources, llama_chat()).preview)
    assert (fields["Predicted pin"], fields["Target evidence"]) == (f"cr-vllm-llama-{LIVE_HASH}", "NotFound")
    assert "Target UID" not in fields
    for value, state in (("true", "Paused"), ("freeze", "Freeze"), ("later", "Not recognized")):
        got = plan(page_sources(), chat(annotations={"ome.io/rollout-paused": value}))
        assert dict((f.field, f.value) for f in got.preview)["Pause state"] == state


def test_sync_draws_a_request_id() -> None:
    got = plan(page_sources(), llama_chat(), request_id="")
    assert got.token == f"cli-runtime-sync-{uuid.UUID(got.result.request_id)}"
    with pytest.raises(RequestError) as excinfo:
        plan(page_sources(), llama_chat(), request_id="not-a-uuid")
    assert [v.field for v in excinfo.value.violations] == ["request_id"]


def _many_revisions(count: int) -> list[dict[str, Any]]:
    llama = vllm_runtimes()[1]
    return [
        revision(f"cr-vllm-llama-{i:08x}", llama, data={**merged_spec(page_sources()[:3]), "modelSizeRange": {"min": f"{i + 1}M"}})
        for i in range(count)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "doc, extra, message",
    [
        # The refusals every action shares.
        (chat(metadata={"uid": ""}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(metadata={"name": ""}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(metadata={"resourceVersion": ""}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(metadata={"generation": 0}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(annotations={"ome.io/placement-origin": "x"}), [], messages.REFUSAL_PLACEMENT),
        (chat(labels={"ome.io/cluster-selector": "x"}), [], messages.REFUSAL_PLACEMENT),
        (chat(annotations={f"a/{i}": "x" for i in range(257)}), [], messages.REFUSAL_INSPECTION_BOUNDS),
        # a component on OMENative: its InferenceReplicas cannot be read from the cache
        (chat() | {"spec": {**chat()["spec"], "deploymentMode": "OMENative"}}, [], messages.REFUSAL_INSPECTION_BOUNDS),
        # sync's own.
        (chat(annotations={"ome.io/rollout-rollback": "x"}), [], messages.REFUSAL_MAILBOX),
        (chat(annotations={"ome.io/rollout-promote": "x"}), [], messages.REFUSAL_MAILBOX),
        (chat(annotations={"ome.io/rollout-repin": "x"}), [], messages.REFUSAL_MAILBOX),
        (chat(runtime={"autoSync": True}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(runtime={"revision": PINNED}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(runtime={"apiGroup": "example.com"}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(status={"observedGeneration": 3, "pinnedRevisionName": PINNED}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(status={"observedGeneration": 3, "pinnedRevisionName": LIVE_REVISION, "conditions": [DRIFTED]}), [],
         messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(annotations={"ome.io/runtime-sync": "t1"}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        # a same-named ServingRuntime's revision shares the label
        (llama_chat(), [revision("r-team-a-vllm-llama-1baf272d", runtime("vllm-llama", namespace=TEAM_A))],
         messages.REFUSAL_MANAGED_EVIDENCE),
        (llama_chat(), _many_revisions(31), messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(metadata={"uid": "u" * 769}), [], messages.REFUSAL_UNSAFE_VALUE),
    ],
)  # fmt: skip
def test_sync_refusals(doc: dict[str, Any], extra: list[Any], message: str) -> None:
    """runtime.md, sync: "How the action runs" (the shared refusals) and "Refusals"."""
    got = plan([*page_sources(), *extra], doc)
    assert (got.refusal_message, len(got.preview), got.token) == (message, 0, "")
    assert reports.sync_preview(got) == [f"error: {message}"]
    assert reports.format_sync_result(got) == ""


def test_sync_goes_ahead_with_32_revisions_and_refuses_a_tab() -> None:
    """At most 32 revisions (30 more here); a preview value with a tab is unsafe to show."""
    assert plan([*page_sources(), *_many_revisions(30)], llama_chat()).refusal_message == ""
    got = plan(page_sources(), llama_chat(), context="prod\tus")
    assert got.refusal_message == messages.REFUSAL_UNSAFE_VALUE


def test_disabled_runtime_refuses() -> None:
    base, llama = vllm_runtimes()
    llama["spec"]["disabled"] = True
    got = plan([base, llama, model(namespace=TEAM_A), *page_revisions()], llama_chat())
    assert got.refusal_message == messages.REFUSAL_MANAGED_EVIDENCE


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
