"""``ome-selector``: run the server, or ask which runtime an InferenceService gets.

    ome-selector serve            [--listen ADDR] [--manifests PATH ...] [--log-format text|json] [--grace S]
    ome-selector select           -f ISVC.yaml [--view basic|full]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector explain          (-f ISVC.yaml | --isvc NAME [--with-effective] | --model NAME) [-n NAMESPACE]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector effective        (-f ISVC.yaml | INFERENCESERVICE | --isvc NAME) [-n NAMESPACE] [--ome-namespace NS]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector history          (-f ISVC.yaml | INFERENCESERVICE | --isvc NAME) [-n NAMESPACE] [--ome-namespace NS]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector history          --gc [-f ISVC.yaml | INFERENCESERVICE] [--keep-newest N]
                                  [--grace-period D] [--now TIME]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector sync             (-f ISVC.yaml | INFERENCESERVICE | --isvc NAME) --dry-run client --yes
                                  [--context CTX] [--ome-namespace NS]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector admit            -f ISVC.yaml [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector reconcile        -f ISVC.yaml [--has-runtime-ready-condition]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector validate-runtime -f RUNTIME.yaml [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector what-if          [-f OBJECTS.yaml] [--delete KIND/[NS/]NAME ...] [-n NAMESPACE]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o table|wide|json|yaml]
    ome-selector watch            --server ADDR [-n NAMESPACE] [-l SELECTOR] [-o table|wide|json]
    ome-selector wait             NAME [-n NAMESPACE] --for=runtime-sync=acknowledged --request-id=ID
                                  [--timeout DURATION] --server ADDR
    ome-selector completion       bash|zsh|fish
    ome-selector version
    ome-selector tree             RUNTIME [--kind KIND] [-n NAMESPACE] [--show-unattributed-users]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o table|wide|json|yaml]

FORMAT is ``table`` (default), ``wide``, ``json``, ``yaml`` or ``name`` for every query command
but ``what-if``, ``watch`` and ``tree`` (the formats shown).
``-f`` answers every InferenceService of the file, in file order (``validate-runtime``: the first
runtime). Offline, a manifest object the loader rejects is named on stderr and left out; with
``--strict`` any rejected object (or unreadable path) is fatal, exit status 2.

Every command but ``serve`` works offline by default: it loads ``--manifests`` (default: the
embedded example catalog) into an in-process cache and runs the same code the server runs. With
``--server`` it asks a running server instead.

Exit status (with several InferenceServices in ``-f``, the highest of theirs): 0 on success: a
runtime is selected (``explain``: at least one runtime is a candidate, or there are no runtimes
at all; ``effective``: the Live view is Available;
``admit`` / ``validate-runtime``: the webhook admits; ``reconcile``: a runtime is resolved and the
reconcile does not requeue). 1 when nothing is selected, the view is Unavailable, the webhook
denies, or the reconcile fails. 2 on a usage or input error (bad flags but an unknown one,
a missing or unreadable manifest path, with ``--strict`` any rejected manifest object, a bad ``-f``
file, an object the service rejects, an unreachable server). Errors go to stderr as
``error: <message>``; no traceback. An unknown flag, on every command, is kubectl's: the
subcommand's usage, ``error: unknown flag: --foo``, status 1. (``kubectl ome runtime`` itself,
reference/kubectl-ome/runtime.md
"Exit codes", returns 1 for every error and never 2; ``explain`` with no runtimes at all exits 0
as it does there.) ``what-if``: 0 when no InferenceService would change, 1 when some would (as
``kubectl diff``), 2 on an error. ``watch`` prints each event as it comes until the server ends
the stream (0); a failed stream is 1, Ctrl-C 130. The commands of kubectl-ome's page exit 1 for
an error (their ``error_status``); ``tree`` (``plain_errors``) for bad flags too, never 2,
printing the service's message alone.

This module is the entry point: the parser, built from ``commands.COMMANDS`` (one row per query
command: what it reads, its request, its RPC, its renderer and exit-status rule), ``main`` and
the exit codes. The formatters are in ``rendering``; ``serve``'s flags in ``serve_cli``.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import sys
from typing import Any, Callable, NoReturn, Sequence, TextIO

from google.protobuf.message import Message

from ome_selector.cli import rendering, tables, templates
from ome_selector.cli.asking import asker
from ome_selector.cli.commands import COMMANDS, Command
from ome_selector.cli.sources import OUTPUT_FORMATS, UsageError

EXIT_SELECTED = 0
EXIT_NONE = 1
EXIT_ERROR = 2
# An unknown flag on any command, as kubectl (and reference/kubectl-ome/runtime.md "Exit codes":
# 1 "for an invalid name or flag"): the subcommand's usage, then ``error: unknown flag: --foo``.
EXIT_UNKNOWN_FLAG = 1

__all__ = [
    "EXIT_ERROR",
    "EXIT_NONE",
    "EXIT_SELECTED",
    "OUTPUT_FORMATS",
    "UsageError",
    "build_parser",
    "main",
]


# --- argument parsing --------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors exit with ``error_status`` (argparse's 2 by default);
    a parser of another status prints its errors as ``error: <message>`` after the usage, as
    ``kubectl ome runtime`` does."""

    error_status = EXIT_ERROR

    def error(self, message: str) -> NoReturn:
        if self.error_status == EXIT_ERROR:
            super().error(message)
        self.print_usage(sys.stderr)
        self.exit(self.error_status, f"error: {message}\n")


class _TopParser(argparse.ArgumentParser):
    """The top-level parser: an unknown subcommand's error (argparse's, status 2) ends with the
    closest subcommand names (``difflib.get_close_matches``), as kubectl's "Did you mean this?"."""

    def error(self, message: str) -> NoReturn:
        match = _INVALID_CHOICE.match(message)
        if match:
            names = [a for a in self._actions if isinstance(a, argparse._SubParsersAction)][0].choices
            close = difflib.get_close_matches(match.group(1), list(names), n=3, cutoff=0.6)
            if close:
                message += "\n\nDid you mean this?\n" + "".join(f"\t{name}\n" for name in close)
                message = message.rstrip("\n")
        super().error(message)


_INVALID_CHOICE = re.compile(r"argument COMMAND: invalid choice: '([^']*)'")


def build_parser() -> argparse.ArgumentParser:
    """The ``ome-selector`` argument parser: ``serve`` (``serve_cli``), then one subcommand per
    ``commands.COMMANDS`` row, in table order. A subcommand's parser exits with 2 on bad flags,
    or with its command's ``error_status`` when it has ``plain_errors`` (1 for ``tree``)."""
    from ome_selector.server.options import add_serve_arguments, version

    parser = _TopParser(
        prog="ome-selector",
        description="Select the serving runtime for OME InferenceServices, as OME v1.3 documents it.",
    )
    parser.add_argument("--version", action="version", version=f"ome-selector {version()}")
    subcommands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    subcommands.required = True

    serve = subcommands.add_parser(
        "serve",
        help="run the gRPC server",
        description="Run the gRPC server. Every flag can also be set by its OME_SELECTOR_* environment variable.",
        epilog=_epilog("serve"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_serve_arguments(serve)
    for command in COMMANDS.values():
        _add_command(subcommands, command)
    from ome_selector.cli import wait

    wait.add_parser(subcommands, _Parser, _epilog("wait"))
    completion = subcommands.add_parser(
        "completion",
        help="print the shell completion script (bash, zsh or fish)",
        description="Print the completion script of ome-selector for a shell (argcomplete's); load it in\n"
        "the shell's startup file.",
        epilog=_epilog("completion"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    completion.add_argument("shell", choices=COMPLETION_SHELLS, help="the shell: %(choices)s")
    subcommands.add_parser(
        "version",
        help="print the ome-selector version",
        description="Print the ome-selector version (the installed package's), as --version does.",
        epilog=_epilog("version"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


def _add_command(subcommands: argparse._SubParsersAction[_Parser], command: Command) -> None:
    """The subparser of one command: what its source reads (``-f``, ``--model``), its own flags,
    then the flags every query command has."""
    sub = subcommands.add_parser(
        command.name,
        help=command.summary,
        description=command.help,
        epilog=_epilog(command.name),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.error_status = command.error_status if command.plain_errors else EXIT_ERROR
    for option in (*command.source.flags, *command.flags):
        sub.add_argument(*option.names, **option.options)
    if command.offline:
        source = sub.add_mutually_exclusive_group()
        source.add_argument(
            "--manifests",
            nargs="+",
            metavar="PATH",
            help="answer offline from these YAML files or folders (default: the embedded examples)",
        )
        source.add_argument("--server", metavar="ADDR", help="ask a running ome-selector server instead")
        sub.add_argument(
            "--strict",
            action="store_true",
            help="with --manifests (or the embedded examples): fail (status 2) when any manifest object "
            "is rejected or any path cannot be read, instead of answering from the rest",
        )
    else:
        sub.add_argument("--server", metavar="ADDR", required=True, help="the running ome-selector server to follow")
    sub.add_argument("-n", "--namespace", default=command.source.namespace_default, help=command.source.namespace_help)
    sub.add_argument(
        "-o",
        "--output",
        choices=templates.Formats(command.outputs) if "json" in command.outputs else command.outputs,
        default="table",
        help=", ".join(_OUTPUT_HELP[output].format(wide=command.wide_help) for output in command.outputs)
        + (
            ", jsonpath=TEMPLATE, custom-columns=HEADER:EXPR[,...] (kubectl's syntax, over the -o json document)"
            if "json" in command.outputs
            else ""
        ),
    )
    sub.add_argument(
        "--no-headers",
        action="store_true",
        help="-o table and wide: print the tables without their column header lines",
    )
    if command.offline:
        sub.add_argument(
            "--timeout",
            type=_non_negative_float,
            default=10.0,
            metavar="SECONDS",
            help="deadline per call with --server (default 10)",
        )
        sub.add_argument("-v", "--verbose", action="store_true", help="also list the documents the loader skipped")


# The ``Examples:`` epilog of each subcommand's --help: commands that run as written from a
# checkout's root against the embedded example catalog (server/ome_selector/examples), or name
# a server (--server) for what only a server answers.
_EX = "server/ome_selector/examples"
EXAMPLES: dict[str, tuple[str, ...]] = {
    "serve": (
        "ome-selector serve --listen 127.0.0.1:50051",
        f"ome-selector serve --listen 127.0.0.1:50051 --manifests {_EX}",
    ),
    "select": (
        f"ome-selector select -f {_EX}/inferenceservices/llama-3-3-70b.yaml",
        f"ome-selector select -f {_EX}/inferenceservices/llama-3-3-70b.yaml --view full -o json",
    ),
    "explain": (
        f"ome-selector explain -f {_EX}/inferenceservices/llama-3-2-3b.yaml",
        "ome-selector explain --model llama-3-2-3b-instruct -n llama-demo -o wide",
    ),
    "effective": (f"ome-selector effective -f {_EX}/inferenceservices/llama-3-3-70b.yaml",),
    "history": (
        f"ome-selector history -f {_EX}/inferenceservices/llama-3-3-70b.yaml -o wide",
        "ome-selector history --gc --server 127.0.0.1:50051 -o wide",
    ),
    "sync": (
        f"ome-selector sync -f {_EX}/inferenceservices/llama-3-3-70b.yaml --server 127.0.0.1:50051 "
        "--dry-run client --yes --context prod-us-east",
    ),
    "admit": (f"ome-selector admit -f {_EX}/inferenceservices/llama-3-3-70b.yaml",),
    "reconcile": (
        f"ome-selector reconcile -f {_EX}/inferenceservices/llama-3-3-70b-named.yaml --has-runtime-ready-condition",
    ),
    "validate-runtime": (f"ome-selector validate-runtime -f {_EX}/llama-3-3-70b-hopper.yaml",),
    "what-if": (
        f"ome-selector what-if -f {_EX}/inferenceservices/llama-3-3-70b.yaml "
        "--delete ClusterServingRuntime/llama-3-3-70b-hopper",
    ),
    "watch": ("ome-selector watch --server 127.0.0.1:50051 -n llama-demo",),
    "tree": ("ome-selector tree llama-3-3-70b-hopper", "ome-selector tree llama-3-3-70b-hopper -o wide"),
    "wait": (
        "ome-selector wait llama-chat -n team-a --for=runtime-sync=acknowledged "
        "--request-id=5b2e7c1a-9d4f-4e8b-a6c3-0f1d2e3b4a59 --server 127.0.0.1:50051",
    ),
    "completion": (
        "source <(ome-selector completion bash)",
        'ome-selector completion zsh > "${fpath[1]}/_ome-selector"',
        "ome-selector completion fish > ~/.config/fish/completions/ome-selector.fish",
    ),
    "version": ("ome-selector version",),
}


def _epilog(name: str) -> str | None:
    """The ``Examples:`` block of ``name``'s help (none for a command without examples)."""
    lines = EXAMPLES.get(name, ())
    return "Examples:\n" + "".join(f"  {line}\n" for line in lines) if lines else None


_OUTPUT_HELP = {
    "table": "table (default)",
    "wide": "wide ({wide})",
    "json": "json (the response, proto3 JSON names; a stream: one event per line)",
    "yaml": "yaml (the response, proto3 JSON names)",
    "name": "name (kind.ome.io/name of the runtime or object the answer names)",
}


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ome-selector`` console script (``argv`` default: ``sys.argv[1:]``);
    returns the exit status: ``EXIT_SELECTED`` (0), ``EXIT_NONE`` (1), the command's
    ``error_status`` for an error (``EXIT_ERROR``, 2; 1 for the kubectl-ome ones; also for any
    unexpected exception, printed as one ``error:`` line), 130 on Ctrl-C. argparse itself exits
    on bad flags (``build_parser``)."""
    parser = build_parser()
    if argv is None and "_ARGCOMPLETE" in os.environ:  # a completion script asking: answer and exit
        import argcomplete

        argcomplete.autocomplete(parser)
    args, extra = parser.parse_known_args(argv)
    command = COMMANDS.get(args.command)
    if extra:
        [subcommands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        unknown = [arg for arg in extra if arg.startswith("-") and arg != "-"]
        if unknown:  # kubectl's: the subcommand's usage, the first unknown flag, status 1
            sub = subcommands.choices[args.command]
            sub.print_usage(sys.stderr)
            sub.exit(EXIT_UNKNOWN_FLAG, f"error: unknown flag: {unknown[0].split('=', 1)[0]}\n")
        # stray words, as parse_args reports them; a plain_errors command's parser, with its status
        unrecognized = f"unrecognized arguments: {' '.join(extra)}"
        if command is not None and command.plain_errors:
            subcommands.choices[args.command].error(unrecognized)
        parser.error(unrecognized)
    error_status = command.error_status if command is not None else EXIT_ERROR
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "completion":
            return _completion(args.shell, sys.stdout)
        if args.command == "version":
            return _version(sys.stdout)
        if args.command == "wait":
            from ome_selector.cli import wait

            return wait.run(args, sys.stdout, sys.stderr)
        if args.command == "explain" and args.with_effective:
            from ome_selector.cli import explain_effective

            return explain_effective.run(args, sys.stdout, sys.stderr)
        if args.command == "history" and args.gc:
            from ome_selector.cli import gc_report

            return gc_report.run(args, sys.stdout, sys.stderr)
        return _query(args, sys.stdout, sys.stderr)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return error_status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return error_status
    except Exception as exc:  # never a traceback on the terminal
        print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        return error_status


COMPLETION_SHELLS = ("bash", "zsh", "fish")


def _completion(shell: str, out: TextIO) -> int:
    """``ome-selector completion SHELL``: argcomplete's script for ``shell``, which calls
    ``ome-selector`` back with ``_ARGCOMPLETE`` set (``main`` answers it from the parser)."""
    import argcomplete

    out.write(argcomplete.shellcode(["ome-selector"], shell=shell))
    return EXIT_SELECTED


def _version(out: TextIO) -> int:
    """``ome-selector version``: the line ``--version`` prints (``ome-selector 0.1.0``)."""
    from ome_selector.server.options import version

    print(f"ome-selector {version()}", file=out)
    return EXIT_SELECTED


def _serve(args: argparse.Namespace) -> int:
    from ome_selector.server.options import run_serve

    return run_serve(args)


def _query(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run the ``COMMANDS`` row of ``args.command``: build its requests, ask (offline or
    ``--server``), print the answers in ``-o``'s format (several InferenceServices: each table
    under its heading, JSON as an array, YAML as one document each; notes on ``err`` for table
    and wide only), and return the exit status, the highest over the answers."""
    with tables.without_headers(args.no_headers):
        return _answer(args, out, err)


def _answer(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    command = COMMANDS[args.command]
    requests = command.requests(args, err)
    ask = asker(args, command, err)
    if command.streaming:
        return _follow(command, args.output, requests, ask, out)
    answers = [(request, ask(request)) for request in requests]
    for _, response in answers:
        limit = command.limit_error(response)
        if limit:
            raise UsageError(limit)
    status = max(
        (EXIT_SELECTED if command.succeeded(response) else EXIT_NONE for _, response in answers), default=EXIT_SELECTED
    )
    noted = command.confirms and not getattr(args, "yes", False)
    if noted:
        _confirm(command, answers, err)
    if templates.is_template(args.output):
        text = _templated(args.output, [response for _, response in answers])
    elif args.output == "json":
        text = rendering.format_json([response for _, response in answers])
    elif args.output == "yaml":
        text = rendering.format_yaml([response for _, response in answers])
    elif args.output == "name":
        text = "\n".join(name for name in (command.names(request, response) for request, response in answers) if name)
    else:
        render, texts = command.renderer(args.output), []
        for request, response in answers:
            for note in () if noted else command.notes(response):
                print(note, file=err)
            table = render(request, response)
            if len(answers) > 1:
                table = rendering.with_heading(request, table)
            if table:
                texts.append(table)
        text = "\n\n".join(texts)
    if text:  # a jsonpath template prints exactly what it spells out (kubectl's: no newline added)
        print(text, file=out, end="" if args.output.startswith(templates.JSONPATH) else "\n")
    return status


def _confirm(command: Command, answers: list[tuple[Message, Any]], err: TextIO) -> None:
    """Print each answer's notes (the preview) on ``err`` and, for one that succeeded, ask
    ``SYNC_PROMPT`` there and read the answer from stdin: anything but ``y`` or ``yes`` (or end
    of input) is ``SYNC_NOT_CONFIRMED`` (runtime.md, "How the action runs", step 3)."""
    from ome_selector.cli.commands import SYNC_NOT_CONFIRMED
    from ome_selector.texts.requests import SYNC_CONFIRMATIONS, SYNC_PROMPT

    for _, response in answers:
        for note in command.notes(response):
            print(note, file=err)
        if command.succeeded(response):
            print(SYNC_PROMPT, end="", file=err, flush=True)
            if sys.stdin.readline().strip() not in SYNC_CONFIRMATIONS:
                raise UsageError(SYNC_NOT_CONFIRMED)


def _templated(output: str, responses: list[Message], header_only: bool = False, rows_only: bool = False) -> str:
    """``-o jsonpath=...`` (the template filled in per response) or ``-o custom-columns=...`` (a
    table, one row per response; ``header_only``/``rows_only`` for a stream's heading and rows)."""
    if output.startswith(templates.JSONPATH):
        return templates.format_jsonpath(output.removeprefix(templates.JSONPATH), responses)
    headers, rows = templates.custom_column_rows(output.removeprefix(templates.CUSTOM_COLUMNS), responses)
    if header_only:
        return tables.format_table(headers, [headers]).split("\n", 1)[0] if headers else ""
    if rows_only:
        with tables.without_headers():
            return tables.format_table(headers, rows)
    return tables.format_table(headers, rows)


def _follow(command: Command, output: str, requests: list[Message], ask: Callable[[Message], Any], out: TextIO) -> int:
    """A streaming command: each response printed as it comes (``-o table``: ``command.heading``
    before the first, then ``command.render`` of each; ``-o wide``: ``wide_heading`` and
    ``render_wide``; ``-o json``: one JSON object per line),
    flushed at once; status 0 when the server ends the stream. A failed stream's ``UsageError``
    propagates (the command's ``error_status``)."""
    heading = {"table": command.heading, "wide": command.wide_heading}.get(output, "")
    heading = heading if tables.headers_shown() else ""
    render = command.renderer(output)
    if output.startswith(templates.CUSTOM_COLUMNS) and tables.headers_shown():
        heading = _templated(output, [], header_only=True)
    for request in requests:
        with contextlib.closing(ask(request)) as stream:  # leaving early cancels the stream
            for response in stream:
                if templates.is_template(output):
                    text = _templated(output, [response], rows_only=True)
                elif output == "json":
                    text = rendering.format_json_line(response)
                else:
                    text = render(request, response)
                if heading and text:
                    text, heading = f"{heading}\n{text}", ""
                if text:
                    print(text, file=out, flush=True)
    return EXIT_SELECTED


if __name__ == "__main__":
    sys.exit(main())
