"""The ``ome-selector`` query commands: ONE table, ``COMMANDS``, of what each subcommand reads,
the request it builds, the RPC that answers it, and how the answer is printed and judged.

Each ``Command`` row names its ``SelectionService`` method (``rpc``), the same name that keys
``api.SELECTION_RPCS``, the table ``service.SelectionServicer``'s methods are generated from; the
request type is that method's input type. Offline a request is answered by ``api.answer``
(which dispatches by request type to that ``SELECTION_RPCS`` row), with ``--server`` by the row's
``remote`` call of the typed client (``ome_selector_client.SelectorClient``). ``cli`` builds the
argument parser from the rows and runs them; ``rendering`` holds the formatters they name.

Adding a command: a ``SELECTION_RPCS`` row (and its client method), then one ``Command`` row
here with its renderer in ``rendering``. A server-streaming method (``WatchSelections``, served
by the servicer itself, ``api.STREAMING_RPCS``) is a row too: its ``remote`` returns the stream,
``render`` prints one event (after the row's ``heading``), and it needs ``--server`` (an offline
cache sees no writes to follow); the stream ending is success, a failed stream its
``error_status``.

Exit statuses: 0, 1 by the row's ``succeeded`` and, for a usage or input error or a failed
call, the row's ``error_status``: 2, or 1 for the commands of reference/kubectl-ome/runtime.md,
whose "Exit codes" return 1 for every error and never 2 (with ``plain_errors``, as ``tree`` has
it, bad flags too).

Importing this module imports no grpc (the client is imported when ``--server`` is used), so
``serve`` can still configure gRPC's C-core first.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple, Sequence, TextIO

from google.protobuf import message_factory
from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2

from ome_selector.cli import rendering

if TYPE_CHECKING:
    from ome_selector_client import SelectorClient

EXACTLY_ONE_SOURCE = "exactly one of -f/--filename or --model is required"
NO_CHANGE = "at least one of -f/--filename or --delete is required"
OUTPUT_FORMATS = ("table", "wide", "json", "yaml", "name")
SELECTION_SERVICE = selector_pb2.DESCRIPTOR.services_by_name["SelectionService"]


_ISVC_FILE = "InferenceService YAML (every InferenceService document is answered, in order; - reads stdin)"
_ISVC_NAMESPACE = "namespace for an InferenceService whose metadata sets none (default: default)"
_VIEWS = {"basic": selector_pb2.SELECT_RUNTIME_VIEW_BASIC, "full": selector_pb2.SELECT_RUNTIME_VIEW_FULL}


class UsageError(Exception):
    """Bad input: printed as ``error: <message>``, exit status 2."""


class Flag(NamedTuple):
    """One ``ArgumentParser.add_argument`` call: its option strings and keyword arguments."""

    names: tuple[str, ...]
    options: Mapping[str, Any]


def flag(*names: str, **options: Any) -> Flag:
    """``Flag(names, options)``, written as the ``add_argument`` call it stands for."""
    return Flag(names, options)


# --- what a command reads ------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """What a command reads from its ``-f`` (and ``--model``) flags.

    ``flags``: those flags, added before the command's own. ``namespace_help``: the help of
    ``-n``, whose default is ``namespace_default``. ``read(args, err)``: the subject fields of
    each request, in file order (one dict per request, such as ``{"inference_service": isvc}``);
    warnings go to ``err``; raises ``UsageError`` for a missing, unreadable or malformed file.
    """

    flags: tuple[Flag, ...]
    namespace_help: str
    read: Callable[[argparse.Namespace, TextIO], list[dict[str, Any]]]
    namespace_default: str = "default"


def _load_isvcs(args: argparse.Namespace, err: TextIO) -> list[types_pb2.InferenceService]:
    """Every InferenceService of ``args.filename`` (the namespace defaulted from ``-n``); its
    unknown fields are warnings on stderr."""
    from ome_selector.cache.manifests import ManifestError, read_inference_services

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


def _read_isvcs(args: argparse.Namespace, err: TextIO) -> list[dict[str, Message]]:
    """One ``inference_service`` subject per InferenceService of ``-f``."""
    return [{"inference_service": isvc} for isvc in _load_isvcs(args, err)]


def _read_isvcs_or_model(args: argparse.Namespace, err: TextIO) -> list[dict[str, Message]]:
    """``explain``: one ``model`` subject for ``--model`` (in ``-n``), else those of ``-f``."""
    if (args.model is None) == (args.filename is None):
        raise UsageError(EXACTLY_ONE_SOURCE)
    if args.model is not None:
        return [{"model": selector_pb2.ModelLookup(name=args.model, namespace=args.namespace)}]
    return _read_isvcs(args, err)


def _read_runtime(args: argparse.Namespace, err: TextIO) -> list[dict[str, Message]]:
    """The first ServingRuntime or ClusterServingRuntime of ``-f``, as its request field
    (``serving_runtime`` / ``cluster_serving_runtime``)."""
    from ome_selector.cache.manifests import ManifestError, load_runtime

    try:
        which, runtime = load_runtime(args.filename, args.namespace)
    except ManifestError as exc:
        raise UsageError(str(exc)) from None
    return [{which: runtime}]


INFERENCE_SERVICES = Source(
    flags=(flag("-f", "--filename", required=True, metavar="FILE", help=_ISVC_FILE),),
    namespace_help=_ISVC_NAMESPACE,
    read=_read_isvcs,
)
INFERENCE_SERVICES_OR_MODEL = Source(
    flags=(
        flag("-f", "--filename", metavar="FILE", help=_ISVC_FILE + "; or give --model"),
        flag(
            "--model", metavar="NAME", help="explain for this BaseModel in the namespace -n, else this ClusterBaseModel"
        ),
    ),
    namespace_help="namespace of --model, or of an InferenceService whose metadata sets none (default: default)",
    read=_read_isvcs_or_model,
)
SERVING_RUNTIME = Source(
    flags=(
        flag(
            "-f",
            "--filename",
            required=True,
            metavar="FILE",
            help="ServingRuntime or ClusterServingRuntime YAML (the first one; - reads stdin)",
        ),
    ),
    namespace_help="namespace for a ServingRuntime whose metadata sets none (default: default)",
    read=_read_runtime,
)


def parse_object_key(text: str, namespace: str) -> cache_pb2.ObjectKey:
    """``KIND/NAME`` or ``KIND/NAMESPACE/NAME`` (``--delete``) as an ObjectKey: KIND is one of the
    cached kinds, any case, optionally as kubectl's resource (``clusterservingruntime.ome.io``); a
    namespaced kind without a namespace gets ``namespace`` (``-n``). Raises ``UsageError``."""
    from ome_selector.validation import KIND_TO_ENUM, NAMESPACED

    kinds = {kind.lower(): kind for kind in KIND_TO_ENUM}
    kind_text, _, rest = text.partition("/")
    kind = kinds.get(kind_text.lower().split(".", 1)[0])
    if kind is None or not rest:
        raise UsageError(
            f"--delete {text!r}: expected KIND/[NAMESPACE/]NAME with KIND one of {', '.join(KIND_TO_ENUM)}"
        )
    space, _, name = rest.rpartition("/")
    if space and kind not in NAMESPACED:
        raise UsageError(f"--delete {text!r}: {kind} is cluster-scoped and takes no namespace")
    if kind in NAMESPACED:
        space = space or namespace
    return cache_pb2.ObjectKey(kind=KIND_TO_ENUM[kind], namespace=space, name=name)


def _read_cache_change(args: argparse.Namespace, err: TextIO) -> list[dict[str, Any]]:
    """``what-if``: one change, the objects of ``-f`` as ``upserts`` and the ``--delete`` keys as
    ``deletes``; ``-f``'s unknown fields and skipped documents are warnings on stderr."""
    from ome_selector.cache.manifests import ManifestError, read_cache_objects

    if args.filename is None and not args.delete:
        raise UsageError(NO_CHANGE)
    upserts: list[cache_pb2.CacheObject] = []
    if args.filename is not None:
        try:
            upserts, warnings = read_cache_objects(args.filename, args.namespace)
        except ManifestError as exc:
            raise UsageError(str(exc)) from None
        for line in warnings:
            print(f"warning: {line}", file=err)
    deletes = [parse_object_key(text, args.namespace) for text in args.delete]
    return [{"upserts": upserts, "deletes": deletes}]


CACHE_CHANGE = Source(
    flags=(
        flag(
            "-f",
            "--filename",
            metavar="FILE",
            help="objects to create or replace: YAML of any cached kind (ServingRuntime, ClusterServingRuntime, "
            "BaseModel, ClusterBaseModel, AcceleratorClass, InferenceService, ControllerRevision), every document; "
            "- reads stdin",
        ),
        flag(
            "--delete",
            action="append",
            default=[],
            metavar="KIND/[NS/]NAME",
            help="an object to delete, e.g. ClusterServingRuntime/vllm-llama or ServingRuntime/team-a/my-runtime "
            "(repeatable; a namespaced kind without NS is in -n)",
        ),
    ),
    namespace_help="namespace for a namespaced object of -f or --delete that names none (default: default)",
    read=_read_cache_change,
)
# WatchSelections reads no file: the request is its flags.
NO_FILE = Source(
    flags=(),
    namespace_help="only the InferenceServices of this namespace (default: every namespace)",
    read=lambda args, err: [{}],
    namespace_default="",
)


def _read_runtime_name(args: argparse.Namespace, err: TextIO) -> list[dict[str, Message]]:
    """``tree``: the runtime's name (RUNTIME) and the namespace ``-n``, as request fields."""
    return [{"name": args.runtime, "namespace": args.namespace}]  # type: ignore[dict-item]


RUNTIME_NAME = Source(
    flags=(
        flag(
            "runtime",
            metavar="RUNTIME",
            help="the runtime: a ServingRuntime in the namespace -n, or a ClusterServingRuntime",
        ),
    ),
    namespace_help="namespace of a ServingRuntime RUNTIME and of its runtimes and InferenceServices (default: default)",
    read=_read_runtime_name,
)


# --- the table -----------------------------------------------------------------------------------


def _no_fields(args: argparse.Namespace) -> dict[str, Any]:
    return {}


def _no_notes(response: Any) -> list[str]:
    return []


def _no_names(request: Any, response: Any) -> str:
    return ""


def _always(response: Any) -> bool:
    return True


def _of_response(format_response: Callable[[Any], str]) -> Callable[[Any, Any], str]:
    """A renderer ``(request, response) -> text`` of a formatter of the response alone."""
    return lambda _request, response: format_response(response)


@dataclass(frozen=True)
class Command:
    """One query subcommand.

    - ``name``; ``help``: the description ``<name> --help`` prints, whose first paragraph (without
      its final period) is the ``summary`` ``ome-selector --help`` lists.
    - ``rpc``: its ``SelectionService`` method, a key of ``api.SELECTION_RPCS``; the request
      type is that method's input type (``request_type``). ``ValueError`` at import for an
      unknown method.
    - ``source``: what ``-f`` reads; ``flags``: the command's own flags; ``fields(args)``: the
      request fields they set (beside the subject ``source`` reads).
    - ``remote(client, request)``: the typed client's call of ``rpc`` (``--server``).
    - ``render(request, response)``: the text for stdout (``-o table``; ``render_wide`` for
      ``-o wide`` when it differs, described in ``-o``'s help by ``wide_help``), ``""`` for none;
      ``notes(response)``: lines for stderr; ``names(request, response)``: ``-o name``.
      ``outputs``: the ``-o`` formats it takes.
    - ``succeeded(response)``: the exit-status rule, true for status 0, false for 1.
    - ``error_status``: the status of an error; ``limit_error(response)``: the error text of a
      CLI collection limit the answer exceeds, or ``""``; ``plain_errors``: errors as kubectl-ome
      prints them: a failed call's message alone (``error: <message>``, without the status code
      and field violations), and bad flags exit with ``error_status`` too (else argparse's 2).
    - A ``streaming`` method (``WatchSelections``): ``remote`` returns an iterator of responses,
      ``render`` gives the text of one, printed as it comes, after ``heading`` (``-o table``);
      ``-o json`` prints one JSON object per line. It needs ``--server`` (``offline`` is false);
      the stream ending is status 0, a failed one ``error_status``.
    """

    name: str
    rpc: str
    help: str
    source: Source
    remote: Callable[[SelectorClient, Any], Any]
    render: Callable[[Any, Any], str]
    succeeded: Callable[[Any], bool] = _always
    names: Callable[[Any, Any], str] = _no_names
    flags: tuple[Flag, ...] = ()
    fields: Callable[[argparse.Namespace], dict[str, Any]] = _no_fields
    notes: Callable[[Any], list[str]] = _no_notes
    render_wide: Callable[[Any, Any], str] | None = None
    wide_help: str = "the table"
    # The exit status of an error (bad flags or input, a failed call): 2, or 1 for the commands
    # of reference/kubectl-ome/runtime.md "Exit codes" (explain, effective, tree, history, sync),
    # where "No runtime subcommand returns 2", and for watch (a failed stream).
    error_status: int = 2
    # A CLI limit on an answer: the error text, or "" (explain: more than 1,000 runtimes).
    limit_error: Callable[[Any], str] = lambda _response: ""
    outputs: tuple[str, ...] = OUTPUT_FORMATS
    heading: str = ""
    plain_errors: bool = False

    def __post_init__(self) -> None:
        if self.rpc not in SELECTION_SERVICE.methods_by_name:
            raise ValueError(f"command {self.name}: SelectionService has no method {self.rpc}")

    @property
    def summary(self) -> str:
        """The first paragraph of ``help``, without its final period."""
        return self.help.split("\n\n", 1)[0].removesuffix(".")

    @property
    def request_type(self) -> type[Message]:
        """The request message class of ``rpc`` (``SelectRuntimeRequest`` ...)."""
        return message_factory.GetMessageClass(SELECTION_SERVICE.methods_by_name[self.rpc].input_type)

    @property
    def streaming(self) -> bool:
        """Whether ``rpc`` streams its answers (server streaming, as the proto declares it)."""
        return bool(SELECTION_SERVICE.methods_by_name[self.rpc].server_streaming)

    @property
    def offline(self) -> bool:
        """Whether the command can answer from manifests in process: every unary one (a stream
        follows a server's cache writes)."""
        return not self.streaming

    def requests(self, args: argparse.Namespace, err: TextIO) -> list[Message]:
        """The requests of this command: one per subject ``source`` reads, in order, each with
        the fields of the command's own flags. Raises ``UsageError`` as ``source.read`` does."""
        request_type = self.request_type
        return [request_type(**subject, **self.fields(args)) for subject in self.source.read(args, err)]

    def renderer(self, output: str) -> Callable[[Any, Any], str]:
        """``render_wide`` for ``-o wide`` when there is one, else ``render``."""
        return self.render_wide if output == "wide" and self.render_wide is not None else self.render

    def error_text(self, code: str, message: str, violations: Sequence[tuple[str, str]]) -> str:
        """The ``error:`` text of a failed call (``message`` and ``violations`` as
        ``fieldpaths.present`` gives them): ``message`` alone with ``plain_errors``, else
        ``CODE: message`` and each violation the message does not spell out."""
        from ome_selector.texts.fieldpaths import describe_parts

        return message if self.plain_errors else describe_parts(code, message, violations)


def _explain_remote(client: SelectorClient, request: selector_pb2.ExplainRuntimesRequest) -> Message:
    """``explain_model`` for a model lookup, ``explain_runtimes`` for an InferenceService."""
    if request.HasField("model"):
        return client.explain_model(request.model.name, request.model.namespace)
    return client.explain_runtimes(request.inference_service)


def _finished(_response: Message) -> bool:
    """The exit-status rule of the commands of reference/kubectl-ome/runtime.md (explain,
    effective, history, sync): 0 for "every subcommand that finishes", whatever it found."""
    return True


def _explain_limit(response: selector_pb2.ExplainRuntimesResponse) -> str:
    """reference/kubectl-ome/runtime.md, explain: "reads at most 1,000 runtimes ... With more, it
    fails with ``runtime candidate snapshot exceeds the CLI collection limit``". The CLI's limit
    only: the RPC answers for any number (the controller's selection has no limit)."""
    from ome_selector.texts.messages import CLI_COLLECTION_LIMIT, COLLECTION_LIMIT_EXCEEDED

    return COLLECTION_LIMIT_EXCEEDED if response.total_size > CLI_COLLECTION_LIMIT else ""


_OME_NAMESPACE = flag(
    "--ome-namespace",
    default="ome",
    metavar="NAMESPACE",
    help="namespace where the OME control plane keeps runtime revisions (default: ome)",
)


def _collection_fields(args: argparse.Namespace) -> dict[str, Any]:
    """``ome_namespace`` and kubectl-ome's collection limit of 1,000."""
    from ome_selector.texts.messages import CLI_COLLECTION_LIMIT

    return {"ome_namespace": args.ome_namespace, "collection_limit": CLI_COLLECTION_LIMIT}


SYNC_DRY_RUN_ONLY = "only --dry-run client is supported: the service plans the sync and sends no patch"
SYNC_NOT_CONFIRMED = "action not confirmed; noninteractive input requires --yes"


def _sync_fields(args: argparse.Namespace) -> dict[str, Any]:
    """``sync``: ``--dry-run client`` and ``--yes`` are required (there is no API server to patch
    and no prompt); ``ome_namespace``, ``context``."""
    if args.dry_run != "client":
        raise UsageError(SYNC_DRY_RUN_ONLY)
    if not args.yes:
        raise UsageError(SYNC_NOT_CONFIRMED)
    return {"ome_namespace": args.ome_namespace, "context": args.context}


def _validate_remote(client: SelectorClient, request: selector_pb2.ValidateServingRuntimeRequest) -> Message:
    which = request.WhichOneof("runtime")
    assert which is not None
    return client.validate_serving_runtime(getattr(request, which))


COMMANDS: dict[str, Command] = {
    command.name: command
    for command in (
        Command(
            name="select",
            rpc="SelectRuntime",
            help="show the runtime OME selects for an InferenceService",
            source=INFERENCE_SERVICES,
            flags=(
                flag(
                    "--view",
                    choices=tuple(_VIEWS),
                    default="basic",
                    help="basic (default): the selection, candidates, OME's texts and the exclusion "
                    "summary; full: also every excluded runtime with its primary reason",
                ),
            ),
            fields=lambda args: {"view": _VIEWS[args.view]},
            remote=lambda client, request: client.select_runtime(request.inference_service, view=request.view),
            render=_of_response(rendering.format_selection),
            succeeded=lambda response: response.HasField("selection"),
            names=_of_response(rendering.selected_runtime_name),
        ),
        Command(
            name="explain",
            rpc="ExplainRuntimes",
            help="""\
show every runtime in scope and why it qualifies or not.

Lists every runtime in scope: the candidates in the order OME ranks them (the first one is the
runtime OME selects), then the others with the first check they fail. -f explains for an
InferenceService (its accelerator classes and deployment modes are checked too); --model
explains for a BaseModel named NAME in the namespace -n, else a ClusterBaseModel. Notes go to
stderr, such as "Note: spec.runtime is explicit; automatic selection below is hypothetical.";
with no runtimes at all, no table is printed. Status 0 when it finishes (candidates or not), 1
for every error (reference/kubectl-ome/runtime.md, "Exit codes").""",
            source=INFERENCE_SERVICES_OR_MODEL,
            remote=_explain_remote,
            render=_of_response(rendering.format_explain),
            notes=rendering.explain_notes,
            succeeded=_finished,
            error_status=1,
            plain_errors=True,
            limit_error=_explain_limit,
            names=_of_response(rendering.candidate_names),
        ),
        Command(
            name="effective",
            rpc="GetEffectiveRuntime",
            help="""\
show the runtime an InferenceService uses, the revision it is pinned to, and why.

`kubectl ome runtime effective`: SCOPE FIELD VALUE rows, Live rows first, then Active rows,
then Service rows. Live and Active: STATE (Available or Unavailable), REASON (NotConfigured,
NotFound, Disabled, MalformedPayload, Unreadable), RUNTIME (CSR/<name> or
SR/<namespace>/<name>), REVISION (Active: the pinned revision), HASH (this service's short hash
of the spec), one MODE (SOURCE) row per component, with the docs' sources ServiceAnnotation,
ComponentAnnotation, ServiceSpec, LeaderWorkerShape and Default. Service: PIN (<mode>/<state>), SYNC, STATUS,
DRIFT (<state>/<cause>), LIVE-RELATION and one ISSUE row per issue code. Revisions are read in
--ome-namespace. An InferenceService that names no runtime gets one selected from at most 1,000
runtimes (the CLI's collection limit); with more, the Live view is Unavailable (Unreadable).

Rows the docs do not have (ours): Live <COMPONENT>-ACCELERATOR, the AcceleratorClass the
component gets, or -, and why (ComponentOverride, Selector, Policy/<policy>, RuntimeListsNone,
NotRequested, NoCandidate/<policy>, Router); <COMPONENT>-ERROR, OME's error for that component;
and, as in `explain --with-effective`, Source INHERITANCE (Observed or Unavailable), Source
REASON (NotFound, Cycle or MaxDepthExceeded) and one Source ROOT-FIRST row per runtime in the
inheritance chain, root first.

Values are kept within 54 characters. -o wide prints one row per view and component; -o json
and -o yaml the RuntimeEffectiveReport. Status 0 when it finishes (whatever the views' states),
1 for every error (reference/kubectl-ome/runtime.md, "Exit codes").""",
            source=INFERENCE_SERVICES,
            flags=(_OME_NAMESPACE,),
            fields=_collection_fields,
            remote=lambda client, request: client.get_effective_runtime(
                request.inference_service,
                ome_namespace=request.ome_namespace,
                collection_limit=request.collection_limit,
            ),
            render=_of_response(rendering.format_effective),
            render_wide=_of_response(rendering.format_effective_wide),
            wide_help="one row per view and component",
            succeeded=_finished,
            error_status=1,
            plain_errors=True,
            names=_of_response(rendering.effective_runtime_name),
        ),
        Command(
            name="history",
            rpc="GetRuntimeHistory",
            help="""\
show the revisions kept for an InferenceService's runtime.

`kubectl ome runtime history`: the ControllerRevisions labelled ome.io/runtime-of=<runtime> in
--ome-namespace, newest first (at most 1,000), under WINDOW (OBS/BOUND/SEEN/ASKED), REVISION
(a name over 14 characters as its first two, ... and #<digest>), CREATED (YY-MM-DDTHH:MMZ),
ROLES (A active, Q spec.runtime.revision, R status.pinnedRevisionName, H listed), CHECK
(OK, BAD, ?), LIVE (MATCH, DIFF, AMB, ?) and ISSUES (R<n>/G<n>). -o wide prints OBSERVATION,
COMPLETENESS, PAGES, the full REVISION, CREATED, HASH, ROLES, SOURCE, CONSISTENCY, RELATION,
REVISION-ISSUES and REPORT-ISSUES (HistoryUnavailable, HistoryTruncated); -o json and -o yaml
the RuntimeHistoryReport. Status 0; 1 on an error.""",
            source=INFERENCE_SERVICES,
            flags=(_OME_NAMESPACE,),
            fields=_collection_fields,
            remote=lambda client, request: client.get_runtime_history(
                request.inference_service,
                ome_namespace=request.ome_namespace,
                collection_limit=request.collection_limit,
            ),
            render=_of_response(rendering.format_history),
            render_wide=_of_response(rendering.format_history_wide),
            wide_help="full names, times, hashes and issue codes",
            succeeded=_finished,
            names=lambda _request, _response: "",
            error_status=1,
            plain_errors=True,
        ),
        Command(
            name="sync",
            rpc="PlanRuntimeSync",
            help="""\
show what `kubectl ome runtime sync` would do to a pinned InferenceService, or why it refuses.

The plan of `kubectl ome runtime sync INFERENCESERVICE --dry-run client --yes`: the preview on
stderr (ALPHA runtime sync preview ..., the FIELD VALUE rows, the warnings) and the
ActionResult on stdout (values cut to 56 characters), or "error: action refused: ..." on stderr
and status 1. Nothing is changed: set the ome.io/runtime-sync annotation to the New token
yourself. Only --dry-run client is supported, and --yes is required (no prompt). -o json and
-o yaml print the whole plan. Status 0 when sync would go ahead; 1 on a refusal or an error.""",
            source=INFERENCE_SERVICES,
            flags=(
                flag("--dry-run", choices=("none", "client", "server"), default="none", help="dry run: client only"),
                flag("--yes", action="store_true", help="confirm the exact preview without a prompt (required)"),
                flag("--context", default="", help="the kubeconfig context the preview and follow-up name"),
                _OME_NAMESPACE,
            ),
            fields=_sync_fields,
            remote=lambda client, request: client.plan_runtime_sync(
                request.inference_service, ome_namespace=request.ome_namespace, context=request.context
            ),
            render=_of_response(rendering.format_sync_result),
            notes=rendering.sync_preview,
            succeeded=lambda response: not response.refusal_message,
            names=lambda _request, _response: "",
            error_status=1,
            plain_errors=True,
        ),
        Command(
            name="admit",
            rpc="AdmitInferenceService",
            help="""\
show whether the InferenceService webhook admits an InferenceService.

The InferenceService validating webhook, as kubectl shows it: when admitted, each warning as
"Warning: <warning>" on stderr, then "inferenceservice.ome.io/<name> admitted (path <PATH>)"
(PATH: what the webhook checked: NoEngine, DeferredFullRunner, AutoSelect, NamedRuntime,
NamedRuntimeNoModel, PinnedNoModel, Spec); when denied, "Error from server: admission webhook
"inferenceservice.ome-webhook-server.validator" denied the request: <message>" on stderr and
status 1.""",
            source=INFERENCE_SERVICES,
            remote=lambda client, request: client.admit_inference_service(request.inference_service),
            render=rendering.format_admission,
            notes=rendering.admission_notes,
            succeeded=lambda response: response.allowed,
            names=rendering.admitted_name,
        ),
        Command(
            name="reconcile",
            rpc="ReconcileInferenceService",
            help="""\
show what the controller does about an InferenceService's runtime.

What the controller does about the runtime in one reconcile: the runtime it uses, the
RuntimeReady condition it sets (or leaves unchanged), the events it records, the manager log
lines it writes instead of events, whether it requeues and leaves the serving workload as it is,
and each component's effective configuration. Status 0 when a runtime is resolved and the
reconcile does not requeue, 1 otherwise.""",
            source=INFERENCE_SERVICES,
            flags=(
                flag(
                    "--has-runtime-ready-condition",
                    action="store_true",
                    help="the InferenceService already has a RuntimeReady condition (OME then sets it "
                    "True with RuntimeResolved once the runtime resolves)",
                ),
            ),
            fields=lambda args: {"has_runtime_ready_condition": args.has_runtime_ready_condition},
            remote=lambda client, request: client.reconcile_inference_service(
                request.inference_service, request.has_runtime_ready_condition
            ),
            render=_of_response(rendering.format_reconcile),
            succeeded=lambda response: response.HasField("selection") and not response.requeue,
            names=_of_response(rendering.selected_runtime_name),
        ),
        Command(
            name="validate-runtime",
            rpc="ValidateServingRuntime",
            help="""\
show whether the runtime webhook admits a ServingRuntime or ClusterServingRuntime.

The ServingRuntime / ClusterServingRuntime validating webhook, as kubectl shows it: when
admitted, "<kind>.ome.io/<name> admitted"; when denied, "Error from server: admission webhook
"<webhook>" denied the request: <message>" on stderr and status 1. The runtime is checked
against the catalog (--manifests) or the server's cache; one with the same name there is
replaced by the new one.""",
            source=SERVING_RUNTIME,
            remote=_validate_remote,
            render=rendering.format_runtime_validation,
            notes=rendering.runtime_validation_notes,
            succeeded=lambda response: response.allowed,
            names=rendering.admitted_runtime_name,
        ),
        Command(
            name="what-if",
            rpc="PreviewCacheChange",
            help="""\
show which cached InferenceServices a cache change would move, without applying it.

Creates or replaces the objects of -f (any cached kind, every document) and deletes each
--delete in a copy of the cache: --manifests loaded with the InferenceServices they hold (the
embedded examples, the default, hold none), or with --server the server's cache. Prints each
cached InferenceService whose outcome would change: INFERENCESERVICE NAMESPACE BEFORE AFTER WHY, where
BEFORE and AFTER are the runtime (or "none (<reason>)", "-" for an InferenceService the change
creates or deletes) and WHY the step that changed it (a check, a ranking step, the model, the
named runtime ...). -o wide adds CAUSE, the objects of the change behind it. A note on stderr
counts them. Nothing is applied. Status 0 when no InferenceService would change, 1 when some
would (as `kubectl diff`).""",
            source=CACHE_CHANGE,
            remote=lambda client, request: client.preview_cache_change(request.upserts, request.deletes),
            render=_of_response(rendering.format_preview),
            render_wide=_of_response(rendering.format_preview_wide),
            wide_help="the table plus CAUSE",
            notes=rendering.preview_notes,
            succeeded=lambda response: not response.changes,
            outputs=("table", "wide", "json", "yaml"),
        ),
        Command(
            name="watch",
            rpc="WatchSelections",
            help="""\
print the outcome of cached InferenceServices, then each change, as cache writes come.

Follows a running server (--server): first the current outcome of every cached InferenceService
of -n (every namespace by default) whose labels match -l, one row each with WHY / CAUSE
"(current)"; then the line "# initial state: ..."; then, after each cache write, a row per
InferenceService whose outcome it changed (BEFORE and AFTER: the runtime, "none (<reason>)", or
"-" when the write creates or deletes it; WHY / CAUSE: the step that changed it, then the
objects of the write behind it; VERSION: the cache version after the write) and the line
"# write <version>: ...". A watcher that falls behind gets "# resync: ..." and the state again.
-o json prints each event as one JSON object per line. Status 0 when the server ends the stream
(it drains), 1 when the stream fails (unreachable server, bad filter); Ctrl-C ends the watch.""",
            source=NO_FILE,
            flags=(
                flag(
                    "-l",
                    "--selector",
                    default="",
                    metavar="SELECTOR",
                    help="only InferenceServices whose labels match this Kubernetes label selector "
                    "(team=llama,tier!=dev, team in (a,b), team, !team)",
                ),
            ),
            fields=lambda args: {"namespace": args.namespace, "label_selector": args.selector},
            remote=lambda client, request: client.watch_selections(request.namespace, request.label_selector),
            render=_of_response(rendering.format_watch_event),
            heading=rendering.WATCH_HEADING,
            outputs=("table", "json"),
            error_status=1,
        ),
        Command(
            name="tree",
            rpc="GetRuntimeTree",
            help="""\
show a runtime's inheritance tree and the InferenceServices that name it.

`kubectl ome runtime tree` (the RuntimeTreeReport): RUNTIME TREE, Target:, then per context
(Cluster, Namespaced/<namespace>) a Head: per path, the runtime named or one that inherits from
it, with its chain root first (the runtime named marked [selected]), Issue: and Issue path:
lines for a broken chain (ParentMissing, CycleDetected, MaxDepthExceeded), and the
InferenceServices whose spec.runtime names the head; then Snapshot:, one Collection: line per
list read and Warning: lines. RUNTIME is a ServingRuntime in -n or a ClusterServingRuntime
(--kind chooses when both exist). A ServingRuntime's tree lists its namespace, a
ClusterServingRuntime's every namespace; each list holds at most 1,000 objects. Each line fits
in 80 columns (long names shortened with a fingerprint, long Issue:, Issue path: and
Collection: lines continued on indented lines); -o wide prints full names; -o json and -o yaml
print the report. Exit status 0, or 1 for every error (error: <message> on stderr; never 2).""",
            source=RUNTIME_NAME,
            flags=(
                flag(
                    "--kind",
                    default="",
                    metavar="KIND",
                    help="ServingRuntime or ClusterServingRuntime (auto-detected when omitted)",
                ),
                flag(
                    "--show-unattributed-users",
                    action="store_true",
                    help="also list the InferenceServices whose runtime their spec does not tell",
                ),
            ),
            fields=lambda args: {"kind": args.kind, "show_unattributed_users": args.show_unattributed_users},
            remote=lambda client, request: client.get_runtime_tree(
                request.name,
                request.namespace,
                kind=request.kind,
                show_unattributed_users=request.show_unattributed_users,
            ),
            render=_of_response(rendering.format_tree),
            render_wide=_of_response(rendering.format_tree_wide),
            wide_help="full names, lines not wrapped",
            outputs=("table", "wide", "json", "yaml"),
            error_status=1,
            plain_errors=True,
        ),
    )
}


# --- who answers ---------------------------------------------------------------------------------


def asker(args: argparse.Namespace, command: Command, err: TextIO) -> Callable[[Message], Any]:
    """The function that answers one request of ``command``: in-process from the manifests
    (``--manifests``, default the embedded examples) through ``api.answer``, or with
    ``--server ADDR`` through ``command.remote`` on a ``SelectorClient`` (deadline
    ``--timeout``). Raises ``UsageError`` when the manifests cannot be loaded (and, when it is
    called, when the service rejects the request or the server cannot be reached). A streaming
    command's answer is an iterator of responses (``--server`` only), which raises
    ``UsageError`` when the stream fails (the command's ``error_status``: 1 for watch)."""
    if command.streaming:
        return lambda request: _stream_server(args, command, request)
    if args.server:
        return lambda request: _ask_server(args, command, request)
    return _offline_asker(args, command, err)


def _offline_asker(args: argparse.Namespace, command: Command, err: TextIO) -> Callable[[Message], Message]:
    """Load the manifests once (rejected objects named on stderr; fatal with ``--strict``) and
    return a function answering one request from them, in-process."""
    from ome_selector.cache.manifests import load_manifests, manifests_version
    from ome_selector.cache.store import CacheStore
    from ome_selector.domain.errors import RequestError
    from ome_selector.examples import example_paths
    from ome_selector.rpc import api
    from ome_selector.texts.fieldpaths import describe, present

    result = load_manifests(args.manifests if args.manifests else example_paths())
    if args.verbose:
        for line in result.skipped:
            print(f"skipped: {line}", file=err)
    for line in result.warnings:
        print(f"warning: {line}", file=err)
    # A path that does not exist, or a load over its object bound, is fatal; an unreadable file
    # or folder, or a rejected object, is a warning (fatal with --strict).
    if result.missing or result.over_limit or (args.strict and not result.clean):
        fatal = [*result.errors, *result.unreadable_folders] if args.strict else [*result.missing, result.over_limit]
        raise UsageError(
            f"cannot load manifests{' (--strict)' if args.strict else ''}:\n  " + "\n  ".join(filter(None, fatal))
        )
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
            message, violations = present(exc, type(request).DESCRIPTOR)
            raise UsageError(
                command.error_text(exc.code, message, [(v.field, v.description) for v in violations])
            ) from None

    return ask


def _quiet_grpc() -> None:
    """gRPC C-core logs at ERROR only unless ``GRPC_VERBOSITY`` says otherwise (as ``serve``
    does): a server that drains would otherwise print its GOAWAY on stderr. Before grpc loads."""
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")


def _ask_server(args: argparse.Namespace, command: Command, request: Message) -> Message:
    """``command.remote`` on a client of ``args.server``; a failed call is a ``UsageError``
    naming its status code, message and field violations."""
    _quiet_grpc()
    from ome_selector_client import SelectorClient, SelectorError

    try:
        with SelectorClient(args.server, timeout=args.timeout) as client:
            return command.remote(client, request)
    except SelectorError as exc:
        raise UsageError(command.error_text(exc.code.name, exc.message, exc.field_violations)) from None


def _stream_server(args: argparse.Namespace, command: Command, request: Message) -> Iterator[Message]:
    """The responses of ``command.remote`` on a client of ``args.server``, as they come, until the
    server ends the stream; leaving early (Ctrl-C, a closed pipe) cancels it. A failed stream (the
    server unreachable, a rejected filter) is a ``UsageError`` naming its status code, message and
    field violations."""
    _quiet_grpc()
    from ome_selector_client import SelectorClient, SelectorError

    try:
        with SelectorClient(args.server) as client, command.remote(client, request) as stream:
            yield from stream
    except SelectorError as exc:
        raise UsageError(command.error_text(exc.code.name, exc.message, exc.field_violations)) from None
