"""kubectl's habits in ``ome-selector``: the ``--server`` URL hint, ``version``, "did you mean",
``Examples:`` in ``--help``, ``--no-headers``, one rule for bad flags, ``completion``,
``-o jsonpath=`` and ``-o custom-columns=``."""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

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
    "'validate-runtime', 'what-if', 'watch', 'tree', 'wait', 'completion', 'version'"
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


# --- Examples: in --help -------------------------------------------------------------------------

REPO = Path(__file__).resolve().parents[3]


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    [action] = [a for a in cli.build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def test_every_subcommand_help_ends_with_its_examples() -> None:
    for name, sub in _subparsers().items():
        examples = cli.EXAMPLES[name]
        assert examples, name
        assert sub.format_help().endswith("\nExamples:\n" + "".join(f"  {line}\n" for line in examples)), name


# Each example that needs no server, run from the checkout's root: its exit status and the first
# line it prints.
EXAMPLE_RUNS = {
    "ome-selector select -f server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml": (
        0,
        "Selected runtime: ClusterServingRuntime/llama-3-3-70b-hopper",
    ),
    "ome-selector select -f server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml --view full -o json": (
        0,
        "{",
    ),
    "ome-selector explain -f server/ome_selector/examples/inferenceservices/llama-3-2-3b.yaml": (
        0,
        "RUNTIME                                SCOPE        COMPATIBLE   PRIORITY   WEIGHT   SCORE   REASON",
    ),
    "ome-selector explain --model llama-3-2-3b-instruct -n llama-demo -o wide": (0, None),
    "ome-selector effective -f server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml": (0, None),
    "ome-selector history -f server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml -o wide": (0, None),
    "ome-selector admit -f server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml": (
        0,
        "inferenceservice.ome.io/llama-3-3-70b admitted (path AutoSelect)",
    ),
    "ome-selector reconcile -f server/ome_selector/examples/inferenceservices/llama-3-3-70b-named.yaml --has-runtime-ready-condition": (
        0,
        "Selected runtime: ClusterServingRuntime/srt-llama-3-3-70b-instruct",
    ),
    "ome-selector validate-runtime -f server/ome_selector/examples/llama-3-3-70b-hopper.yaml": (
        0,
        "clusterservingruntime.ome.io/llama-3-3-70b-hopper admitted",
    ),
    # 1: an InferenceService would change (as kubectl diff)
    "ome-selector what-if -f server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml --delete ClusterServingRuntime/llama-3-3-70b-hopper": (
        1,
        "INFERENCESERVICE   NAMESPACE    BEFORE   AFTER                    WHY",
    ),
    "ome-selector tree llama-3-3-70b-hopper": (0, "RUNTIME TREE"),
    "ome-selector tree llama-3-3-70b-hopper -o wide": (0, "RUNTIME TREE"),
    "ome-selector version": (0, None),
}


def test_the_examples_without_a_server_are_the_ones_run() -> None:
    offline = [
        line
        for name, lines in cli.EXAMPLES.items()
        if name not in ("serve", "completion")  # a server; shell lines
        for line in lines
        if "--server" not in line
    ]
    assert offline == list(EXAMPLE_RUNS)


@pytest.mark.parametrize("line", list(EXAMPLE_RUNS))
def test_an_example_runs_as_written(
    line: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    code, out, err = run(capsys, *shlex.split(line)[1:])
    status, first = EXAMPLE_RUNS[line]
    assert code == status, err
    assert "error:" not in err
    assert out
    if first is not None:
        assert out.splitlines()[0] == first


# --- --no-headers --------------------------------------------------------------------------------

_FORMAT_MISMATCH = (
    "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in supported formats: "
    "framework version mismatch (model=4.45.0.dev0, runtime=4.47.0.dev0)"
)


def test_no_headers_leaves_out_the_header_line_and_sizes_columns_by_the_rows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    isvc = "server/ome_selector/examples/inferenceservices/llama-3-2-3b.yaml"
    code, out, err = run(capsys, "explain", "-f", isvc, "--no-headers")
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "team-llama                             Namespaced   Yes   1   2   2   -",
        "vllm-llama                             Cluster      Yes   2   6   6   -",
        "srt-llama-small                        Cluster      Yes   3   6   6   -",
        "srt-llama-large                        Cluster      Yes   3   6   6   -",
        f"llama-3-3-70b-hopper                   Cluster      No    -   -   -   {_FORMAT_MISMATCH}",
        f"srt-llama-3-3-70b-instruct             Cluster      No    -   -   -   {_FORMAT_MISMATCH}",
        f"srt-llama-3-3-70b-instruct-multinode   Cluster      No    -   -   -   {_FORMAT_MISMATCH}",
    ]
    # without it, the same rows under the header
    code, out, err = run(capsys, "explain", "-f", isvc)
    assert out.splitlines()[0] == (
        "RUNTIME                                SCOPE        COMPATIBLE   PRIORITY   WEIGHT   SCORE   REASON"
    )


def test_no_headers_in_a_report_with_several_tables(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """select keeps its report lines and drops the Candidates table's header."""
    monkeypatch.chdir(REPO)
    code, out, err = run(
        capsys, "select", "-f", "server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml", "--no-headers"
    )
    assert (code, err) == (0, "")
    assert out.split("\n\n")[1].splitlines() == ["Candidates:", "1   llama-3-3-70b-hopper   Cluster   2   0   15B   -"]
    code, out, err = run(
        capsys, "history", "-f", "server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml", "--no-headers"
    )
    assert (code, out, err) == (0, "C/B/1/1   -   -   -   -   -   R0/G0\n", "")


def test_format_table_without_headers() -> None:
    from ome_selector.cli import reports

    with reports.without_headers():
        assert reports.format_table(("A", "LONG-HEADER"), [("x", "y"), ("xyz", "w")]) == "x     y\nxyz   w"
        assert reports.format_table(("A", "B"), []) == ""
        assert not reports.headers_shown()
    assert reports.headers_shown()
    assert reports.format_table(("A", "LONG-HEADER"), [("x", "y")]) == "A   LONG-HEADER\nx   y"


# --- one rule for an unknown flag ----------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["select", "-f", "x", "--foo"],
        ["effective", "-f", "x", "--foo=3", "--bar"],
        ["explain", "--model", "m", "--foo"],
        ["tree", "x", "--foo"],
        ["watch", "--server", "a", "--foo", "value"],
        ["what-if", "--foo"],
        ["serve", "--foo"],
        ["version", "--foo"],
    ],
)
def test_an_unknown_flag_prints_the_subcommand_usage_and_exits_1(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv)
    usage = _subparsers()[argv[0]].format_usage()
    assert (code, out, err) == (1, "", f"{usage}error: unknown flag: --foo\n")
    assert usage.startswith(f"usage: ome-selector {argv[0]} ")


# --- completion ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_argcompletes_script(capsys: pytest.CaptureFixture[str], shell: str) -> None:
    import argcomplete

    assert run(capsys, "completion", shell) == (0, argcomplete.shellcode(["ome-selector"], shell=shell), "")


def test_completion_needs_a_known_shell(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "completion", "tcsh")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "ome-selector completion: error: argument shell: invalid choice: 'tcsh' (choose from 'bash', 'zsh', 'fish')"
    )


# --- -o jsonpath= and -o custom-columns= ---------------------------------------------------------

SEED = "server/ome_selector/examples/inferenceservices/llama-3-3-70b.yaml"
SMALL = "server/ome_selector/examples/inferenceservices/llama-3-2-3b.yaml"
EXPLAINED = (
    "team-llama vllm-llama srt-llama-small srt-llama-large llama-3-3-70b-hopper "
    "srt-llama-3-3-70b-instruct srt-llama-3-3-70b-instruct-multinode"
)


def test_jsonpath_prints_the_template_filled_in(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    assert run(capsys, "select", "-f", SEED, "-o", 'jsonpath={.selection.runtime.name}{"\\n"}') == (
        0,
        "llama-3-3-70b-hopper\n",
        "",
    )
    assert run(capsys, "select", "-f", SEED, "-o", "jsonpath={.selection.runtime.name}") == (
        0,
        "llama-3-3-70b-hopper",
        "",
    )
    assert run(capsys, "explain", "-f", SMALL, "-o", "jsonpath=runtimes: {.runtimes[*].runtime.name}\\n") == (
        0,
        f"runtimes: {EXPLAINED}\n",
        "",
    )


def test_jsonpath_range_repeats_its_body_for_each_match(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """kubectl's {range EXPR}...{end}: the body once per match, its expressions relative to the
    match, literal text and quoted literals between them."""
    monkeypatch.chdir(REPO)
    template = 'jsonpath={range .runtimes[*]}{.runtime.name}{"\\t"}{.verdict}{"\\n"}{end}'
    assert run(capsys, "explain", "-f", SMALL, "-o", template) == (
        0,
        "team-llama\tVERDICT_CANDIDATE\n"
        "vllm-llama\tVERDICT_CANDIDATE\n"
        "srt-llama-small\tVERDICT_CANDIDATE\n"
        "srt-llama-large\tVERDICT_CANDIDATE\n"
        "llama-3-3-70b-hopper\tVERDICT_EXCLUDED\n"
        "srt-llama-3-3-70b-instruct\tVERDICT_EXCLUDED\n"
        "srt-llama-3-3-70b-instruct-multinode\tVERDICT_EXCLUDED\n",
        "",
    )
    # Text before, between and after; a filter in the range; nested ranges; {@} is the match.
    template = (
        "jsonpath=model {.model.name}: [{range .runtimes[?(@.rank<=2)]}#{.rank}={.runtime.name} {end}] "
        "of {.totalSize}\\n"
    )
    assert run(capsys, "explain", "-f", SMALL, "-o", template) == (
        0,
        "model llama-3-2-3b-instruct: [#1=team-llama #2=vllm-llama ] of 7\n",
        "",
    )
    template = "jsonpath={range .runtimes[0:2]}{range .runtime}{@}{end};{end}"
    assert run(capsys, "explain", "-f", SMALL, "-o", template) == (
        0,
        '{"kind":"RUNTIME_KIND_SERVING_RUNTIME","namespace":"llama-demo","name":"team-llama"};'
        '{"kind":"RUNTIME_KIND_CLUSTER_SERVING_RUNTIME","name":"vllm-llama"};',
        "",
    )
    # A range with no match prints nothing of its body; one left open runs to the end (kubectl).
    assert run(capsys, "explain", "-f", SMALL, "-o", "jsonpath=[{range .nope[*]}x{end}]") == (0, "[]", "")
    assert run(capsys, "explain", "-f", SMALL, "-o", "jsonpath={range .runtimes[5:]}{.runtime.name},") == (
        0,
        "srt-llama-3-3-70b-instruct,srt-llama-3-3-70b-instruct-multinode,",
        "",
    )
    # A "}" inside a quoted literal does not close the action.
    assert run(capsys, "select", "-f", SEED, "-o", 'jsonpath={"}{"}{.selection.runtime.name}{"}"}') == (
        0,
        "}{llama-3-3-70b-hopper}",
        "",
    )


def test_custom_columns_prints_a_table_of_the_expressions(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(REPO)
    spec = "custom-columns=RUNTIME:.selection.runtime.name,SCORE:.selection.score,MISSING:.nope"
    assert run(capsys, "select", "-f", SEED, "-o", spec) == (
        0,
        "RUNTIME                SCORE   MISSING\nllama-3-3-70b-hopper   2       <none>\n",
        "",
    )
    assert run(capsys, "select", "-f", SEED, "-o", spec, "--no-headers") == (
        0,
        "llama-3-3-70b-hopper   2   <none>\n",
        "",
    )


def test_bad_templates_are_input_errors(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    assert run(capsys, "select", "-f", SEED, "-o", "custom-columns=X") == (
        2,
        "",
        "error: custom-columns format: expected <header>:<json-path-expr>, got 'X'\n",
    )
    # kubectl's texts: a "{" without its "}", an {end} outside any {range}.
    assert run(capsys, "explain", "-f", SMALL, "-o", "jsonpath={range .runtimes[*]}{.runtime.name") == (
        1,
        "",
        "error: error parsing jsonpath {range .runtimes[*]}{.runtime.name, unclosed action\n",
    )
    assert run(capsys, "explain", "-f", SMALL, "-o", "jsonpath={range .runtimes[*]}{end}{end}") == (
        1,
        "",
        'error: error executing jsonpath "{range .runtimes[*]}{end}{end}": not in range, nothing to end\n',
    )
    assert run(capsys, "select", "-f", SEED, "-o", "jsonpath={.selection.runtime.name}{end}") == (
        2,
        "",
        'error: error executing jsonpath "{.selection.runtime.name}{end}": not in range, nothing to end\n',
    )
    code, out, err = run(capsys, "select", "-f", SEED, "-o", "jsonpath={.a[}")
    assert (code, out) == (2, "")
    assert err.startswith("error: error parsing jsonpath '.a[': ")


def test_templates_only_where_json_is(capsys: pytest.CaptureFixture[str]) -> None:
    """Every command with -o json takes them; the fixed formats' error is unchanged."""
    code, out, err = run(capsys, "select", "-f", SEED, "-o", "xml")
    assert (code, out) == (2, "")
    assert err.splitlines()[-1] == (
        "ome-selector select: error: argument -o/--output: invalid choice: 'xml' "
        "(choose from 'table', 'wide', 'json', 'yaml', 'name')"
    )
