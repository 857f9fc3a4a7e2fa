"""The InferenceService a kubectl-ome command names (reference/kubectl-ome/runtime.md: "``effective``,
``history`` and ``sync`` take the name of one InferenceService, and so does ``explain --isvc``"),
read from the server's cache (``--server``, GetInferenceService) or from ``--manifests``, in the
namespace ``-n`` (default ``default``: there is no kubeconfig context). ``-f FILE`` stays an
alternative. The texts are the page's:

- explain: ``exactly one of --model or --isvc is required``; a missing InferenceService fails
  with the API server's error (``inferenceservices.ome.io "<name>" not found``);
- effective, history: ``InferenceService name "<name>" is invalid: ...``, ``get InferenceService:
  ...``;
- sync: ``required Kubernetes API request failed; check access and connectivity`` for any failure
  to read the InferenceService at the start, even when it doesn't exist.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, NoReturn, TextIO

from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2
from ome.v1beta1 import types_pb2

from ome_selector.cli.sources import Flag, Source, UsageError, _load_isvcs, flag
from ome_selector.texts import messages

_FILE_HELP = "InferenceService YAML (every InferenceService document is answered, in order; - reads stdin)"
EXACTLY_ONE_TARGET = "exactly one of INFERENCESERVICE, --isvc or -f/--filename is required"

# Each command's texts for a failed read: (invalid name, read failure).
STYLE_EFFECTIVE = "effective"
STYLE_SYNC = "sync"
STYLE_EXPLAIN = "explain"


def _usage_error(args: argparse.Namespace, message: str) -> NoReturn:
    """A flag error as argparse reports one: the command's usage, ``error: <message>``, and the
    command's status (1 for the kubectl-ome commands), as a missing required flag is."""
    from ome_selector.cli.app import build_parser

    [subcommands] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    subcommands.choices[args.command].error(message)
    raise AssertionError("argparse's error() returned")  # pragma: no cover


def _invalid(name: str) -> str:
    from ome_selector.domain.errors import quote
    from ome_selector.validation import name_problem

    problem = name_problem(name)
    return messages.isvc_invalid_name(quote(name), problem) if problem else ""


def _failure(style: str, error: str) -> str:
    if style == STYLE_SYNC:
        return messages.SYNC_API_REQUEST_FAILED
    if style == STYLE_EFFECTIVE:
        return messages.get_isvc_failed(error)
    return error


def read_named(args: argparse.Namespace, name: str, style: str) -> types_pb2.InferenceService:
    """The InferenceService ``name`` in ``-n``: from ``--server`` (GetInferenceService) or the
    manifests (``--manifests``, default the embedded examples; loaded here without their warnings,
    which the answer's own load prints). ``UsageError`` with the command's texts."""
    invalid = _invalid(name)
    if invalid:
        raise UsageError(invalid)
    namespace = args.namespace or "default"
    if args.server:
        from ome_selector.cli.asking import _check_server, _quiet_grpc

        _check_server(args.server)
        _quiet_grpc()
        from ome_selector_client import SelectorClient, SelectorError

        try:
            with SelectorClient(args.server, timeout=args.timeout) as client:
                return client.get_inference_service(namespace, name).inference_service
        except SelectorError as exc:
            raise UsageError(_failure(style, exc.message or exc.code.name)) from None
    isvc = _from_manifests(args).get((namespace, name))
    if isvc is None:
        raise UsageError(_failure(style, messages.isvc_not_found(name)))
    return isvc


def _from_manifests(args: argparse.Namespace) -> dict[tuple[str, str], types_pb2.InferenceService]:
    """The InferenceServices of ``--manifests`` (default: the embedded examples), by namespace and name."""
    from ome_selector.cache.manifests import load_manifests
    from ome_selector.examples import example_paths

    result = load_manifests(args.manifests if args.manifests else example_paths())
    out: dict[tuple[str, str], types_pb2.InferenceService] = {}
    for obj in result.objects:
        if obj.WhichOneof("object") == "inference_service":
            meta = obj.inference_service.metadata
            out[(meta.namespace, meta.name)] = obj.inference_service
    return out


def target_flags(positional: bool) -> tuple[Flag, ...]:
    """``-f`` (optional), the positional INFERENCESERVICE (``positional``) and ``--isvc NAME``."""
    flags = [flag("-f", "--filename", metavar="FILE", help=_FILE_HELP + "; or name the InferenceService")]
    if positional:
        flags.append(
            flag(
                "isvc_name",
                nargs="?",
                metavar="INFERENCESERVICE",
                help="the InferenceService's name, in -n, from --server's cache or --manifests",
            )
        )
    flags.append(
        flag("--isvc", metavar="NAME", help="the InferenceService's name, in -n, from --server's cache or --manifests")
    )
    return tuple(flags)


def named(args: argparse.Namespace) -> list[str]:
    """The names given (positional INFERENCESERVICE, ``--isvc``)."""
    return [n for n in (getattr(args, "isvc_name", None), getattr(args, "isvc", None)) if n is not None]


def isvc_source(style: str, optional: Callable[[argparse.Namespace], bool] = lambda args: False) -> Source:
    """effective / history / sync: ``-f FILE``, or INFERENCESERVICE / ``--isvc NAME``, exactly
    one (``optional(args)``: none at all is allowed, as ``history --gc``)."""

    def read(args: argparse.Namespace, err: TextIO) -> list[dict[str, Message]]:
        names = named(args)
        given = len(names) + (args.filename is not None)
        if given == 0 and optional(args):
            return [{}]
        if given != 1:
            _usage_error(args, EXACTLY_ONE_TARGET)
        if names:
            return [{"inference_service": read_named(args, names[0], style)}]
        return [{"inference_service": isvc} for isvc in _load_isvcs(args, err)]

    return Source(
        flags=target_flags(positional=True),
        namespace_help="namespace of INFERENCESERVICE / --isvc, or of an InferenceService of -f whose metadata "
        "sets none (default: default)",
        read=read,
    )


def _read_explain(args: argparse.Namespace, err: TextIO) -> list[dict[str, Any]]:
    """explain: ``--model`` (in ``-n``), ``--isvc NAME`` or ``-f``, exactly one."""
    given = (args.model is not None) + (args.isvc is not None) + (args.filename is not None)
    if given != 1:
        raise UsageError(messages.EXPLAIN_EXACTLY_ONE)
    if args.model is not None:
        return [{"model": selector_pb2.ModelLookup(name=args.model, namespace=args.namespace)}]
    if args.isvc is not None:
        return [{"inference_service": read_named(args, args.isvc, STYLE_EXPLAIN)}]
    return [{"inference_service": isvc} for isvc in _load_isvcs(args, err)]


EXPLAIN_SOURCE = Source(
    flags=(
        *target_flags(positional=False),
        flag(
            "--model", metavar="NAME", help="explain for this BaseModel in the namespace -n, else this ClusterBaseModel"
        ),
    ),
    namespace_help="namespace of --model or --isvc, or of an InferenceService of -f whose metadata sets none "
    "(default: default)",
    read=_read_explain,
)
