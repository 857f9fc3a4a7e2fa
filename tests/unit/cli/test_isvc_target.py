"""kubectl-ome's way of naming the InferenceService (reference/kubectl-ome/runtime.md): ``explain
--isvc NAME``, ``effective`` / ``history`` / ``sync`` INFERENCESERVICE (or ``--isvc``), in ``-n``,
read from ``--manifests`` (offline; tests/e2e/test_wait_e2e.py reads it from ``--server``'s cache),
and the page's texts: ``exactly one of --model or --isvc is required``, the API server's
``inferenceservices.ome.io "<name>" not found``, ``get InferenceService: ...``, ``InferenceService
name "<name>" is invalid: ...`` and sync's ``required Kubernetes API request failed; check access
and connectivity``. Exit status 1 for every error ("Exit codes")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from helpers_views import llama_chat, page_sources
from ome_selector.cli import app

NOT_FOUND = 'inferenceservices.ome.io "llama-nope" not found'


@pytest.fixture
def manifests(tmp_path: Path) -> str:
    """The page's cluster: vllm-base, vllm-llama, the model, the two revisions, llama-chat in team-a."""
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([*page_sources(), llama_chat()]))
    return str(path)


def masked(answer: tuple[int, str, str]) -> tuple[int, str, str]:
    """``answer`` with UUIDs replaced (sync's request ID is new on each run)."""
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    return answer[0], uuid.sub("<uuid>", answer[1]), uuid.sub("<uuid>", answer[2])


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = app.main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def by_file(tmp_path: Path, capsys: pytest.CaptureFixture[str], manifests: str, *argv: str) -> tuple[int, str, str]:
    isvc_file = tmp_path / "llama-chat.yaml"
    isvc_file.write_text(yaml.safe_dump(llama_chat()))
    return run(capsys, *argv, "-f", str(isvc_file), "--manifests", manifests)


@pytest.mark.parametrize(
    "argv",
    [
        ["effective", "llama-chat", "-n", "team-a"],
        ["effective", "--isvc", "llama-chat", "-n", "team-a"],
        ["history", "llama-chat", "-n", "team-a", "-o", "wide"],
        ["sync", "llama-chat", "-n", "team-a", "--dry-run", "client", "--yes", "--context", "prod-us-east"],
    ],
    ids=["effective NAME", "effective --isvc", "history NAME", "sync NAME"],
)
def test_a_name_answers_as_the_file_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], manifests: str, argv: list[str]
) -> None:
    """The cached llama-chat, named, gets the answer its manifest gets with -f."""
    named = run(capsys, *argv, "--manifests", manifests)
    command, options = argv[0], argv[2 if argv[1] != "--isvc" else 3 :]
    options = [o for o in options if o not in ("-n", "team-a")]
    assert named[0] == 0, named[2]
    assert masked(named) == masked(by_file(tmp_path, capsys, manifests, command, *options))


def test_the_effective_page_example_by_name(capsys: pytest.CaptureFixture[str], manifests: str) -> None:
    """``kubectl ome runtime effective llama-chat -n team-a``: pinned to the page's revision, drifted."""
    status, out, _ = run(capsys, "effective", "llama-chat", "-n", "team-a", "--manifests", manifests)
    rows = [line.split(None, 2) for line in out.splitlines()[1:]]
    assert status == 0
    assert ["Active", "REVISION", "cr-vllm-llama-1baf272d"] in rows
    assert ["Service", "PIN", "ManagedPin/Resolved"] in rows
    assert ["Service", "DRIFT", "ReportedTrue/RevisionMismatch"] in rows


def test_explain_isvc(tmp_path: Path, capsys: pytest.CaptureFixture[str], manifests: str) -> None:
    """``kubectl ome runtime explain --isvc llama-chat -n team-a``: the same table as -f, and the
    note for an explicit spec.runtime on stderr."""
    named = run(capsys, "explain", "--isvc", "llama-chat", "-n", "team-a", "--manifests", manifests)
    assert named[0] == 0
    assert named[2].splitlines()[-1] == "Note: spec.runtime is explicit; automatic selection below is hypothetical."
    assert named == by_file(tmp_path, capsys, manifests, "explain")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["explain", "--isvc", "llama-nope", "-n", "team-a"], NOT_FOUND),
        (["explain", "--isvc", "llama-chat"], 'inferenceservices.ome.io "llama-chat" not found'),  # -n default
        (["effective", "llama-nope", "-n", "team-a"], f"get InferenceService: {NOT_FOUND}"),
        (["history", "llama-nope", "-n", "team-a"], f"get InferenceService: {NOT_FOUND}"),
        (
            ["sync", "llama-nope", "-n", "team-a", "--dry-run", "client", "--yes"],
            "required Kubernetes API request failed; check access and connectivity",
        ),
    ],
)
def test_not_found(capsys: pytest.CaptureFixture[str], manifests: str, argv: list[str], message: str) -> None:
    assert run(capsys, *argv, "--manifests", manifests) == (1, "", f"error: {message}\n")


@pytest.mark.parametrize("command", ["effective", "history"])
def test_an_invalid_name(capsys: pytest.CaptureFixture[str], manifests: str, command: str) -> None:
    status, out, err = run(capsys, command, "Llama_Chat", "-n", "team-a", "--manifests", manifests)
    assert (status, out) == (1, "")
    assert err.startswith('error: InferenceService name "Llama_Chat" is invalid: a lowercase RFC 1123 subdomain')


@pytest.mark.parametrize(
    "argv",
    [
        ["explain"],
        ["explain", "--model", "m", "--isvc", "llama-chat"],
        ["explain", "--isvc", "llama-chat", "-f", "x.yaml"],
    ],
)
def test_explain_needs_exactly_one_of_model_and_isvc(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """runtime.md, explain "Flags": "Give exactly one of --model and --isvc, or the command fails with"."""
    assert run(capsys, *argv) == (1, "", "error: exactly one of --model or --isvc is required\n")


@pytest.mark.parametrize(
    "argv",
    [["effective"], ["history"], ["sync", "--dry-run", "client", "--yes"], ["effective", "a", "--isvc", "b"]],
)
def test_one_inferenceservice_is_required(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """As a missing required flag: the usage, then the error, status 1."""
    with pytest.raises(SystemExit) as exited:
        app.main(argv)
    out, err = capsys.readouterr()
    assert (exited.value.code, out) == (1, "")
    assert err.startswith(f"usage: ome-selector {argv[0]} ")
    assert err.endswith("\nerror: exactly one of INFERENCESERVICE, --isvc or -f/--filename is required\n")


def test_history_gc_by_name(capsys: pytest.CaptureFixture[str], manifests: str) -> None:
    """``history --gc llama-chat -n team-a``: the revisions of vllm-llama, the reported one kept."""
    status, out, _ = run(
        capsys,
        "history",
        "--gc",
        "llama-chat",
        "-n",
        "team-a",
        "--now",
        "2026-10-01T00:00:00Z",
        "--manifests",
        manifests,
    )
    rows = [line.split() for line in out.splitlines()[1:]]
    assert status == 0
    assert [(r[0], r[5]) for r in rows] == [
        ("cr-vllm-llama-3c18f4a0", "Newest"),
        ("cr-vllm-llama-1baf272d", "Reported"),
    ]


# --- explain --with-effective (runtime.md, explain "Effective context") ----------------------------


def test_with_effective_prints_the_pages_context(capsys: pytest.CaptureFixture[str], manifests: str) -> None:
    """``kubectl ome runtime explain --isvc llama-chat -n team-a --with-effective``: the table, a
    blank line, the heading, then the page's rows (with this service's hashes, and our
    ENGINE-ACCELERATOR row)."""
    status, out, err = run(
        capsys, "explain", "--isvc", "llama-chat", "-n", "team-a", "--with-effective", "--manifests", manifests
    )
    table, context = out.split("\n\n")
    assert status == 0
    assert table.splitlines()[1].split()[:3] == ["vllm-llama", "Cluster", "Yes"]
    assert err == "Note: spec.runtime is explicit; automatic selection below is hypothetical.\n"
    assert [line.split(None, 2) for line in context.splitlines()] == [
        ["Effective", "context", "(separate observation; selector verdict unchanged):"],
        ["SCOPE", "FIELD", "VALUE"],
        ["Service", "SELECTION", "Explicit"],
        ["Service", "SOURCE", "CSR/vllm-llama"],
        ["Source", "INHERITANCE", "Observed"],
        ["Source", "ROOT-FIRST", "CSR/vllm-base"],
        ["Source", "ROOT-FIRST", "CSR/vllm-llama"],
        ["Service", "CAVEAT", "Independent snapshot; not rollout convergence"],
        ["Live", "STATE", "Available"],
        ["Live", "RUNTIME", "CSR/vllm-llama"],
        ["Live", "HASH", "2b492efa"],
        ["Live", "ENGINE", "RawDeployment (Default)"],
        ["Live", "ENGINE-ACCELERATOR", "- (RuntimeListsNone)"],
        ["Active", "STATE", "Available"],
        ["Active", "RUNTIME", "CSR/vllm-llama"],
        ["Active", "REVISION", "cr-vllm-llama-1baf272d"],
        ["Active", "HASH", "60d7abfc"],
        ["Active", "ENGINE", "RawDeployment (Default)"],
        ["Service", "PIN", "ManagedPin/Resolved"],
        ["Service", "SYNC", "Absent"],
        ["Service", "STATUS", "Current"],
        ["Service", "DRIFT", "ReportedTrue/RevisionMismatch"],
        ["Service", "LIVE-RELATION", "Different"],
    ]


def test_with_effective_when_the_context_cannot_be_collected(
    capsys: pytest.CaptureFixture[str], manifests: str
) -> None:
    """ "If the CLI can't collect the context, it prints only two rows ... and the command still exits 0"."""
    status, out, _ = run(
        capsys,
        "explain",
        "--isvc",
        "llama-chat",
        "-n",
        "team-a",
        "--with-effective",
        "--ome-namespace",
        "Not_A_Namespace",
        "--manifests",
        manifests,
    )
    assert status == 0
    assert [line.split(None, 2) for line in out.split("\n\n")[1].splitlines()[1:]] == [
        ["SCOPE", "FIELD", "VALUE"],
        ["Service", "EVIDENCE", "Unavailable"],
        ["Service", "CAVEAT", "Selector verdict above is unchanged"],
    ]


def test_with_effective_and_no_runtimes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ "When there are no runtimes at all, --with-effective writes ``No serving runtimes found for
    selector.`` to stderr instead, and still prints the context"."""
    path = tmp_path / "bare.yaml"
    path.write_text(yaml.safe_dump_all([page_sources()[2], llama_chat()]))  # the model and llama-chat only
    status, out, err = run(
        capsys, "explain", "--isvc", "llama-chat", "-n", "team-a", "--with-effective", "--manifests", str(path)
    )
    assert (status, err.splitlines()[-1]) == (0, "No serving runtimes found for selector.")
    assert out.splitlines()[0] == "Effective context (separate observation; selector verdict unchanged):"
    assert ["Live", "REASON", "NotFound"] in [line.split(None, 2) for line in out.splitlines()]


@pytest.mark.parametrize("argv", [["--model", "llama-3-2-3b-instruct"], ["-f", "x.yaml"]])
def test_with_effective_requires_isvc(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert run(capsys, "explain", *argv, "--with-effective") == (1, "", "error: --with-effective requires --isvc\n")
