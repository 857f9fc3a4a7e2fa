"""``ome-selector``: run the server, or ask which runtime an InferenceService gets.

    ome-selector serve            [--listen ADDR] [--manifests PATH ...] [--log-format text|json] [--grace S]
    ome-selector select           -f ISVC.yaml [--view basic|full]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector explain          (-f ISVC.yaml | --model NAME) [-n NAMESPACE]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector effective        -f ISVC.yaml [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector admit            -f ISVC.yaml [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector reconcile        -f ISVC.yaml [--has-runtime-ready-condition]
                                  [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]
    ome-selector validate-runtime -f RUNTIME.yaml [--manifests PATH ... [--strict] | --server ADDR] [-o FORMAT]

FORMAT is ``table`` (default), ``wide``, ``json``, ``yaml`` or ``name`` for every query command.
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
denies, or the reconcile fails. 2 on a usage or input error (bad flags,
a missing or unreadable manifest path, with ``--strict`` any rejected manifest object, a bad ``-f``
file, an object the service rejects, an unreachable server). Errors go to stderr as
``error: <message>``; no traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Callable, Sequence, TextIO

import yaml
from google.protobuf import json_format
from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2
from ome.v1beta1 import types_pb2

EXIT_SELECTED = 0
EXIT_NONE = 1
EXIT_ERROR = 2

# explain's notes (a named runtime, no runtimes at all) come from the response's ``notes``.
EXACTLY_ONE_SOURCE = "exactly one of -f/--filename or --model is required"
OUTPUT_FORMATS = ("table", "wide", "json", "yaml", "name")
ISVC_WEBHOOK = "inferenceservice.ome-webhook-server.validator"
EXPLAIN_HEADERS = ("RUNTIME", "SCOPE", "COMPATIBLE", "PRIORITY", "WEIGHT", "SCORE", "REASON")
CANDIDATE_HEADERS = ("RANK", "RUNTIME", "SCOPE", "SCORE", "ENTRY", "SIZE-DISTANCE", "TIE-BREAK")
EXCLUSION_HEADERS = ("RUNTIME", "SCOPE", "VERDICT", "REASON")
EFFECTIVE_HEADERS = ("SCOPE", "FIELD", "VALUE")
EFFECTIVE_WIDE_HEADERS = (
    "VIEW",
    "STATE",
    "REASON",
    "RUNTIME",
    "COMPONENT",
    "MODE",
    "MODE-SOURCE",
    "ACCELERATOR",
    "ACCELERATOR-SOURCE",
    "POLICY",
    "ERROR",
)
COMPONENT_HEADERS = ("COMPONENT", "MODE", "MODE-SOURCE", "ACCELERATOR", "ACCELERATOR-SOURCE", "POLICY", "ERROR")
CONDITION_HEADERS = ("TYPE", "STATUS", "REASON", "MESSAGE")
EVENT_HEADERS = ("TYPE", "REASON", "MESSAGE")
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


def _labels(enum: Any, prefix: str, style: Callable[[list[str]], str], drop: str = "") -> dict[int, str]:
    """Labels of a proto enum's values from their names (``UNSPECIFIED`` left out): the name
    without ``prefix`` (and ``drop``), its words put together by ``style``."""
    return {
        value: style(name.removeprefix(prefix).removeprefix(drop).split("_"))
        for name, value in enum.items()
        if not name.endswith("_UNSPECIFIED")
    }


def _camel(words: list[str]) -> str:
    return "".join(w.capitalize() for w in words)


def _kebab(words: list[str]) -> str:
    return "-".join(w.lower() for w in words)


_TIE_BREAK = _labels(selector_pb2.TieBreak, "TIE_BREAK_", _kebab)  # scope, score, size-distance, name
_MODE = _labels(selector_pb2.SelectionMode, "SELECTION_MODE_", _kebab)  # auto, named
_COMPONENT = _labels(selector_pb2.Component, "COMPONENT_", _kebab)  # engine, decoder, router
# kubectl-ome runtime.md (effective): the mode sources as the docs name them (ServiceAnnotation ...).
_MODE_SOURCE = _labels(selector_pb2.ModeSource, "MODE_SOURCE_", _camel)
# Ours (the docs' effective report shows no accelerator): why a component gets its class
# (ComponentOverride, Selector, Policy, RuntimeListsNone, NotRequested, NoCandidate, Router).
_ACCELERATOR_SOURCE = _labels(selector_pb2.AcceleratorSource, "ACCELERATOR_SOURCE_", _camel, drop="NONE_")
_ADMISSION_PATH = _labels(selector_pb2.AdmissionPath, "ADMISSION_PATH_", _camel)  # NoEngine, AutoSelect ...

_EXPLAIN_HELP = """\
Lists every runtime in scope: the candidates in the order OME ranks them (the first one is the
runtime OME selects), then the others with the first check they fail. -f explains for an
InferenceService (its accelerator classes and deployment modes are checked too); --model
explains for a BaseModel named NAME in the namespace -n, else a ClusterBaseModel. Notes go to
stderr, such as "Note: spec.runtime is explicit; automatic selection below is hypothetical.";
with no runtimes at all, no table is printed and the status is 0."""

_EFFECTIVE_HELP = """\
The Live view of `kubectl ome runtime effective`: SCOPE FIELD VALUE rows. Live STATE
(Available or Unavailable), REASON (when Unavailable: NotConfigured, NotFound, Disabled,
Unreadable), RUNTIME (CSR/<name> or SR/<namespace>/<name>), then per component the
deployment mode and the rule that set it, as MODE (SOURCE) with the docs' sources
ServiceAnnotation, ComponentAnnotation, ServiceSpec, LeaderWorkerShape and Default.

Rows the docs do not have (ours): <COMPONENT>-ACCELERATOR, the AcceleratorClass the component
gets, or -, and why (ComponentOverride, Selector, Policy/<policy>, RuntimeListsNone,
NotRequested, NoCandidate/<policy>, Router); <COMPONENT>-ERROR, OME's error for that component;
and, as in `explain --with-effective`, Source INHERITANCE (Observed or Unavailable), Source
REASON (NotFound, Cycle or MaxDepthExceeded) and one Source ROOT-FIRST row per runtime in the
inheritance chain, root first. A runtime OME selects itself is used without inheritance, so its
chain is the runtime alone.

Left out: the docs' HASH row, and the Active view and Service rows (REVISION, PIN, SYNC, STATUS,
DRIFT, LIVE-RELATION, ISSUE), which need runtime revisions and InferenceService status that this
service does not model. -o wide prints one row per component; -o json the response."""

_ADMIT_HELP = """\
The InferenceService validating webhook, as kubectl shows it: when admitted, each warning as
"Warning: <warning>" on stderr, then "inferenceservice.ome.io/<name> admitted (path <PATH>)"
(PATH: what the webhook checked: NoEngine, DeferredFullRunner, AutoSelect, NamedRuntime,
NamedRuntimeNoModel, PinnedNoModel, Spec); when denied, "Error from server: admission webhook
"inferenceservice.ome-webhook-server.validator" denied the request: <message>" on stderr and
status 1."""

_RECONCILE_HELP = """\
What the controller does about the runtime in one reconcile: the runtime it uses, the
RuntimeReady condition it sets (or leaves unchanged), the events it records, the manager log
lines it writes instead of events, whether it requeues and leaves the serving workload as it is,
and each component's effective configuration. Status 0 when a runtime is resolved and the
reconcile does not requeue, 1 otherwise."""

_VALIDATE_RUNTIME_HELP = """\
The ServingRuntime / ClusterServingRuntime validating webhook, as kubectl shows it: when
admitted, "<kind>.ome.io/<name> admitted"; when denied, "Error from server: admission webhook
"<webhook>" denied the request: <message>" on stderr and status 1. The runtime is checked
against the catalog (--manifests) or the server's cache; one with the same name there is
replaced by the new one."""


class UsageError(Exception):
    """Bad input: printed as ``error: <message>``, exit status 2."""


# --- argument parsing --------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``ome-selector`` argument parser: serve, select, explain, effective, admit, reconcile, validate-runtime."""
    from ome_selector.serve_cli import add_serve_arguments, version  # imports no grpc (see serve_cli)

    parser = argparse.ArgumentParser(
        prog="ome-selector",
        description="Select the serving runtime for OME InferenceServices, as OME v1.3 documents it.",
    )
    parser.add_argument("--version", action="version", version=f"ome-selector {version()}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    serve = commands.add_parser(
        "serve",
        help="run the gRPC server",
        description="Run the gRPC server. Every flag can also be set by its OME_SELECTOR_* environment variable.",
    )
    add_serve_arguments(serve)

    isvc_file = "InferenceService YAML (every InferenceService document is answered, in order; - reads stdin)"
    for name, summary, details in (
        ("select", "show the runtime OME selects for an InferenceService", None),
        ("explain", "show every runtime in scope and why it qualifies or not", _EXPLAIN_HELP),
        ("effective", "show the runtime an InferenceService uses and each component's configuration", _EFFECTIVE_HELP),
        ("admit", "show whether the InferenceService webhook admits an InferenceService", _ADMIT_HELP),
        ("reconcile", "show what the controller does about an InferenceService's runtime", _RECONCILE_HELP),
        (
            "validate-runtime",
            "show whether the runtime webhook admits a ServingRuntime or ClusterServingRuntime",
            _VALIDATE_RUNTIME_HELP,
        ),
    ):
        sub = commands.add_parser(
            name,
            help=summary,
            description=summary + (f".\n\n{details}" if details else ""),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if name == "explain":
            sub.add_argument("-f", "--filename", metavar="FILE", help=isvc_file + "; or give --model")
            sub.add_argument(
                "--model",
                metavar="NAME",
                help="explain for this BaseModel in the namespace -n, else this ClusterBaseModel",
            )
        elif name == "validate-runtime":
            sub.add_argument(
                "-f",
                "--filename",
                required=True,
                metavar="FILE",
                help="ServingRuntime or ClusterServingRuntime YAML (the first one; - reads stdin)",
            )
        else:
            sub.add_argument("-f", "--filename", required=True, metavar="FILE", help=isvc_file)
        if name == "select":
            sub.add_argument(
                "--view",
                choices=("basic", "full"),
                default="basic",
                help="basic (default): the selection, candidates, OME's texts and the exclusion "
                "summary; full: also every excluded runtime with its primary reason",
            )
        if name == "reconcile":
            sub.add_argument(
                "--has-runtime-ready-condition",
                action="store_true",
                help="the InferenceService already has a RuntimeReady condition (OME then sets it "
                "True with RuntimeResolved once the runtime resolves)",
            )
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
        if name == "explain":
            namespace_help = (
                "namespace of --model, or of an InferenceService whose metadata sets none (default: default)"
            )
        elif name == "validate-runtime":
            namespace_help = "namespace for a ServingRuntime whose metadata sets none (default: default)"
        else:
            namespace_help = "namespace for an InferenceService whose metadata sets none (default: default)"
        sub.add_argument("-n", "--namespace", default="default", help=namespace_help)
        sub.add_argument(
            "-o",
            "--output",
            choices=OUTPUT_FORMATS,
            default="table",
            help="table (default); wide ("
            + ("one row per component" if name == "effective" else "the table")
            + "); json or yaml (the response, proto3 JSON names); name (kind.ome.io/name of the "
            "runtime or object the answer names)",
        )
        sub.add_argument(
            "--timeout",
            type=_non_negative_float,
            default=10.0,
            metavar="SECONDS",
            help="deadline per call with --server (default 10)",
        )
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
    from ome_selector.serve_cli import run_serve

    return run_serve(args)


# --- queries -----------------------------------------------------------------------------------


def _query(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Build the command's requests, ask (offline or ``--server``), print, return the status
    (the highest over several InferenceServices)."""
    requests = _requests(args, err)
    ask = _offline_asker(args, err) if not args.server else (lambda request: _ask_server(args, request))
    answers = [(request, ask(request)) for request in requests]
    status = EXIT_SELECTED
    texts: list[str] = []
    for request, response in answers:
        code, text, notes = _report(args, request, response)
        status = max(status, code)
        if args.output in ("json", "yaml"):
            continue
        if args.output == "name":
            text = _names(request, response)
        else:
            for note in notes:
                print(note, file=err)
            if len(answers) > 1:
                text = f"# {_subject(request)}\n{text}" if text else f"# {_subject(request)}"
        if text:
            texts.append(text)
    if args.output == "json":
        if len(answers) == 1:
            texts = [json_format.MessageToJson(answers[0][1], preserving_proto_field_name=False)]
        else:  # a JSON array, one response per InferenceService
            documents = [
                json_format.MessageToDict(response, preserving_proto_field_name=False) for _, response in answers
            ]
            texts = [json.dumps(documents, indent=2, ensure_ascii=False)]
    elif args.output == "yaml":
        texts = [
            "---\n".join(
                yaml.safe_dump(json_format.MessageToDict(response, preserving_proto_field_name=False), sort_keys=False)
                for _, response in answers
            ).rstrip("\n")
        ]
    separator = "\n" if args.output == "name" else "\n\n"
    if texts:
        print(separator.join(texts), file=out)
    return status


def _subject(request: Message) -> str:
    """``inferenceservice.ome.io/<namespace>/<name>``, the heading of one answer among several."""
    isvc = getattr(request, "inference_service", None)
    if isvc is None:
        return "request"
    return f"inferenceservice.ome.io/{isvc.metadata.namespace}/{isvc.metadata.name or '<no name>'}"


def _names(request: Message, response: Message) -> str:
    """``-o name``: kubectl's ``<resource>.<group>/<name>`` of what the answer names: the
    selected runtime (select, reconcile, effective), each candidate in rank order (explain), the
    admitted object (admit, validate-runtime; nothing when denied)."""
    if isinstance(response, selector_pb2.ExplainRuntimesResponse):
        return "\n".join(_ref_name(r.runtime) for r in response.runtimes if r.verdict == selector_pb2.VERDICT_CANDIDATE)
    if isinstance(response, selector_pb2.GetEffectiveRuntimeResponse):
        return _ref_name(response.runtime_ref) if response.HasField("runtime_ref") else ""
    if isinstance(response, selector_pb2.AdmitInferenceServiceResponse):
        assert isinstance(request, selector_pb2.AdmitInferenceServiceRequest)
        return f"inferenceservice.ome.io/{request.inference_service.metadata.name}" if response.allowed else ""
    if isinstance(response, selector_pb2.ValidateServingRuntimeResponse):
        assert isinstance(request, selector_pb2.ValidateServingRuntimeRequest)
        which = request.WhichOneof("runtime")
        assert which is not None
        return f"{which.replace('_', '')}.ome.io/{getattr(request, which).metadata.name}" if response.allowed else ""
    assert isinstance(response, (selector_pb2.SelectRuntimeResponse, selector_pb2.ReconcileInferenceServiceResponse))
    return _ref_name(response.selection.runtime) if response.HasField("selection") else ""


def _ref_name(ref: selector_pb2.RuntimeRef) -> str:
    """``clusterservingruntime.ome.io/<name>`` or ``servingruntime.ome.io/<name>``."""
    return f"{_KIND.get(ref.kind, 'Runtime').lower()}.ome.io/{ref.name}"


def _requests(args: argparse.Namespace, err: TextIO) -> list[Message]:
    """The requests of ``args.command``: one per InferenceService of the file (one for
    ``validate-runtime`` and ``explain --model``)."""
    if args.command == "validate-runtime":
        which, runtime = _load_runtime(args.filename, args.namespace)
        if isinstance(runtime, types_pb2.ServingRuntime):
            return [selector_pb2.ValidateServingRuntimeRequest(serving_runtime=runtime)]
        return [selector_pb2.ValidateServingRuntimeRequest(cluster_serving_runtime=runtime)]
    if args.command == "explain" and (args.model is None) == (args.filename is None):
        raise UsageError(EXACTLY_ONE_SOURCE)
    if args.command == "explain" and args.model is not None:
        return [
            selector_pb2.ExplainRuntimesRequest(
                model=selector_pb2.ModelLookup(name=args.model, namespace=args.namespace)
            )
        ]
    return [_request_for(args, isvc) for isvc in _load_isvcs(args, err)]


def _request_for(args: argparse.Namespace, isvc: types_pb2.InferenceService) -> Message:
    if args.command == "select":
        view = selector_pb2.SELECT_RUNTIME_VIEW_FULL if args.view == "full" else selector_pb2.SELECT_RUNTIME_VIEW_BASIC
        return selector_pb2.SelectRuntimeRequest(inference_service=isvc, view=view)
    if args.command == "explain":
        return selector_pb2.ExplainRuntimesRequest(inference_service=isvc)
    if args.command == "effective":
        return selector_pb2.GetEffectiveRuntimeRequest(inference_service=isvc)
    if args.command == "admit":
        return selector_pb2.AdmitInferenceServiceRequest(inference_service=isvc)
    assert args.command == "reconcile", args.command
    return selector_pb2.ReconcileInferenceServiceRequest(
        inference_service=isvc, has_runtime_ready_condition=args.has_runtime_ready_condition
    )


def _report(args: argparse.Namespace, request: Message, response: Message) -> tuple[int, str, list[str]]:
    """(exit status, table text for stdout, lines for stderr) of a response."""
    if isinstance(response, selector_pb2.SelectRuntimeResponse):
        return (EXIT_SELECTED if response.HasField("selection") else EXIT_NONE), format_selection(response), []
    if isinstance(response, selector_pb2.ExplainRuntimesResponse):
        candidates = any(r.verdict == selector_pb2.VERDICT_CANDIDATE for r in response.runtimes)
        no_runtimes = not response.runtimes and not response.model_error  # exits 0 (kubectl-ome runtime.md)
        return (
            (EXIT_SELECTED if candidates or no_runtimes else EXIT_NONE),
            format_explain(response),
            list(response.notes),
        )
    if isinstance(response, selector_pb2.GetEffectiveRuntimeResponse):
        text = format_effective_wide(response) if args.output == "wide" else format_effective(response)
        return (EXIT_SELECTED if response.state == "Available" else EXIT_NONE), text, []
    if isinstance(response, selector_pb2.AdmitInferenceServiceResponse):
        assert isinstance(request, selector_pb2.AdmitInferenceServiceRequest)
        if not response.allowed:
            return EXIT_NONE, "", [_denied(response.webhook or ISVC_WEBHOOK, response.denial_message)]
        name = request.inference_service.metadata.name
        path = _ADMISSION_PATH.get(response.path, "-")
        warnings = [f"Warning: {_one_line(w)}" for w in response.warnings]
        return EXIT_SELECTED, f"inferenceservice.ome.io{'/' + name if name else ''} admitted (path {path})", warnings
    if isinstance(response, selector_pb2.ReconcileInferenceServiceResponse):
        resolved = response.HasField("selection") and not response.requeue
        return (EXIT_SELECTED if resolved else EXIT_NONE), format_reconcile(response), []
    assert isinstance(response, selector_pb2.ValidateServingRuntimeResponse)
    assert isinstance(request, selector_pb2.ValidateServingRuntimeRequest)
    which = request.WhichOneof("runtime")
    assert which is not None
    if not response.allowed:
        return EXIT_NONE, "", [_denied(response.webhook, response.denial_message)]
    kind = which.replace("_", "")
    return EXIT_SELECTED, f"{kind}.ome.io/{getattr(request, which).metadata.name} admitted", []


def _denied(webhook: str, message: str) -> str:
    """kubectl's line for a denial by a validating webhook."""
    return f'Error from server: admission webhook "{webhook}" denied the request: {message}'


def _load_isvcs(args: argparse.Namespace, err: TextIO) -> list[types_pb2.InferenceService]:
    """Every InferenceService of ``args.filename`` (the namespace defaulted from ``-n``); its
    unknown fields are warnings on stderr."""
    from ome_selector.manifests import ManifestError, read_inference_services

    try:
        isvcs, warnings = read_inference_services(args.filename)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None
    for line in warnings:
        print(f"warning: {line}", file=err)
    for isvc in isvcs:
        if not isvc.metadata.namespace:
            isvc.metadata.namespace = args.namespace
    return isvcs


def _load_runtime(path: str, namespace: str) -> tuple[str, types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime]:
    """``manifests.load_runtime`` with its errors as usage errors."""
    from ome_selector.manifests import ManifestError, load_runtime

    try:
        return load_runtime(path, namespace)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None


def _offline_asker(args: argparse.Namespace, err: TextIO) -> Callable[[Message], Message]:
    """Load the manifests once (rejected objects named on stderr; fatal with ``--strict``) and
    return a function answering one request from them, in-process."""
    from ome_selector import api
    from ome_selector.errors import RequestError
    from ome_selector.examples import example_paths
    from ome_selector.fieldpaths import describe
    from ome_selector.manifests import load_manifests, manifests_version
    from ome_selector.store import CacheStore

    result = load_manifests(args.manifests if args.manifests else example_paths())
    if args.verbose:
        for line in result.skipped:
            print(f"skipped: {line}", file=err)
    for line in result.warnings:
        print(f"warning: {line}", file=err)
    if result.path_errors or (result.errors and args.strict):
        fatal = result.errors if args.strict else result.path_errors
        raise UsageError(f"cannot load manifests{' (--strict)' if args.strict else ''}:\n  " + "\n  ".join(fatal))
    for line in result.errors:
        print(f"warning: {line}", file=err)
    if result.errors:
        rejected = f"{result.rejected_count} object{'' if result.rejected_count == 1 else 's'} rejected"
        print(
            f"warning: {rejected}, {len(result.errors)} problem{'' if len(result.errors) == 1 else 's'}; "
            "answering from the rest (--strict makes this fatal)",
            file=err,
        )
    store = CacheStore()
    try:
        store.apply_snapshot(manifests_version(result.objects), result.objects)
    except RequestError as exc:
        raise UsageError(describe(exc)) from None
    snapshot = store.snapshot

    def ask(request: Message) -> Message:
        try:
            return api.answer(snapshot, request)
        except RequestError as exc:
            raise UsageError(describe(exc, type(request).DESCRIPTOR)) from None

    return ask


def _ask_server(args: argparse.Namespace, request: Message) -> Message:
    from ome_selector_client import SelectorClient, SelectorError

    try:
        with SelectorClient(args.server, timeout=args.timeout) as client:
            if isinstance(request, selector_pb2.SelectRuntimeRequest):
                return client.select_runtime(request.inference_service, view=request.view)
            if isinstance(request, selector_pb2.ExplainRuntimesRequest):
                if request.HasField("model"):
                    return client.explain_model(request.model.name, request.model.namespace)
                return client.explain_runtimes(request.inference_service)
            if isinstance(request, selector_pb2.GetEffectiveRuntimeRequest):
                return client.get_effective_runtime(request.inference_service)
            if isinstance(request, selector_pb2.AdmitInferenceServiceRequest):
                return client.admit_inference_service(request.inference_service)
            if isinstance(request, selector_pb2.ReconcileInferenceServiceRequest):
                return client.reconcile_inference_service(
                    request.inference_service, request.has_runtime_ready_condition
                )
            assert isinstance(request, selector_pb2.ValidateServingRuntimeRequest)
            which = request.WhichOneof("runtime")
            assert which is not None
            return client.validate_serving_runtime(getattr(request, which))
    except SelectorError as exc:
        from ome_selector.fieldpaths import describe_parts

        raise UsageError(describe_parts(exc.code.name, exc.message, exc.field_violations)) from None


# --- output ------------------------------------------------------------------------------------


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A kubectl-style table: columns padded to their widest cell, three spaces apart, one line
    per row (cells are never wrapped), no trailing spaces."""
    widths = [
        max(len(headers[i]), *(len(row[i]) for row in rows)) if rows else len(headers[i]) for i in range(len(headers))
    ]
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
        rows.append(
            (
                row.runtime.name,
                _SCOPE.get(row.runtime.kind, "-"),
                "Yes" if candidate else "No",
                str(row.priority) if row.HasField("priority") else "-",
                str(row.weight) if row.HasField("weight") else "-",
                str(row.score) if candidate else "-",
                _one_line(row.reason) or "-",
            )
        )
    return format_table(EXPLAIN_HEADERS, rows)


def format_selection(response: selector_pb2.SelectRuntimeResponse) -> str:
    """The ``select`` report: the selection (or why there is none), the model, warnings, then the
    ranked candidates and the exclusions with their primary reason."""
    lines = []
    if response.HasField("selection"):
        lines += _selection_lines(response.selection)
    elif response.runtime_error:
        lines.append(f"Runtime error: {response.runtime_error}")
    elif response.model_error:
        lines.append(f"Model error: {response.model_error}")
    else:
        lines.append(f"No runtime selected: {response.no_runtime_message or '-'}")
    if response.HasField("model"):
        model = response.model
        name = (
            f"{model.kind}/{model.namespace + '/' if model.namespace else ''}{model.name}"
            if model.name
            else "inline spec"
        )
        lines.append(f"Model: {name}" + (f" ({model.label})" if model.label else ""))
    if response.cache_version:
        lines.append(f"Cache version: {response.cache_version}")
    for warning in response.warnings:
        lines.append(f"Warning: {_one_line(warning)}")
    if response.HasField("exclusion_summary"):
        lines.append(f"Runtimes: {response.exclusion_summary.text}")
    if response.candidates:
        lines += ["", "Candidates:"]
        lines.append(
            format_table(
                CANDIDATE_HEADERS,
                [
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
                ],
            )
        )
    if response.exclusions:
        lines += ["", "Excluded:"]
        lines.append(
            format_table(
                EXCLUSION_HEADERS,
                [
                    (
                        e.runtime.name,
                        _SCOPE.get(e.runtime.kind, "-"),
                        _VERDICT.get(e.verdict, "-"),
                        _one_line(primary_reason(e.reasons)) or "-",
                    )
                    for e in response.exclusions
                ],
            )
        )
    return "\n".join(lines)


def _selection_lines(selection: selector_pb2.Selection) -> list[str]:
    """``Selected runtime:``, ``Selection:``, the inheritance chain and each failing check."""
    entry = selection.supported_model_format_index
    lines = [
        f"Selected runtime: {runtime_ref(selection.runtime)}",
        f"Selection: {_MODE.get(selection.mode, '-')}, score {selection.score}, "
        f"supportedModelFormats entry {entry if entry >= 0 else '-'}",
    ]
    if selection.inheritance_chain:
        lines.append(f"Inheritance chain: {' -> '.join(selection.inheritance_chain)}")
    for reason in selection.reasons:
        lines.append(f"Failing check: {_one_line(reason.message)}")
    return lines


def format_effective(response: selector_pb2.GetEffectiveRuntimeResponse) -> str:
    """The ``effective`` table (SCOPE FIELD VALUE): the docs' Live rows, then ours, one line each.

    Live STATE, REASON (Unavailable only), RUNTIME, a ``MODE (SOURCE)`` row per component; then
    per component ``<COMPONENT>-ACCELERATOR`` (``class (source)``) and ``<COMPONENT>-ERROR``
    (when OME reports one); then Source INHERITANCE, REASON (Unavailable only) and a ROOT-FIRST
    row per runtime of the chain, as ``explain --with-effective`` prints them.
    """
    rows: list[tuple[str, str, str]] = [("Live", "STATE", response.state or "-")]
    if response.state != "Available" and response.reason:
        rows.append(("Live", "REASON", response.reason))
    if response.runtime:
        rows.append(("Live", "RUNTIME", response.runtime))
    for c in response.components:
        rows.append(("Live", _component(c).upper(), f"{c.deployment_mode} ({_MODE_SOURCE.get(c.mode_source, '-')})"))
    for c in response.components:
        if c.accelerator_source != selector_pb2.ACCELERATOR_SOURCE_UNSPECIFIED:  # unspecified: no runtime
            rows.append(
                (
                    "Live",
                    f"{_component(c).upper()}-ACCELERATOR",
                    f"{c.accelerator_class or '-'} ({_accelerator_source(c)})",
                )
            )
        error = _component_error(c)
        if error:
            rows.append(("Live", f"{_component(c).upper()}-ERROR", error))
    if response.inheritance_error or not response.HasField("runtime_ref"):
        rows.append(("Source", "INHERITANCE", "Unavailable"))
        if response.inheritance_reason or response.reason:
            rows.append(("Source", "REASON", response.inheritance_reason or response.reason))
    else:
        rows.append(("Source", "INHERITANCE", "Observed"))
        for member in _chain_refs(response):
            rows.append(("Source", "ROOT-FIRST", member))
    return format_table(EFFECTIVE_HEADERS, [tuple(_one_line(cell) for cell in row) for row in rows])


def format_effective_wide(response: selector_pb2.GetEffectiveRuntimeResponse) -> str:
    """``effective -o wide``: one row per component, after the Live view's STATE, REASON and
    RUNTIME (full kind and name); a single row with ``-`` components when there is none."""
    view = (
        "Live",
        response.state or "-",
        response.reason or "-",
        runtime_ref(response.runtime_ref) if response.HasField("runtime_ref") else "-",
    )
    rows = [(*view, *_component_cells(c)) for c in response.components]
    if not rows:
        rows = [(*view, *("-" for _ in COMPONENT_HEADERS))]
    return format_table(EFFECTIVE_WIDE_HEADERS, rows)


def format_reconcile(response: selector_pb2.ReconcileInferenceServiceResponse) -> str:
    """The ``reconcile`` report: the runtime, requeue and workload flags, then the RuntimeReady
    condition, the events, the log lines and the component configuration, each after a blank line."""
    lines = _selection_lines(response.selection) if response.HasField("selection") else ["No runtime selected"]
    lines.append(f"Requeue: {_yes_no(response.requeue)}")
    lines.append(f"Workload untouched: {_yes_no(response.workload_untouched)}")
    if response.cache_version:
        lines.append(f"Cache version: {response.cache_version}")
    lines.append("")
    if response.HasField("runtime_ready"):
        c = response.runtime_ready
        lines += [
            "RuntimeReady condition:",
            format_table(CONDITION_HEADERS, [(c.type, c.status, c.reason, _one_line(c.message) or "-")]),
        ]
    else:
        lines.append("RuntimeReady condition: unchanged")
    lines.append("")
    if response.events:
        lines += [
            "Events:",
            format_table(EVENT_HEADERS, [(e.type, e.reason, _one_line(e.message)) for e in response.events]),
        ]
    else:
        lines.append("Events: none")
    lines.append("")
    if response.logs:
        lines += ["Logs:", *(f"  {_one_line(log)}" for log in response.logs)]
    else:
        lines.append("Logs: none")
    lines.append("")
    if response.components:
        lines += ["Components:", format_table(COMPONENT_HEADERS, [_component_cells(c) for c in response.components])]
    else:
        lines.append("Components: none")
    return "\n".join(lines)


def _component(config: selector_pb2.ComponentConfiguration) -> str:
    return _COMPONENT.get(config.component, "-")


def _accelerator_source(config: selector_pb2.ComponentConfiguration) -> str:
    """``Selector``, ``Policy/Cheapest``, ``NoCandidate/BestFit`` ..."""
    source = _ACCELERATOR_SOURCE.get(config.accelerator_source, "-")
    return f"{source}/{config.accelerator_policy}" if config.accelerator_policy else source


def _component_error(config: selector_pb2.ComponentConfiguration) -> str:
    return "; ".join(e for e in (config.mode_error, config.accelerator_error) if e)


def _component_cells(config: selector_pb2.ComponentConfiguration) -> tuple[str, ...]:
    """COMPONENT MODE MODE-SOURCE ACCELERATOR ACCELERATOR-SOURCE POLICY ERROR."""
    return (
        _component(config),
        config.deployment_mode or "-",
        _MODE_SOURCE.get(config.mode_source, "-"),
        config.accelerator_class or "-",
        _ACCELERATOR_SOURCE.get(config.accelerator_source, "-"),
        config.accelerator_policy or "-",
        _one_line(_component_error(config)) or "-",
    )


def _chain_refs(response: selector_pb2.GetEffectiveRuntimeResponse) -> list[str]:
    """The ROOT-FIRST rows: the chain as ``CSR/<name>`` / ``SR/<namespace>/<name>``, root first,
    ending with the runtime itself."""
    return [
        f"CSR/{ref.name}"
        if ref.kind == selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
        else f"SR/{ref.namespace}/{ref.name}"
        for ref in response.inheritance_chain
    ]


def _yes_no(value: bool) -> str:
    return "Yes" if value else "No"


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
