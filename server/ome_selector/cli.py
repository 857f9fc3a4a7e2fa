"""``ome-selector``: run the server, or ask which runtime an InferenceService gets.

    ome-selector serve   [--listen ADDR] [--manifests PATH ...] [--log-format text|json] [--grace S]
    ome-selector select  -f ISVC.yaml [--manifests PATH ... | --server ADDR] [-o table|json]
    ome-selector explain -f ISVC.yaml [--manifests PATH ... | --server ADDR] [-o table|json]

``select`` and ``explain`` work offline by default: they load ``--manifests`` (default: the
embedded example catalog) into an in-process cache and run the same code the server runs. With
``--server`` they ask a running server instead.

Exit status: 0 when a runtime is selected (``explain``: when at least one runtime is a
candidate), 1 when none is, 2 on a usage or input error (bad flags, unreadable or malformed
manifests, an InferenceService the service rejects, an unreachable server). Errors go to stderr
as ``error: <message>``; no traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Sequence, TextIO

from google.protobuf import json_format
from google.protobuf.message import Message

from ome.selector.v1 import selector_pb2

EXIT_SELECTED = 0
EXIT_NONE = 1
EXIT_ERROR = 2

EXPLICIT_RUNTIME_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."
NO_RUNTIMES_NOTE = "No serving runtimes found in the selected namespace or at cluster scope."
EXPLAIN_HEADERS = ("RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "SCORE", "REASON")
CANDIDATE_HEADERS = ("RANK", "RUNTIME", "SCOPE", "SCORE", "ENTRY", "SIZE-DISTANCE", "TIE-BREAK")
EXCLUSION_HEADERS = ("RUNTIME", "SCOPE", "VERDICT", "REASON")
_COLUMN_GAP = "   "

_SCOPE = {
    selector_pb2.RUNTIME_KIND_SERVING_RUNTIME: "Namespaced",
    selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME: "Cluster",
}
_KIND = {
    selector_pb2.RUNTIME_KIND_SERVING_RUNTIME: "ServingRuntime",
    selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME: "ClusterServingRuntime",
}
_VERDICT = {
    selector_pb2.VERDICT_CANDIDATE: "Candidate",
    selector_pb2.VERDICT_EXCLUDED: "Excluded",
    selector_pb2.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE: "NotAutoSelectable",
}
_TIE_BREAK = {
    selector_pb2.TIE_BREAK_SCOPE: "scope",
    selector_pb2.TIE_BREAK_SCORE: "score",
    selector_pb2.TIE_BREAK_SIZE_DISTANCE: "size-distance",
    selector_pb2.TIE_BREAK_NAME: "name",
}
_MODE = {selector_pb2.SELECTION_MODE_AUTO: "auto", selector_pb2.SELECTION_MODE_NAMED: "named"}


class UsageError(Exception):
    """Bad input: printed as ``error: <message>``, exit status 2."""


# --- argument parsing --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from ome_selector.server import DEFAULT_GRACE, DEFAULT_LISTEN, LOG_FORMATS

    parser = argparse.ArgumentParser(
        prog="ome-selector",
        description="Select the serving runtime for OME InferenceServices, as OME v1.3 documents it.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    serve = commands.add_parser("serve", help="run the gRPC server")
    serve.add_argument("--listen", default=DEFAULT_LISTEN, metavar="ADDR",
                       help=f"address to listen on, host:port or unix:/path (default {DEFAULT_LISTEN})")
    serve.add_argument("--manifests", nargs="+", metavar="PATH",
                       help="YAML files or folders to load at start (default: the embedded examples)")
    serve.add_argument("--wait-for-sync", action="store_true",
                       help="load nothing; stay NOT_SERVING until a controller calls ApplySnapshot")
    serve.add_argument("--log-format", choices=LOG_FORMATS, default="text", help="log format (default text)")
    serve.add_argument("--grace", type=_non_negative_float, default=DEFAULT_GRACE, metavar="SECONDS",
                       help=f"how long SIGTERM/SIGINT lets in-flight calls finish (default {DEFAULT_GRACE:g})")

    for name, summary in (
        ("select", "show the runtime OME selects for an InferenceService"),
        ("explain", "show every runtime in scope and why it qualifies or not"),
    ):
        sub = commands.add_parser(name, help=summary, description=summary)
        sub.add_argument("-f", "--filename", required=True, metavar="FILE",
                         help="InferenceService YAML (the first InferenceService document; - reads stdin)")
        source = sub.add_mutually_exclusive_group()
        source.add_argument("--manifests", nargs="+", metavar="PATH",
                            help="answer offline from these YAML files or folders (default: the embedded examples)")
        source.add_argument("--server", metavar="ADDR", help="ask a running ome-selector server instead")
        sub.add_argument("-n", "--namespace", default="default",
                         help="namespace for an InferenceService whose metadata sets none (default: default)")
        sub.add_argument("-o", "--output", choices=("table", "json"), default="table",
                         help="table (default) or the response as proto3 JSON")
        sub.add_argument("--timeout", type=_non_negative_float, default=10.0, metavar="SECONDS",
                         help="deadline per call with --server (default 10)")
        sub.add_argument("-v", "--verbose", action="store_true", help="also list the documents the loader skipped")
    return parser


def _non_negative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more: {text!r}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ome-selector`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "serve":
            return _serve(args)
        return _query(args, sys.stdout, sys.stderr)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return EXIT_ERROR
    except Exception as exc:  # never a traceback on the terminal
        print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_ERROR


def _serve(args: argparse.Namespace) -> int:
    from ome_selector.server import serve

    return asyncio.run(
        serve(args.listen, args.manifests, args.log_format, grace=args.grace, wait_for_sync=args.wait_for_sync)
    )


# --- select / explain --------------------------------------------------------------------------


def _query(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ome_selector.manifests import ManifestError, load_inference_service

    try:
        isvc = load_inference_service(args.filename)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None
    if not isvc.metadata.namespace:
        isvc.metadata.namespace = args.namespace

    response: Message
    if args.command == "select":
        request = selector_pb2.SelectRuntimeRequest(inference_service=isvc)
        response = _ask_server(args, request) if args.server else _ask_offline(args, request, err)
    else:
        explain_request = selector_pb2.ExplainRuntimesRequest(inference_service=isvc)
        response = _ask_server(args, explain_request) if args.server else _ask_offline(args, explain_request, err)

    if isinstance(response, selector_pb2.SelectRuntimeResponse):
        status = EXIT_SELECTED if response.HasField("selection") else EXIT_NONE
        text = format_selection(response)
    else:
        assert isinstance(response, selector_pb2.ExplainRuntimesResponse)
        if isvc.spec.runtime.name:
            print(EXPLICIT_RUNTIME_NOTE, file=err)
        if not response.runtimes and not response.model_error and args.output == "table":
            print(NO_RUNTIMES_NOTE, file=err)
        candidates = [r for r in response.runtimes if r.verdict == selector_pb2.VERDICT_CANDIDATE]
        status = EXIT_SELECTED if candidates else EXIT_NONE
        text = format_explain(response)
    if args.output == "json":
        text = json_format.MessageToJson(response, preserving_proto_field_name=False)
    if text:
        print(text, file=out)
    return status


def _ask_offline(args: argparse.Namespace, request: Message, err: TextIO) -> Message:
    from ome_selector import api
    from ome_selector.errors import RequestError
    from ome_selector.examples import example_paths
    from ome_selector.manifests import load_manifests, manifests_version
    from ome_selector.store import CacheStore

    result = load_manifests(args.manifests if args.manifests else example_paths())
    if args.verbose:
        for line in result.skipped:
            print(f"skipped: {line}", file=err)
    for line in result.warnings:
        print(f"warning: {line}", file=err)
    if result.errors:
        raise UsageError("cannot load manifests:\n  " + "\n  ".join(result.errors))
    store = CacheStore()
    try:
        store.apply_snapshot(manifests_version(result.objects), result.objects)
        if isinstance(request, selector_pb2.SelectRuntimeRequest):
            return api.select_runtime(store.snapshot, request)
        assert isinstance(request, selector_pb2.ExplainRuntimesRequest)
        return api.explain_runtimes(store.snapshot, request)
    except RequestError as exc:
        raise UsageError(_describe_error(exc.code, exc.message, [(v.field, v.description) for v in exc.violations])) from None


def _ask_server(args: argparse.Namespace, request: Message) -> Message:
    from ome_selector_client import SelectorClient, SelectorError

    try:
        with SelectorClient(args.server, timeout=args.timeout) as client:
            if isinstance(request, selector_pb2.SelectRuntimeRequest):
                return client.select_runtime(request.inference_service)
            assert isinstance(request, selector_pb2.ExplainRuntimesRequest)
            return client.explain_runtimes(request.inference_service)
    except SelectorError as exc:
        raise UsageError(_describe_error(exc.code.name, exc.message, exc.field_violations)) from None


def _describe_error(code: str, message: str, violations: Sequence[tuple[str, str]]) -> str:
    """``CODE: message``, then each field violation the message does not already spell out."""
    missing = [(field, text) for field, text in violations if f"{field}: {text}" not in message]
    return f"{code}: {message}" + "".join(f"\n  {field}: {text}" for field, text in missing)


# --- output ------------------------------------------------------------------------------------


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A kubectl-style table: columns padded to their widest cell, three spaces apart, one line
    per row (cells are never wrapped), no trailing spaces."""
    widths = [max(len(headers[i]), *(len(row[i]) for row in rows)) if rows else len(headers[i]) for i in range(len(headers))]
    lines = []
    for row in (headers, *rows):
        cells = [cell.ljust(width) for cell, width in zip(row[:-1], widths)] + [row[-1]]
        lines.append(_COLUMN_GAP.join(cells).rstrip())
    return "\n".join(lines)


def format_explain(response: selector_pb2.ExplainRuntimesResponse) -> str:
    """The ``explain`` table (RUNTIME SCOPE COMPATIBLE PRIORITY WEIGHT SCORE REASON)."""
    if response.model_error:
        return f"Model error: {response.model_error}"
    if not response.runtimes:
        return ""
    rows = []
    for row in response.runtimes:
        candidate = row.verdict == selector_pb2.VERDICT_CANDIDATE
        rows.append((
            row.runtime.name,
            _SCOPE.get(row.runtime.kind, "-"),
            "Yes" if candidate else "No",
            str(row.priority) if row.HasField("priority") else "-",
            str(row.weight) if row.HasField("weight") else "-",
            str(row.score) if candidate else "-",
            _one_line(row.reason) or "-",
        ))
    return format_table(EXPLAIN_HEADERS, rows)


def format_selection(response: selector_pb2.SelectRuntimeResponse) -> str:
    """The ``select`` report: the selection (or why there is none), the model, warnings, then the
    ranked candidates and the exclusions with their primary reason."""
    lines = []
    if response.HasField("selection"):
        selection = response.selection
        entry = selection.supported_model_format_index
        lines.append(f"Selected runtime: {runtime_ref(selection.runtime)}")
        lines.append(
            f"Selection: {_MODE.get(selection.mode, '-')}, score {selection.score}, "
            f"supportedModelFormats entry {entry if entry >= 0 else '-'}"
        )
        if selection.inheritance_chain:
            lines.append(f"Inheritance chain: {' -> '.join(selection.inheritance_chain)}")
        for reason in selection.reasons:
            lines.append(f"Failing check: {_one_line(reason.message)}")
    elif response.runtime_error:
        lines.append(f"Runtime error: {response.runtime_error}")
    elif response.model_error:
        lines.append(f"Model error: {response.model_error}")
    else:
        lines.append(f"No runtime selected: {response.no_runtime_message or '-'}")
    if response.HasField("model"):
        model = response.model
        name = f"{model.kind}/{model.namespace + '/' if model.namespace else ''}{model.name}" if model.name else "inline spec"
        lines.append(f"Model: {name}" + (f" ({model.label})" if model.label else ""))
    if response.cache_version:
        lines.append(f"Cache version: {response.cache_version}")
    for warning in response.warnings:
        lines.append(f"Warning: {_one_line(warning)}")
    if response.candidates:
        lines += ["", "Candidates:"]
        lines.append(format_table(CANDIDATE_HEADERS, [
            (
                str(c.rank),
                c.runtime.name,
                _SCOPE.get(c.runtime.kind, "-"),
                str(c.score),
                str(c.supported_model_format_index),
                format_size(c.size_distance) if c.HasField("size_distance") else "-",
                _TIE_BREAK.get(c.tie_break, "-"),
            )
            for c in response.candidates
        ]))
    if response.exclusions:
        lines += ["", "Excluded:"]
        lines.append(format_table(EXCLUSION_HEADERS, [
            (
                e.runtime.name,
                _SCOPE.get(e.runtime.kind, "-"),
                _VERDICT.get(e.verdict, "-"),
                _one_line(primary_reason(e.reasons)) or "-",
            )
            for e in response.exclusions
        ]))
    return "\n".join(lines)


def runtime_ref(ref: selector_pb2.RuntimeRef) -> str:
    """``ClusterServingRuntime/<name>`` or ``ServingRuntime/<namespace>/<name>``."""
    kind = _KIND.get(ref.kind, "Runtime")
    return f"{kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{kind}/{ref.name}"


def primary_reason(reasons: Sequence[selector_pb2.Reason]) -> str:
    """The message of the primary reason (the first failing check)."""
    for reason in reasons:
        if reason.primary:
            return reason.message
    return reasons[0].message if reasons else ""


def format_size(value: float) -> str:
    """A parameter count as OME writes sizes: ``7B``, ``500M``, ``1.5T``."""
    for factor, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(value) >= factor:
            return f"{value / factor:g}{suffix}"
    return f"{value:g}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
