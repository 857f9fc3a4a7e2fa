"""Who answers a command's request: in process from the manifests (``api.answer``), or the server
(``--server``) through the typed client."""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable, Iterator, TextIO

from google.protobuf.message import Message

from ome_selector.cli.commands import Command
from ome_selector.cli.sources import UsageError

# --- who answers ---------------------------------------------------------------------------------


def asker(args: argparse.Namespace, command: Command, err: TextIO) -> Callable[[Message], Any]:
    """The function that answers one request of ``command``: in-process from the manifests
    (``--manifests``, default the embedded examples) through ``api.answer``, or with
    ``--server ADDR`` through ``command.remote`` on a ``SelectorClient`` (deadline
    ``--timeout``). Raises ``UsageError`` when the manifests cannot be loaded (and, when it is
    called, when the service rejects the request or the server cannot be reached). A streaming
    command's answer is an iterator of responses (``--server`` only), which raises
    ``UsageError`` when the stream fails (the command's ``error_status``: 1 for watch)."""
    if args.server:
        _check_server(args.server)
    if command.streaming:
        return lambda request: _stream_server(args, command, request)
    if args.server:
        return lambda request: _ask_server(args, command, request)
    return _offline_asker(args, command, err)


# URL schemes people type for --server; gRPC's own targets (dns:///, unix:, unix://) pass through.
_URL_SCHEMES = ("http", "https", "grpc", "grpcs", "tcp")


def _check_server(address: str) -> None:
    """``UsageError`` for a URL in ``--server`` (``http://host:port``), which gRPC would answer
    with ``Misformatted domain name``: the hint names the host:port to give instead."""
    scheme, sep, rest = address.partition("://")
    if sep and scheme.lower() in _URL_SCHEMES:
        host_port = rest.split("/", 1)[0] or "HOST:PORT"
        raise UsageError(
            f"--server {address}: the server takes host:port or unix:/path, not a URL (try --server {host_port})"
        )


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
