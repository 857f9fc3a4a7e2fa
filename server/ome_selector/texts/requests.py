"""ome-selector's own texts for a request it refuses (not OME's): the status messages of an
unsynced cache and of a server that drains, and the field-violation descriptions of the
selection requests."""

NOT_SYNCED = "cache not synced yet"
SHUTTING_DOWN = "server is shutting down"  # UNAVAILABLE for a call that comes after the drain delay
REQUIRED_WITH_MODEL_SPEC = "required with model_spec (OME's messages name the model)"
MODEL_REQUIRED = "a model is required when spec.runtime.name is not set"
MODEL_OR_ISVC = "exactly one of model or inference_service is required"
MODEL_SPEC_WITH_ISVC = "model_spec goes with inference_service, not with model"
CANDIDATE_LIMIT = "candidate_limit must be 0 (all) or more, got {limit}"
PAGE_SIZE = "page_size must be between 0 and {limit}, got {size}"
PAGE_TOKEN = "page_token is not a token of this request (it must come from next_page_token of the same request)"


def no_spec_model(name: str) -> str:
    """ExplainRuntimes by an InferenceService that names no model and carries no model spec."""
    return f'InferenceService "{name}" has no spec.model; pass --model instead'


NO_OBJECTS = "at least one object is required"
NO_KEYS = "at least one key is required"
NO_CHANGE = "at least one upsert or delete is required"
UPSERTED_AND_DELETED = "the key is in upserts too"
ONE_KIND = "exactly one object kind must be set"
ONE_RUNTIME = "exactly one of servingRuntime or clusterServingRuntime is required"
ONE_OLD_RUNTIME = "exactly one of oldServingRuntime or oldClusterServingRuntime is required on DELETE"
NOT_ON_CREATE = "must not be set on CREATE, only on UPDATE and DELETE"
NOT_NEGATIVE = "must be 0 or more"
NOT_A_UUID = "must be a UUID"
ONLY_SR_NAMESPACE = "only a ServingRuntime has a namespace"
NOT_RFC3339 = "must be an RFC 3339 time with an offset, such as 2026-09-28T14:15:57Z"


def duplicate_object(key: tuple[str, str, str], first: str) -> str:
    """A write that carries one object twice: ``duplicate ServingRuntime ns/name (also objects[0])``."""
    return f"duplicate {key[0]} {'/'.join(k for k in key[1:] if k)} (also {first})"


def duplicate_key(first: str) -> str:
    return f"duplicate key (also {first})"


def unknown_kind(kind: int) -> str:
    return f"unknown kind {kind}"


def cluster_scoped(kind: str) -> str:
    return f"{kind} is cluster-scoped and takes no namespace"


def not_on_delete(old_field: str) -> str:
    return f"must not be set on DELETE; set {old_field}"


def update_keeps(field: str, value: str) -> str:
    """An UPDATE's old object named differently from the new one."""
    return f"must equal {field} ({value}): an UPDATE keeps the object"


def update_keeps_kind(old_field: str) -> str:
    return f"an UPDATE keeps the kind; set {old_field}"


# sync's confirmation question, on stderr (reference/kubectl-ome/runtime.md, "How the action runs",
# step 3); only ``y`` or ``yes`` confirms.
SYNC_PROMPT = "Confirm this exact action? [y/N] "
SYNC_CONFIRMATIONS = ("y", "yes")
