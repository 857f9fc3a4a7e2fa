"""The ``ome-selector`` query commands: ONE table, ``COMMANDS``, of what each subcommand reads,
the request it builds, the RPC that answers it, and how the answer is printed and judged.

Each ``Command`` row names its ``SelectionService`` method (``rpc``), the same name that keys
``api.SELECTION_RPCS``, the table whose rows ``servicers.SelectionServicer``'s methods call; the
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

``Command`` (the row's fields) is ``command``'s; it and ``SELECTION_SERVICE`` are importable from
here too. Importing this module imports no grpc (the client is imported when ``--server`` is used), so
``serve`` can still configure gRPC's C-core first."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Callable

from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2

from ome_selector.cli import gc_report, isvc_target, rendering, reports, runtime_reports, tree_report, watch_report
from ome_selector.cli.command import SELECTION_SERVICE as SELECTION_SERVICE  # re-exported
from ome_selector.cli.command import Command, _of_response

if TYPE_CHECKING:
    from ome_selector_client import SelectorClient
from ome_selector.cli.sources import (
    _VIEWS,
    CACHE_CHANGE,
    INFERENCE_SERVICES,
    NO_FILE,
    RUNTIME_NAME,
    SERVING_RUNTIME,
    UsageError,
    flag,
)


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


def _revisions_remote(method: str) -> Callable[[SelectorClient, Any], Message]:
    """The typed client's ``method`` (``get_effective_runtime``, ``get_runtime_history``) called
    with the request's InferenceService, ``ome_namespace`` and ``collection_limit``."""
    return lambda client, request: getattr(client, method)(
        request.inference_service, ome_namespace=request.ome_namespace, collection_limit=request.collection_limit
    )


# The commands of reference/kubectl-ome/runtime.md (explain, effective, history, sync, tree):
# "Exit codes" 1 for every error, bad flags too, never 2; a failed call's message alone.
_RUNTIME_PAGE: dict[str, Any] = {"error_status": 1, "plain_errors": True}

SYNC_DRY_RUN_ONLY = "only --dry-run client is supported: the service plans the sync and sends no patch"
SYNC_NOT_CONFIRMED = "action not confirmed; noninteractive input requires --yes"


def _sync_fields(args: argparse.Namespace) -> dict[str, Any]:
    """``sync``: ``--dry-run client`` is required (there is no API server to patch); without a
    terminal on stdin, ``--yes`` is too (runtime.md, "How the action runs": the prompt needs one);
    ``ome_namespace``, ``context``."""
    import sys

    if args.dry_run != "client":
        raise UsageError(SYNC_DRY_RUN_ONLY)
    if not args.yes and not sys.stdin.isatty():
        raise UsageError(SYNC_NOT_CONFIRMED)
    return {"ome_namespace": args.ome_namespace, "context": args.context}


def _allowed(
    response: selector_pb2.AdmitInferenceServiceResponse | selector_pb2.ValidateServingRuntimeResponse,
) -> bool:
    """admit and validate-runtime: status 0 when the webhook admits the object."""
    return response.allowed


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
            render=_of_response(reports.format_selection),
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
with no runtimes at all, no table is printed. --isvc NAME explains for the InferenceService NAME
in -n (from --server's cache or --manifests); --with-effective then appends "Effective context
(separate observation; selector verdict unchanged):" and the effective context. Status 0 when
it finishes (candidates or not), 1 for every error (reference/kubectl-ome/runtime.md, "Exit
codes").""",
            source=isvc_target.EXPLAIN_SOURCE,
            flags=(
                flag(
                    "--with-effective",
                    action="store_true",
                    help="append the effective context for --isvc (a separate GetEffectiveRuntime: "
                    "auto-selection from at most 1,000 runtimes, revisions in --ome-namespace)",
                ),
                _OME_NAMESPACE,
            ),
            remote=_explain_remote,
            render=_of_response(reports.format_explain),
            notes=reports.explain_notes,
            succeeded=_finished,
            **_RUNTIME_PAGE,
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
            source=isvc_target.isvc_source(isvc_target.STYLE_EFFECTIVE),
            flags=(_OME_NAMESPACE,),
            fields=_collection_fields,
            remote=_revisions_remote("get_effective_runtime"),
            render=_of_response(runtime_reports.format_effective),
            render_wide=_of_response(runtime_reports.format_effective_wide),
            wide_help="one row per view and component",
            succeeded=_finished,
            **_RUNTIME_PAGE,
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
the RuntimeHistoryReport. Status 0; 1 on an error.

--gc plans OME's revision garbage collection instead (PlanRevisionGC): every revision in
--ome-namespace, or with -f those of each InferenceService's runtime name, under REVISION,
RUNTIME-OF, RANK (newest first), VERDICT (Keep, Delete), ACTION (-, Unmark, Mark, Wait, Delete:
what the controller writes), REASON (NotOMEManaged, Requested, Reported, Newest, Eligible) and
DELETE-AFTER; -o wide adds CREATED, USED-BY and MESSAGE, -o name the revisions to delete now.
Nothing is changed.""",
            source=gc_report.HISTORY_SOURCE,
            flags=(_OME_NAMESPACE, *gc_report.GC_FLAGS),
            fields=_collection_fields,
            remote=_revisions_remote("get_runtime_history"),
            render=_of_response(runtime_reports.format_history),
            render_wide=_of_response(runtime_reports.format_history_wide),
            wide_help="full names, times, hashes and issue codes",
            succeeded=_finished,
            **_RUNTIME_PAGE,
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
yourself. Only --dry-run client is supported. On a terminal it asks "Confirm this exact action?
[y/N]" after the preview; --yes skips it, and without a terminal --yes is required. -o json and
-o yaml print the whole plan. Status 0 when sync would go ahead; 1 on a refusal or an error.""",
            source=isvc_target.isvc_source(isvc_target.STYLE_SYNC),
            flags=(
                flag("--dry-run", choices=("none", "client", "server"), default="none", help="dry run: client only"),
                flag("--yes", action="store_true", help="confirm the exact preview without a prompt"),
                flag("--context", default="", help="the kubeconfig context the preview and follow-up name"),
                _OME_NAMESPACE,
            ),
            fields=_sync_fields,
            remote=lambda client, request: client.plan_runtime_sync(
                request.inference_service, ome_namespace=request.ome_namespace, context=request.context
            ),
            render=_of_response(runtime_reports.format_sync_result),
            notes=runtime_reports.sync_preview,
            confirms=True,
            succeeded=lambda response: not response.refusal_message,
            **_RUNTIME_PAGE,
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
            render=reports.format_admission,
            notes=reports.admission_notes,
            succeeded=_allowed,
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
            render=_of_response(reports.format_reconcile),
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
            render=reports.format_runtime_validation,
            notes=reports.runtime_validation_notes,
            succeeded=_allowed,
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
            render=_of_response(watch_report.format_preview),
            render_wide=_of_response(watch_report.format_preview_wide),
            wide_help="the table plus CAUSE",
            notes=watch_report.preview_notes,
            succeeded=lambda response: not response.changes,
            outputs=("table", "wide", "json", "yaml"),
        ),
        Command(
            name="watch",
            rpc="WatchSelections",
            help="""\
print the outcome of cached InferenceServices, then each change, as cache writes come.

Follows a running server (--server): first the current outcome of every cached InferenceService
of -n (every namespace by default) whose labels match -l, one row each with STEP "(current)";
then the line "# initial state: ..."; then, after each cache write, a row per InferenceService
whose outcome it changed (BEFORE and AFTER: the runtime, "none (<reason>)", or "-" when the
write creates or deletes it; STEP: the step that changed it: Ranking, CheckFailed, CheckPassed,
Model, NamedRuntime, RuntimeAdded, RuntimeDeleted, InferenceService, Configuration) and the line
"# write <version>: ...". A watcher that falls behind gets "# resync: ..." and the state again.
Each line fits in 120 columns (longer names shortened with a fingerprint); -o wide prints full
names, WHY / CAUSE (the step's text, then the objects of the write behind it) and VERSION (the
cache version after the write); -o json prints each event as one JSON object per line. Status 0
when the server ends the stream (it drains), 1 when the stream fails (unreachable server, bad
filter); Ctrl-C ends the watch.""",
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
            render=_of_response(watch_report.format_watch_event),
            render_wide=_of_response(watch_report.format_watch_event_wide),
            wide_help="full names, the reason's text and causes, and VERSION",
            heading=watch_report.WATCH_HEADING,
            wide_heading=watch_report.WATCH_WIDE_HEADING,
            outputs=("table", "wide", "json"),
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
            render=_of_response(tree_report.format_tree),
            render_wide=_of_response(tree_report.format_tree_wide),
            wide_help="full names, lines not wrapped",
            outputs=("table", "wide", "json", "yaml"),
            **_RUNTIME_PAGE,
        ),
    )
}
