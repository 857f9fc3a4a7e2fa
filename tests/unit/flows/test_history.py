"""``kubectl ome runtime history`` in process: ``rpc_views.get_runtime_history`` and its renderer
on the page's examples (helpers_views). Page: reference/kubectl-ome/runtime.md, "history" (Output
fields, examples)."""

from __future__ import annotations

from helpers_docs import isvc, revision, runtime
from helpers_views import (
    LIVE_HASH,
    LIVE_REVISION,
    PINNED,
    PINNED_HASH,
    TEAM_A,
    chat,
    history,
    llama_chat,
    page_sources,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cli import labels, reports

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
