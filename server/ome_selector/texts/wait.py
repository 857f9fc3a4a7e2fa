"""The texts of ``ome-selector wait`` (``kubectl ome wait ... --for=runtime-sync=acknowledged``;
concepts/runtimes/runtime-revisions.md, "kubectl ome runtime sync"; reference/kubectl-ome/runtime.md,
sync "Examples"). The pages describe when it exits 0, 2 and 1 but quote none of its lines: the
success line is kubectl wait's (troubleshoot-runtime-selection.md shows
``inferenceservice.ome.io/qwen2-5-7b condition met``), the timeout is kubectl wait's error, the
missing InferenceService the API server's."""

from __future__ import annotations

FOR_RUNTIME_SYNC_ACKNOWLEDGED = "runtime-sync=acknowledged"


def condition_met(name: str) -> str:
    return f"inferenceservice.ome.io/{name} condition met"


def timed_out(name: str) -> str:
    return f"timed out waiting for the condition on inferenceservices/{name}"


def deleted(namespace: str, name: str) -> str:
    return f"InferenceService {namespace}/{name} was deleted while waiting"


def replaced(namespace: str, name: str, old_uid: str, new_uid: str) -> str:
    return f"InferenceService {namespace}/{name} was replaced while waiting (uid {old_uid} -> {new_uid})"


def unsupported_for(value: str) -> str:
    return f'unsupported --for "{value}": only {FOR_RUNTIME_SYNC_ACKNOWLEDGED} is supported'


def bad_request_id(value: str) -> str:
    return f'--request-id "{value}" is not a UUID (the request ID sync prints)'


REQUEST_ID_REQUIRED = "--request-id is required with --for=runtime-sync=acknowledged"
