"""``ome-selector explain --isvc NAME --with-effective``: the explain table, then a blank line,
``Effective context (separate observation; selector verdict unchanged):`` and the effective
context (reference/kubectl-ome/runtime.md, explain "Effective context"): Service SELECTION
(``Explicit`` / ``Selected``), Service SOURCE, Source INHERITANCE (``Observed`` /
``Unavailable``, with REASON), one Source ROOT-FIRST row per runtime of the chain, Service CAVEAT
``Independent snapshot; not rollout convergence``, then the rows ``effective`` prints. The context
is a separate GetEffectiveRuntime (revisions read in ``--ome-namespace``, auto-selection from at
most 1,000 runtimes); when it cannot be collected, only ``Service EVIDENCE Unavailable`` and
``Service CAVEAT Selector verdict above is unchanged``, and the status stays 0. With no runtimes
at all, ``No serving runtimes found for selector.`` goes to stderr instead of explain's note, and
the context still prints. ``--with-effective`` without ``--isvc`` fails with
``--with-effective requires --isvc``. Tables only (no ``-o``).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, TextIO

from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2

from ome_selector.cli.sources import UsageError
from ome_selector.texts import messages

if TYPE_CHECKING:
    from ome_selector_client import SelectorClient

    from ome_selector.cli.commands import Command

TABLES_ONLY = "--with-effective prints tables: leave out -o"


def _remote(client: SelectorClient, request: Message) -> Message:
    from ome_selector.cli.commands import _explain_remote

    if isinstance(request, selector_pb2.GetEffectiveRuntimeRequest):
        return client.get_effective_runtime(
            request.inference_service, ome_namespace=request.ome_namespace, collection_limit=request.collection_limit
        )
    assert isinstance(request, selector_pb2.ExplainRuntimesRequest)
    return _explain_remote(client, request)


def _command() -> Command:
    import dataclasses

    from ome_selector.cli.commands import COMMANDS

    return dataclasses.replace(COMMANDS["explain"], remote=_remote)


def context_rows(response: selector_pb2.GetEffectiveRuntimeResponse) -> list[tuple[str, str, str]]:
    """The effective context's rows: SELECTION, SOURCE, the Source rows, CAVEAT, then the
    ``effective`` rows (the page's order), values as ``effective`` keeps them."""
    from ome_selector.cli.reports import format_effective, without_headers

    with without_headers(False):
        lines = format_effective(response).splitlines()[1:]
    rows = [tuple(line.split(None, 2)) for line in lines]
    rows = [(*r, "")[:3] for r in rows]  # a value-less row keeps three cells
    source = [r for r in rows if r[0] == "Source"]
    rest = [r for r in rows if r[0] != "Source"]
    head = [("Service", "SELECTION", response.selection or "-")]
    if response.runtime:
        head.append(("Service", "SOURCE", response.runtime))
    return [*head, *source, ("Service", "CAVEAT", messages.EFFECTIVE_CONTEXT_CAVEAT), *rest]  # type: ignore[list-item]


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """``explain --with-effective``; ``UsageError`` (status 1) as ``explain``'s."""
    from ome_selector.cli.asking import asker
    from ome_selector.cli.labels import EFFECTIVE_HEADERS
    from ome_selector.cli.reports import format_explain, format_table
    from ome_selector.texts.messages import CLI_COLLECTION_LIMIT

    if args.isvc is None:
        raise UsageError(messages.WITH_EFFECTIVE_REQUIRES_ISVC)
    if args.output != "table":
        raise UsageError(TABLES_ONLY)
    command = _command()
    [message] = command.requests(args, err)
    assert isinstance(message, selector_pb2.ExplainRuntimesRequest)
    request = message
    ask = asker(args, command, err)
    explained = ask(request)
    limit = command.limit_error(explained)
    if limit:
        raise UsageError(limit)
    for note in command.notes(explained):
        print(messages.NO_RUNTIMES_FOR_SELECTOR if note == messages.NO_RUNTIMES_NOTE else note, file=err)
    table = format_explain(explained)
    try:
        effective = ask(
            selector_pb2.GetEffectiveRuntimeRequest(
                inference_service=request.inference_service,
                ome_namespace=args.ome_namespace,
                collection_limit=CLI_COLLECTION_LIMIT,
            )
        )
        rows = context_rows(effective)
    except UsageError:
        rows = [
            ("Service", "EVIDENCE", "Unavailable"),
            ("Service", "CAVEAT", messages.EFFECTIVE_CONTEXT_UNAVAILABLE_CAVEAT),
        ]
    context = f"{messages.EFFECTIVE_CONTEXT_HEADING}\n{format_table(EFFECTIVE_HEADERS, rows)}"
    print(f"{table}\n\n{context}" if table else context, file=out)
    return 0
