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
  the proto types as ``string`` (see ``_QUANTITY_PATHS``) are turned into text first. Each
  document is bounded while it is composed (``yamlload``: expanded size with aliases, nodes,
  depth), so a hostile document is rejected before anything is built from it.
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
lost. A byte that is not UTF-8 rejects only the document it is in. A path that does not exist
(``missing``) or a file that cannot be read is an error line too (it rejects no object); a folder
that cannot be listed is a warning (``unreadable_folders``). ``LoadResult.rejected_count`` is
what ``serve`` logs; callers that want any bad input to be fatal (``--strict``) test
``LoadResult.clean``. Past ``max_objects`` the load stops (``over_limit``).

Duplicates: an object is identified by kind + namespace + name. When the same object is defined
again, the definition loaded later wins, as ``kubectl apply`` in the same order would leave it,
and a warning names both places. The winning definition keeps the position of the *first*
definition in ``objects``, so adding an override never reorders the rest; ``sources`` records
the file of the winning definition."""

from __future__ import annotations

import hashlib
import os
from typing import NamedTuple, Sequence

from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.cache.manifest_documents import _Broken, _convert, _documents, _parse_text
from ome_selector.cache.manifest_files import _load_file, _manifest_files, _read_one
from ome_selector.cache.manifest_types import (
    _API_VERSIONS,
    _CACHE_KINDS,
    _KUSTOMIZATION_FILES,
    API_VERSION,
    INFERENCE_SERVICE,
    LoadResult,
    ManifestError,
    ObjectKey,
    _Document,
)
from ome_selector.cache.store import DEFAULT_MAX_OBJECTS as DEFAULT_STORE_MAX_OBJECTS
from ome_selector.domain import errors

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
