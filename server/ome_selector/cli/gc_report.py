"""``ome-selector history --gc``: which runtime revisions OME's garbage collection keeps and
deletes, and why (PlanRevisionGC; concepts/runtimes/runtime-revisions.md, "Garbage
collection"). The service changes nothing: the caller marks, unmarks and deletes.

- ``history --gc``: every revision in ``--ome-namespace``;
- ``history --gc -f ISVC.yaml`` (or ``history --gc NAME -n NS``): the revisions of each
  InferenceService's runtime name (the one ``history`` lists, so also an auto-selected runtime's).

``--keep-newest N`` (default 10), ``--grace-period DURATION`` (``24h``, ``90m``, ``1h30m``,
``3600s``; default 24h) and ``--now TIME`` (RFC 3339; default the clock of whoever answers) set
the plan's parameters. ``-o wide`` adds CREATED, USED-BY and MESSAGE; ``-o json`` / ``-o yaml``
print the PlanRevisionGCResponse; ``-o name`` prints ``controllerrevision.apps/<name>`` for each
revision to delete now (action ``Delete``). Status 0; 1 on an error.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any, TextIO

from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2

from ome_selector.cli import isvc_target
from ome_selector.cli.cells import runtime_ref
from ome_selector.cli.sources import Flag, UsageError, flag
from ome_selector.texts import revision_gc as texts

if TYPE_CHECKING:
    from ome_selector_client import SelectorClient

    from ome_selector.cli.commands import Command

NO_RUNTIME_NAME = "InferenceService {namespace}/{name}: no runtime name, so no revisions to plan for"
_DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?\Z")


def parse_duration(text: str) -> int:
    """A duration in seconds, written as Go's ``time.Duration`` prints whole ones (``24h``,
    ``1h30m``, ``90s``); ``argparse.ArgumentTypeError`` otherwise."""
    match = _DURATION.match(text)
    if not text or match is None:
        raise argparse.ArgumentTypeError(f"not a duration such as 24h, 90m or 3600s: {text!r}")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds


GC_FLAGS: tuple[Flag, ...] = (
    flag(
        "--gc",
        action="store_true",
        help="plan OME's revision garbage collection instead: for every revision (or, with -f, those of "
        "each InferenceService's runtime name), keep or delete, why, and what the controller writes",
    ),
    flag(
        "--keep-newest",
        type=int,
        default=0,
        metavar="N",
        help="with --gc: the newest revisions kept per runtime name (default: 10, OME's)",
    ),
    flag(
        "--grace-period",
        type=parse_duration,
        default=0,
        metavar="DURATION",
        help="with --gc: how long an eligible revision waits before it is deleted (default: 24h, OME's)",
    ),
    flag(
        "--now",
        default="",
        metavar="TIME",
        help="with --gc: the time to plan at, RFC 3339 (default: the clock of whoever answers)",
    ),
)


# ``history``'s source: ``-f``, INFERENCESERVICE or ``--isvc``, as ``effective``'s; none at all
# with ``--gc`` (every revision).
HISTORY_SOURCE = isvc_target.isvc_source(isvc_target.STYLE_EFFECTIVE, optional=lambda args: bool(args.gc))


def _remote(client: SelectorClient, request: Message) -> Message:
    if isinstance(request, selector_pb2.PlanRevisionGCRequest):
        return client.plan_revision_gc(request)
    assert isinstance(request, selector_pb2.GetRuntimeHistoryRequest)
    return client.get_runtime_history(
        request.inference_service, ome_namespace=request.ome_namespace, collection_limit=request.collection_limit
    )


def _command() -> Command:
    """The row ``asking.asker`` answers with: PlanRevisionGC (and the GetRuntimeHistory that
    finds an InferenceService's runtime name), errors as kubectl-ome prints them, status 1."""
    from ome_selector.cli.commands import Command

    return Command(
        name="history",
        rpc="PlanRevisionGC",
        help="",
        source=HISTORY_SOURCE,
        remote=_remote,
        render=lambda _request, response: format_gc(response),
        error_status=1,
        plain_errors=True,
    )


def requests(args: argparse.Namespace, err: TextIO, ask: Any) -> list[selector_pb2.PlanRevisionGCRequest]:
    """One PlanRevisionGCRequest for every revision, or one per InferenceService of ``-f`` for
    the runtime name its ``history`` lists (``UsageError`` when it has none)."""
    from ome_selector.texts.messages import CLI_COLLECTION_LIMIT

    settings: dict[str, Any] = {
        "ome_namespace": args.ome_namespace,
        "keep_newest": args.keep_newest,
        "grace_period_seconds": args.grace_period,
        "now": args.now,
    }
    subjects = HISTORY_SOURCE.read(args, err)
    if subjects == [{}]:
        return [selector_pb2.PlanRevisionGCRequest(**settings)]
    out = []
    for subject in subjects:
        isvc = subject["inference_service"]
        history = ask(
            selector_pb2.GetRuntimeHistoryRequest(
                inference_service=isvc, ome_namespace=args.ome_namespace, collection_limit=CLI_COLLECTION_LIMIT
            )
        )
        if not history.runtime_name:
            raise UsageError(NO_RUNTIME_NAME.format(namespace=isvc.metadata.namespace, name=isvc.metadata.name))
        out.append(
            selector_pb2.PlanRevisionGCRequest(runtime=selector_pb2.RuntimeRef(name=history.runtime_name), **settings)
        )
    return out


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``history --gc``: ask, print in ``-o``'s format, status 0 (``UsageError`` on an error)."""
    from ome_selector.cli import rendering
    from ome_selector.cli.asking import asker

    if args.keep_newest < 0:
        raise UsageError(f"--keep-newest must be 0 or more, got {args.keep_newest}")
    ask = asker(args, _command(), err)
    responses = [ask(request) for request in requests(args, err, ask)]
    if args.output == "json":
        text = rendering.format_json(responses)
    elif args.output == "yaml":
        text = rendering.format_yaml(responses)
    elif args.output == "name":
        text = "\n".join(
            f"controllerrevision.apps/{e.name}"
            for response in responses
            for e in response.revisions
            if e.action == selector_pb2.REVISION_GC_ACTION_DELETE
        )
    elif args.output in ("table", "wide"):
        render = format_gc_wide if args.output == "wide" else format_gc
        text = "\n\n".join(render(response) for response in responses)
    else:
        raise UsageError(f"-o {args.output} is not supported with --gc (table, wide, json, yaml, name)")
    if text:
        print(text, file=out)
    return 0


def _row(entry: selector_pb2.RevisionGCEntry) -> tuple[str, ...]:
    return (
        entry.name,
        runtime_ref(entry.source),
        str(entry.rank) if entry.rank else "-",
        texts.VERDICTS[selector_pb2.RevisionGCVerdict.Name(entry.verdict).removeprefix("REVISION_GC_VERDICT_")],
        texts.ACTIONS[selector_pb2.RevisionGCAction.Name(entry.action).removeprefix("REVISION_GC_ACTION_")],
        texts.REASONS[selector_pb2.RevisionGCReason.Name(entry.reason).removeprefix("REVISION_GC_REASON_")],
        entry.delete_after or "-",
    )


def format_gc(response: selector_pb2.PlanRevisionGCResponse) -> str:
    """The plan's table: REVISION (full name), RUNTIME-OF (the runtime its labels name), RANK
    (newest first, from 1), VERDICT (Keep, Delete), ACTION (-, Unmark, Mark, Wait, Delete),
    REASON (NotOMEManaged, Requested, Reported, Newest, Eligible), DELETE-AFTER; no revisions:
    ``texts.NO_REVISIONS``."""
    from ome_selector.cli.reports import format_table

    if not response.revisions:
        return texts.NO_REVISIONS
    return format_table(texts.GC_HEADERS, [_row(e) for e in response.revisions])


def format_gc_wide(response: selector_pb2.PlanRevisionGCResponse) -> str:
    """``-o wide``: the table plus CREATED, USED-BY and MESSAGE."""
    from ome_selector.cli.reports import format_table

    if not response.revisions:
        return texts.NO_REVISIONS
    rows = [(*_row(e), e.created or "-", ",".join(e.used_by) or "-", e.message) for e in response.revisions]
    return format_table((*texts.GC_HEADERS, *texts.GC_WIDE_HEADERS), rows)
