"""``ome-selector effective``, ``history`` and ``sync --dry-run client`` offline (in process, the
page's examples written as manifests in tmp_path), their exit codes, and the CLI's 1,000-runtime
collection limit of ``explain`` and ``effective``.

Page: reference/kubectl-ome/runtime.md ("effective", "history", "sync", "Exit codes"; explain:
"With more, it fails with ``runtime candidate snapshot exceeds the CLI collection limit``").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers_docs import entry, isvc, model, runtime
from helpers_views import LIVE_REVISION, PINNED, REQUEST_ID, llama_chat, page_sources
from ome_selector.cli import app as cli

LIVE_HASH = "2b492efa"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def page(tmp_path: Path) -> tuple[str, str]:
    """(manifests file, llama-chat file) of the page's examples."""
    manifests = tmp_path / "manifests.yaml"
    manifests.write_text(yaml.safe_dump_all(page_sources()))
    chat = tmp_path / "llama-chat.yaml"
    chat.write_text(yaml.safe_dump(llama_chat()))
    return str(manifests), str(chat)


def test_effective_prints_live_active_and_service_rows(
    capsys: pytest.CaptureFixture[str], page: tuple[str, str]
) -> None:
    manifests, chat = page
    code, out, err = run(capsys, "effective", "-f", chat, "--manifests", manifests)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1:4] == [
        "Live      STATE                Available",
        "Live      RUNTIME              CSR/vllm-llama",
        f"Live      HASH                 {LIVE_HASH}",
    ]
    assert "Active    REVISION             cr-vllm-llama-1baf272d" in lines
    assert "Service   PIN                  ManagedPin/Resolved" in lines
    assert "Service   LIVE-RELATION        Different" in lines


def test_effective_reads_revisions_in_the_ome_namespace_given(
    capsys: pytest.CaptureFixture[str], page: tuple[str, str]
) -> None:
    manifests, chat = page
    code, out, _ = run(capsys, "effective", "-f", chat, "--manifests", manifests, "--ome-namespace", "ome-system")
    assert code == 0
    assert "Service   PIN                  ManagedPin/RevisionMissing" in out.splitlines()
    assert f"Service   ISSUE                RevisionNotFound({PINNED})" in out.splitlines()


def test_effective_json_is_the_report(capsys: pytest.CaptureFixture[str], page: tuple[str, str]) -> None:
    manifests, chat = page
    code, out, _ = run(capsys, "effective", "-f", chat, "--manifests", manifests, "-o", "json")
    report = json.loads(out)
    assert (code, report["apiVersion"], report["kind"]) == (0, "cli.ome.io/v1alpha1", "RuntimeEffectiveReport")
    assert report["service"]["pinState"] == "PIN_STATE_RESOLVED"
    assert report["active"]["revision"] == PINNED


def test_history_table_wide_and_yaml(capsys: pytest.CaptureFixture[str], page: tuple[str, str]) -> None:
    manifests, chat = page
    assert run(capsys, "history", "-f", chat, "--manifests", manifests) == (
        0,
        "WINDOW    REVISION         CREATED           ROLES   CHECK   LIVE    ISSUES\n"
        "C/B/1/1   cr...#1c63d586   26-09-20T14:30Z   H       OK      MATCH   R0/G0\n"
        "C/B/1/1   cr...#fd54e47d   26-09-01T08:00Z   ARH     OK      DIFF    R0/G0\n",
        "",
    )
    code, out, _ = run(capsys, "history", "-f", chat, "--manifests", manifests, "-o", "wide")
    assert code == 0 and f"   {LIVE_REVISION}   2026-09-20T14:30:00Z   {LIVE_HASH}   History   " in out
    code, out, _ = run(capsys, "history", "-f", chat, "--manifests", manifests, "-o", "yaml")
    report = yaml.safe_load(out)
    assert (code, report["apiVersion"], report["kind"]) == (0, "cli.ome.io/v1alpha1", "RuntimeHistoryReport")
    assert [r["name"] for r in report["revisions"]] == [LIVE_REVISION, PINNED]


def test_sync_dry_run_client(capsys: pytest.CaptureFixture[str], page: tuple[str, str]) -> None:
    """The preview goes to stderr, the ActionResult to stdout, status 0."""
    manifests, chat = page
    code, out, err = run(
        capsys,
        "sync",
        "-f",
        chat,
        "--manifests",
        manifests,
        "--dry-run",
        "client",
        "--yes",
        "--context",
        "prod-us-east",
    )
    assert code == 0
    assert err.splitlines()[:3] == [
        "ALPHA runtime sync preview (acceptance is not convergence)",
        "FIELD             VALUE",
        "Action            runtime sync",
    ]
    assert err.splitlines()[-1] == "Existing pause/freeze and lifecycle/rollout policies remain in effect."
    lines = out.splitlines()
    assert lines[0:6] == [
        "FIELD           VALUE",
        "action          runtime sync",
        "target          InferenceService/team-a/llama-chat",
        "dry-run         client",
        "accepted        No",
        "applied         No",
    ]
    assert lines[7:] == [
        f"revision-hash   {LIVE_HASH}",
        "message         Validated locally; no patch sent.",
        "follow-up       kubectl ome runtime effective llama-chat -n team-a --...",
        "hint            Use -o json or -o yaml for full values.",
    ]
    assert lines[6].startswith("request-id      ") and lines[6] != f"request-id      {REQUEST_ID}"


def test_sync_refusal_exits_1(capsys: pytest.CaptureFixture[str], page: tuple[str, str], tmp_path: Path) -> None:
    """runtime.md: "A refusal changes nothing and exits ``1``"; errors as ``error: <message>``."""
    manifests, _ = page
    doc = llama_chat()
    doc["metadata"]["annotations"] = {"ome.io/rollout-promote": "x"}
    chat = tmp_path / "promote.yaml"
    chat.write_text(yaml.safe_dump(doc))
    assert run(capsys, "sync", "-f", str(chat), "--manifests", manifests, "--dry-run", "client", "--yes") == (
        1,
        "",
        "error: action refused: a rollout promote or rollback mailbox is present\n",
    )


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--dry-run", "client"], "action not confirmed; noninteractive input requires --yes"),
        (["--yes"], "only --dry-run client is supported: the service plans the sync and sends no patch"),
        (["--dry-run", "server", "--yes"], "only --dry-run client is supported: the service plans the sync and sends no patch"),
    ],
)  # fmt: skip
def test_sync_errors_exit_1(
    capsys: pytest.CaptureFixture[str], page: tuple[str, str], flags: list[str], message: str
) -> None:
    manifests, chat = page
    assert run(capsys, "sync", "-f", chat, "--manifests", manifests, *flags) == (1, "", f"error: {message}\n")


def test_history_error_exits_1(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """runtime.md "Exit codes": "No ``runtime`` subcommand returns ``2``"."""
    code, out, err = run(capsys, "history", "-f", str(tmp_path / "missing.yaml"))
    assert (code, out) == (1, "")
    assert err.startswith("error: ")


@pytest.fixture
def crowded(tmp_path: Path) -> tuple[str, str]:
    """1,001 ClusterServingRuntimes that match llama-3-2-3b-instruct in llama-demo, and an
    InferenceService that names none."""
    manifests = tmp_path / "crowded.yaml"
    docs: list[Any] = [runtime(f"rt-{i:04d}", entry()) for i in range(1001)]
    manifests.write_text(yaml.safe_dump_all([*docs, model()]))
    auto = tmp_path / "auto.yaml"
    auto.write_text(yaml.safe_dump(isvc(name="auto")))
    return str(manifests), str(auto)


def test_explain_fails_beyond_the_collection_limit(
    capsys: pytest.CaptureFixture[str], crowded: tuple[str, str]
) -> None:
    manifests, auto = crowded
    assert run(capsys, "explain", "-f", auto, "--manifests", manifests) == (
        1,
        "",
        "error: runtime candidate snapshot exceeds the CLI collection limit\n",
    )
    assert run(capsys, "explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo", "--manifests", manifests)[
        2
    ] == ("error: runtime candidate snapshot exceeds the CLI collection limit\n")


def test_effective_live_view_unavailable_beyond_the_collection_limit(
    capsys: pytest.CaptureFixture[str], crowded: tuple[str, str]
) -> None:
    manifests, auto = crowded
    code, out, _ = run(capsys, "effective", "-f", auto, "--manifests", manifests)
    lines = out.splitlines()
    assert (code, lines[1:3]) == (0, ["Live      STATE           Unavailable", "Live      REASON          Unreadable"])
    assert lines[-2:] == ["Source    INHERITANCE     Unavailable", "Source    REASON          Unreadable"]


def test_explain_at_the_limit_answers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    manifests = tmp_path / "full.yaml"
    manifests.write_text(yaml.safe_dump_all([*(runtime(f"rt-{i:04d}", entry()) for i in range(1000)), model()]))
    auto = tmp_path / "auto.yaml"
    auto.write_text(yaml.safe_dump(isvc(name="auto")))
    code, out, err = run(capsys, "explain", "-f", str(auto), "--manifests", str(manifests))
    assert (code, err, len(out.splitlines())) == (0, "", 1001)


def sync_on_a_terminal(page: tuple[str, str], answer: bytes) -> tuple[int, str, str]:
    """``sync --dry-run client`` without ``--yes``, its stdin a terminal (a pty) that answers
    ``answer``: (status, stdout, stderr)."""
    import os
    import pty
    import subprocess
    import sys

    manifests, chat = page
    master, slave = pty.openpty()
    try:
        os.write(master, answer)
        done = subprocess.run(
            [sys.executable, "-m", "ome_selector.cli", "sync", "-f", chat, "--manifests", manifests,
             "--dry-run", "client"],
            stdin=slave, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    finally:
        os.close(slave)
        os.close(master)
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("answer", [b"y\n", b"yes\n"])
def test_sync_asks_on_a_terminal_and_goes_ahead_on_y(page: tuple[str, str], answer: bytes) -> None:
    """runtime.md, "How the action runs" step 3: the preview, then the question on stderr; ``y``
    or ``yes`` goes ahead (the ActionResult on stdout, status 0)."""
    code, out, err = sync_on_a_terminal(page, answer)
    assert (code, err.splitlines()[0], err.endswith("\nConfirm this exact action? [y/N] ")) == (
        0,
        "ALPHA runtime sync preview (acceptance is not convergence)",
        True,
    )
    assert out.splitlines()[0] == "FIELD           VALUE"


@pytest.mark.parametrize("answer", [b"n\n", b"Y\n", b"\n"])
def test_sync_on_a_terminal_refuses_any_other_answer(page: tuple[str, str], answer: bytes) -> None:
    """Anything but ``y`` or ``yes``: ``action not confirmed; noninteractive input requires --yes``,
    status 1, nothing on stdout."""
    code, out, err = sync_on_a_terminal(page, answer)
    assert (code, out, err.rsplit("Confirm this exact action? [y/N] ", 1)[1]) == (
        1,
        "",
        "error: action not confirmed; noninteractive input requires --yes\n",
    )
