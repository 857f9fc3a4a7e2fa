"""``ome-selector wait NAME -n NS --for=runtime-sync=acknowledged --request-id=ID [--timeout=60s]
--server ADDR``: ``kubectl ome wait`` (concepts/runtimes/runtime-revisions.md, "kubectl ome
runtime sync"; reference/kubectl-ome/runtime.md, sync "Examples").

It waits until the controller has used the token ``cli-runtime-sync-<ID>`` that ``sync``
asked for: the ``ome.io/runtime-sync`` annotation and ``status.lastRuntimeSyncToken`` both hold
it, the InferenceService has no ``RuntimeDrifted`` condition, and its pin is still managed
(``ManagedPin``: a named runtime, ``autoSync: false``, no ``revision``). Exit status 0 then
(``inferenceservice.ome.io/<name> condition met`` on stdout); 2 when that does not happen within
``--timeout`` (default 60s, as the page's), or the InferenceService is missing, deleted or
replaced (another uid); 1 on an error (bad flags, an unreachable server). The new pods can still
be rolling out then.

Built on WatchSelections: the stream of ``-n``'s outcomes marks when the cache changed (its
initial-events marker, each write's stats, a resync), and after each such event the cached
InferenceService is read again (GetInferenceService) and checked, so no write is missed and no
polling interval delays the answer (kubectl-ome polls every five seconds).
"""

from __future__ import annotations

import argparse
import time
import uuid
from typing import Any, TextIO

from ome.v1beta1 import types_pb2

from ome_selector.cli.gc_report import parse_duration
from ome_selector.domain import objects as d
from ome_selector.flows.revisions import PinMode, pin_mode
from ome_selector.texts import messages
from ome_selector.texts import wait as texts

EXIT_MET = 0
EXIT_ERROR = 1
EXIT_NOT_MET = 2  # the page's: not within the timeout, or missing, deleted or replaced
DEFAULT_TIMEOUT = "60s"
# Each GetInferenceService call's own deadline, in seconds.
READ_TIMEOUT = 10.0

HELP = """\
wait until the controller has used a runtime sync request (kubectl ome wait).

`kubectl ome wait NAME -n NAMESPACE --for=runtime-sync=acknowledged --request-id=ID`: waits until
the ome.io/runtime-sync annotation and status.lastRuntimeSyncToken of the cached InferenceService
both hold cli-runtime-sync-<ID> (the token sync asked for), it has no RuntimeDrifted condition and
its pin is still managed. It follows the server's cache (--server) with WatchSelections and reads
the InferenceService again after each cache write. Exit status 0 when that holds ("...
condition met" on stdout); 2 when it does not within --timeout (default 60s), or the
InferenceService is missing, deleted or replaced; 1 on an error. The new pods can still be
rolling out then."""


def acknowledged(isvc: types_pb2.InferenceService, token: str) -> bool:
    """runtime.md, sync "Examples": both hold the token, no RuntimeDrifted condition, a managed pin."""
    return (
        isvc.metadata.annotations.get(d.RUNTIME_SYNC_ANNOTATION, "") == token
        and isvc.status.last_runtime_sync_token == token
        and not any(c.type == messages.CONDITION_RUNTIME_DRIFTED for c in isvc.status.conditions)
        and pin_mode(isvc.spec.runtime) is PinMode.MANAGED_PIN
    )


def add_parser(subcommands: Any, parser_class: Any, epilog: str | None) -> None:
    """The ``wait`` subparser (errors exit 1, as the page's "1 on an error")."""
    sub = subcommands.add_parser(
        "wait",
        help=HELP.split("\n\n", 1)[0].removesuffix("."),
        description=HELP,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub.error_status = EXIT_ERROR
    sub.add_argument("name", metavar="NAME", help="the InferenceService")
    sub.add_argument("-n", "--namespace", default="default", help="its namespace (default: default)")
    sub.add_argument(
        "--for", dest="wait_for", required=True, metavar="CONDITION", help="runtime-sync=acknowledged (the only one)"
    )
    sub.add_argument("--request-id", default="", metavar="ID", help="the request ID that sync printed")
    sub.add_argument(
        "--timeout",
        type=parse_duration,
        default=parse_duration(DEFAULT_TIMEOUT),
        metavar="DURATION",
        help="how long to wait, such as 30s or 2m (default: 60s)",
    )
    sub.add_argument("--server", required=True, metavar="ADDR", help="the ome-selector server (host:port)")


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Validate the flags, then wait; the exit status as the module says."""
    if args.wait_for != texts.FOR_RUNTIME_SYNC_ACKNOWLEDGED:
        return _fail(err, texts.unsupported_for(args.wait_for), EXIT_ERROR)
    if not args.request_id:
        return _fail(err, texts.REQUEST_ID_REQUIRED, EXIT_ERROR)
    try:
        uuid.UUID(args.request_id)
    except ValueError:
        return _fail(err, texts.bad_request_id(args.request_id), EXIT_ERROR)
    from ome_selector.cli.asking import _check_server, _quiet_grpc
    from ome_selector.cli.sources import UsageError

    try:
        _check_server(args.server)
    except UsageError as exc:
        return _fail(err, str(exc), EXIT_ERROR)
    _quiet_grpc()
    return _wait(args, messages.SYNC_TOKEN_PREFIX + args.request_id, out, err)


def _fail(err: TextIO, message: str, status: int) -> int:
    print(f"error: {message}", file=err)
    return status


def _wait(args: argparse.Namespace, token: str, out: TextIO, err: TextIO) -> int:
    import grpc
    from ome_selector_client import SelectorClient, SelectorError

    namespace, name = args.namespace, args.name
    deadline = time.monotonic() + args.timeout
    seen_uid: str | None = None
    try:
        with (
            SelectorClient(args.server) as client,
            client.watch_selections(namespace, timeout=max(args.timeout, 0.001)) as stream,
        ):
            for event in stream:
                which = event.WhichOneof("event")
                if which == "current" or (which == "change" and event.change.name != name):
                    continue
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return _fail(err, texts.timed_out(name), EXIT_NOT_MET)
                try:
                    got = client.get_inference_service(namespace, name, timeout=min(READ_TIMEOUT, remaining))
                except SelectorError as exc:
                    if exc.code is not grpc.StatusCode.NOT_FOUND:
                        raise
                    if seen_uid is None:
                        return _fail(err, exc.message, EXIT_NOT_MET)
                    return _fail(err, texts.deleted(namespace, name), EXIT_NOT_MET)
                isvc = got.inference_service
                if seen_uid is None:
                    seen_uid = isvc.metadata.uid
                elif isvc.metadata.uid != seen_uid:
                    return _fail(err, texts.replaced(namespace, name, seen_uid, isvc.metadata.uid), EXIT_NOT_MET)
                if acknowledged(isvc, token):
                    print(texts.condition_met(name), file=out, flush=True)
                    return EXIT_MET
    except SelectorError as exc:
        if exc.code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return _fail(err, texts.timed_out(name), EXIT_NOT_MET)
        return _fail(err, f"{exc.code.name}: {exc.message}", EXIT_ERROR)
    # The server ended the stream (it drains) before the condition held.
    return _fail(err, texts.timed_out(name), EXIT_NOT_MET)
