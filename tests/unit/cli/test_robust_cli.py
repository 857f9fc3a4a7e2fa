"""docs/api.md, "Errors" and "Bounds", for the offline CLI: --strict, -o table|wide|json|yaml|name on every
query command, -f answering every InferenceService, errors in camelCase, the explain usage error,
files that are not regular. Each test failed before the change."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from conftest import EXAMPLES
from helpers_docs import SEED_A_A100_FILE, SEED_A_FILE
from ome_selector.cli import app as cli
from ome_selector.examples import example_paths

HOPPER = str(EXAMPLES / "llama-3-3-70b-hopper.yaml")
CATALOG = [str(EXAMPLES / "models.yaml"), str(EXAMPLES / "accelerator-classes.yaml")]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    "argv, code, out",
    [
        (["select", "-f", SEED_A_FILE], 0, "clusterservingruntime.ome.io/llama-3-3-70b-hopper\n"),
        (["select", "-f", SEED_A_A100_FILE], 1, ""),
        (
            ["explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo"],
            0,
            "servingruntime.ome.io/team-llama\nclusterservingruntime.ome.io/vllm-llama\n"
            "clusterservingruntime.ome.io/srt-llama-small\nclusterservingruntime.ome.io/srt-llama-large\n",
        ),
        (["effective", "-f", SEED_A_FILE], 0, "clusterservingruntime.ome.io/llama-3-3-70b-hopper\n"),
        (["admit", "-f", SEED_A_FILE], 0, "inferenceservice.ome.io/llama-3-3-70b\n"),
        (["reconcile", "-f", SEED_A_FILE], 0, "clusterservingruntime.ome.io/llama-3-3-70b-hopper\n"),
        (
            ["validate-runtime", "-f", HOPPER, "--manifests", *CATALOG],
            0,
            "clusterservingruntime.ome.io/llama-3-3-70b-hopper\n",
        ),
    ],
)
def test_output_name(capsys: pytest.CaptureFixture[str], argv: list[str], code: int, out: str) -> None:
    assert run(capsys, *argv, "-o", "name")[:2] == (code, out)


@pytest.mark.parametrize("command", ["select", "explain", "effective", "admit", "reconcile"])
def test_output_yaml_is_the_json_answer(capsys: pytest.CaptureFixture[str], command: str) -> None:
    code_json, out_json, _ = run(capsys, command, "-f", SEED_A_FILE, "-o", "json")
    code_yaml, out_yaml, _ = run(capsys, command, "-f", SEED_A_FILE, "-o", "yaml")
    assert code_yaml == code_json
    assert yaml.safe_load(out_yaml) == json.loads(out_json)


@pytest.mark.parametrize("command", ["select", "explain", "admit", "reconcile", "validate-runtime"])
def test_output_wide_is_accepted_everywhere(capsys: pytest.CaptureFixture[str], command: str) -> None:
    argv = [command, "-f", HOPPER if command == "validate-runtime" else SEED_A_FILE]
    if command == "validate-runtime":
        argv += ["--manifests", *CATALOG]
    assert run(capsys, *argv, "-o", "wide") == run(capsys, *argv)


def test_every_inference_service_of_the_file_is_answered(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Before: only the first one was answered."""
    both = tmp_path / "both.yaml"
    both.write_text(Path(SEED_A_FILE).read_text() + "\n---\n" + Path(SEED_A_A100_FILE).read_text())
    code, out, _ = run(capsys, "select", "-f", str(both), "-o", "name")
    assert (code, out) == (1, "clusterservingruntime.ome.io/llama-3-3-70b-hopper\n")  # the worst status: 1
    code, out, _ = run(capsys, "select", "-f", str(both))
    first, second = out.split("\n\n# ")
    assert first.splitlines()[:2] == [
        "# inferenceservice.ome.io/llama-demo/llama-3-3-70b",
        "Selected runtime: ClusterServingRuntime/llama-3-3-70b-hopper",
    ]
    assert second.splitlines()[0] == "inferenceservice.ome.io/llama-demo/llama-3-3-70b-a100"
    code, out, _ = run(capsys, "admit", "-f", str(both), "-o", "json")
    assert (code, [a.get("allowed", False) for a in json.loads(out)]) == (1, [True, False])
    code, out, _ = run(capsys, "select", "-f", str(both), "-o", "yaml")
    assert len(list(yaml.safe_load_all(out))) == 2


def test_explain_usage_error_names_flags_that_exist(capsys: pytest.CaptureFixture[str]) -> None:
    """The page's text (runtime.md, explain "Flags"), naming --isvc, which the CLI has."""
    assert run(capsys, "explain") == (1, "", "error: exactly one of --model or --isvc is required\n")


def test_strict_makes_a_rejected_object_fatal(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        Path(HOPPER).read_text().replace("name: llama-3-3-70b-hopper", "name: Hopper", 1) + "---\n" + "kind: [x]\n"
    )
    args = ["select", "-f", SEED_A_FILE, "--manifests", *example_paths(), str(bad)]
    code, out, err = run(capsys, *args, "--strict")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == "error: cannot load manifests (--strict):"
    assert err.splitlines()[2] == f'  {bad}: document 1: kind: Invalid value: "[x]": must be of type string'
    code, out, err = run(capsys, *args, "-o", "name")
    assert (code, out) == (0, "clusterservingruntime.ome.io/llama-3-3-70b-hopper\n")
    assert (
        err.splitlines()[-1]
        == "warning: 2 objects rejected, 2 problems; answering from the rest (--strict makes this fatal)"
    )


def test_errors_use_the_manifests_field_paths(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(Path(SEED_A_FILE).read_text().replace("minReplicas: 1", "minReplicas: one"))
    code, out, err = run(capsys, "select", "-f", str(isvc))
    assert (code, out) == (2, "")
    assert (
        err
        == f'error: {isvc}: document 0: invalid InferenceService llama-3-3-70b: spec.engine.minReplicas: Invalid value: "one": must be of type integer\n'
    )
    long_ns = tmp_path / "ns.yaml"
    long_ns.write_text(Path(SEED_A_FILE).read_text().replace("namespace: llama-demo", "namespace: " + "a" * 20000))
    code, out, err = run(capsys, "admit", "-f", str(long_ns))
    assert (code, out) == (2, "")
    assert err == (
        f'error: INVALID_ARGUMENT: invalid request: inferenceService.metadata.namespace: Invalid value: "{"a" * 64}…" '
        "(20000 characters): must be no more than 63 characters\n"
    )


def test_a_fifo_as_file_or_manifest_does_not_hang(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fifo = tmp_path / "isvc.yaml"
    os.mkfifo(fifo)
    assert run(capsys, "select", "-f", str(fifo)) == (2, "", f"error: {fifo}: skipped: a FIFO, not a regular file\n")
    folder = tmp_path / "manifests"
    folder.mkdir()
    os.mkfifo(folder / "runtimes.yaml")
    code, _, err = run(capsys, "select", "-f", SEED_A_FILE, "--manifests", *example_paths(), str(folder))
    assert (code, err) == (0, f"warning: {folder / 'runtimes.yaml'}: skipped: a FIFO, not a regular file\n")


def test_unreadable_and_undecodable_files_are_warnings_offline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/cli.md: the offline CLI warns about a file it cannot read or decode and answers from the
    rest (exit status of the answer); only a path that does not exist is fatal."""
    from ome_selector import validation

    latin1 = tmp_path / "latin1.yaml"
    latin1.write_bytes(b"apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: caf\xe9}\n")
    huge = tmp_path / "huge.yaml"
    huge.write_text("# " + "x" * 65536 + "\n")
    monkeypatch.setattr(validation, "MAX_FILE_BYTES", 65536)  # above every example file
    args = ["select", "-f", SEED_A_FILE, "--manifests", *example_paths(), str(latin1), str(huge), "-o", "name"]
    code, out, err = run(capsys, *args)
    assert (code, out) == (0, "clusterservingruntime.ome.io/llama-3-3-70b-hopper\n")
    assert err.splitlines()[-3:] == [
        f"warning: {latin1}: document 0: cannot read: not UTF-8: byte 0xe9 (line 3, column 21)",
        f"warning: {huge}: Too long: may not be more than 65536 bytes (a manifest file; this one has 65539)",
        "warning: 1 object rejected, 2 problems; answering from the rest (--strict makes this fatal)",
    ]
    code, out, err = run(capsys, *args, "--strict")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == "error: cannot load manifests (--strict):"
    code, out, err = run(capsys, *args[:-2], str(tmp_path / "missing.yaml"), "-o", "name")
    assert (code, out, err.splitlines()[-1]) == (2, "", f"  {tmp_path / 'missing.yaml'}: no such file or directory")
