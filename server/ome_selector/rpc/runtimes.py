"""ValidateServingRuntime (flows/runtime_webhook.py, plus the warning of the InferenceServices the
runtime would move), PreviewCacheChange (flows/outcomes.py) and GetRuntimeStatus (flows/runtime_status.py)."""

from __future__ import annotations

from dataclasses import dataclass

from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import prepare_write, resolve_keys
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.flows import outcomes
from ome_selector.flows import revisions as pinning
from ome_selector.flows.runtime_status import RuntimeStatus, runtime_status
from ome_selector.flows.runtime_webhook import RuntimeVerdict, as_cache_object, deletion_verdict, validate_runtime
from ome_selector.rpc.common import Rpc, _ref, _require_synced, runtime_ref
from ome_selector.rpc.enums import RUNTIME_KIND_FROM_PB
from ome_selector.rpc.lifecycle import _admission_objects, _operation
from ome_selector.rpc.outcomes import change_pbs
from ome_selector.texts import messages, requests
from ome_selector.validation import KIND_TO_FIELD, object_key, validate_name


def decode_validate(snapshot: Snapshot, request: pb.ValidateServingRuntimeRequest) -> RuntimeAdmission:
    """The ServingRuntime / ClusterServingRuntime validating webhook (runtime_webhook.py) on the
    request's ``operation``. The objects the operation carries (``_admission_objects``; on UPDATE
    the old runtime is of the same kind), object names and namespaces are validated first
    (INVALID_ARGUMENT)."""
    _require_synced(snapshot)
    operation = _operation(request.operation)
    which, old_which = request.WhichOneof("runtime"), request.WhichOneof("old_runtime")
    new = getattr(request, which) if which is not None else None
    old = getattr(request, old_which) if old_which is not None else None
    other_kind = operation is d.Operation.UPDATE and None not in (which, old_which) and old_which != f"old_{which}"
    violations = _admission_objects(
        operation,
        new,
        None if other_kind else old,
        (which or "runtime", old_which or "old_runtime"),
        (
            requests.ONE_RUNTIME,
            requests.ONE_OLD_RUNTIME,
        ),
    )
    if other_kind:
        assert old_which is not None
        violations.append(FieldViolation(old_which, errors.forbidden(requests.update_keeps_kind(f"old_{which}"))))
    field, runtime = (which, new) if new is not None else (old_which, old)
    if runtime is not None:
        assert field is not None
        violations += validate_name(runtime.metadata.name, f"{field}.metadata.name")
        if isinstance(runtime, types_pb2.ServingRuntime):
            violations += validate_name(runtime.metadata.namespace, f"{field}.metadata.namespace", "namespace")
    if violations:
        raise RequestError.invalid(violations)
    assert runtime is not None
    kind = d.SERVING_RUNTIME if isinstance(runtime, types_pb2.ServingRuntime) else d.CLUSTER_SERVING_RUNTIME
    return RuntimeAdmission(operation, kind, runtime, old)


@dataclass(frozen=True, slots=True)
class RuntimeAdmission:
    """A validated ValidateServingRuntimeRequest: the operation, the runtime's kind, the runtime
    (the old one on DELETE) and the stored one (UPDATE, when known)."""

    operation: d.Operation
    kind: str
    runtime: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime
    old: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime | None


@dataclass(frozen=True, slots=True)
class RuntimeAnswer:
    """The webhook's verdict, and the cached InferenceServices the write would move (allowed only)."""

    verdict: RuntimeVerdict
    moved: tuple[str, ...]


def run_validate(snapshot: Snapshot, query: RuntimeAdmission) -> RuntimeAnswer:
    """The webhook (deletion_verdict on DELETE), then, when allowed, the InferenceServices whose
    runtime the write would change."""
    delete = query.operation is d.Operation.DELETE
    verdict = (
        deletion_verdict(query.kind) if delete else validate_runtime(snapshot, query.kind, query.runtime, query.old)
    )
    moved: tuple[str, ...] = ()
    if verdict.allowed and snapshot.inference_services:
        moved = tuple(_moved_inference_services(snapshot, query.kind, query.runtime, delete))
    return RuntimeAnswer(verdict, moved)


def encode_validate(
    snapshot: Snapshot, query: RuntimeAdmission, outcome: RuntimeAnswer
) -> pb.ValidateServingRuntimeResponse:
    verdict = outcome.verdict
    response = pb.ValidateServingRuntimeResponse(
        allowed=verdict.allowed,
        denial_message=verdict.denial_message,
        webhook=verdict.webhook,
        inheritance_chain=verdict.inheritance_chain,
        cache_version=snapshot.version,
    )
    if outcome.moved:
        response.warnings.append(messages.moves_inference_services(list(outcome.moved)))
    return response


VALIDATE_RUNTIME = Rpc(decode_validate, run_validate, encode_validate)
validate_serving_runtime = VALIDATE_RUNTIME


def _moved_inference_services(
    snapshot: Snapshot, kind: str, runtime: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime, delete: bool
) -> list[str]:
    """``<namespace>/<name>`` of each cached InferenceService whose runtime (another one, or none)
    writing (or, with ``delete``, deleting) ``runtime`` would change (``outcomes``), sorted."""
    meta = runtime.metadata
    key = (kind, meta.namespace if kind == d.SERVING_RUNTIME else "", meta.name)
    upserts: dict[tuple[str, str, str], cache_pb2.CacheObject] = {}
    if not delete:
        obj = as_cache_object(kind, runtime)
        upserts[object_key(obj)] = obj
    deletes = [key] if delete else []
    proposed = snapshot.with_changes(
        snapshot.version, upserts, deletes, synced=snapshot.synced, generation=snapshot.generation
    )
    result = outcomes.selections_for(snapshot).advance(snapshot, proposed)
    return [
        f"{c.key[0]}/{c.key[1]}"
        for c in result.changes
        if (c.before.runtime if c.before else None) != (c.after.runtime if c.after else None)
    ]


def decode_preview(snapshot: Snapshot, request: pb.PreviewCacheChangeRequest) -> ProposedWrite:
    """PreviewCacheChange: the write ``request`` proposes, validated as UpsertObjects and
    DeleteObjects validate theirs (``store.prepare``, ``store.resolve_keys``; a key may not be
    both upserted and deleted), applied to a snapshot that is never stored; every cached
    InferenceService whose outcome would change, with both outcomes, the causes and the reason
    (``outcomes.Selections.advance``, the path WatchSelections' events take)."""
    _require_synced(snapshot)
    violations: list[FieldViolation] = []
    try:
        prepared = prepare_write(request.upserts, "upserts")
        upserts, runtimes = prepared.objects, prepared.runtimes
    except RequestError as error:
        upserts, runtimes, violations = {}, {}, list(error.violations)
    deletes, found = resolve_keys(request.deletes, "deletes")
    violations += found
    if not request.upserts and not request.deletes:
        violations.append(FieldViolation("upserts", requests.NO_CHANGE))
    for i, key in enumerate(deletes):
        if key in upserts:
            violations.append(FieldViolation(f"deletes[{i}]", requests.UPSERTED_AND_DELETED))
    if violations:
        raise RequestError.invalid(violations)
    return ProposedWrite(upserts, runtimes, deletes, tuple(request.deletes))


@dataclass(frozen=True, slots=True)
class ProposedWrite:
    """A validated PreviewCacheChangeRequest: the objects by key (``store.Prepared``: runtimes
    without their spec) and the runtimes among them compiled, the keys deleted and, in the same
    order, the request's own ObjectKeys."""

    upserts: dict[tuple[str, str, str], cache_pb2.CacheObject]
    runtimes: dict[tuple[str, str, str], d.Runtime]
    deletes: list[tuple[str, str, str]]
    delete_keys: tuple[cache_pb2.ObjectKey, ...]


@dataclass(frozen=True, slots=True)
class Preview:
    """The write applied to a snapshot that is never stored, and how the outcomes advance."""

    proposed: Snapshot
    before: outcomes.Selections
    result: outcomes.Advance


def run_preview(snapshot: Snapshot, write: ProposedWrite) -> Preview:
    proposed = snapshot.with_changes(
        snapshot.version,
        write.upserts,
        write.deletes,
        synced=snapshot.synced,
        generation=snapshot.generation,
        compiled=write.runtimes,
    )
    before = outcomes.selections_for(snapshot)
    return Preview(proposed, before, before.advance(snapshot, proposed))


def encode_preview(snapshot: Snapshot, write: ProposedWrite, preview: Preview) -> pb.PreviewCacheChangeResponse:
    return pb.PreviewCacheChangeResponse(
        changes=change_pbs(snapshot, preview.proposed, preview.before, preview.result),
        cache_version=snapshot.version,
        reevaluated=preview.result.reevaluated,
        inference_services=len(preview.proposed.inference_services),
        not_found=[key for k, key in zip(write.deletes, write.delete_keys) if k not in snapshot.objects],
    )


PREVIEW = Rpc(decode_preview, run_preview, encode_preview)
preview_cache_change = PREVIEW


def decode_status(snapshot: Snapshot, request: pb.GetRuntimeStatusRequest) -> tuple[str, str, str]:
    """What OME's controller writes on a cached runtime (runtime_status.py;
    runtime-inheritance.md, "When a chain breaks"). INVALID_ARGUMENT for a missing kind or a bad
    name or namespace (a ClusterServingRuntime takes none). The runtime's key."""
    _require_synced(snapshot)
    ref = request.runtime
    kind = RUNTIME_KIND_FROM_PB.get(ref.kind)
    violations: list[FieldViolation] = []
    if kind is None:
        problem = errors.required() if ref.kind == pb.RUNTIME_KIND_UNSPECIFIED else requests.unknown_kind(ref.kind)
        violations.append(FieldViolation("runtime.kind", problem))
    violations += validate_name(ref.name, "runtime.name")
    if kind == d.SERVING_RUNTIME:
        violations += validate_name(ref.namespace, "runtime.namespace", "namespace")
    elif ref.namespace:
        violations.append(
            FieldViolation("runtime.namespace", errors.forbidden(requests.cluster_scoped(d.CLUSTER_SERVING_RUNTIME)))
        )
    if violations:
        raise RequestError.invalid(violations)
    assert kind is not None
    return kind, ref.namespace, ref.name


def run_status(snapshot: Snapshot, key: tuple[str, str, str]) -> tuple[d.Runtime | None, RuntimeStatus | None]:
    """The cached runtime of ``key`` and what OME's controller writes on it (None, None: not cached)."""
    kind, namespace, name = key
    found = (
        snapshot.serving_runtimes.get((namespace, name))
        if kind == d.SERVING_RUNTIME
        else snapshot.cluster_serving_runtimes.get(name)
    )
    return (found, runtime_status(found)) if found is not None else (None, None)


def encode_status(
    snapshot: Snapshot, key: tuple[str, str, str], outcome: tuple[d.Runtime | None, RuntimeStatus | None]
) -> pb.GetRuntimeStatusResponse:
    """NOT_FOUND for a runtime the cache does not hold (``servingruntimes.ome.io "x" not found``)."""
    found, status = outcome
    if found is None or status is None:
        raise RequestError("NOT_FOUND", messages.runtime_object_not_found(key[0] == d.CLUSTER_SERVING_RUNTIME, key[2]))
    generation = getattr(snapshot.objects[found.key], KIND_TO_FIELD[found.kind]).metadata.generation
    response = pb.GetRuntimeStatusResponse(
        runtime=runtime_ref(found),
        inheritance_chain=[_ref(key) for key in status.chain],
        events=[pb.Event(type=e.type, reason=e.reason, message=e.message) for e in status.events],
        spec_hash=pinning.short(status.spec_hash),
        cache_version=snapshot.version,
    )
    if status.spec is not None:
        response.spec.CopyFrom(status.spec)
    response.status.inheritance_chain.extend(status.inheritance_chain)
    response.status.conditions.add(
        type=messages.CONDITION_INHERITANCE_READY,
        status="True" if status.ready else "False",
        reason=status.reason,
        message=status.message,
        observed_generation=generation,
    )
    return response


RUNTIME_STATUS = Rpc(decode_status, run_status, encode_status)
get_runtime_status = RUNTIME_STATUS
