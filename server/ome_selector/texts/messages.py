"""Every exact OME message, in one place. Each function names the docs page it comes from.

A table of texts only: constants and the functions that fill them in (no rule decides anything
here), so it stays one module whatever its length.

Go formatting is reproduced: ``%v`` of a list is ``[a b]``; nothing is pluralised.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ome_selector.domain import errors

# troubleshoot-runtime-selection.md, Step 2 table (the checks, in order).
RUNTIME_DISABLED = "runtime is disabled"
ACCELERATOR_CLASS = "runtime does not support the required accelerator class"
NO_SUPPORTED_FORMATS = "no supported formats defined"
UNKNOWN_MISMATCH = "unknown mismatch"

# reference/kubectl-ome/runtime.md, "Output fields" (explain REASON for compatible runtimes).
NO_AUTO_SELECT_ENTRY = (
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic "
    "selection skips it (pin it explicitly via spec.runtime.name instead)"
)
AUTO_SELECT_SCORE_ZERO = "auto-select score is 0"

# troubleshoot-runtime-selection.md, "The message says the model format name is required".
MODEL_FORMAT_REQUIRED = "invalid model specification: modelFormat.name: model format name is required"

# base-models.md, "Distribution"; troubleshoot-runtime-selection.md, "The message mentions a model
# cache provider": the first part of every entry's mismatch text for a ``distribution: Sharded``
# model, since no runtime entry can name a configured model cache provider yet
# (ome-selection-facts.md 8.9).
SHARDED_NO_CACHE_PROVIDER = "no model cache provider is configured for sharded model loading"


def go_list(items: Iterable[str]) -> str:
    """Go's ``%v`` of a string slice: ``[a b c]``."""
    return "[" + " ".join(items) + "]"


def deployment_mode(component: str, runtime_mode: str, requested_mode: str) -> str:
    """runtime-deployment-mode-matching.md, "Where a rejection shows up"."""
    return (
        f"runtime {component} deployment mode {runtime_mode} does not match requested "
        f"{component} deployment mode {requested_mode}"
    )


# model-version-matching.md, "Mismatch reasons", and diffusion-pipeline-runtime-matching.md: the
# part of one supportedModelFormats entry. ``what`` is format, framework, architecture or
# quantization (or a pipeline component's name).


MISMATCH = "{what} mismatch (model={model}, runtime={runtime})"  # e.g. framework version mismatch
MODEL_LACKS = "model has no {what} but runtime requires {runtime}"
RUNTIME_LACKS = "model has {what} {model} but runtime has no {what} requirement"
MODEL_LACKS_VERSION = "model has no {what} version but runtime requires {runtime}"
RUNTIME_LACKS_VERSION = "model has {what} version but runtime has no version requirement"
PIPELINE_MISSING = "diffusion pipeline required by runtime but not specified in model"
PIPELINE_ADDITIONAL_MISSING = "diffusion pipeline missing required additional components"
PIPELINE_COMPONENT_MISSING = "component {name} required by runtime but not specified in model"
PIPELINE_ADDITIONAL_COMPONENT_MISSING = "diffusion component {name} missing in model"


def model_format(label: str, entry_texts: Sequence[str]) -> str:
    """model-version-matching.md, "Mismatch reasons": one text per entry, joined by ``; ``."""
    detail = "; ".join(entry_texts) if entry_texts else NO_SUPPORTED_FORMATS
    return f"model format '{label}' not in supported formats: {detail}"


def model_size(size: str, range_text: str) -> str:
    """model-size-range-matching.md, "Where a rejection shows up"."""
    return f"model size {size} is outside supported range {range_text}"


def matching_format_not_auto_select(format_name: str) -> str:
    """reference/kubectl-ome/runtime.md, explain REASON when the score is 0 or less."""
    return (
        f"matching format {format_name} is not autoSelect-enabled (a different supportedModelFormats "
        "entry on this runtime has autoSelect=true, but not the one that matches this model)"
    )


# One excluded runtime in the ``no runtime found`` message: ``<runtime> (<reason>)``.
EXCLUDED_RUNTIME = "{} ({})"


def excluded_runtime(name: str, reason: str) -> str:
    """troubleshoot-runtime-selection.md, Step 2: ``<runtime> (<reason>)``."""
    return EXCLUDED_RUNTIME.format(name, reason)


EXCLUDED_RUNTIMES = ". Excluded runtimes: "
EXCLUDED_SEPARATOR = "; "


def no_runtime_head(format_name: str, namespace: str, namespaced: int, cluster: int) -> str:
    """The ``no runtime found`` message up to its list: ``no runtime found to support model X
    with format X in namespace NS[. Checked N runtimes (a namespace-scoped, b cluster-scoped)]``."""
    text = f"no runtime found to support model {format_name} with format {format_name} in namespace {namespace}"
    total = namespaced + cluster
    if total > 0:
        text += f". Checked {total} runtimes ({namespaced} namespace-scoped, {cluster} cluster-scoped)"
    return text


def no_runtime_found(format_name: str, namespace: str, namespaced: int, cluster: int, excluded: Sequence[str]) -> str:
    """troubleshoot-runtime-selection.md, Step 2: the ``no runtime found`` message.

    ``excluded`` holds ``excluded_runtime(name, primary reason)`` of each excluded runtime, in
    fetch order. The model is named by its format. No trailing period.
    """
    text = no_runtime_head(format_name, namespace, namespaced, cluster)
    if excluded:
        text += EXCLUDED_RUNTIMES + EXCLUDED_SEPARATOR.join(excluded)
    return text


def auto_selected(runtime: str, model: str) -> str:
    """runtime-selection-scoring.md, "Check the ranking": the admission warning."""
    return f"Runtime {runtime} will be auto-selected for model {model}"


def runtime_does_not_support(runtime: str, model_name: str, reason: str) -> str:
    """The RuntimeCompatibilityError text. The model name is empty for accelerator-class and
    deployment-mode failures (``... support model : ...``) and the format name otherwise."""
    return f"runtime {runtime} does not support model {model_name}: {reason}"


def named_runtime_warning(runtime: str, model: str, error: str) -> str:
    """runtime-accelerator-class-matching.md: the webhook warning for a named runtime."""
    return (
        f'runtime "{runtime}" does not declare support for model "{model}" ({error}); '
        "proceeding because the runtime was named explicitly"
    )


def named_runtime_advisory(runtime: str, model: str, error: str) -> str:
    """runtime-deployment-mode-matching.md: the ``RuntimeCompatibilityAdvisory`` event."""
    return (
        f"Runtime {runtime} does not declare support for model {model} ({error}); "
        "proceeding because the runtime was named explicitly"
    )


def named_runtime_event(runtime: str, model: str, error: str) -> str:
    """The ``RuntimeValidationError`` event for a named runtime that cannot be used
    (runtime-inheritance.md, "When a chain breaks")."""
    return f"Runtime {runtime} does not support model {model}: {error}"


def runtime_not_found(name: str, namespace: str) -> str:
    """troubleshoot-runtime-selection.md, "The runtime you named isn't found"."""
    return f"runtime {name} not found in namespace {namespace} or at cluster scope"


def serving_runtime_not_found(name: str, namespace: str) -> str:
    """Same section, for ``spec.runtime.kind: ServingRuntime``."""
    return f"ServingRuntime {name} not found in namespace {namespace}"


def runtime_disabled(cluster: bool, name: str) -> str:
    """The RuntimeDisabledError text for a named runtime."""
    scope = "cluster-scoped" if cluster else "namespace-scoped"
    return f"{scope} runtime {name} is disabled"


def model_not_found(name: str, namespace: str) -> str:
    """The webhook's error for a model that exists neither as BaseModel nor ClusterBaseModel."""
    return (
        f'referenced model "{name}" not found in namespace "{namespace}": ensure a BaseModel exists '
        "in this namespace or a ClusterBaseModel exists cluster-wide with this name"
    )


def model_disabled(name: str) -> str:
    """The webhook's error for a disabled model."""
    return f"model {name} is disabled"


def inherit_parent_not_found(parent: str, chain: Sequence[str]) -> str:
    """runtime-inheritance.md, chain limits: a missing parent."""
    return f'inherit-from parent "{parent}" not found (chain so far: {go_list(chain)})'


def inherit_cycle(chain: Sequence[str]) -> str:
    """runtime-inheritance.md, chain limits: a cycle (``[a b a]``)."""
    return f"inheritance cycle detected: {go_list(chain)}"


def inherit_max_depth(chain: Sequence[str]) -> str:
    """runtime-inheritance.md, chain limits: more than 5 runtimes."""
    return f"inheritance chain exceeds max depth 5 (chain: {go_list(chain)})"


# ---- the controller (troubleshoot-runtime-selection.md Step 1; reference-a-runtime-explicitly.md;
# select-accelerators.md; deployment-modes.md; ome-selection-facts.md 6 and 8 where they are silent)

# Event reasons.
EVENT_RUNTIME_NOT_FOUND = "RuntimeNotFound"
EVENT_MODEL_RECONCILE_ERROR = "ModelReconcileError"
EVENT_RUNTIME_PIN_ERROR = "RuntimePinError"
EVENT_RUNTIME_VALIDATION_ERROR = "RuntimeValidationError"
EVENT_RUNTIME_FETCH_ERROR = "RuntimeFetchError"
EVENT_RUNTIME_COMPATIBILITY_ADVISORY = "RuntimeCompatibilityAdvisory"
EVENT_RUNTIME_SELECTION_ERROR = "RuntimeSelectionError"
EVENT_DEPLOYMENT_MODE_ERROR = "DeploymentModeError"
EVENT_ACCELERATOR_CLASS_ERROR = "AcceleratorClassError"
# The RuntimeReady condition: its type and reasons.
CONDITION_RUNTIME_READY = "RuntimeReady"
# The InferenceService's own readiness, which RuntimeReady doesn't count toward.
CONDITION_READY = "Ready"
CONDITION_RUNTIME_NOT_FOUND = "RuntimeNotFound"
CONDITION_RUNTIME_RESOLVED = "RuntimeResolved"

# ---- runtime revisions and pinning (runtime-revisions.md; ome-selection-facts.md 8.8; where the
# page gives no text, OME's controller, pkg/controller/v1beta1/inferenceservice/pinning.go)

CONDITION_RUNTIME_DRIFTED = "RuntimeDrifted"
# "The RuntimeDrifted condition": its reasons.
DRIFT_REVISION_MISMATCH = "RevisionMismatch"
DRIFT_REVISION_MISSING = "RevisionMissing"
DRIFT_RUNTIME_MISMATCH = "RuntimeMismatch"
DRIFT_SOURCE_RUNTIME_MISSING = "SourceRuntimeMissing"


def drift_revision_mismatch(revision: str) -> str:
    """runtime-revisions.md, "When the runtime changes": the condition's message."""
    return f"pinned {revision}, live spec differs; bump ome.io/runtime-sync annotation to advance"


def drift_explicit_revision_missing(revision: str, ome_namespace: str) -> str:
    """``RevisionMissing`` for the revision ``spec.runtime.revision`` names (OME's controller)."""
    return f"explicit pin {revision} not found in namespace {ome_namespace}"


def drift_pinned_revision_missing(revision: str, ome_namespace: str) -> str:
    """``RevisionMissing`` for the revision ``status.pinnedRevisionName`` names (OME's controller)."""
    return f"pinned revision {revision} missing from {ome_namespace}"


def drift_runtime_mismatch(revision: str, owner: str, runtime: str) -> str:
    """``RuntimeMismatch``: the revision is labelled for another runtime (OME's controller)."""
    return f'revision {revision} belongs to runtime "{owner}" but ISVC references "{runtime}"'


def drift_source_runtime_missing(runtime: str, revision: str) -> str:
    """``SourceRuntimeMissing``: OME keeps serving from the revision (OME's controller)."""
    return f"runtime {runtime} not found; serving from pinned revision {revision}"


def pin_error_live_runtime(runtime: str, error: str) -> str:
    """The ``RuntimePinError`` event when the live runtime cannot be read: missing at the first
    pin, or a chain that does not resolve (runtime-revisions.md, "The RuntimeDrifted condition";
    the text is OME's controller's)."""
    return f"resolve live runtime {runtime}: {error}"


# ---- runtime status (runtime-inheritance.md, "What admission checks" and "When a chain breaks";
# the Resolved message is OME's controller's, pkg/controller/v1beta1/servingruntime/status.go)

CONDITION_INHERITANCE_READY = "InheritanceReady"
INHERITANCE_RESOLVED = "Resolved"
INHERITANCE_PARENT_NOT_FOUND = "ParentNotFound"
INHERITANCE_CYCLE = "InheritanceCycle"
INHERITANCE_MAX_DEPTH_EXCEEDED = "MaxDepthExceeded"
INHERITANCE_RESOLVER_ERROR = "ResolverError"
INHERITANCE_RESOLVED_MESSAGE = "inheritance chain resolved"


def runtime_object_not_found(cluster: bool, name: str) -> str:
    """The API server's text for a runtime that does not exist (``kubectl get``)."""
    resource = "clusterservingruntimes" if cluster else "servingruntimes"
    return f'{resource}.ome.io "{name}" not found'


def cluster_base_model_not_found(name: str) -> str:
    """The API server's text for a model looked up as ``kubectl ome runtime explain --model``
    does (reference/kubectl-ome/runtime.md, ``explain``)."""
    return f'clusterbasemodels.ome.io "{name}" not found'


# The notes of ``kubectl ome runtime explain`` (reference/kubectl-ome/runtime.md, ``explain``).
NO_RUNTIMES_NOTE = "No serving runtimes found in the selected namespace or at cluster scope."
EXPLICIT_RUNTIME_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."


MODEL_REFERENCE_REQUIRED = "model reference is required"
NO_MODEL_WITH_NAME = "No BaseModel or ClusterBaseModel with the name: {model}"
BASE_MODEL_DISABLED = "specified base model {model} is disabled"
RUNTIME_FAILED_VALIDATION = "Runtime {runtime} failed validation: {error}"
FAILED_TO_FIND_RUNTIME = "Failed to find runtime for model {model}: {error}"
ENGINE_REQUIRED = "engine component is required"
FAILED_TO_GET_MODEL_LOG = "Failed to get referenced {kind}"
FAILED_TO_RECONCILE_COMPONENT_LOG = "Failed to reconcile component: {error}"
INVALID_COMPONENT_MODE = "invalid deployment mode for {component}"

# ---- the InferenceService webhook (reference-a-runtime-explicitly.md, troubleshoot-runtime-
# selection.md, deployment-modes.md, runtime-revisions.md; ome-selection-facts.md 7-8)

INVALID_ISVC_NAME = 'invalid InferenceService name "{name}", must match "[a-z]([-a-z0-9]*[a-z0-9])?"'
DECODER_WITHOUT_ENGINE = "decoder cannot be specified without engine"
INVALID_MODE_COMBINATION = (
    'InvalidDeploymentModeCombination: engine deploymentMode="{engine}" does not match decoder '
    'deploymentMode="{decoder}"; when either is OMENative, both must use the same value'
)
REVISION_NEEDS_PIN = (
    "spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin"
)
REVISION_NAME = (
    'spec.runtime.revision "{revision}" does not match the expected naming convention for runtime '
    '"{runtime}" ({kind}); expected the form {prefix}<8 lowercase hex chars>'
)
MODEL_REFERENCE_REQUIRED_FOR_AUTO_SELECT = (
    "model reference is required when runtime is not specified and engine does not have complete runner configuration"
)
NO_SUPPORTING_RUNTIME = (
    "no supporting runtime found for model {model} and engine does not have complete runner configuration: {error}"
)


def deployment_strategy_ignored(component: str, mode: str) -> str:
    """deployment-modes.md, "For the whole InferenceService": the webhook's warning for a
    component that sets ``deploymentStrategy`` under ``spec.deploymentMode: OMENative``."""
    return (
        f'{component}.deploymentStrategy is set but deploymentMode is "{mode}"; deploymentStrategy applies '
        f"only to RawDeployment and is ignored here — use {component}.lifecycle.updateStrategy.rollingUpdate "
        "for rollout pacing"
    )


def unsupported_value(path: str, value: str, supported: Sequence[str]) -> str:
    """The API server's CRD-enum rejection as a webhook denial reads it: ``spec.deploymentMode:
    Unsupported value: "MultiNode": supported values: "OMENative", "RawDeployment"``
    (``errors.unsupported`` with the field path in front)."""
    return f"{path}: {errors.unsupported(value, supported)}"


# ---- the runtime webhook's scalingPolicy, autoscalerPolicyRef and autoscaler checks
# (serving-runtimes.md, "Scaling policy", "The engine, decoder and router", "Common errors"). The
# pages give only the reason ``ScalingModeNotImplemented``; the whole texts are OME's (its
# pkg/validation), as the facts file gives none.

SCALING_MODE_NOT_IMPLEMENTED = (
    'spec.scalingPolicy.mode "{mode}" is accepted by the API but not implemented: no controller applies it, '
    'so the policy would silently behave like "Independent"; use "Independent" or omit the policy '
    "(ScalingModeNotImplemented)"
)
RUNTIME_AUTOSCALER_POLICY_REF = (
    "{component}: autoscalerPolicyRef is not supported on serving runtimes; policy refs attach on the "
    "InferenceService only"
)
# One component's autoscaler failure: ``<component>: <text>`` (``engineConfig: KedaTriggersRequired: ...``).
COMPONENT_AUTOSCALER = "{component}: {error}"
KEDA_TRIGGERS_REQUIRED = "KedaTriggersRequired: class=keda requires at least 1 trigger"
KEDA_IDLE_BELOW_MIN = (
    "KedaIdleBelowMin: keda.idleReplicaCount must be < minReplicas (got idleReplicaCount={idle}, minReplicas={min})"
)
_METRIC_TYPES = "Resource|Pods|Object|External|ContainerResource"
HPA_METRIC_TYPE_EMPTY = "HPAMetricMalformed: hpa.metrics[{index}].type is empty; must be one of " + _METRIC_TYPES
HPA_METRIC_SOURCE_MISSING = (
    "HPAMetricMalformed: hpa.metrics[{index}].type={type} but hpa.metrics[{index}].{source} is nil"
)


def hpa_metric_type_unknown(index: int, metric_type: str) -> str:
    """An ``hpa.metrics`` entry whose ``type`` is none of the five sources (Go ``%q`` of it)."""
    quoted = errors.printable(metric_type, quoted=True)
    return f'HPAMetricMalformed: hpa.metrics[{index}].type "{quoted}" is not one of {_METRIC_TYPES}'


# ---- kubectl ome runtime tree (reference/kubectl-ome/runtime.md, "tree") ----------------------

TREE_SUPPORTED_KINDS = ("ServingRuntime", "ClusterServingRuntime")


def tree_invalid_name(quoted_name: str, problem: str) -> str:
    """``runtime name "<name>" is invalid: <problem>`` (``quoted_name`` as ``errors.quote``
    shows it; ``problem`` as Kubernetes' name validation says it)."""
    return f"runtime name {quoted_name} is invalid: {problem}"


def tree_unsupported_kind(quoted_kind: str) -> str:
    """``unsupported runtime kind "<kind>" (supported: ServingRuntime, ClusterServingRuntime)``."""
    return f"unsupported runtime kind {quoted_kind} (supported: {', '.join(TREE_SUPPORTED_KINDS)})"


def tree_ambiguous(quoted_name: str, matched: int) -> str:
    """A name that is a ServingRuntime in the namespace and a ClusterServingRuntime too."""
    return (
        f"runtime {quoted_name} is ambiguous; pass --kind ServingRuntime or --kind ClusterServingRuntime: "
        f"runtime target is ambiguous: {quoted_name} matched {matched} runtimes"
    )


def tree_target_not_found(quoted_name: str) -> str:
    """``project runtime inheritance tree: runtime target was not found: "<name>"``."""
    return f"project runtime inheritance tree: runtime target was not found: {quoted_name}"


def tree_incomplete_runtimes(kind: str, status: str, pages: int, items: int) -> str:
    """A runtime list the tree cannot use whole (``status``: ``truncated`` or ``unavailable``)."""
    return (
        f"runtime tree requires complete runtime evidence: {kind} collection is {status} "
        f"(pages={pages} items={items}); restore list access or narrow the runtime scope, then retry"
    )


# ---- texts of this service (not OME's) --------------------------------------------------------

# The exclusion summary's label per primary reason, by ``checks.Check`` name, in canonical order.
SUMMARY_LABELS = {
    "DISABLED": "disabled",
    "ACCELERATOR_CLASS": "accelerator class",
    "DEPLOYMENT_MODE": "deployment mode",
    "MODEL_FORMAT": "model format",
    "MODEL_SIZE": "model size",
    "AUTO_SELECT": "not autoSelect-enabled",
    "SCORE": "auto-select score 0",
}


def exclusion_summary(candidates: int, total: int, counts: Sequence[tuple[str, int]]) -> str:
    """One line in kube-scheduler's style (``0/5 nodes are available: 3 ...``):
    ``2/206 runtimes are candidates: 150 model format, 40 model size``. ``counts`` holds
    (``checks.Check`` name, count) in canonical order; zero counts are left out."""
    text = f"{candidates}/{total} runtimes are candidates"
    shown = [f"{count} {SUMMARY_LABELS[check]}" for check, count in counts if count]
    return text + (": " + ", ".join(shown) if shown else "")


# The end of a capped ``no runtime found`` message (this service's; README "Deviations"): the
# excluded runtimes it leaves out, counted by primary reason in the exclusion summary's words.
EXCLUDED_TAIL = "… and {count} more: {counts}; ExplainRuntimes lists each"


def excluded_tail(counts: Sequence[tuple[str, int]]) -> str:
    """``… and 190 more: 150 model format, 40 model size; ExplainRuntimes lists each``.
    ``counts`` holds (``checks.Check`` name, runtimes left out) in canonical order; zero counts
    are left out."""
    shown = [f"{count} {SUMMARY_LABELS[check]}" for check, count in counts if count]
    return EXCLUDED_TAIL.format(count=sum(count for _, count in counts), counts=", ".join(shown))


# ---- watching selections, previewing cache changes (README "Watch selections and preview a change"; not OME's)

# A cache write's object, as the cause of a change: `ClusterServingRuntime vllm-llama: priority 2 → 4`.
CAUSE = "{object}: {changes}"
CAUSE_CREATED = "created"
CAUSE_DELETED = "deleted"
CAUSE_UNREAD = "changed (no field the selection reads)"
FIELD_CHANGE = "{field} {before} → {after}"
FIELDS_CHANGED = "{fields} changed"
ABSENT = "(none)"
ENTRY_COUNT = "supportedModelFormats {before} → {after} entries"


def cause(what: str, changes: Sequence[str]) -> str:
    """One object of a cache write as the cause of a change: ``<Kind> [<namespace>/]<name>:
    <change>, <change>`` (``created``, ``deleted``, or ``<field> <before> → <after>`` each)."""
    return CAUSE.format(object=what, changes=", ".join(changes) if changes else CAUSE_UNREAD)


def field_change(field: str, before: object, after: object) -> str:
    """``<field> <before> → <after>``; None is ``(none)``, booleans lower case as in YAML."""
    return FIELD_CHANGE.format(field=field, before=_shown(before), after=_shown(after))


def _shown(value: object) -> str:
    if value is None:
        return ABSENT
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# Why an InferenceService's outcome changed (proto ``ChangeStep``): one line each.
REASON_CREATED = "the InferenceService was created"
REASON_DELETED = "the InferenceService was deleted"
REASON_UPDATED = "the InferenceService changed"
# A write that changes an InferenceService's labels, for a watch it enters or leaves (sent as added
# or removed, as Kubernetes' watch sends ADDED / DELETED).
REASON_ENTERED_SELECTION = "the InferenceService's labels match this watch now"
REASON_LEFT_SELECTION = "the InferenceService's labels no longer match this watch"
REASON_MODEL = "model {model}: {before} → {after}"
REASON_RUNTIME_ADDED = "{runtime} is new and is the runtime to use"
REASON_RUNTIME_DELETED = "{runtime} was deleted"
REASON_CHECK_FAILED = "{runtime} fails the {check} check now: {message}"
REASON_CHECK_PASSED = "{runtime} passes the {check} check now (before: {message})"
REASON_RANKING = "{runtime} ranks above {other} now: {tie_break}"
REASON_NAMED_RUNTIME = "named runtime {runtime}: {before} → {after}"
REASON_CONFIGURATION = "same runtime ({runtime}); changed: {parts}"
REASON_CONFIGURATION_NONE = "still no runtime; changed: {parts}"
# A pinned InferenceService's state, as REASON_NAMED_RUNTIME's before and after (runtime-revisions.md).
PIN_SERVES_REVISION = "revision {revision}"
PIN_SERVES_LIVE = "live spec, pinned as {revision}"
PIN_DRIFTED = "RuntimeDrifted {reason}: {message}"
PIN_ERROR = "RuntimePinError: {message}"
MODEL_USABLE = "format {label}"
MODEL_USABLE_SIZED = "format {label}, size {size}"
NO_RUNTIME = "no runtime"
# The parts of an outcome (``outcomes.Outcome`` fields), as REASON_CONFIGURATION names them.
OUTCOME_PARTS = {"condition": "RuntimeReady condition", "warnings": "warnings", "components": "components"}
# proto TieBreak -> what placed the new runtime above the old one.
TIE_BREAKS = {
    "SCOPE": "a ServingRuntime ranks above every ClusterServingRuntime",
    "SCORE": "score {above} > {below}",
    "SIZE_DISTANCE": "equal score, size distance {above} < {below}",
    "NAME": "equal score, name {above} < {below}",
}
# The checks by ``checks.Check`` name, as REASON_CHECK_* name them.
CHECK_NAMES = {
    "DISABLED": "disabled",
    "ACCELERATOR_CLASS": "accelerator class",
    "DEPLOYMENT_MODE": "deployment mode",
    "MODEL_FORMAT": "model format",
    "MODEL_SIZE": "model size",
    "AUTO_SELECT": "autoSelect",
    "SCORE": "auto-select score",
}

# ValidateServingRuntime: the warning OME does not have.
MOVES_INFERENCE_SERVICES = "this change moves {count} InferenceServices to another runtime ({names})"
MOVES_LISTED = 5  # names listed at most, then `…`


def moves_inference_services(names: Sequence[str]) -> str:
    """``this change moves 12 InferenceServices to another runtime (ns/a, ns/b, …)``: the first
    ``MOVES_LISTED`` of ``names`` (``<namespace>/<name>``, sorted), then ``…`` when there are more."""
    shown = ", ".join(names[:MOVES_LISTED]) + (", …" if len(names) > MOVES_LISTED else "")
    return MOVES_INFERENCE_SERVICES.format(count=len(names), names=shown)


# WatchSelections' resync event.
RESYNC_OVERFLOW = "the watcher fell behind by more than {limit} events; the full state follows"
RESYNC_OVERFLOW_BYTES = "the watcher fell behind by more than {limit} bytes of events; the full state follows"
RESYNC_REBUILT = "the server rebuilt the outcomes; the full state follows"


# reference/kubectl-ome/runtime.md: the reports' apiVersion and kinds.
REPORT_API_VERSION = "cli.ome.io/v1alpha1"
EFFECTIVE_REPORT_KIND = "RuntimeEffectiveReport"
HISTORY_REPORT_KIND = "RuntimeHistoryReport"

# runtime.md, explain: "reads at most 1,000 runtimes ... With more, it fails with".
CLI_COLLECTION_LIMIT = 1000
COLLECTION_LIMIT_EXCEEDED = "runtime candidate snapshot exceeds the CLI collection limit"

# runtime.md, effective: the view states and REASON values.
VIEW_AVAILABLE = "Available"
VIEW_UNAVAILABLE = "Unavailable"
VIEW_NOT_FOUND = "NotFound"
VIEW_DISABLED = "Disabled"
VIEW_MALFORMED_PAYLOAD = "MalformedPayload"
VIEW_UNREADABLE = "Unreadable"

# runtime.md, effective: the ISSUE codes, in the page's table order (then history's two).
ISSUE_CODES = (
    "InvalidDeclaredKind",
    "DeclaredCompatibilityMismatch",
    "InheritanceUnavailable",
    "LiveRuntimeUnavailable",
    "StatusUnobserved",
    "StatusStale",
    "StatusInvalid",
    "ReportedDriftConflict",
    "ActiveRevisionUnreported",
    "ActiveRevisionUnavailable",
    "RevisionNotFound",
    "RevisionUnavailable",
    "RevisionDisabled",
    "RevisionNotOMEManaged",
    "RevisionSourceMismatch",
    "RevisionHashInvalid",
    "RevisionHashMismatch",
    "RevisionNameMismatch",
    "RevisionOrdinalUnexpected",
    "RevisionPayloadNonCanonical",
    "RevisionDataObjectPresent",
    "RevisionPayloadMalformed",
    "RevisionIdentityMismatch",
    "DuplicateRevision",
    "ConflictingRevision",
    "DuplicateRevisionContent",
    "RevisionHashCollision",
    "HistoryUnavailable",
    "HistoryTruncated",
)


# The revision checks' codes (ISSUE_CODES[13:19]), by name.
(
    ISSUE_REVISION_NOT_OME_MANAGED,
    ISSUE_REVISION_SOURCE_MISMATCH,
    ISSUE_REVISION_HASH_INVALID,
    ISSUE_REVISION_HASH_MISMATCH,
    ISSUE_REVISION_NAME_MISMATCH,
    ISSUE_REVISION_ORDINAL_UNEXPECTED,
) = ISSUE_CODES[13:19]


# runtime.md, explain "Flags": "Give exactly one of --model and --isvc, or the command fails with".
EXPLAIN_EXACTLY_ONE = "exactly one of --model or --isvc is required"
# runtime.md, sync: "a failure to read the InferenceService at the start, even when it doesn't exist".
SYNC_API_REQUEST_FAILED = "required Kubernetes API request failed; check access and connectivity"


# runtime.md, explain "Effective context".
WITH_EFFECTIVE_REQUIRES_ISVC = "--with-effective requires --isvc"
EFFECTIVE_CONTEXT_HEADING = "Effective context (separate observation; selector verdict unchanged):"
EFFECTIVE_CONTEXT_CAVEAT = "Independent snapshot; not rollout convergence"
EFFECTIVE_CONTEXT_UNAVAILABLE_CAVEAT = "Selector verdict above is unchanged"
NO_RUNTIMES_FOR_SELECTOR = "No serving runtimes found for selector."


def isvc_invalid_name(quoted_name: str, problem: str) -> str:
    """runtime.md, effective: ``InferenceService name "<name>" is invalid: ...`` (``problem`` as
    Kubernetes' name validation says it)."""
    return f"InferenceService name {quoted_name} is invalid: {problem}"


def get_isvc_failed(error: str) -> str:
    """runtime.md, effective: ``get InferenceService: ...`` when it can't read the InferenceService."""
    return f"get InferenceService: {error}"


def isvc_not_found(name: str) -> str:
    """The API server's error for a missing InferenceService (runtime.md, explain: "the command
    fails with the API server's error, such as ``clusterbasemodels.ome.io "<name>" not found``")."""
    return f'inferenceservices.ome.io "{name}" not found'


def issue_text(code: str, revision: str = "") -> str:
    """runtime.md, effective: ``<Code>``, or ``<Code>(<revision>)`` for a revision code."""
    return f"{code}({revision})" if revision else code


# runtime.md, sync, "How the action runs" (the refusals every action shares) and "Refusals".
REFUSAL_TARGET_IDENTITY = "action refused: target identity is missing or unsafe"
REFUSAL_TARGET_DELETING = "action refused: target is being deleted"
REFUSAL_PLACEMENT = "action refused: placement sources and derived services cannot be mutated"
REFUSAL_INSPECTION_BOUNDS = "action refused: safety inputs exceed inspection bounds"
REFUSAL_MANAGED_EVIDENCE = "action refused: managed runtime sync safety evidence is unavailable or inconsistent"
REFUSAL_ACTIVE_RUNTIME = "action refused: active runtime is unavailable, inconsistent or unbound"
REFUSAL_CONTROLLER_EVIDENCE = "action refused: controller safety evidence is stale or inconsistent"
REFUSAL_MAILBOX = "action refused: a rollout promote or rollback mailbox is present"
REFUSAL_UNSAFE_VALUE = "action refused: a logical annotation value is unsafe to preview"

# runtime.md, sync: the preview.
SYNC_PREVIEW_TITLE = "ALPHA runtime sync preview (acceptance is not convergence)"
SYNC_FRESHNESS = "Unverifiable (advisory global status)"
SYNC_TOKEN_PREFIX = "cli-runtime-sync-"
SYNC_PREVIEW_WARNINGS = (
    "API acceptance is not convergence or serving-revision readiness.",
    "Requests latest merged live runtime when controller consumes the token.",
    "Previewed content is not locked by this annotation.",
    "Parent CAS is not an atomic transaction across runtimes, revisions and IRs.",
    "Global observed generation is advisory; freshness is Unverifiable.",
    "Existing pause/freeze and lifecycle/rollout policies remain in effect.",
)
PAUSE_PAUSED = "Paused"
PAUSE_FREEZE = "Freeze"
PAUSE_NOT_RECOGNIZED = "Not recognized"

# runtime.md, sync: the ActionResult.
SYNC_ACTION = "runtime sync"
SYNC_CLIENT_DRY_RUN = "Validated locally; no patch sent."
SYNC_HINT = "Use -o json or -o yaml for full values."


def sync_follow_up(name: str, namespace: str, context: str, ome_namespace: str) -> str:
    """runtime.md, sync ActionResult ``follow-up``."""
    return f"kubectl ome runtime effective {name} -n {namespace} --context={context} --ome-namespace={ome_namespace}"


# ---- accelerator classes (select-accelerators.md; accelerator-classes.md) ----------------------

# select-accelerators.md, "BestFit doesn't create or update the workload".
NIL_POINTER_LOG = "invalid memory address or nil pointer dereference"


def accelerator_class_not_found(name: str) -> str:
    """OME's error for a named class that is missing (accelerator-classes.md, "Change or delete a class")."""
    return f"accelerator class {name} not found at cluster scope"


def accelerator_event_message(component: str, error: str) -> str:
    """The ``AcceleratorClassError`` Warning event's message (select-accelerators.md, Troubleshooting)."""
    return f"Failed to get accelerator class for {component}: {error}"


# ---- the runtime webhooks (runtime-inheritance.md; accelerator-classes.md; runtime-selection-scoring.md)

# runtime-inheritance.md, "What admission checks" (the table's last row).
PROFILE_NOT_DISABLED = 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'


def unknown_accelerator_classes(missing: Sequence[str]) -> str:
    """accelerator-classes.md / runtime-accelerator-class-matching.md: classes that don't exist."""
    return f"unknown accelerator classes referenced in AcceleratorRequirements: {go_list(missing)}"


def different_priorities(format_name: str, kind: str, runtime: str) -> str:
    """runtime-selection-scoring.md (the prefix) and facts 5.3 (the whole text). An empty entry
    name leaves a double space: ``model format  under``."""
    return f"different priorities assigned for the model format {format_name} under the {kind.lower()} {runtime}"
