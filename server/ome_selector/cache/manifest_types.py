"""What the manifest loader reads and returns: the kinds and API versions, the YAML loader,
``ManifestError``, and a load's ``LoadResult`` (objects, problems, rejections)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.domain import errors

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


def _short(text: str, limit: int = errors.VALUE_PREVIEW) -> str:
    """``text`` for a message line: control characters escaped, cut to ``limit`` characters
    (``aaaa…``); ``<no name>`` when empty."""
    if not text:
        return "<no name>"
    return errors.printable(text[:limit]) + ("…" if len(text) > limit else "")
