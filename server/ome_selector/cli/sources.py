"""What a query command reads: ``-f`` files (InferenceServices, a runtime, cache objects), ``--model``,
a runtime name; each ``Source`` builds the request fields of one answer."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any, Callable, Mapping, NamedTuple, TextIO

from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2

NO_CHANGE = "at least one of -f/--filename or --delete is required"
OUTPUT_FORMATS = ("table", "wide", "json", "yaml", "name")
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
    from ome_selector.cache.manifest_types import ManifestError
    from ome_selector.cache.manifests import read_inference_services

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


def _read_runtime(args: argparse.Namespace, err: TextIO) -> list[dict[str, Message]]:
    """The first ServingRuntime or ClusterServingRuntime of ``-f``, as its request field
    (``serving_runtime`` / ``cluster_serving_runtime``)."""
    from ome_selector.cache.manifest_types import ManifestError
    from ome_selector.cache.manifests import load_runtime

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
    from ome_selector.cache.manifest_types import ManifestError
    from ome_selector.cache.manifests import read_cache_objects

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
