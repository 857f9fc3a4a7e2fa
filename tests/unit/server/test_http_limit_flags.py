"""The HTTP listeners' limits as serve flags and OME_SELECTOR_HTTP_* variables (docs/deploy.md,
Settings): defaults, flags over variables, and each bad value's error."""

from __future__ import annotations

import pytest
from ome_selector.cli.app import build_parser
from ome_selector.server.config import ServeOptions
from ome_selector.server.http_limits import HttpLimits
from ome_selector.server.options import SERVE_FLAGS, options_from_args

HTTP_FLAGS = {
    "--http-max-connections": "OME_SELECTOR_HTTP_MAX_CONNECTIONS",
    "--http-header-timeout": "OME_SELECTOR_HTTP_HEADER_TIMEOUT",
    "--http-idle-timeout": "OME_SELECTOR_HTTP_IDLE_TIMEOUT",
    "--http-backlog": "OME_SELECTOR_HTTP_BACKLOG",
    "--http-max-header-bytes": "OME_SELECTOR_HTTP_MAX_HEADER_BYTES",
}


def _options(argv: list[str], environ: dict[str, str] | None = None) -> ServeOptions:
    return ServeOptions(**options_from_args(build_parser().parse_args(["serve", *argv]), environ or {}))


def test_each_limit_is_a_flag_with_a_variable() -> None:
    assert {f.flag: f.env for f in SERVE_FLAGS if f.dest.startswith("http_") and f.dest != "http_listen"} == HTTP_FLAGS


def test_the_defaults_are_the_listeners_defaults() -> None:
    options = _options([])
    assert options.http_limits == HttpLimits() == HttpLimits(64, 5.0, 30.0, 1024, 16384)
    assert options.problems() == []


def test_flags_beat_variables() -> None:
    options = _options(
        ["--http-max-connections", "8", "--http-idle-timeout", "2.5"],
        {
            "OME_SELECTOR_HTTP_MAX_CONNECTIONS": "9",
            "OME_SELECTOR_HTTP_HEADER_TIMEOUT": "0.5",
            "OME_SELECTOR_HTTP_BACKLOG": "16",
            "OME_SELECTOR_HTTP_MAX_HEADER_BYTES": "2048",
        },
    )
    assert options.http_limits == HttpLimits(
        max_connections=8, header_timeout=0.5, idle_timeout=2.5, backlog=16, max_header_bytes=2048
    )
    assert options.problems() == []


@pytest.mark.parametrize(
    "flag, value, why",
    [
        ("--http-max-connections", "0", "must be a whole number, 1 or more: '0'"),
        ("--http-max-connections", "many", "must be a whole number, 1 or more: 'many'"),
        ("--http-header-timeout", "0", "must be more than 0 seconds: '0'"),
        ("--http-header-timeout", "soon", "not a number: 'soon'"),
        ("--http-idle-timeout", "-1", "must be 0 or more seconds: '-1'"),
        ("--http-idle-timeout", "inf", "must be 0 or more seconds: 'inf'"),
        ("--http-backlog", "1.5", "must be a whole number, 1 or more: '1.5'"),
        ("--http-max-header-bytes", "-5", "must be a whole number, 1 or more: '-5'"),
    ],
)
def test_bad_values(capsys: pytest.CaptureFixture[str], flag: str, value: str, why: str) -> None:
    """As a flag: argparse's usage error, status 2; as a variable: ``<VARIABLE>: <why>`` (which
    ``serve`` prints as ``error: ...`` with status 2)."""
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", flag, value])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"ome-selector serve: error: argument {flag}: {why}"
    args = build_parser().parse_args(["serve"])
    with pytest.raises(ValueError) as excinfo:
        options_from_args(args, {HTTP_FLAGS[flag]: value})
    assert str(excinfo.value) == f"{HTTP_FLAGS[flag]}: {why}"


def test_options_made_in_code_are_checked_too() -> None:
    options = ServeOptions(http_max_connections=0, http_header_timeout=0, http_idle_timeout=float("inf"))
    assert options.problems() == [
        "http_max_connections: must be 1 or more",
        "http_header_timeout: must be more than 0 seconds",
        "http_idle_timeout: must be more than 0 seconds",
    ]


def test_help_names_each_flag_its_variable_and_default(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--http-max-connections N open connections per HTTP listener (probes, metrics); one past that " in text
    for flag, default in (
        ("--http-max-connections", "64"),
        ("--http-header-timeout", "5"),
        ("--http-idle-timeout", "30"),
        ("--http-backlog", "1024"),
        ("--http-max-header-bytes", "16384"),
    ):
        assert f"(default {default}); env {HTTP_FLAGS[flag]}" in text
