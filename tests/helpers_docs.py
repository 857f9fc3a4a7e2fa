"""Builders for the docs-driven tests: Kubernetes YAML/dicts as the OME docs write them -> protos
-> ``CacheStore`` -> ``selection.select_runtime`` / ``selection.explain_runtimes``.

Nothing here computes an expected answer: the helpers only build inputs and read outputs, so
every assertion in the tests compares the engine's output with a literal taken from the docs.
The docs' manifests live here once (verbatim where a test writes them to files), and so do the
few expected literals that several test files quote (at the end).
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Iterable

import yaml
from conftest import EXAMPLE_ISVCS
from google.protobuf import json_format
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.domain import objects as d
from ome_selector.domain.versions import parse_version
from ome_selector.rpc import selection

SHARED = Path(__file__).resolve().parents[2] / "shared"
CATALOG_RUNTIMES = SHARED / "ome-catalog" / "runtimes"

_KINDS: dict[str, tuple[type, str]] = {
    "ServingRuntime": (types_pb2.ServingRuntime, "serving_runtime"),
    "ClusterServingRuntime": (types_pb2.ClusterServingRuntime, "cluster_serving_runtime"),
    "BaseModel": (types_pb2.BaseModel, "base_model"),
    "ClusterBaseModel": (types_pb2.ClusterBaseModel, "cluster_base_model"),
    "AcceleratorClass": (types_pb2.AcceleratorClass, "accelerator_class"),
    "InferenceService": (types_pb2.InferenceService, "inference_service"),
    "ControllerRevision": (types_pb2.ControllerRevision, "controller_revision"),
}

# ---------------------------------------------------------------------------------------------
# YAML / dict -> proto


def _docs(source: Any) -> list[dict[str, Any]]:
    if isinstance(source, str):
        return [d for d in yaml.safe_load_all(source) if d]
    if isinstance(source, dict):
        return [source]
    raise TypeError(f"not a manifest: {source!r}")


def cache_object(doc: dict[str, Any]) -> cache_pb2.CacheObject:
    """One cached-kind manifest (dict) as a CacheObject."""
    cls, field = _KINDS[doc["kind"]]
    message = json_format.ParseDict(doc, cls(), ignore_unknown_fields=True)
    return cache_pb2.CacheObject(**{field: message})


def objects(*sources: Any) -> list[cache_pb2.CacheObject]:
    """CacheObjects from YAML strings (multi-document), dicts, CacheObjects or lists of those."""
    out: list[cache_pb2.CacheObject] = []
    for source in sources:
        if isinstance(source, cache_pb2.CacheObject):
            out.append(source)
        elif isinstance(source, (list, tuple)):
            out += objects(*source)
        else:
            out += [cache_object(d) for d in _docs(source)]
    return out


def catalog(relative: str) -> dict[str, Any]:
    """A runtime manifest of the OME catalog (``../shared/ome-catalog/runtimes/<relative>``)."""
    docs = _docs((CATALOG_RUNTIMES / relative).read_text())
    assert len(docs) == 1, relative
    return docs[0]


def inference_service(source: Any) -> types_pb2.InferenceService:
    """An InferenceService proto from a YAML string or dict."""
    if isinstance(source, types_pb2.InferenceService):
        return source
    (doc,) = _docs(source)
    return json_format.ParseDict(doc, types_pb2.InferenceService(), ignore_unknown_fields=True)


def load(*sources: Any, version: str = "v1") -> CacheStore:
    """A CacheStore after ``apply_snapshot(version, objects(*sources))``."""
    store = CacheStore()
    store.apply_snapshot(version, objects(*sources))
    return store


def _store(target: Any) -> CacheStore:
    return target if isinstance(target, CacheStore) else load(*target)


def select(
    target: Any, isvc: Any, view: int = selector_pb2.SELECT_RUNTIME_VIEW_FULL
) -> selector_pb2.SelectRuntimeResponse:
    """``selection.select_runtime`` on a store (or on a list of sources loaded into a new store); the
    FULL view unless ``view`` says otherwise, so exclusions are there to compare."""
    store = _store(target)
    request = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc), view=view)
    return selection.select_runtime(store.snapshot, request)


def explain(target: Any, isvc: Any) -> selector_pb2.ExplainRuntimesResponse:
    """``selection.explain_runtimes`` on a store (or on a list of sources loaded into a new store)."""
    store = _store(target)
    request = selector_pb2.ExplainRuntimesRequest(inference_service=inference_service(isvc))
    return selection.explain_runtimes(store.snapshot, request)


# ---------------------------------------------------------------------------------------------
# reading answers


def row(
    response: selector_pb2.ExplainRuntimesResponse, name: str, kind: str | None = None
) -> selector_pb2.RuntimeExplanation:
    """The explain row of runtime ``name`` (optionally of ``kind``: "SR" or "CSR")."""
    want = {
        None: None,
        "SR": selector_pb2.RUNTIME_KIND_SERVING_RUNTIME,
        "CSR": selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME,
    }[kind]
    found = [r for r in response.runtimes if r.runtime.name == name and (want is None or r.runtime.kind == want)]
    assert len(found) == 1, f"{name}: {[r.runtime.name for r in response.runtimes]}"
    return found[0]


def table(response: selector_pb2.ExplainRuntimesResponse) -> list[tuple[str, str, str, str, str, str]]:
    """The rows as ``kubectl ome runtime explain`` prints them:
    (RUNTIME, SCOPE, COMPATIBLE, PRIORITY, WEIGHT, REASON)."""
    out = []
    for r in response.runtimes:
        scope = "Cluster" if r.runtime.kind == selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME else "Namespaced"
        compatible = "Yes" if r.verdict == selector_pb2.VERDICT_CANDIDATE else "No"
        priority = str(r.priority) if r.HasField("priority") else "-"
        weight = str(r.weight) if r.HasField("weight") else "-"
        out.append((r.runtime.name, scope, compatible, priority, weight, r.reason))
    return out


def ranking(response: selector_pb2.SelectRuntimeResponse) -> list[str]:
    """Candidate names, best first."""
    return [c.runtime.name for c in response.candidates]


def exclusion(response: selector_pb2.SelectRuntimeResponse, name: str) -> selector_pb2.Exclusion:
    """The exclusion of runtime ``name``."""
    found = [e for e in response.exclusions if e.runtime.name == name]
    assert len(found) == 1, f"{name}: {[e.runtime.name for e in response.exclusions]}"
    return found[0]


def verdict_and_reason(response: selector_pb2.ExplainRuntimesResponse, name: str) -> tuple[str, str]:
    """("Yes", "-") for a candidate, ("No", <REASON>) otherwise."""
    r = row(response, name)
    return ("Yes" if r.verdict == selector_pb2.VERDICT_CANDIDATE else "No", r.reason)


# ---------------------------------------------------------------------------------------------
# dict builders (Kubernetes manifests, camelCase as in the docs)


def spec_of(
    name: str | None, version: str | None = None, operator: str | None = None, weight: int | None = None
) -> dict[str, Any]:
    """A ``modelFormat`` / ``modelFramework`` dict with only the fields given."""
    out: dict[str, Any] = {}
    if name is not None:
        out["name"] = name
    if version is not None:
        out["version"] = version
    if operator is not None:
        out["operator"] = operator
    if weight is not None:
        out["weight"] = weight
    return out


_DEFAULT = object()


def entry(
    *,
    format: Any = _DEFAULT,  # noqa: A002 - the docs' word
    framework: Any = _DEFAULT,
    architecture: Any = _DEFAULT,
    auto_select: bool | None = True,
    priority: int | None = None,
    quantization: str | None = None,
    pipeline: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A ``supportedModelFormats`` entry. Defaults: safetensors 1.0.0, transformers 4.45.0.dev0,
    LlamaForCausalLM (the BaseModel of model-version-matching.md), ``autoSelect: true``.
    ``format``/``framework`` take a dict, a ``(name, version)`` tuple or None (left out);
    ``architecture=None`` leaves it out; ``auto_select=None`` leaves it unset."""
    out: dict[str, Any] = {}
    if framework is _DEFAULT:
        framework = ("transformers", "4.45.0.dev0")
    if format is _DEFAULT:
        format = ("safetensors", "1.0.0")
    if architecture is _DEFAULT:
        architecture = "LlamaForCausalLM"
    if framework is not None:
        out["modelFramework"] = framework if isinstance(framework, dict) else spec_of(*framework)
    if format is not None:
        out["modelFormat"] = format if isinstance(format, dict) else spec_of(*format)
    if architecture is not None:
        out["modelArchitecture"] = architecture
    if quantization is not None:
        out["quantization"] = quantization
    if pipeline is not None:
        out["diffusionPipeline"] = pipeline
    if auto_select is not None:
        out["autoSelect"] = auto_select
    if priority is not None:
        out["priority"] = priority
    out.update(extra)
    return out


def runtime(
    name: str,
    *entries: dict[str, Any],
    namespace: str | None = None,
    size: tuple[str | None, str | None] | None = None,
    classes: list[str] | None = None,
    engine_mode: str | None = None,
    decoder_mode: str | None = None,
    disabled: bool | None = None,
    annotations: dict[str, str] | None = None,
    created: str | None = None,
    inherit_from: str | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A ClusterServingRuntime, or a ServingRuntime when ``namespace`` is given.

    ``entries`` default to one ``entry()``; pass ``entries=()`` via ``spec`` to have none.
    ``size`` is ``(min, max)``, None leaving a bound out. ``engine_mode``/``decoder_mode`` go in
    ``engineConfig.annotations`` / ``decoderConfig.annotations``."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if annotations or inherit_from:
        metadata["annotations"] = dict(annotations or {})
        if inherit_from:
            metadata["annotations"]["ome.io/inherit-from"] = inherit_from
    if created is not None:
        metadata["creationTimestamp"] = created
    body: dict[str, Any] = {"supportedModelFormats": list(entries) if entries else [entry()]}
    if size is not None:
        body["modelSizeRange"] = {k: v for k, v in (("min", size[0]), ("max", size[1])) if v is not None}
    if classes is not None:
        body["acceleratorRequirements"] = {"acceleratorClasses": list(classes)}
    if engine_mode is not None:
        body["engineConfig"] = {"annotations": {"ome.io/deploymentMode": engine_mode}}
    if decoder_mode is not None:
        body["decoderConfig"] = {"annotations": {"ome.io/deploymentMode": decoder_mode}}
    if disabled is not None:
        body["disabled"] = disabled
    if spec:
        body.update(copy.deepcopy(spec))
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "ServingRuntime" if namespace is not None else "ClusterServingRuntime",
        "metadata": metadata,
        "spec": body,
    }


def model(
    name: str = "llama-3-2-3b-instruct",
    *,
    namespace: str | None = "llama-demo",
    format: Any = _DEFAULT,  # noqa: A002
    framework: Any = _DEFAULT,
    architecture: Any = _DEFAULT,
    size: str | None = "3.21B",
    quantization: str | None = None,
    pipeline: dict[str, Any] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A BaseModel (ClusterBaseModel when ``namespace`` is None). Defaults: the BaseModel
    ``llama-3-2-3b-instruct`` of model-version-matching.md (safetensors 1.0.0, transformers
    4.45.0.dev0, LlamaForCausalLM, 3.21B) in ``llama-demo``."""
    if format is _DEFAULT:
        format = ("safetensors", "1.0.0")
    if framework is _DEFAULT:
        framework = ("transformers", "4.45.0.dev0")
    if architecture is _DEFAULT:
        architecture = "LlamaForCausalLM"
    body: dict[str, Any] = {}
    if format is not None:
        body["modelFormat"] = format if isinstance(format, dict) else spec_of(*format)
    if framework is not None:
        body["modelFramework"] = framework if isinstance(framework, dict) else spec_of(*framework)
    if architecture is not None:
        body["modelArchitecture"] = architecture
    if size is not None:
        body["modelParameterSize"] = size
    if quantization is not None:
        body["quantization"] = quantization
    if pipeline is not None:
        body["diffusionPipeline"] = pipeline
    if spec:
        body.update(copy.deepcopy(spec))
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": "ome.io/v1beta1",
        "kind": "BaseModel" if namespace is not None else "ClusterBaseModel",
        "metadata": metadata,
        "spec": body,
    }


def isvc(
    model_name: str | None = "llama-3-2-3b-instruct",
    *,
    namespace: str | None = "llama-demo",
    name: str = "my-isvc",
    runtime_name: str | None = None,
    runtime_kind: str | None = None,
    accelerator_class: str | None = None,
    deployment_mode: str | None = None,
    engine: dict[str, Any] | None = None,
    decoder: dict[str, Any] | None = None,
    router: dict[str, Any] | None = None,
    annotations: dict[str, str] | None = None,
    spec: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An InferenceService with ``engine: {minReplicas: 1, maxReplicas: 1}`` as in the docs."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if annotations is not None:
        metadata["annotations"] = annotations
    body: dict[str, Any] = {"engine": engine if engine is not None else {"minReplicas": 1, "maxReplicas": 1}}
    if model_name is not None:
        body["model"] = {"name": model_name}
    if runtime_name is not None:
        body["runtime"] = {"name": runtime_name}
        if runtime_kind is not None:
            body["runtime"]["kind"] = runtime_kind
    if accelerator_class is not None:
        body["acceleratorSelector"] = {"acceleratorClass": accelerator_class}
    if deployment_mode is not None:
        body["deploymentMode"] = deployment_mode
    if decoder is not None:
        body["decoder"] = decoder
    if router is not None:
        body["router"] = router
    if spec:
        body.update(copy.deepcopy(spec))
    return {"apiVersion": "ome.io/v1beta1", "kind": "InferenceService", "metadata": metadata, "spec": body}


def with_spec(doc: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A deep copy of a manifest with top-level ``spec`` keys replaced (None removes a key)."""
    out = copy.deepcopy(doc)
    for key, value in changes.items():
        if value is None:
            out["spec"].pop(key, None)
        else:
            out["spec"][key] = value
    return out


def renamed(doc: dict[str, Any], name: str) -> dict[str, Any]:
    """A deep copy of a manifest with another ``metadata.name``."""
    out = copy.deepcopy(doc)
    out["metadata"]["name"] = name
    return out


def revision(
    name: str,
    runtime_doc: dict[str, Any],
    *,
    data: dict[str, Any] | None = None,
    namespace: str = "ome",
    owner: str | None = None,
    created: str | None = None,
    ome_managed: bool = True,
) -> dict[str, Any]:
    """A runtime revision as OME stores it (runtime-revisions.md; labels-and-annotations.md,
    "ControllerRevisions"): a ControllerRevision in ``namespace`` labelled for ``runtime_doc``
    (``owner`` overrides the runtime name label), holding ``data`` (default: the runtime's spec)."""
    meta = runtime_doc["metadata"]
    labels = {
        "ome.io/runtime-of": owner if owner is not None else meta["name"],
        "ome.io/runtime-of-kind": runtime_doc["kind"],
        "ome.io/runtime-of-namespace": meta.get("namespace", ""),
        "ome.io/revision-hash": name[-8:],
    }
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels}
    if ome_managed:
        metadata["annotations"] = {"ome.io/created-by": "ome-controller"}
    if created is not None:
        metadata["creationTimestamp"] = created
    return {
        "apiVersion": "apps/v1",
        "kind": "ControllerRevision",
        "metadata": metadata,
        "data": copy.deepcopy(runtime_doc["spec"] if data is None else data),
        "revision": 1,
    }


def accelerator_class(name: str, **spec: Any) -> dict[str, Any]:
    """An AcceleratorClass with the ``spec`` fields given."""
    return {"apiVersion": "ome.io/v1beta1", "kind": "AcceleratorClass", "metadata": {"name": name}, "spec": spec}


def names(items: Iterable[Any]) -> list[str]:
    """``runtime.name`` of each item."""
    return [i.runtime.name for i in items]


# ---------------------------------------------------------------------------------------------
# compiled domain objects, for what the cache refuses (the matcher still handles it, as OME's Go
# matcher does, but no runtime that reaches it through the cache has it)


def domain_spec(name: str, version: str | None, weight: int = 1) -> d.Spec:
    """A compiled format/framework with the CRD defaults (``operator: Equal``, ``weight: 1``)."""
    return d.Spec(name, version, parse_version(version) if version is not None else None, "Equal", weight)


def domain_entry(
    index: int = 0,
    *,
    format: Any = _DEFAULT,  # noqa: A002 - a d.Spec, or None
    framework: Any = _DEFAULT,
    architecture: str | None = "LlamaForCausalLM",
    auto_select: bool | None = True,
    priority: int | None = None,
) -> d.Entry:
    """A compiled ``supportedModelFormats`` entry with ``entry()``'s defaults; ``format`` or
    ``framework`` None leaves it out (an entry the CRD, and so the cache, refuses)."""
    return d.Entry(
        index=index,
        model_format=domain_spec("safetensors", "1.0.0") if format is _DEFAULT else format,
        model_framework=domain_spec("transformers", "4.45.0.dev0") if framework is _DEFAULT else framework,
        architecture=architecture,
        quantization=None,
        pipeline=None,
        auto_select=auto_select,
        priority=priority,
    )


def domain_runtime_spec(*entries: d.Entry) -> d.Compiled:
    """A compiled runtime spec with only ``entries`` (no size range, classes or modes)."""
    return d.Compiled(
        disabled=False,
        entries=tuple(entries),
        size_range=None,
        classes=(),
        class_set=frozenset(),
        engine_mode=None,
        decoder_mode=None,
        any_auto_select=any(e.auto_select is True for e in entries),
    )


def domain_model() -> d.Model:
    """``model()`` compiled: the BaseModel llama-3-2-3b-instruct of model-version-matching.md."""
    return d.Model(
        kind="BaseModel",
        namespace="llama-demo",
        name="llama-3-2-3b-instruct",
        model_format=domain_spec("safetensors", "1.0.0"),
        model_framework=domain_spec("transformers", "4.45.0.dev0"),
        architecture="LlamaForCausalLM",
        quantization=None,
        size_text="3.21B",
        size=3.21e9,
        pipeline=None,
        disabled=False,
        label="mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0",
        cache_key=("BaseModel", "llama-demo", "llama-3-2-3b-instruct"),
    )


# ---------------------------------------------------------------------------------------------
# the docs' own manifests

NS = "llama-demo"

# model-version-matching.md: the BaseModel (also the scoring page's worked example).
LLAMA_3_2_3B_BASEMODEL = """\
apiVersion: ome.io/v1beta1
kind: BaseModel
metadata:
  name: llama-3-2-3b-instruct
  namespace: llama-demo
  annotations:
    ome.oracle.com/skip-config-parsing: "true"
spec:
  modelType: llama
  modelArchitecture: LlamaForCausalLM
  modelFormat:
    name: safetensors
    version: "1.0.0"
  modelFramework:
    name: transformers
    version: "4.45.0.dev0"
  modelParameterSize: "3.21B"
  modelCapabilities:
    - TEXT_TO_TEXT
  storage:
    storageUri: hf://meta-llama/Llama-3.2-3B-Instruct
    path: /mnt/data/models/meta/llama-3-2-3b-instruct
    key: hf-token
"""

# runtime-accelerator-class-matching.md / runtime-deployment-mode-matching.md: the
# ClusterBaseModel llama-3-3-70b-instruct, Ready with the fields OME records (the catalog
# runtime srt-llama-3-3-70b-instruct's format, framework and architecture; 70B parameters).
LLAMA_3_3_70B_CBM = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: llama-3-3-70b-instruct
spec:
  modelArchitecture: LlamaForCausalLM
  modelFormat:
    name: safetensors
    version: "1.0.0"
  modelFramework:
    name: transformers
    version: "4.47.0.dev0"
  modelParameterSize: 70B
"""

# runtime-accelerator-class-matching.md, "Declare both sides": runtime.yaml, verbatim.
LLAMA_3_3_70B_HOPPER = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: llama-3-3-70b-hopper
spec:
  supportedModelFormats:
    - modelFramework:
        name: transformers
        version: "4.47.0.dev0"
      modelFormat:
        name: safetensors
        version: "1.0.0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
      priority: 1
  modelSizeRange:
    min: 60B
    max: 75B
  acceleratorRequirements:
    acceleratorClasses:
      - nvidia-h100
      - nvidia-h200
  engineConfig:
    volumes:
      - name: dshm
        emptyDir:
          medium: Memory
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
      ports:
        - containerPort: 8080
          name: http1
          protocol: TCP
      command:
        - python3
        - -m
        - sglang.launch_server
        - --host
        - "0.0.0.0"
        - --port
        - "8080"
        - --enable-metrics
        - --log-requests
        - --model-path
        - $(MODEL_PATH)
        - --tp-size
        - "4"
        - --mem-frac
        - "0.9"
        - --served-model-name
        - meta-llama/Llama-3.3-70B-Instruct
      volumeMounts:
        - mountPath: /dev/shm
          name: dshm
      resources:
        requests:
          cpu: 10
          memory: 160Gi
          nvidia.com/gpu: 4
        limits:
          cpu: 10
          memory: 160Gi
          nvidia.com/gpu: 4
"""

# runtime-accelerator-class-matching.md: inference-service.yaml, verbatim.
LLAMA_3_3_70B_ISVC = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-3-70b
  namespace: llama-demo
spec:
  model:
    name: llama-3-3-70b-instruct
  acceleratorSelector:
    acceleratorClass: nvidia-h100
  engine:
    minReplicas: 1
    maxReplicas: 1
"""

# runtime-deployment-mode-matching.md, "Example": runtime.yaml, verbatim.
SRT_LLAMA_3_3_70B_MULTINODE = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-llama-3-3-70b-instruct-multinode
spec:
  supportedModelFormats:
    - modelFramework:
        name: transformers
        version: "4.47.0.dev0"
      modelFormat:
        name: safetensors
        version: "1.0.0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
      priority: 2
  protocolVersions:
    - openAI
  modelSizeRange:
    min: 60B
    max: 75B
  engineConfig:
    annotations:
      ome.io/deploymentMode: MultiNode
    leader:
      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
      runner:
        name: ome-container
        image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
        ports:
          - containerPort: 8080
            name: http1
            protocol: TCP
        command:
          - python3
          - -m
          - sglang.launch_server
          - --host
          - "0.0.0.0"
          - --port
          - "8080"
          - --model-path
          - $(MODEL_PATH)
          - --tp-size
          - "8"
          - --nccl-init
          - $(LWS_LEADER_ADDRESS):5000
          - --nnodes
          - $(LWS_GROUP_SIZE)
          - --node-rank
          - $(LWS_WORKER_INDEX)
          - --served-model-name
          - meta-llama/Llama-3.3-70B-Instruct
        volumeMounts:
          - mountPath: /dev/shm
            name: dshm
        resources:
          requests:
            nvidia.com/gpu: 4
          limits:
            nvidia.com/gpu: 4
    worker:
      size: 1
      volumes:
        - name: dshm
          emptyDir:
            medium: Memory
      runner:
        name: ome-container
        image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
        command:
          - python3
          - -m
          - sglang.launch_server
          - --host
          - "0.0.0.0"
          - --port
          - "8080"
          - --model-path
          - $(MODEL_PATH)
          - --tp-size
          - "8"
          - --nccl-init
          - $(LWS_LEADER_ADDRESS):5000
          - --nnodes
          - $(LWS_GROUP_SIZE)
          - --node-rank
          - $(LWS_WORKER_INDEX)
          - --served-model-name
          - meta-llama/Llama-3.3-70B-Instruct
        volumeMounts:
          - mountPath: /dev/shm
            name: dshm
        resources:
          requests:
            nvidia.com/gpu: 4
          limits:
            nvidia.com/gpu: 4
"""

# runtime-deployment-mode-matching.md: inference-service.yaml, verbatim.
LLAMA_3_70B_ISVC = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-70b
  namespace: llama-demo
spec:
  deploymentMode: OMENative
  model:
    name: llama-3-3-70b-instruct
  engine:
    minReplicas: 1
    maxReplicas: 1
"""

# select-accelerators.md, Step 1: accelerator-classes.yaml, verbatim (as dicts: NVIDIA_H100, NVIDIA_H200).
NVIDIA_HOPPER_CLASSES = """\
apiVersion: ome.io/v1beta1
kind: AcceleratorClass
metadata:
  name: nvidia-h100
spec:
  vendor: nvidia
  family: hopper
  model: h100
  discovery:
    nodeSelector:
      nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3
  capabilities:
    memoryGB: 80Gi
    computeCapability: "9.0"
    memoryBandwidthGBps: "3350"
    features:
      - fp8
      - nvlink
    performance:
      fp16Tflops: 989
  cost:
    perHour: "10"
---
apiVersion: ome.io/v1beta1
kind: AcceleratorClass
metadata:
  name: nvidia-h200
spec:
  vendor: nvidia
  family: hopper
  model: h200
  discovery:
    nodeSelector:
      nvidia.com/gpu.product: NVIDIA-H200
  capabilities:
    memoryGB: 141Gi
    computeCapability: "9.0"
    memoryBandwidthGBps: "4800"
    features:
      - fp8
      - nvlink
    performance:
      fp16Tflops: 989
  cost:
    perHour: "12"
"""
NVIDIA_H100, NVIDIA_H200 = _docs(NVIDIA_HOPPER_CLASSES)

# diffusion-pipeline-runtime-matching.md, "Declare a pipeline in a runtime" (engineConfig trimmed).
SRT_QWEN_IMAGE_PIPELINE = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-qwen-image-pipeline
spec:
  supportedModelFormats:
    - modelFormat:
        name: diffusers
        version: "0.34.0.dev0"
      modelFramework:
        name: diffusers
        version: "0.34.0.dev0"
      modelArchitecture: QwenImagePipeline
      diffusionPipeline:
        className: QwenImagePipeline
        transformer:
          library: diffusers
      autoSelect: true
      priority: 2
  engineConfig:
    runner:
      name: ome-container
      image: sglang:0.5.6-diffusion-cuda129-amd64
"""

# diffusion-pipeline-runtime-matching.md, "Models without a recorded pipeline": qwen-image-pvc,
# a ClusterBaseModel served from a PVC at diffusers 0.34.0.dev0, with no pipeline.
QWEN_IMAGE_PVC = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: qwen-image-pvc
spec:
  modelArchitecture: QwenImagePipeline
  modelFormat:
    name: diffusers
    version: "0.34.0.dev0"
  modelFramework:
    name: diffusers
    version: "0.34.0.dev0"
"""

# troubleshoot-runtime-selection.md: the ClusterBaseModel qwen2-5-7b as `kubectl get` shows it.
QWEN2_5_7B_CBM = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: qwen2-5-7b
spec:
  modelFormat:
    name: safetensors
    version: "1.0.0"
  modelArchitecture: Qwen2ForCausalLM
  modelFramework:
    name: transformers
    version: "4.40.1"
"""

QWEN2_5_7B_ISVC = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: qwen2-5-7b
  namespace: demo
spec:
  model:
    name: qwen2-5-7b
  engine:
    minReplicas: 1
    maxReplicas: 1
"""

# reference-a-runtime-explicitly.md: the ClusterBaseModel llama-3-2-1b-instruct as Step 1 prints it.
LLAMA_3_2_1B_CBM = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: llama-3-2-1b-instruct
spec:
  modelArchitecture: LlamaForCausalLM
  modelFormat:
    name: safetensors
    version: "1.0.0"
  modelFramework:
    name: transformers
    version: "4.45.0.dev0"
"""

# reference-a-runtime-explicitly.md, Step 2: the InferenceService naming srt-llama-3-2-1b-instruct.
LLAMA_3_2_1B_ISVC = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-2-1b-instruct
  namespace: llama-demo
spec:
  model:
    name: llama-3-2-1b-instruct
  runtime:
    name: srt-llama-3-2-1b-instruct
  engine:
    minReplicas: 1
    maxReplicas: 1
"""

# runtime-inheritance.md, "Define a profile and inherit from it": profile.yaml, verbatim.
SGLANG_PROFILE = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: sglang-profile
  annotations:
    ome.io/runtime-profile: "true"
spec:
  disabled: true
  engineConfig:
    tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
    volumes:
      - name: dshm
        emptyDir:
          medium: Memory
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
      command:
        - python3
        - -m
        - sglang.launch_server
        - --host=0.0.0.0
        - --port=8080
        - --model-path=$(MODEL_PATH)
        - "--served-model-name={{.Name}}"
      ports:
        - containerPort: 8080
          name: http1
          protocol: TCP
      volumeMounts:
        - name: dshm
          mountPath: /dev/shm
      readinessProbe:
        httpGet:
          path: /health_generate
          port: 8080
        periodSeconds: 60
        timeoutSeconds: 200
      startupProbe:
        httpGet:
          path: /health_generate
          port: 8080
        initialDelaySeconds: 60
        periodSeconds: 6
        timeoutSeconds: 30
        failureThreshold: 150
"""

# runtime-inheritance.md: runtime.yaml (the ServingRuntime sglang-llama-3-2-3b inheriting from it), verbatim.
SGLANG_CHILD = """\
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata:
  name: sglang-llama-3-2-3b
  namespace: llama-demo
  annotations:
    ome.io/inherit-from: sglang-profile
spec:
  disabled: false
  supportedModelFormats:
    - modelFormat:
        name: safetensors
        version: "1.0.0"
      modelFramework:
        name: transformers
        version: "4.45.0.dev0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: false
  modelSizeRange:
    min: 2B
    max: 4B
  engineConfig:
    runner:
      name: ome-container
      args:
        - --tp-size=1
        - --mem-frac=0.9
      resources:
        requests:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
        limits:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
"""

# runtime-inheritance.md: isvc.yaml, verbatim.
INHERITANCE_ISVC = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-2-3b-instruct
  namespace: llama-demo
spec:
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: sglang-llama-3-2-3b
  engine:
    minReplicas: 1
    maxReplicas: 1
"""

# runtime-inheritance.md: the ClusterBaseModel llama-3-2-3b-instruct (Llama-3.2-3B-Instruct.yaml), Ready.
LLAMA_3_2_3B_CBM = """\
apiVersion: ome.io/v1beta1
kind: ClusterBaseModel
metadata:
  name: llama-3-2-3b-instruct
spec:
  modelArchitecture: LlamaForCausalLM
  modelFormat:
    name: safetensors
    version: "1.0.0"
  modelFramework:
    name: transformers
    version: "4.45.0.dev0"
  modelParameterSize: 3.21B
"""

# serving-runtimes.md, "What's in a runtime": runtime.yaml (the ServingRuntime sglang-llama-3-2-3b), verbatim.
SGLANG_RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata:
  name: sglang-llama-3-2-3b
  namespace: llama-demo
spec:
  supportedModelFormats:
    - modelFormat:
        name: safetensors
        version: "1.0.0"
      modelFramework:
        name: transformers
        version: "4.45.0.dev0"
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
      priority: 1
  modelSizeRange:
    min: 2B
    max: 4B
  engineConfig:
    tolerations:
      - key: nvidia.com/gpu
        operator: Exists
        effect: NoSchedule
    volumes:
      - name: dshm
        emptyDir:
          medium: Memory
    runner:
      name: ome-container
      image: docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64
      command:
        - python3
        - -m
        - sglang.launch_server
      args:
        - --host=0.0.0.0
        - --port=8080
        - --model-path=$(MODEL_PATH)
        - "--served-model-name={{.Name}}"
        - --tp-size=1
        - --mem-frac=0.9
      ports:
        - containerPort: 8080
          name: http1
          protocol: TCP
      volumeMounts:
        - name: dshm
          mountPath: /dev/shm
      resources:
        requests:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
        limits:
          cpu: "10"
          memory: 30Gi
          nvidia.com/gpu: "1"
      readinessProbe:
        httpGet:
          path: /health_generate
          port: 8080
        periodSeconds: 60
        timeoutSeconds: 200
      startupProbe:
        httpGet:
          path: /health_generate
          port: 8080
        initialDelaySeconds: 60
        periodSeconds: 6
        timeoutSeconds: 30
        failureThreshold: 150
"""

# runtime-revisions.md, "Pin an InferenceService": isvc.yaml, verbatim.
PINNED_ISVC = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-3-2-3b-instruct
  namespace: llama-demo
spec:
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: sglang-llama-3-2-3b
    kind: ServingRuntime
    autoSync: false
  engine:
    minReplicas: 1
    maxReplicas: 1
"""

# runtime-revisions.md, "Roll back to an earlier revision": isvc.yaml (the pinned one with a revision).
ROLLBACK_ISVC = PINNED_ISVC.replace(
    "    autoSync: false\n", "    autoSync: false\n    revision: r-llama-demo-sglang-llama-3-2-3b-590753e8\n"
)

# runtime-inheritance.md: the command the profile holds, which a child inherits.
PROFILE_COMMAND = [
    "python3",
    "-m",
    "sglang.launch_server",
    "--host=0.0.0.0",
    "--port=8080",
    "--model-path=$(MODEL_PATH)",
    "--served-model-name={{.Name}}",
]

# runtime-revisions.md: the revisions the page lists (`kubectl get controllerrevisions -n ome`).
FIRST_REVISION = "r-llama-demo-sglang-llama-3-2-3b-590753e8"
SECOND_REVISION = "r-llama-demo-sglang-llama-3-2-3b-af9539ac"

# The catalog files the pages name.
SRT_MISTRAL_7B_INSTRUCT = "srt/mistral-7b-instruct-rt.yaml"
SRT_QWEN2_5_7B = "srt/Qwen/qwen2-5-7b-rt.yaml"
SRT_LLAMA_3_2_1B_INSTRUCT = "srt/meta/llama-3-2-1b-instruct-rt.yaml"
SRT_LLAMA_3_2_3B_INSTRUCT = "srt/meta/llama-3-2-3b-instruct-rt.yaml"
SRT_LLAMA_3_3_70B_INSTRUCT = "srt/meta/llama-3-3-70b-instruct-rt.yaml"
SRT_QWEN_IMAGE = "srt/Qwen/Qwen-Image-rt.yaml"


def worked_example_runtimes(namespace: str = NS) -> list[dict[str, Any]]:
    """runtime-selection-scoring.md, "Worked example": four runtimes, each with one entry that
    matches the BaseModel and sets ``autoSelect: true`` (vllm-llama's entry as the page shows)."""
    return [
        runtime("team-llama", entry(priority=1), namespace=namespace),
        runtime("vllm-llama", entry(format=spec_of("safetensors", "1.0.0", weight=2), priority=2)),
        runtime("srt-llama-small", entry(priority=3), size=("1B", "8B")),
        runtime("srt-llama-large", entry(priority=3), size=("1B", "70B")),
    ]


def troubleshoot_qwen_sources() -> list[Any]:
    """troubleshoot-runtime-selection.md: the two catalog runtimes and the model as `kubectl get`
    shows it (srt-mistral-7b-instruct, srt-qwen2-5-7b, the ClusterBaseModel qwen2-5-7b)."""
    return [catalog(SRT_MISTRAL_7B_INSTRUCT), catalog(SRT_QWEN2_5_7B), QWEN2_5_7B_CBM]


# The example InferenceServices ome-selector ships (server/ome_selector/examples/inferenceservices),
# as file paths: runtime-accelerator-class-matching.md's InferenceService (nvidia-h100), the same
# naming nvidia-a100, the same naming the runtime srt-llama-3-3-70b-instruct;
# runtime-deployment-mode-matching.md's InferenceService (OMENative); and the InferenceService of
# runtime-selection-scoring.md's worked example (the BaseModel llama-3-2-3b-instruct).
SEED_A_FILE = str(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
SEED_A_A100_FILE = str(EXAMPLE_ISVCS / "llama-3-3-70b-a100.yaml")
SEED_A_NAMED_FILE = str(EXAMPLE_ISVCS / "llama-3-3-70b-named.yaml")
SEED_B_FILE = str(EXAMPLE_ISVCS / "llama-3-70b.yaml")
SCORING_FILE = str(EXAMPLE_ISVCS / "llama-3-2-3b.yaml")

# model-version-matching.md, the "Examples" table: (entry version, operator, model version, matches).
MODEL_VERSION_EXAMPLES = [
    ("1.0.0", "Equal", "1.0.0", True),
    ("1.0.0", None, "1.0", True),
    ("1.8.0", "GreaterThan", "1.7.0", True),
    ("1.8.0", "GreaterThan", "1.8.0", False),
    ("1.8.0", "GreaterThanOrEqual", "1.8.0", True),
    ("4.50.0", "GreaterThanOrEqual", "4.36.2", True),
    ("4.50.0", "GreaterThanOrEqual", "4.51.0", False),
    ("1.8.0-dev", "GreaterThan", "1.8.0-dev", True),
    ("4.45.0.dev0", "GreaterThanOrEqual", "4.44.0", False),
    ("4.50.0", "GreaterThanOrEqual", "4.45.0.dev0", False),
    ("1.8", "GreaterThan", "1.7.0", False),
]


# Every REASON text of `kubectl ome runtime explain` that does not depend on the inputs.
NO_AUTO_SELECT_ENTRY = (
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic "
    "selection skips it (pin it explicitly via spec.runtime.name instead)"
)
ACCELERATOR_REASON = "runtime does not support the required accelerator class"

# troubleshoot-runtime-selection.md, Step 1: the message OME records for qwen2-5-7b (the condition's
# message and the RuntimeNotFound event).
QWEN2_5_7B_NO_RUNTIME_MESSAGE = (
    "no runtime found to support model safetensors with format safetensors in namespace demo. Checked 2 runtimes "
    "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-mistral-7b-instruct (model format "
    "'mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1' not in supported formats: architecture mismatch "
    "(model=Qwen2ForCausalLM, runtime=MistralForCausalLM), framework version mismatch (model=4.40.1, runtime=4.36.0))"
)

# troubleshoot-runtime-selection.md, Step 3: `kubectl ome runtime explain --model qwen2-5-7b -n demo`
# (unwrapped), as ``table()`` reads it.
QWEN2_5_7B_EXPLAIN_TABLE = [
    (
        "srt-mistral-7b-instruct",
        "Cluster",
        "No",
        "-",
        "-",
        "model format 'mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1' not in supported formats: architecture mismatch "
        "(model=Qwen2ForCausalLM, runtime=MistralForCausalLM), framework version mismatch (model=4.40.1, runtime=4.36.0)",
    ),
    ("srt-qwen2-5-7b", "Cluster", "No", "-", "-", NO_AUTO_SELECT_ENTRY),
]

# reference/kubectl-ome/runtime.md, "explain": `kubectl ome runtime explain --model llama-3-2-3b-instruct
# -n team-a` (team-llama, vllm-llama inheriting from vllm-base, srt-llama-1b, vllm-legacy), as
# ``table()`` reads it.
TEAM_A_EXPLAIN_TABLE = [
    ("team-llama", "Namespaced", "Yes", "1", "2", "-"),
    ("vllm-llama", "Cluster", "Yes", "2", "6", "-"),
    ("srt-llama-1b", "Cluster", "No", "-", "-", "model size 3.21B is outside supported range [500M, 2B]"),
    ("vllm-base", "Cluster", "No", "-", "-", NO_AUTO_SELECT_ENTRY),
    ("vllm-legacy", "Cluster", "No", "-", "-", "runtime is disabled"),
]
