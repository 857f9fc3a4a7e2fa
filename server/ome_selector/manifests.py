"""Load Kubernetes YAML manifests into the selector's proto objects.

``load_manifests(paths)`` reads files and folders the way ``kubectl apply -f`` would, in a fixed
order, and returns the cached kinds as ``CacheObject`` messages plus the InferenceServices it met:

* Paths are taken in the order given. A folder is walked recursively; its ``.yaml`` / ``.yml``
  files are read in sorted byte order of their path relative to the folder. A file named
  explicitly is read whatever its extension.
* Each file may hold several YAML documents. Empty documents are ignored. Document indexes in
  messages are 0-based and count every document of the stream, empty ones included.
* ``ServingRuntime``, ``ClusterServingRuntime``, ``BaseModel``, ``ClusterBaseModel`` and
  ``AcceleratorClass`` of ``ome.io/v1beta1`` become ``CacheObject`` messages;
  ``InferenceService`` documents go to ``inference_services``. Kustomization files and documents of
  any other kind or apiVersion are listed in ``skipped`` (the caller decides whether to log them).
* YAML is read with a SafeLoader that keeps timestamps as text, so ``creationTimestamp`` reaches
  protobuf's JSON parser as RFC 3339. Kubernetes int-or-string quantities that the proto types as
  ``string`` (see ``_QUANTITY_PATHS``) are turned into text first; any other type mismatch is an
  error.
* A malformed document (a YAML error, a document that is not a mapping, a field protobuf cannot
  parse, or an object ``ingest.validate_object`` rejects) is reported in ``errors`` as
  ``"<file>: document <index>: <what>"``, and nothing of that file is loaded.

Duplicates: an object is identified by kind + namespace + name. When the same object is defined
again, the definition loaded later wins, as ``kubectl apply`` in the same order would leave it,
and a warning names both places. The winning definition keeps the position of the *first*
definition in ``objects`` (and ``inference_services``), so adding an override never reorders the
rest; ``sources`` records the file of the winning definition.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator, NamedTuple, Sequence, Union

import yaml
from google.protobuf import json_format
from google.protobuf.message import Message

from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2
from ome_selector import ingest

API_VERSION = "ome.io/v1beta1"

# Kind -> (message class, CacheObject oneof field). InferenceService is handled separately.
_CACHE_KINDS: dict[str, tuple[type[Message], str]] = {
    "ServingRuntime": (types_pb2.ServingRuntime, "serving_runtime"),
    "ClusterServingRuntime": (types_pb2.ClusterServingRuntime, "cluster_serving_runtime"),
    "BaseModel": (types_pb2.BaseModel, "base_model"),
    "ClusterBaseModel": (types_pb2.ClusterBaseModel, "cluster_base_model"),
    "AcceleratorClass": (types_pb2.AcceleratorClass, "accelerator_class"),
}
INFERENCE_SERVICE = "InferenceService"

_KUSTOMIZATION_FILES = frozenset({"kustomization.yaml", "kustomization.yml", "Kustomization"})
_MANIFEST_SUFFIXES = (".yaml", ".yml")

# Kubernetes int-or-string quantity fields that are `string` in the proto, per kind, as JSON-name
# paths; "[]" steps into every item of a list. YAML writes them as numbers as often as as text.
_QUANTITY_PATHS: dict[str, tuple[tuple[str, ...], ...]] = {
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
ObjectKey = ingest.Key
_Parsed = Union[cache_pb2.CacheObject, types_pb2.InferenceService]


class ManifestError(ValueError):
    """A manifest file cannot be used (for ``load_inference_service``)."""


class KubernetesLoader(yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader):  # type: ignore[misc]
    """SafeLoader that leaves timestamps as the text they were written as."""


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
KubernetesLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
KubernetesLoader.add_constructor(_TIMESTAMP_TAG, yaml.SafeLoader.construct_yaml_str)


@dataclass
class LoadResult:
    """What ``load_manifests`` found."""

    objects: list[cache_pb2.CacheObject] = field(default_factory=list)
    inference_services: list[types_pb2.InferenceService] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # Which file the winning definition of each object (and InferenceService) came from.
    sources: dict[ObjectKey, str] = field(default_factory=dict)


@dataclass
class _Document:
    index: int
    key: ObjectKey
    message: _Parsed


@dataclass
class _FileResult:
    documents: list[_Document] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def load_manifests(paths: Sequence[str]) -> LoadResult:
    """Load every manifest under ``paths``; see the module docstring for the rules."""
    result = LoadResult()
    positions: dict[ObjectKey, int] = {}
    origins: dict[ObjectKey, _Origin] = {}
    for sequence, file in enumerate(_manifest_files(paths, result)):
        if os.path.basename(file) in _KUSTOMIZATION_FILES:
            result.skipped.append(f"{file}: skipped kustomization file")
            continue
        loaded = _load_file(file)
        result.skipped.extend(loaded.skipped)
        if loaded.errors:
            result.errors.extend(loaded.errors)
            continue
        for doc in loaded.documents:
            if doc.key in origins:
                result.warnings.append(_duplicate_warning(doc.key, origins[doc.key], _Origin(file, sequence, doc.index)))
                _replace(result, doc, positions[doc.key])
            else:
                positions[doc.key] = _append(result, doc)
            origins[doc.key] = _Origin(file, sequence, doc.index)
            result.sources[doc.key] = file
    return result


def load_inference_service(path: str) -> types_pb2.InferenceService:
    """The first InferenceService document in ``path`` (``-`` reads standard input).

    Raises ``ManifestError`` when the file cannot be read, holds a malformed document, or holds
    no ``ome.io/v1beta1`` InferenceService.
    """
    name, text = _read_one(path, "an InferenceService")
    loaded = _parse_text(name, text)
    if loaded.errors:
        raise ManifestError("\n".join(loaded.errors))
    for doc in loaded.documents:
        if isinstance(doc.message, types_pb2.InferenceService):
            return doc.message
    raise ManifestError(f"{name}: no InferenceService ({API_VERSION}) found")


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
    """``Kind name`` or ``Kind namespace/name``."""
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


# --- files -------------------------------------------------------------------------------------


def _manifest_files(paths: Sequence[str], result: LoadResult) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            found = sorted(_walk(path), key=os.fsencode)
            if not found:
                result.warnings.append(f"{path}: no .yaml or .yml files found")
            for rel in found:
                yield os.path.join(path, rel)
        elif os.path.exists(path):
            yield path
        else:
            result.errors.append(f"{path}: no such file or directory")


def _walk(root: str) -> Iterator[str]:
    for dirpath, _dirnames, filenames in os.walk(root):
        for filename in filenames:
            if filename.endswith(_MANIFEST_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, filename), root)


def _load_file(file: str) -> _FileResult:
    try:
        name, text = _read_one(file, "a manifest")
    except ManifestError as exc:
        return _FileResult(errors=[str(exc)])
    return _parse_text(name, text)


def _documents(file: str, text: str) -> Iterator[tuple[int, Any]]:
    """(index, document) of each YAML document; ``ManifestError`` at the first invalid one."""
    stream = yaml.load_all(text, Loader=KubernetesLoader)
    index = 0
    while True:
        try:
            doc = next(stream)
        except StopIteration:
            return
        except yaml.YAMLError as exc:
            raise ManifestError(f"{file}: document {index}: invalid YAML: {yaml_problem(exc)}") from None
        yield index, doc
        index += 1


def _parse_text(file: str, text: str) -> _FileResult:
    out = _FileResult()
    try:
        for index, doc in _documents(file, text):
            _parse_document(file, index, doc, out)
    except ManifestError as exc:
        out.errors.append(str(exc))
    return out


def _read_one(path: str, expected: str) -> tuple[str, str]:
    """(display name, text) of ``path`` (``-`` reads standard input); ``ManifestError`` when it
    is a directory or cannot be read."""
    if path == "-":
        return "<stdin>", sys.stdin.read()
    if os.path.isdir(path):
        raise ManifestError(f"{path}: is a directory, expected {expected} file")
    try:
        with open(path, encoding="utf-8") as handle:
            return path, handle.read()
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ManifestError(f"{path}: cannot read: {reason}") from None


_RUNTIME_FIELDS = {"ServingRuntime": "serving_runtime", "ClusterServingRuntime": "cluster_serving_runtime"}


def load_runtime(path: str, namespace: str) -> tuple[str, types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime]:
    """The first ServingRuntime or ClusterServingRuntime document in ``path`` (``-`` reads
    standard input) as (ValidateServingRuntimeRequest field, message); a ServingRuntime without a
    namespace gets ``namespace``. Unlike ``load_manifests`` it does not judge the object (that is
    the runtime webhook's job). Raises ``ManifestError`` for an unreadable file, a malformed
    document, or no runtime."""
    name, text = _read_one(path, "a ServingRuntime or ClusterServingRuntime")
    for index, doc in _documents(name, text):
        if isinstance(doc, dict) and doc.get("apiVersion") == API_VERSION and doc.get("kind") in _RUNTIME_FIELDS:
            which = _RUNTIME_FIELDS[doc["kind"]]
            runtime = types_pb2.ServingRuntime() if which == "serving_runtime" else types_pb2.ClusterServingRuntime()
            try:
                json_format.ParseDict(doc, runtime, ignore_unknown_fields=True)
            except (json_format.ParseError, TypeError, ValueError) as exc:
                raise ManifestError(f"{name}: document {index}: {parse_problem(exc)}") from None
            if which == "serving_runtime" and not runtime.metadata.namespace:
                runtime.metadata.namespace = namespace
            return which, runtime
    raise ManifestError(f"{name}: no ServingRuntime or ClusterServingRuntime ({API_VERSION}) found")


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error as `<problem> (line L, column C)`."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        where = ""
        if exc.problem_mark is not None:
            where = f" (line {exc.problem_mark.line + 1}, column {exc.problem_mark.column + 1})"
        context = f"{exc.context}: " if exc.context else ""
        return f"{context}{exc.problem}{where}"
    return " ".join(str(exc).split())


def _parse_document(file: str, index: int, doc: Any, out: _FileResult) -> None:
    where = f"{file}: document {index}"
    if doc is None:
        return
    if not isinstance(doc, dict):
        out.errors.append(f"{where}: expected a mapping (a Kubernetes object), got {_yaml_type(doc)}")
        return
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    metadata = doc.get("metadata")
    name = metadata.get("name") if isinstance(metadata, dict) else None
    if api_version != API_VERSION or (kind not in _CACHE_KINDS and kind != INFERENCE_SERVICE):
        out.skipped.append(
            f"{where}: skipped {kind or '<no kind>'} {name or '<no name>'} "
            f"(apiVersion {api_version or '<none>'})"
        )
        return
    for path in _QUANTITY_PATHS.get(kind, ()):
        _coerce_quantity(doc, path)
    if kind == INFERENCE_SERVICE:
        isvc = types_pb2.InferenceService()
        if _parse_into(doc, isvc, where, out):
            key = (kind, isvc.metadata.namespace, isvc.metadata.name)
            out.documents.append(_Document(index, key, isvc))
        return
    message_class, oneof_field = _CACHE_KINDS[kind]
    message = message_class()
    if not _parse_into(doc, message, where, out):
        return
    obj = cache_pb2.CacheObject()
    getattr(obj, oneof_field).CopyFrom(message)
    violations = ingest.validate_object(obj)
    if violations:
        for violation in violations:
            out.errors.append(f"{where}: invalid {kind} {name or '<no name>'}: {violation.field}: {violation.description}")
        return
    out.documents.append(_Document(index, ingest.object_key(obj), obj))


def _parse_into(doc: dict[str, Any], message: Message, where: str, out: _FileResult) -> bool:
    try:
        json_format.ParseDict(doc, message, ignore_unknown_fields=True)
    except (json_format.ParseError, TypeError, ValueError) as exc:
        out.errors.append(f"{where}: {parse_problem(exc)}")
        return False
    return True


_FAILED_FIELD = re.compile(r"Failed to parse (\S+) field: ")


def parse_problem(exc: Exception) -> str:
    """``spec.cost.perHour: <reason>`` from json_format's nested ``Failed to parse X field: ...``."""
    text = " ".join(str(exc).split())
    path = []
    while match := _FAILED_FIELD.match(text):
        path.append(match.group(1))
        text = text[match.end():]
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
    """Turn a number at ``path`` under ``node`` into its text, in place."""
    head, rest = path[0], path[1:]
    if head == "[]":
        if isinstance(node, list):
            for item in node:
                _coerce_quantity(item, rest)
        return
    if not isinstance(node, dict) or head not in node:
        return
    if rest:
        _coerce_quantity(node[head], rest)
        return
    value = node[head]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return
    if isinstance(value, float) and not math.isfinite(value):
        return  # left as a number: ParseDict reports it
    node[head] = str(value) if isinstance(value, int) else repr(value)


# --- duplicates --------------------------------------------------------------------------------


def _append(result: LoadResult, doc: _Document) -> int:
    if isinstance(doc.message, types_pb2.InferenceService):
        result.inference_services.append(doc.message)
        return len(result.inference_services) - 1
    result.objects.append(doc.message)
    return len(result.objects) - 1


def _replace(result: LoadResult, doc: _Document, position: int) -> None:
    if isinstance(doc.message, types_pb2.InferenceService):
        result.inference_services[position] = doc.message
    else:
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
    return f"{what} is defined in {first.file} and in {later.file}; the definition in {later.file} wins (later in load order)"
