"""``ome-selector what-if`` (PreviewCacheChange) and ``ome-selector watch`` (WatchSelections) in
process (docs/cli.md, "Watch and what-if from the command line"): what-if offline on the real cluster (the OME catalog's runtimes and
ome-cluster, with its eight InferenceServices) with its exact table, notes and exit status; the
``--delete`` keys and ``-f`` of any kind; every line ``watch`` prints for each kind of event.
The same commands against a real server: test_cli_watch_e2e.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import CATALOG_RUNTIMES, OME_CLUSTER
from helpers_watch import HOPPER, OMENATIVE, hopper
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.manifest_types import ManifestError
from ome_selector.cache.manifests import read_cache_objects
from ome_selector.cli import app as cli
from ome_selector.cli import rendering, watch_report
from ome_selector.cli.sources import UsageError, parse_object_key

CLUSTER = [str(CATALOG_RUNTIMES), str(OME_CLUSTER)]
RANKED = f"ClusterServingRuntime {HOPPER} ranks above ClusterServingRuntime {OMENATIVE} now: score 8 > 6"
PRIORITY = f"ClusterServingRuntime {HOPPER}: priority 2 → 4"
# What the priority change moves (test_watch.py has the same events from the tracker).
WHAT_IF_HOPPER_4 = [
    "INFERENCESERVICE   NAMESPACE    BEFORE                                 AFTER                               WHY",
    f"llama-70b          llama-demo   {OMENATIVE}   {HOPPER}   {RANKED}",
    f"llama-70b-native   llama-demo   {OMENATIVE}   {HOPPER}   {RANKED}",
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], list[str]]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out.splitlines(), captured.err.splitlines()


@pytest.fixture
def hopper_4(tmp_path: Path) -> str:
    path = tmp_path / "hopper-4.yaml"
    path.write_text(yaml.safe_dump(hopper(4)))
    return str(path)


def notes(err: list[str]) -> list[str]:
    """stderr without the loader's warnings about the catalog's duplicate runtimes."""
    return [line for line in err if not line.startswith("warning: ClusterServingRuntime ")]


# --- what-if -------------------------------------------------------------------------------------


def test_what_if_prints_the_inference_services_a_runtime_change_moves(
    capsys: pytest.CaptureFixture[str], hopper_4: str
) -> None:
    code, out, err = run(capsys, "what-if", "-f", hopper_4, "--manifests", *CLUSTER)
    assert (code, out) == (1, WHAT_IF_HOPPER_4)
    [note] = notes(err)
    assert note.startswith("Note: 2 of 8 cached InferenceServices would change (6 re-evaluated) at cache version ")
    assert note.endswith("; nothing was applied.")


def test_what_if_wide_adds_the_causes(capsys: pytest.CaptureFixture[str], hopper_4: str) -> None:
    code, out, _ = run(capsys, "what-if", "-f", hopper_4, "--manifests", *CLUSTER, "-o", "wide")
    assert (code, out) == (
        1,
        [
            WHAT_IF_HOPPER_4[0] + " " * (len(RANKED) - len("WHY")) + "   CAUSE",
            WHAT_IF_HOPPER_4[1] + "   " + PRIORITY,
            WHAT_IF_HOPPER_4[2] + "   " + PRIORITY,
        ],
    )


def test_what_if_deletes(capsys: pytest.CaptureFixture[str]) -> None:
    deleted = f"ClusterServingRuntime {HOPPER} was deleted"
    code, out, err = run(
        capsys, "what-if", "--delete", f"clusterservingruntime.ome.io/{HOPPER}", "--manifests", *CLUSTER, "-n", "x"
    )
    no_runtime = "still no runtime; changed: RuntimeReady condition, warnings"
    chain = (
        'named runtime team-llama-70b-child: ServingRuntime team-a/team-llama-70b-child → inherit-from parent "'
        f'{HOPPER}" not found (chain so far: [team-llama-70b-child])'
    )
    assert (code, out) == (
        1,
        [
            "INFERENCESERVICE        NAMESPACE    BEFORE                              AFTER                           WHY",
            f"deepseek-v3             demo         none (RuntimeNotFound)              none (RuntimeNotFound)          {no_runtime}",
            f"qwen2-5-7b              demo         none (RuntimeNotFound)              none (RuntimeNotFound)          {no_runtime}",
            f"llama-70b-h100          llama-demo   {HOPPER}   none (RuntimeNotFound)          {deleted}",
            f"llama-70b-l40s          llama-demo   none (RuntimeNotFound)              none (RuntimeNotFound)          {no_runtime}",
            f"llama-70b-named-child   team-a       team-llama-70b-child                none (RuntimeValidationError)   {chain}",
        ],
    )
    assert [line[:60] for line in notes(err)] == ["Note: 5 of 8 cached InferenceServices would change (8 re-eva"]


def test_what_if_that_moves_nothing_exits_0_and_names_a_missing_delete(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "what-if",
        "--delete",
        "AcceleratorClass/nope",
        "--delete",
        "ServingRuntime/nobody/x",
        "--manifests",
        *CLUSTER,
    )
    assert (code, out) == (0, [])
    assert [line.split(" at cache version ")[0] for line in notes(err)] == [
        "Note: 0 of 8 cached InferenceServices would change (0 re-evaluated)",
        "Warning: AcceleratorClass nope is not in the cache: nothing to delete.",
        "Warning: ServingRuntime nobody/x is not in the cache: nothing to delete.",
    ]


def test_what_if_json_is_the_response(capsys: pytest.CaptureFixture[str], hopper_4: str) -> None:
    code, out, _ = run(capsys, "what-if", "-f", hopper_4, "--manifests", *CLUSTER, "-o", "json")
    response = yaml.safe_load("\n".join(out))
    assert code == 1
    assert [
        (c["name"], c["before"]["runtime"]["name"], c["after"]["runtime"]["name"]) for c in response["changes"]
    ] == [
        ("llama-70b", OMENATIVE, HOPPER),
        ("llama-70b-native", OMENATIVE, HOPPER),
    ]
    assert (response["reevaluated"], response["inferenceServices"]) == (6, 8)


def test_what_if_takes_an_inference_service_and_names_its_namespace(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "new.yaml"
    path.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: new}\n"
        "spec: {model: {name: llama-3-3-70b-instruct}, engine: {minReplicas: 1}}\n"
    )
    code, out, _ = run(capsys, "what-if", "-f", str(path), "-n", "llama-demo", "--manifests", *CLUSTER)
    assert (code, out) == (
        1,
        [
            "INFERENCESERVICE   NAMESPACE    BEFORE   AFTER                                  WHY",
            f"new                llama-demo   -        {OMENATIVE}   the InferenceService was created",
        ],
    )


def test_what_if_needs_a_change_and_checks_it_as_a_write(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "what-if", "--manifests", *CLUSTER)[::2] == (
        2,
        ["error: at least one of -f/--filename or --delete is required"],
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: Bad_Name}\nspec: {}\n")
    code, _, err = run(capsys, "what-if", "-f", str(bad), "--manifests", *CLUSTER)
    assert (code, notes(err)) == (
        2,
        [
            "error: INVALID_ARGUMENT: invalid request: upserts[0].clusterServingRuntime.metadata.name: Invalid value: "
            "\"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric characters, '-' or "
            "'.', and must start and end with an alphanumeric character"
        ],
    )


@pytest.mark.parametrize(
    "text, key",
    [
        ("ClusterServingRuntime/vllm", (cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, "", "vllm")),
        ("clusterservingruntime.ome.io/vllm", (cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, "", "vllm")),
        ("servingruntime/team-a/rt", (cache_pb2.OBJECT_KIND_SERVING_RUNTIME, "team-a", "rt")),
        ("ServingRuntime/rt", (cache_pb2.OBJECT_KIND_SERVING_RUNTIME, "dflt", "rt")),
        ("BaseModel/m", (cache_pb2.OBJECT_KIND_BASE_MODEL, "dflt", "m")),
        ("ClusterBaseModel/m", (cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL, "", "m")),
        ("acceleratorclass/a100", (cache_pb2.OBJECT_KIND_ACCELERATOR_CLASS, "", "a100")),
        ("InferenceService/ns/isvc", (cache_pb2.OBJECT_KIND_INFERENCE_SERVICE, "ns", "isvc")),
        ("controllerrevision.apps/ome/cr-x-1", (cache_pb2.OBJECT_KIND_CONTROLLER_REVISION, "ome", "cr-x-1")),
    ],
)
def test_a_delete_key(text: str, key: tuple[int, str, str]) -> None:
    assert parse_object_key(text, "dflt") == cache_pb2.ObjectKey(kind=key[0], namespace=key[1], name=key[2])


@pytest.mark.parametrize(
    "text, message",
    [
        (
            "Pod/x",
            "--delete 'Pod/x': expected KIND/[NAMESPACE/]NAME with KIND one of ServingRuntime, "
            "ClusterServingRuntime, BaseModel, ClusterBaseModel, AcceleratorClass, InferenceService, "
            "ControllerRevision",
        ),
        (
            "ClusterServingRuntime",
            "--delete 'ClusterServingRuntime': expected KIND/[NAMESPACE/]NAME with KIND one of ServingRuntime, "
            "ClusterServingRuntime, BaseModel, ClusterBaseModel, AcceleratorClass, InferenceService, "
            "ControllerRevision",
        ),
        (
            "ClusterBaseModel/ns/m",
            "--delete 'ClusterBaseModel/ns/m': ClusterBaseModel is cluster-scoped and takes no namespace",
        ),
    ],
)
def test_a_bad_delete_key(text: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_object_key(text, "dflt")
    assert str(caught.value) == message


def test_f_reads_every_cached_kind_and_gives_namespaced_ones_the_namespace(tmp_path: Path) -> None:
    path = tmp_path / "objects.yaml"
    path.write_text(
        "apiVersion: ome.io/v1beta1\nkind: ServingRuntime\nmetadata: {name: rt}\nspec: {}\n---\n"
        "apiVersion: ome.io/v1beta1\nkind: BaseModel\nmetadata: {name: m, namespace: own}\nspec: {}\n---\n"
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n"
        "apiVersion: ome.io/v1beta1\nkind: AcceleratorClass\nmetadata: {name: a}\nspec: {}\n"
    )
    objects, warnings = read_cache_objects(str(path), "team-a")
    assert [(o.WhichOneof("object"), getattr(o, o.WhichOneof("object") or "").metadata.namespace) for o in objects] == [
        ("serving_runtime", "team-a"),
        ("base_model", "own"),
        ("accelerator_class", ""),
    ]
    assert warnings == [f"{path}: document 2: skipped ConfigMap c (apiVersion v1)"]
    empty = tmp_path / "empty.yaml"
    empty.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
    with pytest.raises(ManifestError) as caught:
        read_cache_objects(str(empty), "team-a")
    assert str(caught.value) == (
        f"{empty}: no object of a cached kind (ServingRuntime, ClusterServingRuntime, BaseModel, ClusterBaseModel, "
        "AcceleratorClass, InferenceService of ome.io/v1beta1; ControllerRevision of apps/v1) found"
    )


# --- watch: one line per event ---------------------------------------------------------------------

R = selector_pb2
CSR = R.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
RESOLVED = R.Condition(type="RuntimeReady", status="True", reason="RuntimeResolved")
NOT_FOUND = R.Condition(type="RuntimeReady", status="False", reason="RuntimeNotFound", message="no runtime found ...")


def outcome(runtime: str | None, condition: R.Condition | None = RESOLVED, **fields: object) -> R.SelectionOutcome:
    out = R.SelectionOutcome(namespace="llama-demo", name="llama-70b", **fields)  # type: ignore[arg-type]
    if runtime is not None:
        out.runtime.CopyFrom(R.RuntimeRef(kind=CSR, name=runtime))
    if condition is not None:
        out.runtime_ready.CopyFrom(condition)
    return out


def test_the_heading_and_rows_fit_120_columns() -> None:
    """The table: INFERENCESERVICE (24) NAMESPACE (12) BEFORE (28) AFTER (28) STEP, 3 spaces
    apart: at most 120 columns with the longest step, names longer than their column shortened."""
    assert watch_report.WATCH_HEADING == (
        "INFERENCESERVICE           NAMESPACE      BEFORE                         AFTER                          STEP"
    )
    assert watch_report.format_watch_event(R.WatchSelectionsResponse(current=outcome(HOPPER))) == (
        "llama-70b                  llama-demo     -                              srt-llam...t-hopper#22ad26b9"
        "   (current)"
    )
    end = R.InitialEventsEnd(cache_version="v1", generation=1, inference_services=9)
    assert watch_report.format_watch_event(R.WatchSelectionsResponse(initial_events_end=end)) == (
        "# initial state: 9 InferenceServices at cache version v1 (generation 1); changes follow"
    )


def test_a_change_on_catalog_names_within_120_columns() -> None:
    """The OME catalog's longest runtime name (50 characters), a long InferenceService and
    namespace, the longest step: the exact row, 120 columns; -o wide prints them whole."""
    longest = "srt-llama-4-maverick-17b-128e-instruct-fp8-pd-grpc"
    change = R.SelectionChange(
        namespace="team-platform-inference",
        name="llama-4-maverick-17b-128e-instruct-fp8",
        before=outcome(longest),
        after=outcome(None, R.Condition(type="RuntimeReady", status="False", reason="RuntimeValidationError")),
        cache_version="v7",
        causes=[R.ObjectChange(text=f"ClusterServingRuntime {longest}: deleted")],
        reason=R.ChangeReason(step=R.CHANGE_STEP_INFERENCE_SERVICE, text="the InferenceService changed"),
    )
    line = watch_report.format_watch_event(R.WatchSelectionsResponse(change=change))
    assert line == (
        "llama-...ct-fp8#321a5921   team-plat...   srt-llam...-pd-grpc#9c5fe671   none (RuntimeValidationEr..."
        "   InferenceService"
    )
    assert len(line) == 120
    assert watch_report.format_watch_event_wide(R.WatchSelectionsResponse(change=change)) == (
        "llama-4-maverick-17b-128e-instruct-fp8   team-platform-inference   "
        f"{longest}   none (RuntimeValidationError)          "
        f"the InferenceService changed / ClusterServingRuntime {longest}: deleted   v7"
    )
    ranked = R.SelectionChange(
        namespace="llama-demo",
        name="llama-70b",
        before=outcome(OMENATIVE),
        after=outcome(HOPPER),
        reason=R.ChangeReason(step=R.CHANGE_STEP_RANKING, text=RANKED),
    )
    assert watch_report.format_watch_event(R.WatchSelectionsResponse(change=ranked)) == (
        "llama-70b                  llama-demo     srt-llam...menative#d086cfa0   srt-llam...t-hopper#22ad26b9"
        "   Ranking"
    )


def test_comment_lines_are_cut_to_120_columns() -> None:
    long_version = "rv-" + "7" * 120
    stats = R.WriteStats(cache_version=long_version, generation=3, reevaluated=8)
    line = watch_report.format_watch_event(R.WatchSelectionsResponse(write=stats))
    assert line == f"# write {long_version}"[:117] + "..."
    assert watch_report.format_watch_event_wide(R.WatchSelectionsResponse(write=stats)).startswith(
        f"# write {long_version} (generation 3): 8 re-evaluated"
    )


def test_wide_the_heading_and_the_current_state() -> None:
    assert watch_report.WATCH_WIDE_HEADING == (
        "INFERENCESERVICE           NAMESPACE      BEFORE                                 AFTER"
        "                                  WHY / CAUSE"
        "                                                                VERSION"
    )
    assert watch_report.format_watch_event_wide(R.WatchSelectionsResponse(current=outcome(OMENATIVE))) == (
        "llama-70b                  llama-demo     -                                      "
        f"{OMENATIVE}   (current)" + " " * 66 + "-"
    )
    end = R.InitialEventsEnd(cache_version="v1", generation=1, inference_services=9)
    assert watch_report.format_watch_event_wide(R.WatchSelectionsResponse(initial_events_end=end)) == (
        "# initial state: 9 InferenceServices at cache version v1 (generation 1); changes follow as cache writes come"
    )
    one = R.InitialEventsEnd(cache_version="v1", generation=1, inference_services=1)
    assert watch_report.format_watch_event_wide(R.WatchSelectionsResponse(initial_events_end=one)).startswith(
        "# initial state: 1 InferenceService at cache version v1"
    )


def test_wide_a_change_shows_both_outcomes_why_and_the_causes() -> None:
    change = R.SelectionChange(
        namespace="llama-demo",
        name="llama-70b",
        before=outcome(OMENATIVE),
        after=outcome(HOPPER),
        cache_version="v2",
        causes=[R.ObjectChange(text=PRIORITY), R.ObjectChange(text="AcceleratorClass a: deleted")],
        reason=R.ChangeReason(step=R.CHANGE_STEP_RANKING, text=RANKED),
    )
    assert watch_report.format_watch_event_wide(R.WatchSelectionsResponse(change=change)) == (
        f"llama-70b                  llama-demo     {OMENATIVE}   {HOPPER}      "
        f"{RANKED} / {PRIORITY}; AcceleratorClass a: deleted   v2"
    )


@pytest.mark.parametrize(
    "before, after, cells",
    [
        (None, outcome(OMENATIVE), ("-", OMENATIVE)),  # created
        (outcome(HOPPER), None, (HOPPER, "-")),  # deleted
        (outcome(HOPPER), outcome(None, NOT_FOUND), (HOPPER, "none (RuntimeNotFound)")),
        (
            outcome(None, None, warnings=[R.Event(type="Warning", reason="ModelReconcileError")]),
            outcome(None, None),
            ("none (ModelReconcileError)", "none"),
        ),
    ],
)
def test_before_and_after(
    before: R.SelectionOutcome | None, after: R.SelectionOutcome | None, cells: tuple[str, str]
) -> None:
    change = R.SelectionChange(namespace="ns", name="i", cache_version="v3", reason=R.ChangeReason(text="why"))
    if before is not None:
        change.before.CopyFrom(before)
    if after is not None:
        change.after.CopyFrom(after)
    line = watch_report.format_watch_event_wide(R.WatchSelectionsResponse(change=change))
    assert line.split() == ["i", "ns", *cells[0].split(), *cells[1].split(), "why", "/", "-", "v3"]
    line = watch_report.format_watch_event(R.WatchSelectionsResponse(change=change))
    short = {HOPPER: "srt-llam...t-hopper#22ad26b9", OMENATIVE: "srt-llam...menative#d086cfa0"}
    fitted = [short.get(cell, cell) for cell in cells]
    assert line.split() == ["i", "ns", *fitted[0].split(), *fitted[1].split(), "-"]  # no step given


def test_a_writes_stats_and_a_resync() -> None:
    stats = R.WriteStats(cache_version="v3", generation=3, reevaluated=8, changed=2, matched=1, inference_services=9)
    assert watch_report.format_watch_event(R.WatchSelectionsResponse(write=stats)) == (
        "# write v3 (generation 3): 8 re-evaluated, 2 changed, 1 in this watch; 9 InferenceServices cached"
    )
    resync = R.Resync(reason="the watcher fell behind by more than 2 events; the full state follows")
    assert watch_report.format_watch_event(R.WatchSelectionsResponse(resync=resync)) == (
        "# resync: the watcher fell behind by more than 2 events; the full state follows"
    )


def test_json_lines() -> None:
    event = R.WatchSelectionsResponse(write=R.WriteStats(cache_version="v3", generation=3, reevaluated=8))
    assert rendering.format_json_line(event) == '{"write": {"cacheVersion": "v3", "generation": "3", "reevaluated": 8}}'
