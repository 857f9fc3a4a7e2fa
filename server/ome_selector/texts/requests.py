"""ome-selector's own texts for a request it refuses (not OME's): the status message of an
unsynced cache and the field-violation descriptions of the selection requests."""

NOT_SYNCED = "cache not synced yet"
REQUIRED_WITH_MODEL_SPEC = "required with model_spec (OME's messages name the model)"
MODEL_REQUIRED = "a model is required when spec.runtime.name is not set"
MODEL_OR_ISVC = "exactly one of model or inference_service is required"
MODEL_SPEC_WITH_ISVC = "model_spec goes with inference_service, not with model"
PAGE_SIZE = "page_size must be between 0 and {limit}, got {size}"
PAGE_TOKEN = "page_token is not a token of this request (it must come from next_page_token of the same request)"


def no_spec_model(name: str) -> str:
    """ExplainRuntimes by an InferenceService that names no model and carries no model spec."""
    return f'InferenceService "{name}" has no spec.model; pass --model instead'
