"""kubectl's habits in ``ome-selector``: the ``--server`` URL hint, ``version``, "did you mean",
``Examples:`` in ``--help``, ``--no-headers``, one rule for bad flags, ``completion``,
``-o jsonpath=`` and ``-o custom-columns=``."""

from __future__ import annotations

import pytest
from helpers_docs import SEED_A_FILE
from ome_selector.cli import app as cli


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = cli.main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- --server with a URL -------------------------------------------------------------------------


def test_server_url_gets_a_hint_before_any_connection(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "select", "-f", SEED_A_FILE, "--server", "http://127.0.0.1:1/x")
    assert (code, out) == (2, "")
    assert err == (
        "error: --server http://127.0.0.1:1/x: the server takes host:port or unix:/path, not a URL "
        "(try --server 127.0.0.1:1)\n"
    )


def test_server_url_hint_keeps_the_command_error_status(capsys: pytest.CaptureFixture[str]) -> None:
    """explain is a kubectl-ome command: its errors exit 1."""
    code, out, err = run(capsys, "explain", "--model", "m", "--server", "HTTPS://example.com")
    assert (code, out) == (1, "")
    assert err == (
        "error: --server HTTPS://example.com: the server takes host:port or unix:/path, not a URL "
        "(try --server example.com)\n"
    )


# --- version -------------------------------------------------------------------------------------


def test_version_subcommand_prints_what_version_flags_print(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    expected = f"ome-selector {metadata.version('ome-selector')}\n"
    assert run(capsys, "version") == (0, expected, "")
    assert run(capsys, "--version") == (0, expected, "")
    assert run(capsys, "serve", "--version") == (0, expected, "")


# --- did you mean --------------------------------------------------------------------------------

_CHOICES = (
    "'serve', 'select', 'explain', 'effective', 'history', 'sync', 'admit', 'reconcile', "
    "'validate-runtime', 'what-if', 'watch', 'tree', 'version'"
)


def test_an_unknown_subcommand_names_the_closest(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "selct") == (
        2,
        "",
        "usage: ome-selector [-h] [--version] COMMAND ...\n"
        f"ome-selector: error: argument COMMAND: invalid choice: 'selct' (choose from {_CHOICES})\n"
        "\n"
        "Did you mean this?\n"
        "\tselect\n",
    )


def test_an_unknown_subcommand_far_from_any_has_no_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "zzz") == (
        2,
        "",
        "usage: ome-selector [-h] [--version] COMMAND ...\n"
        f"ome-selector: error: argument COMMAND: invalid choice: 'zzz' (choose from {_CHOICES})\n",
    )
