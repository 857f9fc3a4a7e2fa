"""Immutable domain objects compiled once at ingestion, so a request does no parsing.

Shapes:
- ``Entry``: one ``supportedModelFormats`` entry with parsed versions and defaulted weights.
- ``Runtime``: a ServingRuntime or ClusterServingRuntime, its own spec compiled (classes as a
  set, the engine/decoder deployment modes, the parsed size range). ``effective`` is the compiled
  merged spec (``ome.io/inherit-from``) used when an InferenceService names the runtime, None
  without a parent or when the chain broke (``inheritance_error`` then holds OME's text).
- ``Model``: a BaseModel, ClusterBaseModel or inline spec, with parsed versions and size.
- ``Request``: what the InferenceService asks for (pooled accelerator classes, modes).
- ``Revision``: a runtime revision (runtime-revisions.md) with its owner and content hash.
- ``Operation``: the operation of an admission request.
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, field

from ome.v1beta1 import types_pb2

from ome_selector.domain.versions import Version

SERVING_RUNTIME = "ServingRuntime"
CLUSTER_SERVING_RUNTIME = "ClusterServingRuntime"
BASE_MODEL = "BaseModel"
CLUSTER_BASE_MODEL = "ClusterBaseModel"
ACCELERATOR_CLASS = "AcceleratorClass"
INFERENCE_SERVICE = "InferenceService"
CONTROLLER_REVISION = "ControllerRevision"

DEPLOYMENT_MODE_ANNOTATION = "ome.io/deploymentMode"
ACCELERATOR_CLASS_ANNOTATION = "ome.io/accelerator-class"
INHERIT_FROM_ANNOTATION = "ome.io/inherit-from"
# runtime-revisions.md; labels-and-annotations.md, "ControllerRevisions".
RUNTIME_SYNC_ANNOTATION = "ome.io/runtime-sync"
RUNTIME_OF_LABEL = "ome.io/runtime-of"
RUNTIME_OF_KIND_LABEL = "ome.io/runtime-of-kind"
RUNTIME_OF_NAMESPACE_LABEL = "ome.io/runtime-of-namespace"
REVISION_HASH_LABEL = "ome.io/revision-hash"
CREATED_BY_ANNOTATION = "ome.io/created-by"
CREATED_BY_OME = "ome-controller"
DEFAULT_OME_NAMESPACE = "ome"
# runtime-inheritance.md, "Chain limits": how a chain breaks (reference/kubectl-ome/runtime.md
# names them NotFound, Cycle and MaxDepthExceeded).
CHAIN_NOT_FOUND = "NotFound"
CHAIN_CYCLE = "Cycle"
CHAIN_MAX_DEPTH = "MaxDepthExceeded"
# runtime-deployment-mode-matching.md: the values that count as a mode (case-sensitive).
VALID_MODES = frozenset({"RawDeployment", "OMENative", "MultiNode", "VirtualDeployment"})
# base-models.md, "Distribution": a model's ``spec.distribution`` (``PerNode`` when unset).
DISTRIBUTIONS = ("PerNode", "Sharded")
SHARDED = "Sharded"

# The operation of an admission request, as Kubernetes' admission.k8s.io/v1 AdmissionRequest
# names it (CONNECT is not modelled: OME's webhooks do not register it); the same names as the
# proto enum ``ome.selector.v1.AdmissionOperation`` (api.OPERATION_FROM_PB maps it).
Operation = enum.Enum("Operation", "CREATE UPDATE DELETE")


@dataclass(frozen=True, slots=True)
class Spec:
    """A format or framework requirement (entry side) or value (model side)."""

    name: str
    version: str | None
    parsed: Version | None
    operator: str | None
    weight: int


@dataclass(frozen=True, slots=True)
class Entry:
    """One compiled supportedModelFormats entry."""

    index: int
    model_format: Spec | None
    model_framework: Spec | None
    architecture: str | None
    quantization: str | None
    pipeline: types_pb2.DiffusionPipelineSpec | None
    auto_select: bool | None
    priority: int | None

    @property
    def effective_priority(self) -> int:
        """``priority``, or 1 when unset."""
        return 1 if self.priority is None else self.priority


@dataclass(frozen=True, slots=True)
class SizeRange:
    """A modelSizeRange with the strings as written and the parsed bounds (None = unset)."""

    minimum: str | None
    maximum: str | None
    low: float | None
    high: float | None
    label: str


@dataclass(frozen=True, slots=True, eq=False, weakref_slot=True)
class Compiled:
    """The parts of a ServingRuntimeSpec that selection reads. Compared and hashed by identity
    (caches key fits by the compiled spec and drop them when it is gone)."""

    disabled: bool
    entries: tuple[Entry, ...]
    size_range: SizeRange | None
    classes: tuple[str, ...]
    class_set: frozenset[str]
    engine_mode: str | None
    decoder_mode: str | None
    any_auto_select: bool
    router_mode: str | None = None
    engine_multi_node: bool = False  # engineConfig has a leader or worker
    decoder_multi_node: bool = False  # decoderConfig has a leader or worker
    # The runtime group's bit masks this spec belongs to (groups.RuntimeGroup), fixed at
    # ingestion: ("disabled",), ("classes",), ("class", c), ("engine*",), ("engine", mode),
    # ("decoder*",), ("decoder", mode), ("format", (format name, architecture, quantization)).
    index_keys: tuple[tuple[object, ...], ...] = ()
    # Interned id of what the model-format check reads of the entries (names, versions,
    # operators, architecture, quantization, pipeline): equal ids give equal format failures.
    format_id: int = 0
    # Interned id of what a model's fit reads besides the priorities (the format id, each entry's
    # autoSelect and weights, the size range): equal ids give fits that differ only in score.
    fit_id: int = 0


def spec_hash(spec: types_pb2.ServingRuntimeSpec) -> str:
    """SHA-256 (hex) of ``spec``'s deterministic serialization: equal specs, equal hashes. The
    content hash of runtime revisions (runtime-revisions.md); OME's own hashes its Go JSON form of
    the whole spec, which the protos model only in part, so the two never coincide."""
    return hashlib.sha256(spec.SerializeToString(deterministic=True)).hexdigest()


@dataclass(frozen=True, slots=True)
class Runtime:
    """A compiled runtime. ``key`` is (kind, namespace, name)."""

    kind: str
    namespace: str
    name: str
    created: float | None
    parent: str | None
    own: Compiled
    spec: types_pb2.ServingRuntimeSpec = field(repr=False, compare=False)
    # Filled at snapshot build: the merged spec (proto and compiled), the chain (root first), or
    # the chain's error.
    effective: Compiled | None = field(default=None, compare=False)
    merged_spec: types_pb2.ServingRuntimeSpec | None = field(default=None, repr=False, compare=False)
    chain: tuple[str, ...] = ()
    chain_keys: tuple[tuple[str, str, str], ...] = ()  # (kind, namespace, name), root first
    inheritance_error: str | None = None
    # Why the chain broke (with ``inheritance_error``): one of CHAIN_NOT_FOUND, CHAIN_CYCLE,
    # CHAIN_MAX_DEPTH, the reasons ``kubectl ome runtime explain --with-effective`` shows.
    inheritance_reason: str | None = None
    # ``status.inheritanceChain``: the last chain that resolved (names, root first), kept when the
    # chain breaks (runtime-inheritance.md, "When a chain breaks"); from the previous snapshot, else
    # the status the object was cached with.
    last_chain: tuple[str, ...] = field(default=(), compare=False)

    @property
    def key(self) -> tuple[str, str, str]:
        """(kind, namespace, name)."""
        return (self.kind, self.namespace, self.name)

    @property
    def is_cluster(self) -> bool:
        """True for a ClusterServingRuntime."""
        return self.kind == CLUSTER_SERVING_RUNTIME

    @property
    def display(self) -> str:
        """``CSR/<name>`` or ``SR/<namespace>/<name>`` (kubectl-ome runtime.md, effective)."""
        return f"CSR/{self.name}" if self.is_cluster else f"SR/{self.namespace}/{self.name}"

    @property
    def named_spec(self) -> types_pb2.ServingRuntimeSpec:
        """The spec used when an InferenceService names the runtime: merged with its chain."""
        return self.merged_spec if self.merged_spec is not None else self.spec

    @property
    def named_compiled(self) -> Compiled:
        """Compiled form of ``named_spec``."""
        return self.effective if self.effective is not None else self.own

    @property
    def status_chain(self) -> tuple[str, ...]:
        """``status.inheritanceChain`` as OME's controller writes it: the chain (the runtime
        alone when it names no parent), or the last chain that resolved when it is broken."""
        if self.parent is None:
            return (self.name,)
        return self.chain if self.inheritance_error is None else self.last_chain

    @property
    def named_hash(self) -> str:
        """Full hash of ``named_spec`` (``spec_hash``): what a revision of the runtime as named
        holds. Computed when asked (only pins and runtime status read it), not at ingestion."""
        return spec_hash(self.named_spec)


@dataclass(frozen=True, slots=True)
class Revision:
    """A compiled runtime revision (a ControllerRevision OME keeps in its namespace).

    ``owner_*`` come from the ``ome.io/runtime-of*`` labels (``owner_kind`` as written, possibly
    empty or another value); ``runtime`` is the spec it holds compiled as a runtime of the owner's
    name, so a pinned InferenceService renders from it as from a live runtime; ``full_hash`` is
    SHA-256 (hex) of that spec's deterministic serialization (``Runtime.named_hash`` of an equal
    spec), ``short_hash`` its first 8 characters.
    """

    namespace: str
    name: str
    owner_name: str
    owner_kind: str
    owner_namespace: str
    created: float | None
    number: int
    ome_managed: bool  # ``ome.io/created-by: ome-controller``
    runtime: Runtime = field(repr=False, compare=False)
    full_hash: str = ""
    hash_label: str = ""  # ``ome.io/revision-hash`` as written

    @property
    def short_hash(self) -> str:
        """The first 8 hex digits of ``full_hash``: what a revision name ends in."""
        return self.full_hash[:8]

    @property
    def disabled(self) -> bool:
        """The spec it holds is disabled."""
        return self.runtime.own.disabled


@dataclass(frozen=True, slots=True)
class Model:
    """A compiled model. ``kind``/``name`` are empty for an inline spec."""

    kind: str
    namespace: str
    name: str
    model_format: Spec
    model_framework: Spec | None
    architecture: str | None
    quantization: str | None
    size_text: str | None
    size: float | None
    pipeline: types_pb2.DiffusionPipelineSpec | None
    disabled: bool
    label: str
    # What a fit depends on: the serialized BaseModelSpec. Equal keys fit every runtime alike, so
    # caches keyed by it never go stale when a model object is replaced.
    cache_key: object
    # ``distribution: Sharded``: no entry matches it, as no model cache provider can be
    # configured yet (base-models.md, "Distribution").
    sharded: bool = False


@dataclass(frozen=True, slots=True)
class Request:
    """What an InferenceService asks of runtimes, compiled once per request.

    ``required_classes`` is None when the accelerator-class check is skipped (no ``spec.model``).
    ``decoder_mode`` is compared only when ``has_decoder``.
    """

    namespace: str
    model_name: str
    required_classes: frozenset[str] | None
    engine_mode: str | None
    decoder_mode: str | None
    has_decoder: bool

    @property
    def checks_key(self) -> tuple[object, ...]:
        """What the request-side checks (accelerator class, deployment mode) read of it: not its
        namespace or model name."""
        return (self.required_classes, self.engine_mode, self.decoder_mode, self.has_decoder)


@dataclass(frozen=True, slots=True)
class Event:
    """A Kubernetes event: type, reason, OME's exact message."""

    type: str
    reason: str
    message: str
