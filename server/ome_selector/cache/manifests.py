"""Load Kubernetes YAML manifests into the selector's proto objects.

``load_manifests(paths)`` reads files and folders the way ``kubectl apply -f`` would, in a fixed
order, and returns the cached kinds as ``CacheObject`` messages (InferenceServices included):

* Paths are taken in the order given. A folder is walked recursively; its ``.yaml`` / ``.yml``
  files are read in sorted byte order of their path relative to the folder. A file named
  explicitly is read whatever its extension.
* Only regular files are read (a symlink is followed to its target): a FIFO, device or socket is
  skipped with a warning, never opened, so a ``*.yaml`` FIFO cannot hang the loader and a link to
  ``/dev/zero`` is not read. A file larger than ``bounds.MAX_FILE_BYTES`` (64 MiB) is refused.
* Each file may hold several YAML documents. Empty documents are ignored. Document indexes in
  messages are 0-based and count every document of the stream, empty ones included. A ``List``
  (``apiVersion: v1``, what ``kubectl get ... -o yaml`` prints, or ``<Kind>List`` of
  ``ome.io/v1beta1``) is expanded: each of its ``items`` is loaded as an object, named
  ``document <i>, items[<j>]``.
* ``ServingRuntime``, ``ClusterServingRuntime``, ``BaseModel``, ``ClusterBaseModel``,
  ``AcceleratorClass`` and ``InferenceService`` of ``ome.io/v1beta1``, and runtime revisions
  (``ControllerRevision`` of ``apps/v1``, what ``kubectl get controllerrevisions -n ome -o yaml``
  prints) become ``CacheObject`` messages (``LoadResult.inference_services`` lists the
  InferenceServices among them). Kustomization files and documents of any other kind or
  apiVersion are listed in ``skipped`` (the caller decides whether to log them).
  ``read_inference_services`` (one InferenceService file for a query) parses the
  InferenceServices without judging them as cache objects: the answer's validation does.
* YAML is read with a SafeLoader that keeps timestamps as text, so ``creationTimestamp`` reaches
  protobuf's JSON parser as RFC 3339, and keeps integers of more than 64 digits as text (Python
  refuses to convert numbers of more than 4,300 digits). Kubernetes int-or-string quantities that
  the proto types as ``string`` (see ``_QUANTITY_PATHS``) are turned into text first.
* Every field is checked against the proto message and the CRD (``crdfields``), as the API
  server's strict field validation does: a field neither knows is a warning
  (``unknown field "spec.modle"``); a value of the wrong type rejects the object
  (``spec.engine.minReplicas: Invalid value: "two": must be of type integer``). A
  ``google.protobuf.Struct`` field (what OME passes through verbatim: KEDA triggers, HPA metric
  sources, ...) takes any JSON object.

**One bad object never stops the load.** A bad document (a YAML error, a document that is not a
mapping, a wrong type, a field protobuf cannot parse, or an object ``bounds.validate_object``
rejects) is *rejected*: it is recorded in ``rejected`` (file, document index, item, kind, name,
and each field path with its reason, paths in the manifest's camelCase) and, one line per
problem, in ``errors`` as ``"<file>: document <index>: invalid <Kind> <name>: <field>: <reason>"``;
the other documents of that file and the other files load as usual. After a YAML syntax error the
file is split at its ``---`` lines and each document parsed on its own, so only the broken one is
lost. A path that does not exist or a file that cannot be read is an error line too (it rejects
no object). ``LoadResult.rejected_count`` is what ``serve`` logs; callers that want any bad input
to be fatal (``--strict``) test ``LoadResult.clean``.

Duplicates: an object is identified by kind + namespace + name. When the same object is defined
again, the definition loaded later wins, as ``kubectl apply`` in the same order would leave it,
and a warning names both places. The winning definition keeps the position of the *first*
definition in ``objects``, so adding an override never reorders the rest; ``sources`` records
the file of the winning definition.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, NamedTuple, Sequence, Union

import yaml
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.cache import crdfields
from ome_selector.cache.store import DEFAULT_MAX_OBJECTS as DEFAULT_STORE_MAX_OBJECTS
from ome_selector.cache.yamlload import KubernetesLoader
from ome_selector.domain import errors
from ome_selector.texts import fieldpaths

API_VERSION = "ome.io/v1beta1"

# Kind -> (message class, CacheObject oneof field). InferenceService is handled separately.
_CACHE_KINDS: dict[str, tuple[type[Message], str]] = {
    "ServingRuntime": (types_pb2.ServingRuntime, "serving_runtime"),
    "ClusterServingRuntime": (types_pb2.ClusterServingRuntime, "cluster_serving_runtime"),
    "BaseModel": (types_pb2.BaseModel, "base_model"),
    "ClusterBaseModel": (types_pb2.ClusterBaseModel, "cluster_base_model"),
    "AcceleratorClass": (types_pb2.AcceleratorClass, "accelerator_class"),
    "InferenceService": (types_pb2.InferenceService, "inference_service"),
    "ControllerRevision": (types_pb2.ControllerRevision, "controller_revision"),
}
# Cached kinds outside ome.io/v1beta1: runtime revisions are ControllerRevisions of apps/v1.
_API_VERSIONS = {"ControllerRevision": "apps/v1"}
INFERENCE_SERVICE = "InferenceService"
_LIST_KINDS = {f"{kind}List": kind for kind in _CACHE_KINDS}


def _api_version(kind: object) -> str:
    """The apiVersion a cached kind is read under."""
    return _API_VERSIONS.get(kind, API_VERSION) if isinstance(kind, str) else API_VERSION


_KUSTOMIZATION_FILES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
_MANIFEST_SUFFIXES = (".yaml", ".yml")
# Values visited per document at most (aliases can make a small file a huge tree).
MAX_DOCUMENT_VALUES = 200_000

# Kubernetes int-or-string quantity fields that are `string` in the proto, per kind, as JSON-name
# paths; "[]" steps into every item of a list, "{}" into every value of a map. YAML writes them as
# numbers as often as as text.
_RATIOS = ("spec", "scalingPolicy", "proportional", "ratios", "{}")
_QUANTITY_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
    "ServingRuntime": (_RATIOS,),
    "ClusterServingRuntime": (_RATIOS,),
    "AcceleratorClass": (
        ("spec", "capabilities", "memoryGB"),
        ("spec", "capabilities", "memoryBandwidthGBps"),
        ("spec", "cost", "perHour"),
        ("spec", "cost", "spotPerHour"),
        ("spec", "cost", "perMillionTokens"),
        ("spec", "resources", "[]", "quantity"),
    ),
}

# (kind, namespace, name); namespace is "" for cluster-scoped kinds.
ObjectKey = bounds.Key
_Parsed = Union[cache_pb2.CacheObject, Message]  # a Message: a document of one of ``raw_kinds``


class ManifestError(ValueError):
    """A manifest file cannot be used (for ``load_inference_service`` and ``load_runtime``)."""


@dataclass(frozen=True)
class Problem:
    """One reason an object was rejected: a field path (the manifest's camelCase, relative to
    the object; ``""`` for the whole document) and the reason."""

    field: str
    reason: str


@dataclass(frozen=True)
class Rejection:
    """A document (or ``List`` item) that was not loaded, and why."""

    file: str
    document: int
    item: int | None
    kind: str
    name: str
    problems: tuple[Problem, ...]

    @property
    def where(self) -> str:
        """``<file>: document <i>`` or ``<file>: document <i>, items[<j>]``."""
        item = f", items[{self.item}]" if self.item is not None else ""
        return f"{errors.printable(self.file)}: document {self.document}{item}"

    def lines(self) -> list[str]:
        """One line per problem: ``<where>: [invalid <Kind> <name>: ][<field>: ]<reason>``."""
        what = f"invalid {self.kind} {_short(self.name)}: " if self.kind else ""
        return [f"{self.where}: {what}{p.field + ': ' if p.field else ''}{p.reason}" for p in self.problems]


@dataclass
class LoadResult:
    """What ``load_manifests`` found.

    ``objects``: what loaded (``inference_services``: the InferenceServices among them).
    ``rejected``: each bad object (see the module docstring); ``errors``: one line per problem of
    each rejected object, then each path that could not be read; ``warnings``: duplicates, unknown
    fields, files that are not regular files, empty folders; ``skipped``: kinds that are not cached,
    kustomization files.
    """

    objects: list[cache_pb2.CacheObject] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # Which file the winning definition of each object (and InferenceService) came from.
    sources: dict[ObjectKey, str] = field(default_factory=dict)
    rejected: list[Rejection] = field(default_factory=list)
    # The lines of ``errors`` about paths: missing, unreadable, too large (no object rejected).
    path_errors: list[str] = field(default_factory=list)
    # The lines of ``path_errors`` about paths that do not exist.
    missing: list[str] = field(default_factory=list)
    # The lines of ``warnings`` about folders that could not be listed (``--strict`` refuses them).
    unreadable_folders: list[str] = field(default_factory=list)
    # Set when the load passed its object bound (``load_manifests(max_objects=...)``): the line
    # that says so (also in ``errors``); the load stopped there and must not be served.
    over_limit: str = ""

    @property
    def inference_services(self) -> list[types_pb2.InferenceService]:
        """The InferenceServices of ``objects``, in their order."""
        return [o.inference_service for o in self.objects if o.WhichOneof("object") == "inference_service"]

    @property
    def rejected_count(self) -> int:
        """How many objects (documents or List items) were rejected."""
        return len(self.rejected)

    @property
    def clean(self) -> bool:
        """True when nothing was rejected and every path could be read (``--strict`` passes)."""
        return not self.errors and not self.unreadable_folders


@dataclass
class _Document:
    index: int
    key: ObjectKey
    message: _Parsed


@dataclass
class _FileResult:
    documents: list[_Document] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # Kinds that stay messages, not judged as cache objects (read_inference_services,
    # read_cache_objects): only their types are checked.
    raw_kinds: frozenset[str] = frozenset()
    # Objects this file may still load (the load's bound); past it ``over_limit`` is set.
    budget: int | None = None
    over_limit: str = ""


# Objects one load may hold at most (``--max-objects``, OME_SELECTOR_MAX_OBJECTS), as an
# ApplySnapshot.
DEFAULT_MAX_OBJECTS = DEFAULT_STORE_MAX_OBJECTS


def load_manifests(paths: Sequence[str], *, max_objects: int = DEFAULT_MAX_OBJECTS) -> LoadResult:
    """Load every manifest under ``paths``; see the module docstring for the rules. Never
    raises for bad input: every problem is in ``errors`` / ``rejected`` / ``warnings``. Past
    ``max_objects`` objects (List items and redefinitions included) the load stops and sets
    ``over_limit``."""
    result = LoadResult()
    positions: dict[ObjectKey, int] = {}
    origins: dict[ObjectKey, _Origin] = {}
    loaded_count = 0
    for sequence, file in enumerate(_manifest_files(paths, result)):
        if os.path.basename(file) in _KUSTOMIZATION_FILES:
            result.skipped.append(f"{errors.printable(file)}: skipped kustomization file")
            continue
        loaded = _load_file(file, max_objects - loaded_count, max_objects)
        loaded_count += len(loaded.documents)
        result.skipped.extend(loaded.skipped)
        result.warnings.extend(loaded.warnings)
        result.errors.extend(loaded.errors)
        result.path_errors.extend(loaded.errors)
        result.rejected.extend(loaded.rejected)
        for rejection in loaded.rejected:
            result.errors.extend(rejection.lines())
        for doc in loaded.documents:
            if doc.key in origins:
                result.warnings.append(
                    _duplicate_warning(doc.key, origins[doc.key], _Origin(file, sequence, doc.index))
                )
                _replace(result, doc, positions[doc.key])
            else:
                positions[doc.key] = _append(result, doc)
            origins[doc.key] = _Origin(file, sequence, doc.index)
            result.sources[doc.key] = file
        if loaded.over_limit:
            result.over_limit = loaded.over_limit
            result.errors.append(loaded.over_limit)
            break
    return result


def read_inference_services(path: str | os.PathLike[str]) -> tuple[list[types_pb2.InferenceService], list[str]]:
    """(every InferenceService document of ``path`` in file order, warnings such as unknown
    fields); ``-`` reads standard input. ``List`` documents are expanded.

    Raises ``ManifestError`` when the file cannot be read, holds a bad document (each problem on
    its own line), or holds no ``ome.io/v1beta1`` InferenceService.
    """
    name, text = _read_one(path, "an InferenceService")
    loaded = _parse_text(name, text, raw_kinds=frozenset({INFERENCE_SERVICE}))
    problems = loaded.errors + [line for rejection in loaded.rejected for line in rejection.lines()]
    if problems:
        raise ManifestError("\n".join(problems))
    found = [doc.message for doc in loaded.documents if isinstance(doc.message, types_pb2.InferenceService)]
    if not found:
        raise ManifestError(f"{errors.printable(name)}: no InferenceService ({API_VERSION}) found")
    return found, loaded.warnings


def read_cache_objects(path: str | os.PathLike[str], namespace: str) -> tuple[list[cache_pb2.CacheObject], list[str]]:
    """(every object of a cached kind in ``path``, in file order, as CacheObjects; warnings such
    as unknown fields and skipped documents of other kinds); ``-`` reads standard input. ``List``
    documents are expanded; a namespaced object (ServingRuntime, BaseModel, InferenceService,
    ControllerRevision) without a namespace gets ``namespace``, as ``kubectl apply -n`` does. Only the types are
    checked (the cache write that receives them validates them, as for ``UpsertObjects``).

    Raises ``ManifestError`` when the file cannot be read, holds a bad document (each problem on
    its own line), or holds no object of a cached kind.
    """
    name, text = _read_one(path, "a manifest")
    loaded = _parse_text(name, text, raw_kinds=frozenset(_CACHE_KINDS))
    problems = loaded.errors + [line for rejection in loaded.rejected for line in rejection.lines()]
    if problems:
        raise ManifestError("\n".join(problems))
    found = []
    for doc in loaded.documents:
        kind = doc.key[0]
        obj = cache_pb2.CacheObject()
        message = getattr(obj, _CACHE_KINDS[kind][1])
        message.CopyFrom(doc.message)
        if kind in bounds.NAMESPACED and not message.metadata.namespace:
            message.metadata.namespace = namespace
        found.append(obj)
    if not found:
        by_version: dict[str, list[str]] = {}
        for kind in _CACHE_KINDS:
            by_version.setdefault(_API_VERSIONS.get(kind, API_VERSION), []).append(kind)
        kinds = "; ".join(f"{', '.join(names)} of {version}" for version, names in by_version.items())
        raise ManifestError(f"{errors.printable(name)}: no object of a cached kind ({kinds}) found")
    return found, loaded.warnings + loaded.skipped


def load_inference_service(path: str | os.PathLike[str]) -> types_pb2.InferenceService:
    """The first InferenceService document in ``path`` (``-`` reads standard input); errors as
    ``read_inference_services``."""
    return read_inference_services(path)[0][0]


def manifests_version(objects: Sequence[cache_pb2.CacheObject]) -> str:
    """Cache version for a snapshot loaded from manifests: ``manifests-<sha256 prefix>``.

    The hash covers the deterministic serialization of the loaded objects, in order, so the
    same content gives the same version whatever its YAML formatting.
    """
    digest = hashlib.sha256()
    for obj in objects:
        data = obj.SerializeToString(deterministic=True)
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return "manifests-" + digest.hexdigest()[:12]


def describe_key(key: ObjectKey) -> str:
    """``Kind name`` or ``Kind namespace/name`` (control characters escaped)."""
    kind, namespace, name = key
    return errors.printable(f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}")


# --- files -------------------------------------------------------------------------------------


def _manifest_files(paths: Sequence[str], result: LoadResult) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            found = sorted(_walk(path, result), key=os.fsencode)
            if not found and not result.unreadable_folders:
                result.warnings.append(f"{errors.printable(path)}: no .yaml or .yml files found")
            for rel in found:
                yield os.path.join(path, rel)
        elif os.path.lexists(path):
            yield path
        else:
            result.errors.append(f"{errors.printable(path)}: no such file or directory")
            result.path_errors.append(result.errors[-1])
            result.missing.append(result.errors[-1])


def _walk(root: str, result: LoadResult) -> Iterator[str]:
    def unreadable(exc: OSError) -> None:
        where = exc.filename if isinstance(exc.filename, str) else root
        line = f"{errors.printable(where)}: cannot read folder: {exc.strerror or exc}; its files are not loaded"
        result.warnings.append(line)
        result.unreadable_folders.append(line)

    for dirpath, _dirnames, filenames in os.walk(root, onerror=unreadable):
        for filename in filenames:
            if filename.endswith(_MANIFEST_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, filename), root)


class _NotRegular(ManifestError):
    """The path is a FIFO, device or socket: skipped, never opened."""


def _load_file(file: str, budget: int, limit: int) -> _FileResult:
    try:
        name, text = _read_one(file, "a manifest")
    except _NotRegular as exc:
        return _FileResult(warnings=[str(exc)])
    except ManifestError as exc:
        return _FileResult(errors=[str(exc)])
    return _parse_text(name, text, budget=budget, limit=limit)


_FILE_TYPES = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _file_type(mode: int) -> str:
    for test, what in _FILE_TYPES:
        if test(mode):
            return what
    return "not a regular file"


def _decode(path: str, data: bytes) -> str:
    if len(data) > bounds.MAX_FILE_BYTES:
        raise ManifestError(
            f"{errors.printable(path)}: {errors.too_long_bytes(bounds.MAX_FILE_BYTES)} (a manifest file)"
        )
    # Bytes that are not UTF-8 become lone surrogates (U+DC80..U+DCFF); only the documents that
    # hold one are lost (``_documents``).
    return data.decode("utf-8", "surrogateescape")


def _read_one(path: str | os.PathLike[str], expected: str) -> tuple[str, str]:
    """(display name, text) of ``path`` (``-`` reads standard input, at most
    ``bounds.MAX_FILE_BYTES``). Raises ``ManifestError`` when it is a directory, not a regular
    file (``_NotRegular``: never opened), larger than the cap, not UTF-8, or unreadable."""
    path = os.fspath(path)
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream (tests, embedding)
            return "<stdin>", _decode(
                "<stdin>", sys.stdin.read(bounds.MAX_FILE_BYTES + 1).encode("utf-8", "surrogateescape")
            )
        return "<stdin>", _decode("<stdin>", stream.read(bounds.MAX_FILE_BYTES + 1))
    shown = errors.printable(path)
    try:
        info = os.stat(path)  # follows symlinks: a link to /dev/zero is a character device
        if stat.S_ISDIR(info.st_mode):
            raise ManifestError(f"{shown}: is a directory, expected {expected} file")
        if not stat.S_ISREG(info.st_mode):
            raise _NotRegular(f"{shown}: skipped: {_file_type(info.st_mode)}, not a regular file")
        if info.st_size > bounds.MAX_FILE_BYTES:
            raise ManifestError(
                f"{shown}: {errors.too_long_bytes(bounds.MAX_FILE_BYTES)} "
                f"(a manifest file; this one has {info.st_size})"
            )
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # replaced since the stat
                raise _NotRegular(f"{shown}: skipped: not a regular file")
            data = handle.read(bounds.MAX_FILE_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ManifestError(f"{shown}: cannot read: {reason}") from None
    return path, _decode(path, data)


# --- documents ---------------------------------------------------------------------------------


class _Broken(NamedTuple):
    """A document that is not YAML (or not loadable): why."""

    reason: str


_SEPARATOR = re.compile(r"^---(?=[ \t\r]|$)", re.M)
_MEANINGLESS = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\r?\n?|%[^\n]*\n?)*\Z")


_UNDECODED = re.compile("[\udc80-\udcff]")


def _documents(text: str) -> Iterator[tuple[int, Any]]:
    """(index, document or ``_Broken``) of each YAML document, one at a time. After a YAML error
    (or in a text with bytes that are not UTF-8) the text is split at its ``---`` lines and each
    piece parsed alone, so one broken document costs only itself."""
    done = 0
    if not _UNDECODED.search(text):
        try:
            for doc in yaml.load_all(text, Loader=KubernetesLoader):
                yield done, doc
                done += 1
            return
        except yaml.YAMLError:
            pass
        except (RecursionError, ValueError, TypeError, OverflowError, MemoryError):
            pass
    for index, doc in _documents_one_by_one(text):
        if index >= done:
            yield index, doc


def _not_utf8(piece: str, first_line: int) -> _Broken | None:
    """Why ``piece`` (starting at 0-based line ``first_line``) cannot be read, when it holds a
    byte that is not UTF-8: ``cannot read: not UTF-8: byte 0xff (line L, column C)``."""
    found = _UNDECODED.search(piece)
    if found is None:
        return None
    line = first_line + piece.count("\n", 0, found.start()) + 1
    column = found.start() - (piece.rfind("\n", 0, found.start()) + 1) + 1
    byte = ord(found.group()) - 0xDC00
    return _Broken(f"cannot read: not UTF-8: byte 0x{byte:02x} (line {line}, column {column})")


def _documents_one_by_one(text: str) -> Iterator[tuple[int, Any]]:
    starts = [m.start() for m in _SEPARATOR.finditer(text)]
    pieces: list[tuple[int, str]] = []  # (first line, text)
    head = text[: starts[0]] if starts else text
    if not starts or not _MEANINGLESS.match(head):
        pieces.append((0, head))
    for i, start in enumerate(starts):
        pieces.append((text.count("\n", 0, start), text[start : starts[i + 1] if i + 1 < len(starts) else len(text)]))
    index = 0
    for first_line, piece in pieces:
        broken = _not_utf8(piece, first_line)
        if broken is not None:
            yield index, broken
            index += 1
            continue
        try:
            found = list(yaml.load_all(piece, Loader=KubernetesLoader))
        except yaml.YAMLError as exc:
            yield index, _Broken(f"invalid YAML: {yaml_problem(exc, first_line)}")
            index += 1
            continue
        except (RecursionError, ValueError, TypeError, OverflowError, MemoryError) as exc:
            yield index, _Broken(f"invalid YAML: {errors.bound(errors.printable(str(exc)), 256)}")
            index += 1
            continue
        for doc in found or [None]:
            yield index, doc
            index += 1


def _parse_text(
    file: str, text: str, *, raw_kinds: frozenset[str] = frozenset(), budget: int | None = None, limit: int = 0
) -> _FileResult:
    out = _FileResult(raw_kinds=raw_kinds, budget=budget)
    for index, doc in _documents(text):
        try:
            _parse_document(file, index, None, doc, out)
        except Exception as exc:  # a bug must cost one document, not the file or the server
            reason = f"cannot load: unexpected {type(exc).__name__}: {errors.bound(errors.printable(str(exc)), 256)}"
            out.rejected.append(Rejection(file, index, None, "", "", (Problem("", reason),)))
        if budget is not None and len(out.documents) > budget:
            out.over_limit = (
                f"{errors.printable(file)}: document {index}: more than {limit} objects in one load (--max-objects); "
                "the load is refused"
            )
            break
    return out


def load_runtime(path: str, namespace: str) -> tuple[str, types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime]:
    """The first ServingRuntime or ClusterServingRuntime document in ``path`` (``-`` reads
    standard input) as (ValidateServingRuntimeRequest field, message); a ServingRuntime without a
    namespace gets ``namespace``. Unlike ``load_manifests`` it does not judge the object (that is
    the runtime webhook's job) beyond types. Raises ``ManifestError`` for an unreadable file, a
    malformed document, or no runtime."""
    name, text = _read_one(path, "a ServingRuntime or ClusterServingRuntime")
    for index, doc in _documents(text):
        where = f"{errors.printable(name)}: document {index}"
        if isinstance(doc, _Broken):
            raise ManifestError(f"{where}: {doc.reason}")
        kind = doc.get("kind") if isinstance(doc, dict) else None
        if isinstance(kind, str) and kind in _RUNTIME_FIELDS and doc.get("apiVersion") == API_VERSION:
            which = _RUNTIME_FIELDS[kind]
            runtime = types_pb2.ServingRuntime() if which == "serving_runtime" else types_pb2.ClusterServingRuntime()
            problems = _convert(doc, runtime, [])
            if problems:
                raise ManifestError(
                    "\n".join(f"{where}: {p.field + ': ' if p.field else ''}{p.reason}" for p in problems)
                )
            if which == "serving_runtime" and not runtime.metadata.namespace:
                runtime.metadata.namespace = namespace
            return which, runtime
    raise ManifestError(f"{errors.printable(name)}: no ServingRuntime or ClusterServingRuntime ({API_VERSION}) found")


_RUNTIME_FIELDS = {"ServingRuntime": "serving_runtime", "ClusterServingRuntime": "cluster_serving_runtime"}


def yaml_problem(exc: yaml.YAMLError, first_line: int = 0) -> str:
    """A YAML error as `<problem> (line L, column C)`; ``first_line`` is the 0-based line of the
    file where the parsed text starts."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        where = ""
        if exc.problem_mark is not None:
            where = f" (line {exc.problem_mark.line + first_line + 1}, column {exc.problem_mark.column + 1})"
        context = f"{exc.context}: " if exc.context else ""
        return errors.bound(errors.printable(f"{context}{exc.problem}{where}"), 512)
    return errors.bound(errors.printable(" ".join(str(exc).split())), 512)


def _short(text: str, limit: int = errors.VALUE_PREVIEW) -> str:
    """``text`` for a message line: control characters escaped, cut to ``limit`` characters
    (``aaaa…``); ``<no name>`` when empty."""
    if not text:
        return "<no name>"
    return errors.printable(text[:limit]) + ("…" if len(text) > limit else "")


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _parse_document(file: str, index: int, item: int | None, doc: Any, out: _FileResult) -> None:
    def reject(kind: str, name: str, *problems: Problem) -> None:
        out.rejected.append(Rejection(file, index, item, kind, name, tuple(problems)))

    if doc is None:
        return
    if isinstance(doc, _Broken):
        reject("", "", Problem("", doc.reason))
        return
    if not isinstance(doc, dict):
        reject("", "", Problem("", f"expected a mapping (a Kubernetes object), got {_yaml_type(doc)}"))
        return
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    metadata = doc.get("metadata")
    name = _text_of(metadata.get("name")) if isinstance(metadata, dict) else ""
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            reject("", name, Problem(key, errors.invalid_value(_yaml_text(value), "must be of type string")))
            return
    where = f"{errors.printable(file)}: document {index}" + (f", items[{item}]" if item is not None else "")
    if item is None and (
        (kind == "List" and api_version == "v1")
        or (kind in _LIST_KINDS and api_version == _api_version(_LIST_KINDS[kind]))  # type: ignore[index]
    ):
        items = doc.get("items")
        if items is None:
            return
        if not isinstance(items, list):
            reject(kind, name, Problem("items", errors.invalid_value(_yaml_text(items), "must be of type array")))
            return
        for j, entry in enumerate(items):
            _parse_document(file, index, j, entry, out)
        return
    if kind not in _CACHE_KINDS or api_version != _api_version(kind):
        out.skipped.append(
            f"{where}: skipped {_short(kind or '<no kind>')} {_short(name)} "
            f"(apiVersion {_short(api_version or '<none>')})"
        )
        return
    assert isinstance(kind, str)
    for quantity in _QUANTITY_PATHS.get(kind, ()):
        _coerce_quantity(doc, quantity)
    message = _CACHE_KINDS[kind][0]()
    unknown: list[str] = []
    problems = _convert(doc, message, unknown)
    for path in unknown:
        out.warnings.append(f'{where}: {kind} {_short(name)}: unknown field "{_short(path, 256)}"')
    if problems:
        reject(kind, name, *problems)
        return
    if kind in out.raw_kinds:
        namespace = message.metadata.namespace  # type: ignore[attr-defined]
        out.documents.append(_Document(index, (kind, namespace, message.metadata.name), message))  # type: ignore[attr-defined]
        return
    oneof_field = _CACHE_KINDS[kind][1]
    obj = cache_pb2.CacheObject()
    getattr(obj, oneof_field).CopyFrom(message)
    violations = bounds.validate_object(obj)
    if violations:
        root = message.DESCRIPTOR
        reject(
            kind,
            name,
            *(
                Problem(_object_path(v.field, oneof_field, root), fieldpaths.present_violation(v).description)
                for v in violations
            ),
        )
        return
    out.documents.append(_Document(index, bounds.object_key(obj), obj))


def _object_path(path: str, oneof_field: str, root: Any) -> str:
    """``cluster_serving_runtime.metadata.name`` -> ``metadata.name`` (camelCase, under the object)."""
    relative = path[len(oneof_field) + 1 :] if path.startswith(oneof_field + ".") else path
    return errors.printable(fieldpaths.json_path(relative, root))


def _convert(doc: dict[str, Any], message: Message, unknown: list[str]) -> list[Problem]:
    """Check ``doc``'s types against ``message``'s fields (unknown field paths appended to
    ``unknown``), then parse it into ``message``; the problems that stop it."""
    problems: list[Problem] = []
    budget = [MAX_DOCUMENT_VALUES]
    _check_message(doc, message.DESCRIPTOR, "", problems, unknown, budget)
    if problems:
        return problems[: bounds.MAX_VIOLATIONS_PER_OBJECT]
    try:
        json_format.ParseDict(doc, message, ignore_unknown_fields=True, max_recursion_depth=64)
    except (json_format.ParseError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        problem = parse_problem(exc)
        field_path, _, reason = (
            problem.partition(": ") if ": " in problem and not problem.startswith(" ") else ("", "", problem)
        )
        if not reason:
            field_path, reason = "", problem
        return [
            Problem(
                errors.printable(field_path), errors.bound(errors.printable(reason), fieldpaths.MAX_DESCRIPTION_BYTES)
            )
        ]
    return []


_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_INT_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
_INT64 = (-(2**63), 2**63 - 1)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _spent(path: str, problems: list[Problem], budget: list[int]) -> bool:
    """Count one value against the document's budget; True when the walk must stop (the budget
    is spent, reported once, or the object has as many problems as are reported)."""
    budget[0] -= 1
    if budget[0] < 0 or len(problems) >= bounds.MAX_VIOLATIONS_PER_OBJECT:
        if budget[0] == -1:
            problems.append(
                Problem(path, f"Too long: more than {MAX_DOCUMENT_VALUES} values (after expanding YAML aliases)")
            )
        return True
    return False


def _check_struct(node: Any, path: str, problems: list[Problem], budget: list[int]) -> None:
    """A ``google.protobuf.Struct`` field: a JSON object passed through as written, any JSON
    inside with string keys. Walked with a stack (nothing bounds its depth before protobuf's
    parser does); every value counts against the budget."""
    if not isinstance(node, dict):
        problems.append(Problem(path, errors.invalid_value(_yaml_text(node), "must be of type object")))
        return
    stack: list[tuple[Any, str]] = [(node, path)]
    while stack:
        value, where = stack.pop()
        if _spent(where, problems, budget):
            return
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    problems.append(
                        Problem(where, errors.invalid_value(_yaml_text(key), "field names must be of type string"))
                    )
                else:
                    stack.append((item, _join(where, key)))
        elif isinstance(value, list):
            stack += [(item, f"{where}[{i}]") for i, item in enumerate(value)]


def _check_message(
    node: Any, descriptor: Any, path: str, problems: list[Problem], unknown: list[str], budget: list[int]
) -> None:
    if _spent(path, problems, budget):
        return
    if not isinstance(node, dict):
        problems.append(Problem(path, errors.invalid_value(_yaml_text(node), "must be of type object")))
        return
    extra = crdfields.UNMODELLED.get(descriptor.full_name, frozenset())
    if descriptor.full_name == types_pb2.ObjectMeta.DESCRIPTOR.full_name:
        extra = crdfields.OBJECT_META
    top = not path
    for key, value in node.items():
        if not isinstance(key, str):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(key), "field names must be of type string")))
            continue
        fd = descriptor.fields_by_name.get(key) or _by_json_name(descriptor).get(key)
        sub = _join(path, key)
        if fd is None:
            if key not in extra and not (top and key in _TOP_LEVEL):
                if len(unknown) < bounds.MAX_VIOLATIONS_PER_OBJECT:
                    unknown.append(sub)
            continue
        if value is None:
            continue  # null is "not set", as the API server reads it
        _check_field(value, fd, sub, problems, unknown, budget)


_JSON_NAMES: dict[str, dict[str, FieldDescriptor]] = {}


def _by_json_name(descriptor: Any) -> dict[str, FieldDescriptor]:
    names = _JSON_NAMES.get(descriptor.full_name)
    if names is None:
        names = _JSON_NAMES[descriptor.full_name] = {f.json_name: f for f in descriptor.fields}
    return names


def _check_field(
    value: Any, fd: FieldDescriptor, path: str, problems: list[Problem], unknown: list[str], budget: list[int]
) -> None:
    message_type = fd.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        if not isinstance(value, dict):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type object")))
            return
        value_fd = message_type.fields_by_name["value"]
        for key, item in value.items():
            budget[0] -= 1
            if not isinstance(key, str):
                problems.append(Problem(path, errors.invalid_value(_yaml_text(key), "keys must be of type string")))
            elif item is not None:
                _check_field(item, value_fd, f"{path}[{key}]", problems, unknown, budget)
            if budget[0] < 0 or len(problems) >= bounds.MAX_VIOLATIONS_PER_OBJECT:
                return
        return
    if fd.is_repeated:
        if not isinstance(value, list):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type array")))
            return
        for i, item in enumerate(value):
            if budget[0] < 0 or len(problems) >= bounds.MAX_VIOLATIONS_PER_OBJECT:
                return
            _check_single(item, fd, f"{path}[{i}]", problems, unknown, budget)
        return
    _check_single(value, fd, path, problems, unknown, budget)


def _check_single(
    value: Any, fd: FieldDescriptor, path: str, problems: list[Problem], unknown: list[str], budget: list[int]
) -> None:
    budget[0] -= 1
    message_type = fd.message_type
    if message_type is not None:
        if message_type.full_name == "google.protobuf.Struct":
            _check_struct(value, path, problems, budget)
            return
        if message_type.full_name == "google.protobuf.Timestamp":
            if not isinstance(value, str):
                problems.append(
                    Problem(
                        path, errors.invalid_value(_yaml_text(value), "must be of type string (an RFC 3339 date-time)")
                    )
                )
            return
        _check_message(value, message_type, path, problems, unknown, budget)
        return
    kind = fd.type
    if kind == FieldDescriptor.TYPE_STRING:
        if not isinstance(value, str):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type string")))
    elif kind == FieldDescriptor.TYPE_BOOL:
        if not isinstance(value, bool):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type boolean")))
    elif kind in _INT_TYPES:
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type integer")))
            return
        low, high = _INT_RANGES.get(kind, _INT64)
        if not low <= value <= high:
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), f"must be between {low} and {high}")))
    elif kind in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type number")))
    elif kind == FieldDescriptor.TYPE_ENUM:
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type string")))


def _yaml_text(value: Any) -> str | int | float | bool:
    """A YAML value as an error shows it: scalars as they are, collections in flow style."""
    if isinstance(value, (str, bool, int, float)):
        return value
    if value is None:
        return "null"
    try:
        text = yaml.safe_dump(value, default_flow_style=True, width=10**9).strip()
    except Exception:
        text = type(value).__name__
    return text.removesuffix("\n...").strip()


_FAILED_FIELD = re.compile(r"Failed to parse (\S+) field: ")


def parse_problem(exc: Exception) -> str:
    """``spec.cost.perHour: <reason>`` from json_format's nested ``Failed to parse X field: ...``."""
    text = " ".join(str(exc).split())
    path = []
    while match := _FAILED_FIELD.match(text):
        path.append(match.group(1))
        text = text[match.end() :]
    text = text.rstrip(".")  # json_format appends "..."
    return f"{'.'.join(path)}: {text}" if path else text


def _yaml_type(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _coerce_quantity(node: Any, path: tuple[str, ...]) -> None:
    """Turn each number at ``path`` under ``node`` into its text, in place (``[]``: every item
    of a list; ``{}``: every value of a map)."""
    head, rest = path[0], path[1:]
    keys: Iterable[Any]
    if head == "[]":
        keys = range(len(node)) if isinstance(node, list) else ()
    elif head == "{}":
        keys = list(node) if isinstance(node, dict) else ()
    else:
        keys = (head,) if isinstance(node, dict) and head in node else ()
    for key in keys:
        value = node[key]
        if rest:
            _coerce_quantity(value, rest)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        elif isinstance(value, int) or math.isfinite(value):  # a non-finite float: the type check reports it
            node[key] = str(value) if isinstance(value, int) else repr(value)


# --- duplicates --------------------------------------------------------------------------------


def _append(result: LoadResult, doc: _Document) -> int:
    assert isinstance(doc.message, cache_pb2.CacheObject)
    result.objects.append(doc.message)
    return len(result.objects) - 1


def _replace(result: LoadResult, doc: _Document, position: int) -> None:
    assert isinstance(doc.message, cache_pb2.CacheObject)
    result.objects[position] = doc.message


class _Origin(NamedTuple):
    file: str
    sequence: int  # position of the file in load order (a path given twice is read twice)
    document: int  # document index in the file


def _duplicate_warning(key: ObjectKey, first: _Origin, later: _Origin) -> str:
    what = describe_key(key)
    if first.sequence == later.sequence:
        return (
            f"{what} is defined twice in {later.file} (documents {first.document} and {later.document}); "
            f"the definition in document {later.document} wins (later in load order)"
        )
    return (
        f"{what} is defined in {first.file} and in {later.file}; "
        f"the definition in {later.file} wins (later in load order)"
    )
