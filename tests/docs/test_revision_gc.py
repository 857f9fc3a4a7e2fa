"""Runtime-revision garbage collection, planned (PlanRevisionGC, ``history --gc``), row by row of
the pages: concepts/runtimes/runtime-revisions.md, "Garbage collection" ("OME keeps every
revision that an InferenceService names in ``spec.runtime.revision`` or
``status.pinnedRevisionName``, and the ten newest revisions of each runtime name. It deletes any
other revision after a 24-hour grace period."), and reference/api/labels-and-annotations.md,
"ControllerRevisions" (``ome.io/created-by``: "garbage collection handles only those";
``ome.io/gc-eligible-since``: set on a revision OME no longer keeps, deleted "once the grace
period, 24h by default, has passed", removed "if it keeps the revision again before that").
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers_docs import isvc, load, revision
from helpers_views import vllm_runtimes
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cli import app, gc_report
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import api

NOW = "2026-10-01T00:00:00Z"
LLAMA = vllm_runtimes()[1]


def name(i: int) -> str:
    """The i-th revision of vllm-llama (day i of September 2026): ``cr-vllm-llama-0000000<i>``."""
    return f"cr-vllm-llama-{i:08x}"


def rev(i: int, *, marked: str | None = None, managed: bool = True, runtime: dict[str, Any] = LLAMA) -> dict[str, Any]:
    doc = revision(name(i), runtime, created=f"2026-09-{i:02d}T00:00:00Z", ome_managed=managed)
    if marked is not None:
        doc["metadata"].setdefault("annotations", {})["ome.io/gc-eligible-since"] = marked
    return doc


def service(ns: str, isvc_name: str, *, pinned: str = "", revision_name: str = "") -> dict[str, Any]:
    doc = isvc(namespace=ns, name=isvc_name, runtime_name="vllm-llama")
    doc["spec"]["runtime"]["autoSync"] = False
    if revision_name:
        doc["spec"]["runtime"]["revision"] = revision_name
    if pinned:
        doc["status"] = {"pinnedRevisionName": pinned}
    return doc


def plan(sources: list[Any], **fields: Any) -> pb.PlanRevisionGCResponse:
    store = load(*sources)
    fields.setdefault("now", NOW)
    return api.answer(store.snapshot, pb.PlanRevisionGCRequest(**fields))  # type: ignore[return-value]


def verdicts(response: pb.PlanRevisionGCResponse) -> dict[str, tuple[str, str, str]]:
    """revision name -> (VERDICT, ACTION, REASON) as the table prints them."""
    return {row[0]: (row[3], row[4], row[5]) for row in map(gc_report._row, response.revisions)}


# Twelve revisions of vllm-llama, one a day: the ten newest (3..12) kept, 1 and 2 eligible.
TWELVE = [*vllm_runtimes(), *(rev(i) for i in range(1, 13))]


def test_the_ten_newest_of_a_runtime_name_are_kept() -> None:
    got = plan(TWELVE)
    assert [e.name for e in got.revisions] == [name(i) for i in range(12, 0, -1)]
    assert [e.rank for e in got.revisions] == list(range(1, 13))
    assert {n: v for n, v in verdicts(got).items() if v[0] == "Keep"} == {
        name(i): ("Keep", "-", "Newest") for i in range(3, 13)
    }
    assert (got.kept, got.deleted, got.keep_newest, got.grace_period_seconds, got.now) == (10, 2, 10, 86400, NOW)


def test_any_other_revision_is_marked_then_deleted_after_a_24_hour_grace_period() -> None:
    got = plan(TWELVE)
    [second, first] = got.revisions[-2:]
    assert (second.name, second.action, second.eligible_since, second.delete_after) == (
        name(2),
        pb.REVISION_GC_ACTION_MARK,
        NOW,
        "2026-10-02T00:00:00Z",
    )
    assert second.message == (
        "eligible: mark ome.io/gc-eligible-since now, delete after 2026-10-02T00:00:00Z; "
        "It deletes any other revision after a 24-hour grace period"
    )
    assert verdicts(got)[first.name] == ("Delete", "Mark", "Eligible")


@pytest.mark.parametrize(
    ("marked", "action", "delete_after"),
    [
        pytest.param("2026-09-30T00:00:01Z", "Wait", "2026-10-01T00:00:01Z", id="marked 23h59m59s ago: waits"),
        pytest.param("2026-09-30T00:00:00Z", "Delete", "2026-10-01T00:00:00Z", id="marked 24h ago: deleted"),
        pytest.param("2026-09-01T00:00:00Z", "Delete", "2026-09-02T00:00:00Z", id="marked a month ago: deleted"),
        pytest.param("yesterday", "Mark", "2026-10-02T00:00:00Z", id="not an RFC 3339 time: marked again"),
    ],
)
def test_the_grace_period_counts_from_gc_eligible_since(marked: str, action: str, delete_after: str) -> None:
    sources = [*TWELVE[:-12], rev(1, marked=marked), *TWELVE[-11:]]
    got = plan(sources)
    [first] = [e for e in got.revisions if e.name == name(1)]
    assert (verdicts(got)[name(1)], first.delete_after) == (("Delete", action, "Eligible"), delete_after)


def test_a_kept_revision_that_is_marked_is_unmarked() -> None:
    """ "removes the annotation if it keeps the revision again before that"."""
    sources = [*TWELVE[:-1], rev(12, marked="2026-09-30T12:00:00Z")]
    got = plan(sources)
    assert verdicts(got)[name(12)] == ("Keep", "Unmark", "Newest")
    assert got.revisions[0].message == (
        "kept: newest revision 1 of runtime name vllm-llama, remove ome.io/gc-eligible-since; "
        "OME keeps ... the ten newest revisions of each runtime name"
    )


@pytest.mark.parametrize(
    ("isvc_doc", "reason", "field"),
    [
        pytest.param(
            service("team-a", "llama-chat", revision_name=name(1)), "Requested", "spec.runtime.revision", id="requested"
        ),
        pytest.param(
            service("team-b", "llama-batch", pinned=name(1)), "Reported", "status.pinnedRevisionName", id="reported"
        ),
    ],
)
def test_a_revision_an_inferenceservice_names_is_kept_whatever_its_age(
    isvc_doc: dict[str, Any], reason: str, field: str
) -> None:
    got = plan([*TWELVE, isvc_doc])
    [first] = [e for e in got.revisions if e.name == name(1)]
    user = f"{isvc_doc['metadata']['namespace']}/{isvc_doc['metadata']['name']}"
    assert (verdicts(got)[name(1)], list(first.used_by), first.rank) == (("Keep", "-", reason), [user], 12)
    assert first.message == (
        f"kept: InferenceService {user} names it in {field}; OME keeps every revision that an "
        "InferenceService names in `spec.runtime.revision` or `status.pinnedRevisionName`"
    )
    assert (got.kept, got.deleted) == (11, 1)


def test_garbage_collection_handles_only_revisions_ome_created() -> None:
    """A revision without ``ome.io/created-by: ome-controller`` is left alone and not counted."""
    sources = [*TWELVE[:-1], rev(12, managed=False)]
    got = plan(sources)
    [newest] = [e for e in got.revisions if e.name == name(12)]
    assert (verdicts(got)[name(12)], newest.rank) == (("Keep", "-", "NotOMEManaged"), 0)
    assert newest.message == "left alone: no ome.io/created-by: ome-controller; garbage collection handles only those"
    # Not counted: the ten newest OME wrote are 2..11, so 2 is kept and only 1 is deleted.
    assert verdicts(got)[name(2)] == ("Keep", "-", "Newest")
    assert [n for n, v in verdicts(got).items() if v[0] == "Delete"] == [name(1)]


def test_same_named_runtimes_share_the_count_and_the_filter_narrows_the_list() -> None:
    """ "the ten newest revisions of each runtime name": a ServingRuntime vllm-llama's revisions
    count with the ClusterServingRuntime's."""
    sr = {**LLAMA, "kind": "ServingRuntime", "metadata": {**LLAMA["metadata"], "namespace": "team-a"}}
    sr_rev = revision("r-team-a-vllm-llama-000000ff", sr, created="2026-09-30T00:00:00Z")
    sources = [*TWELVE, sr, sr_rev]
    everything = plan(sources)
    assert verdicts(everything)[name(3)] == ("Delete", "Mark", "Eligible")
    only_sr = plan(
        sources, runtime=pb.RuntimeRef(kind=pb.RUNTIME_KIND_SERVING_RUNTIME, namespace="team-a", name="vllm-llama")
    )
    assert [(e.name, e.rank) for e in only_sr.revisions] == [("r-team-a-vllm-llama-000000ff", 1)]
    only_csr = plan(sources, runtime=pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="vllm-llama"))
    assert [e.name for e in only_csr.revisions] == [name(i) for i in range(12, 0, -1)]
    by_name = plan(sources, runtime=pb.RuntimeRef(name="vllm-llama"))
    assert len(by_name.revisions) == 13
    assert plan(sources, runtime=pb.RuntimeRef(name="vllm-base")).revisions == []


def test_keep_newest_and_grace_period_are_settings() -> None:
    got = plan(TWELVE, keep_newest=11, grace_period_seconds=3600)
    assert [n for n, v in verdicts(got).items() if v[0] == "Delete"] == [name(1)]
    assert got.revisions[-1].delete_after == "2026-10-01T01:00:00Z"
    assert (got.keep_newest, got.grace_period_seconds) == (11, 3600)


def test_revisions_outside_ome_namespace_are_not_planned() -> None:
    assert plan(TWELVE, ome_namespace="other").revisions == []


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"keep_newest": -1}, "keep_newest"),
        ({"grace_period_seconds": -5}, "grace_period_seconds"),
        ({"now": "yesterday"}, "now"),
        ({"now": "x" * 100}, "now"),
        ({"ome_namespace": "Bad_NS"}, "ome_namespace"),
        ({"runtime": pb.RuntimeRef(name="")}, "runtime.name"),
        ({"runtime": pb.RuntimeRef(kind=pb.RUNTIME_KIND_SERVING_RUNTIME, name="a")}, "runtime.namespace"),
        (
            {"runtime": pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="a", namespace="b")},
            "runtime.namespace",
        ),
    ],
)
def test_bad_input_is_invalid_argument_naming_the_field(fields: dict[str, Any], field: str) -> None:
    with pytest.raises(RequestError) as caught:
        plan(TWELVE, **fields)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert [v.field for v in caught.value.violations] == [field]


# --- the CLI: history --gc -------------------------------------------------------------------


def _cli(tmp_path: Any, capsys: Any, *argv: str, sources: list[Any] = TWELVE) -> tuple[int, str, str]:
    import yaml

    manifests = tmp_path / "objects.yaml"
    manifests.write_text(yaml.safe_dump_all(sources))
    status = app.main(["history", "--gc", "--manifests", str(manifests), "--now", NOW, *argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_history_gc_table(tmp_path: Any, capsys: Any) -> None:
    status, out, err = _cli(tmp_path, capsys)
    lines = out.splitlines()
    assert (status, err) == (0, "")
    assert lines[0].split() == ["REVISION", "RUNTIME-OF", "RANK", "VERDICT", "ACTION", "REASON", "DELETE-AFTER"]
    assert lines[1].split() == [name(12), "ClusterServingRuntime/vllm-llama", "1", "Keep", "-", "Newest", "-"]
    assert lines[-1].split() == [
        name(1),
        "ClusterServingRuntime/vllm-llama",
        "12",
        "Delete",
        "Mark",
        "Eligible",
        "2026-10-02T00:00:00Z",
    ]


def test_history_gc_name_lists_what_to_delete_now(tmp_path: Any, capsys: Any) -> None:
    sources = [*TWELVE[:-12], rev(1, marked="2026-09-29T00:00:00Z"), *TWELVE[-11:]]
    status, out, _ = _cli(tmp_path, capsys, "-o", "name", sources=sources)
    assert (status, out) == (0, f"controllerrevision.apps/{name(1)}\n")


def test_history_gc_for_an_inferenceservice(tmp_path: Any, capsys: Any) -> None:
    import yaml

    other = {**vllm_runtimes()[0]}
    isvc_file = tmp_path / "isvc.yaml"
    chat = service("team-a", "llama-chat", pinned=name(1))
    isvc_file.write_text(yaml.safe_dump(chat))
    # The users are the cached InferenceServices (here the manifests'); -f chooses the runtime name.
    sources = [*TWELVE, chat, revision("cr-vllm-base-000000aa", other, created="2026-09-01T00:00:00Z")]
    status, out, _ = _cli(
        tmp_path, capsys, "-f", str(isvc_file), "--grace-period", "1h30m", "-o", "wide", sources=sources
    )
    rows = [line.split() for line in out.splitlines()[1:]]
    assert status == 0
    assert [r[0] for r in rows] == [name(i) for i in range(12, 0, -1)]
    assert rows[-1][:8] == [
        name(1),
        "ClusterServingRuntime/vllm-llama",
        "12",
        "Keep",
        "-",
        "Reported",
        "-",
        "2026-09-01T00:00:00Z",
    ]
    assert rows[-1][8] == "team-a/llama-chat"
    assert rows[-2][6] == "2026-10-01T01:30:00Z"


@pytest.mark.parametrize(
    ("text", "seconds"), [("24h", 86400), ("90m", 5400), ("1h30m", 5400), ("3600s", 3600), ("1h0m1s", 3601)]
)
def test_grace_period_durations(text: str, seconds: int) -> None:
    assert gc_report.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1d", "h", "-1h", "1.5h"])
def test_bad_grace_period(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        gc_report.parse_duration(text)


def test_history_without_file_and_without_gc_is_an_error(capsys: Any) -> None:
    with pytest.raises(SystemExit) as exited:
        app.main(["history"])
    assert exited.value.code == 1
    assert capsys.readouterr().err.endswith(
        "\nerror: exactly one of INFERENCESERVICE, --isvc or -f/--filename is required\n"
    )
