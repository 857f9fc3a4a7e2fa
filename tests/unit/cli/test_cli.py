"""The ``ome-selector`` command: select / explain offline and against a server, output, exit codes;
the rendering helpers."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from google.protobuf import json_format
from helpers_docs import ACCELERATOR_REASON, SCORING_FILE, SEED_A_A100_FILE, SEED_A_FILE, SEED_A_NAMED_FILE, SEED_B_FILE
from ome.selector.v1 import selector_pb2
from ome_selector.cache.manifests import load_manifests, manifests_version
from ome_selector.cli import app as cli
from ome_selector.cli import cells, reports
from ome_selector.examples import example_paths

EXAMPLES_VERSION = manifests_version(load_manifests(example_paths()).objects)


def example(*names: str) -> list[str]:
    return [str(EXAMPLES / name) for name in names]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- select ------------------------------------------------------------------------------------


SEED_A_HEAD = [
    "Selected runtime: ClusterServingRuntime/llama-3-3-70b-hopper",
    "Selection: auto, score 2, supportedModelFormats entry 0",
    "Model: ClusterBaseModel/llama-3-3-70b-instruct (mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0)",
    f"Cache version: {EXAMPLES_VERSION}",
    "Warning: Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct",
    # The embedded examples hold 7 runtimes; only the hopper one lists nvidia-h100.
    "Runtimes: 1/7 runtimes are candidates: 6 accelerator class",
]
SEED_A_CANDIDATES = [
    "Candidates:",
    "RANK   RUNTIME                SCOPE     SCORE   ENTRY   SIZE-DISTANCE   TIE-BREAK",
    "1      llama-3-3-70b-hopper   Cluster   2       0       15B             -",
]


def test_select_seed_a_basic_view(capsys: pytest.CaptureFixture[str]) -> None:
    """The default (BASIC) view: the exclusion summary instead of one row per excluded runtime."""
    code, out, err = run(capsys, "select", "-f", SEED_A_FILE)
    assert (code, err) == (0, "")
    assert out.split("\n\n")[0].splitlines() == SEED_A_HEAD
    assert out.split("\n\n")[1].splitlines() == SEED_A_CANDIDATES
    assert "Excluded:" not in out


def test_select_seed_a(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "select", "-f", SEED_A_FILE, "--view", "full")
    assert (code, err) == (0, "")
    assert out.split("\n\n")[0].splitlines() == SEED_A_HEAD
    assert out.split("\n\n")[1].splitlines() == SEED_A_CANDIDATES
    excluded = out.split("\n\n")[2].splitlines()
    assert excluded[:3] == [
        "Excluded:",
        "RUNTIME                                SCOPE        VERDICT    REASON",
        f"team-llama                             Namespaced   Excluded   {ACCELERATOR_REASON}",
    ]
    assert len(excluded) == 2 + 6


def test_select_scoring_worked_example_ranks_as_the_docs(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "select", "-f", SCORING_FILE, "--manifests", *example("models.yaml", "scoring-worked-example.yaml")
    )
    assert code == 0
    assert out.splitlines()[0] == "Selected runtime: ServingRuntime/llama-demo/team-llama"
    assert (
        out.split("\n\n")[1]
        == "\n".join(
            [
                "Candidates:",
                "RANK   RUNTIME           SCOPE        SCORE   ENTRY   SIZE-DISTANCE   TIE-BREAK",
                "1      team-llama        Namespaced   2       0       0               -",
                "2      vllm-llama        Cluster      6       0       0               scope",
                "3      srt-llama-small   Cluster      6       0       7B              size-distance",
                "4      srt-llama-large   Cluster      6       0       69B             size-distance",
            ]
        )
        + "\n"
    )


def test_select_seed_b_nothing_qualifies(capsys: pytest.CaptureFixture[str]) -> None:
    # The deployment-mode page's message: the example runtime and a CSR without autoSelect: true.
    code, out, err = run(
        capsys,
        "select",
        "-f",
        SEED_B_FILE,
        "--view",
        "full",
        "--manifests",
        *example("models.yaml", "srt-llama-3-3-70b-instruct.yaml", "srt-llama-3-3-70b-instruct-multinode.yaml"),
    )
    assert (code, err) == (1, "")
    assert out.splitlines()[0] == (
        "No runtime selected: no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
        "Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-llama-3-3-70b-instruct-multinode "
        "(runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative)"
    )
    assert out.split("\n\n")[1].splitlines() == [
        "Excluded:",
        "RUNTIME                                SCOPE     VERDICT             REASON",
        "srt-llama-3-3-70b-instruct             Cluster   NotAutoSelectable   supports the model but has no "
        "supportedModelFormats[].autoSelect=true entry, so automatic selection skips it (pin it explicitly via spec.runtime.name instead)",
        "srt-llama-3-3-70b-instruct-multinode   Cluster   Excluded            runtime engine deployment mode MultiNode "
        "does not match requested engine deployment mode OMENative",
    ]


def test_select_seed_a_with_a100(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "select",
        "-f",
        SEED_A_A100_FILE,
        "--manifests",
        *example("accelerator-classes.yaml", "models.yaml", "llama-3-3-70b-hopper.yaml"),
    )
    assert code == 1
    assert out.splitlines()[0] == (
        "No runtime selected: no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
        "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: llama-3-3-70b-hopper "
        f"({ACCELERATOR_REASON})"
    )


def test_select_named_runtime_warns(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "select", "-f", SEED_A_NAMED_FILE)
    assert code == 0
    assert out.splitlines() == [
        "Selected runtime: ClusterServingRuntime/srt-llama-3-3-70b-instruct",
        "Selection: named, score 2, supportedModelFormats entry 0",
        f"Failing check: {ACCELERATOR_REASON}",
        "Model: ClusterBaseModel/llama-3-3-70b-instruct (mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0)",
        f"Cache version: {EXAMPLES_VERSION}",
        'Warning: runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct" '
        f"(runtime srt-llama-3-3-70b-instruct does not support model : {ACCELERATOR_REASON}); "
        "proceeding because the runtime was named explicitly",
    ]


def test_select_json_parses_back(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "select", "-f", SEED_A_FILE, "-o", "json", "--view", "full")
    assert code == 0
    response = json_format.Parse(out, selector_pb2.SelectRuntimeResponse())
    assert response.selection.runtime == selector_pb2.RuntimeRef(
        kind=selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="llama-3-3-70b-hopper"
    )
    assert (response.selection.score, response.selection.mode) == (2, selector_pb2.SELECTION_MODE_AUTO)
    assert [c.runtime.name for c in response.candidates] == ["llama-3-3-70b-hopper"]
    assert len(response.exclusions) == 6
    assert response.cache_version == EXAMPLES_VERSION
    assert '"cacheVersion"' in out and '"cache_version"' not in out  # proto3 JSON names


# --- explain -----------------------------------------------------------------------------------


def test_explain_scoring_worked_example_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys, "explain", "-f", SCORING_FILE, "--manifests", *example("models.yaml", "scoring-worked-example.yaml")
    )
    assert (code, err) == (0, "")
    assert out == (
        "RUNTIME           SCOPE        COMPATIBLE   PRIORITY   WEIGHT   SCORE   REASON\n"
        "team-llama        Namespaced   Yes          1          2        2       -\n"
        "vllm-llama        Cluster      Yes          2          6        6       -\n"
        "srt-llama-small   Cluster      Yes          3          6        6       -\n"
        "srt-llama-large   Cluster      Yes          3          6        6       -\n"
    )


def test_explain_rows_are_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "-f", SEED_B_FILE)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "SCORE", "REASON"]
    assert len(lines) == 1 + 7
    assert lines[1].split() == ["llama-3-3-70b-hopper", "Cluster", "Yes", "1", "2", "2", "-"]
    assert lines[2].startswith(
        "team-llama                             Namespaced   No           -          -        -       model format "
    )
    assert lines[3] == (
        "srt-llama-3-3-70b-instruct             Cluster      No           -          -        -       supports the model but has no "
        "supportedModelFormats[].autoSelect=true entry, so automatic selection skips it (pin it explicitly via spec.runtime.name instead)"
    )
    assert lines[4] == (
        "srt-llama-3-3-70b-instruct-multinode   Cluster      No           -          -        -       "
        "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative"
    )
    assert all(line == line.rstrip() for line in lines)


def test_explain_no_candidate_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    """kubectl-ome runtime.md, "Exit codes": 0 for every subcommand that finishes."""
    code, out, _ = run(capsys, "explain", "-f", SEED_A_A100_FILE)
    assert code == 0
    assert [line.split()[2] for line in out.splitlines()[1:]] == ["No"] * 7


def test_explain_named_runtime_notes_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "-f", SEED_A_NAMED_FILE)
    assert code == 0
    assert err == "Note: spec.runtime is explicit; automatic selection below is hypothetical.\n"
    assert out.splitlines()[1].split()[:3] == ["llama-3-3-70b-hopper", "Cluster", "Yes"]


def test_explain_without_runtimes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "-f", SEED_A_FILE, "--manifests", *example("models.yaml"))
    assert (code, out) == (0, "")  # no table, exit 0 (kubectl-ome runtime.md, explain)
    assert err == "No serving runtimes found in the selected namespace or at cluster scope.\n"


def test_explain_json_parses_back(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "-f", SCORING_FILE, "-o", "json")
    assert code == 0
    response = json_format.Parse(out, selector_pb2.ExplainRuntimesResponse())
    assert [(r.runtime.name, r.verdict, r.rank, r.priority, r.weight) for r in response.runtimes[:4]] == [
        ("team-llama", selector_pb2.VERDICT_CANDIDATE, 1, 1, 2),
        ("vllm-llama", selector_pb2.VERDICT_CANDIDATE, 2, 2, 6),
        ("srt-llama-small", selector_pb2.VERDICT_CANDIDATE, 3, 3, 6),
        ("srt-llama-large", selector_pb2.VERDICT_CANDIDATE, 4, 3, 6),
    ]
    assert len(response.runtimes) == 7


# --- against a server --------------------------------------------------------------------------


def test_server_mode_answers_like_offline_mode(running_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    server = running_server()
    for command, isvc in (("select", SEED_A_FILE), ("explain", SCORING_FILE), ("select", SEED_B_FILE)):
        offline = run(capsys, command, "-f", isvc)
        online = run(capsys, command, "-f", isvc, "--server", server.address)
        assert online == offline


def test_server_mode_keeps_the_view(running_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``select --view full --server`` asks the server for the FULL view, as offline does."""
    server = running_server()
    offline = run(capsys, "select", "-f", SEED_A_FILE, "--view", "full")
    online = run(capsys, "select", "-f", SEED_A_FILE, "--view", "full", "--server", server.address)
    assert online == offline
    assert "Excluded:" in online[1]


def test_server_mode_errors(running_server: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    server = running_server()
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: x, namespace: ns}\nspec:\n  model: {name: nope}\n"
    )
    code, out, err = run(capsys, "select", "-f", str(isvc), "--server", server.address)
    assert (code, out) == (2, "")
    assert err == (
        'error: NOT_FOUND: referenced model "nope" not found in namespace "ns": ensure a BaseModel exists in this namespace '
        "or a ClusterBaseModel exists cluster-wide with this name\n"
    )


def test_unreachable_server_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, out, err = run(capsys, "select", "-f", SEED_A_FILE, "--server", f"127.0.0.1:{port}", "--timeout", "1")
    assert (code, out) == (2, "")
    assert err.startswith("error: UNAVAILABLE: ")


# --- input handling and exit codes ---------------------------------------------------------------


def test_namespace_flag_fills_a_missing_namespace(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(Path(SCORING_FILE).read_text().replace("  namespace: llama-demo\n", ""))
    assert run(capsys, "select", "-f", str(isvc)) == (  # in "default" the BaseModel of llama-demo does not exist ...
        2,
        "",
        'error: NOT_FOUND: referenced model "llama-3-2-3b-instruct" not found in namespace "default": ensure a BaseModel '
        "exists in this namespace or a ClusterBaseModel exists cluster-wide with this name\n",
    )
    code, out, err = run(capsys, "select", "-f", str(isvc), "-n", "llama-demo")
    assert (code, err) == (0, "")  # ... in llama-demo it does
    assert out.splitlines()[0] == "Selected runtime: ServingRuntime/llama-demo/team-llama"


def test_reads_the_inference_service_from_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO(Path(SEED_A_FILE).read_text()))
    code, out, _ = run(capsys, "select", "-f", "-")
    assert code == 0
    assert out.splitlines()[0] == "Selected runtime: ClusterServingRuntime/llama-3-3-70b-hopper"


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["select", "-f", "/nonexistent/isvc.yaml"],
            "error: /nonexistent/isvc.yaml: cannot read: No such file or directory\n",
        ),
        (
            ["select", "-f", str(EXAMPLES / "models.yaml")],
            f"error: {EXAMPLES / 'models.yaml'}: no InferenceService (ome.io/v1beta1) found\n",
        ),
        (
            ["select", "-f", SEED_A_FILE, "--manifests", "/nonexistent"],
            "error: cannot load manifests:\n  /nonexistent: no such file or directory\n",
        ),
    ],
)
def test_input_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    assert run(capsys, *argv) == (2, "", message)


def test_explain_input_errors_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    """kubectl-ome runtime.md, "Exit codes": every error of a runtime subcommand is 1, never 2."""
    assert run(capsys, "explain", "-f", str(EXAMPLES / "models.yaml")) == (
        1,
        "",
        f"error: {EXAMPLES / 'models.yaml'}: no InferenceService (ome.io/v1beta1) found\n",
    )


def test_malformed_manifest_is_named_and_fatal_only_with_strict(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("- not\n- a mapping\n")
    assert run(capsys, "select", "-f", SEED_A_FILE, "--manifests", *example_paths(), str(bad), "--strict") == (
        2,
        "",
        f"error: cannot load manifests (--strict):\n  {bad}: document 0: expected a mapping (a Kubernetes object), got a list\n",
    )
    code, out, err = run(capsys, "select", "-f", SEED_A_FILE, "--manifests", *example_paths(), str(bad))
    assert (code, out.splitlines()[0]) == (0, "Selected runtime: ClusterServingRuntime/llama-3-3-70b-hopper")
    assert err == (
        f"warning: {bad}: document 0: expected a mapping (a Kubernetes object), got a list\n"
        "warning: 1 object rejected, 1 problem; answering from the rest (--strict makes this fatal)\n"
    )


def test_invalid_inference_service_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: x, namespace: ns}\nspec:\n  deploymentMode: MultiNode\n"
    )
    code, out, err = run(capsys, "select", "-f", str(isvc))
    assert (code, out) == (2, "")
    assert err == (
        'error: INVALID_ARGUMENT: invalid request: inferenceService.spec.deploymentMode: Unsupported value: "MultiNode": '
        'supported values: "OMENative", "RawDeployment"; inferenceService.spec.model.name: a model is required when '
        "spec.runtime.name is not set\n"
    )


def test_duplicate_manifest_warns_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    hopper = str(EXAMPLES / "llama-3-3-70b-hopper.yaml")
    code, _, err = run(capsys, "select", "-f", SEED_A_FILE, "--manifests", *example_paths(), hopper)
    assert code == 0
    assert err == (
        f"warning: ClusterServingRuntime llama-3-3-70b-hopper is defined in {hopper} and in {hopper}; "
        f"the definition in {hopper} wins (later in load order)\n"
    )


def test_verbose_lists_skipped(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "kustomization.yaml").write_text("resources: []\n")
    code, _, err = run(capsys, "explain", "-f", SEED_A_FILE, "--manifests", *example_paths(), str(tmp_path), "-v")
    assert code == 0
    assert err == f"skipped: {tmp_path}/kustomization.yaml: skipped kustomization file\n"


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["select"],
        ["select", "-f", SEED_A_FILE, "-o", "xml"],
        ["select", "-f", SEED_A_FILE, "--manifests", "x", "--server", "127.0.0.1:1"],
        ["serve", "--log-format", "xml"],
        ["serve", "--grace", "-1"],
        ["frobnicate"],
    ],
)
def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        cli.main(argv)
    assert excinfo.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: ome-selector")
    assert "Traceback" not in err


def test_console_script_subprocess() -> None:
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "ome_selector.cli",
            "explain",
            "-f",
            SCORING_FILE,
            "--manifests",
            *example("models.yaml", "scoring-worked-example.yaml"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (process.returncode, process.stderr) == (0, "")
    assert process.stdout.splitlines()[1] == "team-llama        Namespaced   Yes          1          2        2       -"


# --- formatting helpers ------------------------------------------------------------------------


def test_format_table_pads_all_but_the_last_column() -> None:
    assert reports.format_table(("A", "BB", "C"), [("long-cell", "x", ""), ("y", "zz", "last")]) == (
        "A           BB   C\nlong-cell   x\ny           zz   last"
    )
    assert reports.format_table(("A", "B"), []) == "A   B"


@pytest.mark.parametrize(
    "value, text", [(0.0, "0"), (7e9, "7B"), (6.9e10, "69B"), (5e8, "500M"), (1.5e12, "1.5T"), (12.0, "12")]
)
def test_format_size(value: float, text: str) -> None:
    assert cells.format_size(value) == text
