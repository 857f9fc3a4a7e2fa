"""Signals when SIGINT is inherited as ignored (``nohup``, a background job of a shell): the
server still drains on SIGINT, and the test suite gives its children Ctrl-C back."""

from __future__ import annotations

import subprocess
import sys

from conftest import REPO_ROOT, ServerProcess, server_command

# Run ARGV with SIGINT ignored, as nohup or `cmd &` in a script would.
IGNORING_SIGINT = (
    "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])"
)


def test_the_server_drains_on_sigint_it_inherited_ignored() -> None:
    server = ServerProcess([sys.executable, "-c", IGNORING_SIGINT, *server_command()])
    try:
        server.address = server.wait_for_line(r"listening on (\S+)").group(1)
    finally:
        code = server.stop(sig=2, timeout=15)
    assert code == 0
    assert [line.split(" INFO ", 1)[1] for line in server.lines[-3:]] == [
        "ome_selector.server: draining: health NOT_SERVING, /readyz 503; serving 0.0s more, then in-flight calls get up to 5.0s",
        "ome_selector.server: shutting down, draining in-flight calls for up to 5.0s",
        "ome_selector.server: stopped",
    ]


def test_the_suite_restores_sigint_for_the_processes_it_starts() -> None:
    """A suite started with SIGINT ignored: after conftest is imported, a child Python has its
    KeyboardInterrupt handler again (without conftest it stays ignored)."""
    child = "import signal; print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)"
    script = (
        "import subprocess, sys\n"
        "if sys.argv[1] == 'conftest':\n"
        "    sys.path.insert(0, 'tests'); import conftest\n"
        f"print(subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, text=True).stdout, end='')\n"
    )
    outputs = [
        subprocess.run(
            [sys.executable, "-c", IGNORING_SIGINT, sys.executable, "-c", script, which],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO_ROOT,
        ).stdout
        for which in ("conftest", "plain")
    ]
    assert outputs == ["True\n", "False\n"]
