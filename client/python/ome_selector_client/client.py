"""A typed, synchronous Python client for the ome-selector gRPC API.

Every call has a deadline (``timeout`` seconds unless the call passes its own). A call that
fails with UNAVAILABLE, and only then (the server is not reachable yet, or its cache has not
been synced), is retried by gRPC itself, through the channel's service config (``service_config``):
up to ``retries`` more attempts, the n-th after a random delay of up to
``backoff * 2**(n-1)`` seconds (gRPC applies the jitter; at most 4 retries, gRPC's cap of 5
attempts; a backoff under 10 ms counts as 10 ms). Every other failure raises ``SelectorError`` at once, carrying the
``google.rpc.BadRequest`` field violations the server sent.

    with SelectorClient("127.0.0.1:50051") as client:
        client.wait_until_serving(timeout=30)
        response = client.select_runtime(isvc)
        verdict = client.admit_inference_service(isvc)

TLS / mTLS: pass ``credentials=grpc.ssl_channel_credentials(...)``.
"""

from __future__ import annotations

import json
import time
from types import TracebackType
from typing import Any, Callable, Iterable, Sequence, TypeVar

import grpc
from google.rpc import error_details_pb2, status_pb2  # type: ignore[import-untyped]  # .pyi ships without py.typed
from grpc_health.v1 import health_pb2 as _health_pb2
from grpc_status import rpc_status
from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2

__all__ = ["SelectionWatch", "SelectorClient", "SelectorError", "channel_options", "service_config"]

_Response = TypeVar("_Response")
_HEALTH_CHECK = "/grpc.health.v1.Health/Check"
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_WRITE_BYTES = 256 * 1024 * 1024
# The server's limits: answers up to 64 MiB (explaining 10,000+ runtimes is more than gRPC's
# 4 MiB default); requests up to 256 MiB to the listener of CacheService (an ApplySnapshot of
# 50,000 runtimes is about 77 MiB), 64 MiB to the others (the server refuses past them).
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_WRITE_BYTES),
]
# gRPC caps maxAttempts (the first attempt included) at 5.
MAX_RETRIES = 4
# grpcio 1.85 left retried calls hanging until their deadline with a 1 ms initial backoff;
# 10 ms and more work, so smaller backoffs are raised to this.
MIN_BACKOFF = 0.01
_SERVICES = ("ome.selector.v1.SelectionService", "ome.selector.v1.CacheService", "grpc.health.v1.Health")


def service_config(retries: int = 3, backoff: float = 0.1) -> dict[str, Any]:
    """The gRPC service config (as a JSON-ready dict) the client's channel uses: for every
    method of SelectionService, CacheService and Health, ``retries`` retries (0..4) on
    UNAVAILABLE only, initial backoff ``backoff`` seconds (10 ms at least), doubling, at most
    30 s. With 0
    retries, no retry policy. ``ValueError`` for retries outside 0..4 or a backoff <= 0."""
    if not 0 <= retries <= MAX_RETRIES:
        raise ValueError(f"retries must be 0 to {MAX_RETRIES} (gRPC allows at most 5 attempts), not {retries}")
    if not backoff > 0:
        raise ValueError(f"backoff must be more than 0 seconds, not {backoff}")
    method: dict[str, Any] = {"name": [{"service": name} for name in _SERVICES]}
    if retries:
        method["retryPolicy"] = {
            "maxAttempts": retries + 1,
            "initialBackoff": f"{max(backoff, MIN_BACKOFF):.3f}s",
            "maxBackoff": "30s",
            "backoffMultiplier": 2,
            "retryableStatusCodes": ["UNAVAILABLE"],
        }
    return {"methodConfig": [method]}


def channel_options(retries: int = 3, backoff: float = 0.1) -> list[tuple[str, Any]]:
    """Channel options for your own ``grpc.insecure_channel`` / ``grpc.secure_channel``: the
    64 MiB message limits and ``service_config(retries, backoff)`` with retries enabled."""
    return [
        *CHANNEL_OPTIONS,
        ("grpc.enable_retries", 1),
        ("grpc.service_config", json.dumps(service_config(retries, backoff))),
    ]


class SelectorError(Exception):
    """A failed call: the gRPC status code, its message and any field violations."""

    def __init__(self, code: grpc.StatusCode, message: str, field_violations: Sequence[tuple[str, str]] = ()) -> None:
        super().__init__(f"{code.name}: {message}" if message else code.name)
        self.code = code
        self.message = message
        self.field_violations: list[tuple[str, str]] = list(field_violations)

    @classmethod
    def from_rpc_error(cls, error: grpc.RpcError) -> SelectorError:
        """Build from a failed call, unpacking the ``google.rpc.Status`` details if present."""
        if not isinstance(error, grpc.Call):
            return cls(grpc.StatusCode.UNKNOWN, str(error))
        code, message = error.code(), error.details() or ""
        violations: list[tuple[str, str]] = []
        try:
            status: status_pb2.Status | None = rpc_status.from_call(error)
        except ValueError:  # details inconsistent with the status: keep the plain status
            status = None
        if status is not None:
            for detail in status.details:
                if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                    bad_request = error_details_pb2.BadRequest()
                    detail.Unpack(bad_request)
                    violations += [(v.field, v.description) for v in bad_request.field_violations]
        return cls(code, message, violations)


class SelectionWatch:
    """The events of one ``WatchSelections`` stream (``SelectorClient.watch_selections``), in
    order: ``current`` outcomes, ``initial_events_end``, then per cache write its ``change``
    events and ``write`` stats; ``resync`` when the watcher fell behind (the full state follows).

    Iterate it (``for event in watch``); iteration ends when the server ends the stream (it
    drains) or after ``cancel()``. A failed stream raises ``SelectorError``. A context manager:
    leaving the block cancels the stream.
    """

    def __init__(self, call: Any) -> None:
        self._call = call
        self._cancelled = False

    def __iter__(self) -> SelectionWatch:
        return self

    def __next__(self) -> selector_pb2.WatchSelectionsResponse:
        try:
            return next(self._call)  # type: ignore[no-any-return]
        except grpc.RpcError as exc:
            if self._cancelled and isinstance(exc, grpc.Call) and exc.code() == grpc.StatusCode.CANCELLED:
                raise StopIteration from None
            raise SelectorError.from_rpc_error(exc) from None

    def cancel(self) -> None:
        """End the stream; iteration stops."""
        self._cancelled = True
        self._call.cancel()

    def __enter__(self) -> SelectionWatch:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cancel()


class SelectorClient:
    """Client for ``ome.selector.v1.SelectionService``, ``CacheService`` and ``grpc.health.v1``.

    ``target`` is a gRPC target such as ``127.0.0.1:50051`` or ``unix:/run/ome-selector.sock``.
    ``retries`` (0..4) is how many times gRPC repeats a call after an UNAVAILABLE failure,
    ``backoff`` the initial delay in seconds (see ``service_config``). ``credentials`` makes a
    TLS channel. ``channel`` replaces the channel the client would build (then ``retries``,
    ``backoff`` and ``credentials`` do not apply: build it with ``channel_options()``).
    ``ValueError`` for retries outside 0..4 or a backoff <= 0.
    """

    def __init__(
        self,
        target: str,
        *,
        timeout: float = 10.0,
        retries: int = 3,
        backoff: float = 0.1,
        credentials: grpc.ChannelCredentials | None = None,
        channel: grpc.Channel | None = None,
    ) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        options = channel_options(retries, backoff)
        self.target = target
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        if channel is None:
            channel = (
                grpc.secure_channel(target, credentials, options=options)
                if credentials
                else grpc.insecure_channel(target, options=options)
            )
        self._channel = channel
        self._selection = selector_pb2_grpc.SelectionServiceStub(self._channel)
        self._cache = cache_pb2_grpc.CacheServiceStub(self._channel)
        self._health_check: grpc.UnaryUnaryMultiCallable[
            _health_pb2.HealthCheckRequest, _health_pb2.HealthCheckResponse
        ] = self._channel.unary_unary(
            _HEALTH_CHECK,
            request_serializer=_health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=_health_pb2.HealthCheckResponse.FromString,
        )

    def __enter__(self) -> SelectorClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()

    # --- SelectionService ----------------------------------------------------------------------

    def select_runtime(
        self,
        isvc: types_pb2.InferenceService,
        model_spec: types_pb2.BaseModelSpec | None = None,
        *,
        view: selector_pb2.SelectRuntimeView.ValueType = selector_pb2.SELECT_RUNTIME_VIEW_UNSPECIFIED,
        candidate_limit: int | None = None,
        timeout: float | None = None,
    ) -> selector_pb2.SelectRuntimeResponse:
        """The runtime OME selects for ``isvc`` (``model_spec`` overrides the cached model);
        ``view`` ``SELECT_RUNTIME_VIEW_FULL`` adds every exclusion and every candidate (unset:
        BASIC, the best ``candidate_limit`` candidates: None for the server's 10, 0 for all)."""
        request = selector_pb2.SelectRuntimeRequest(
            inference_service=isvc, model_spec=model_spec, view=view, candidate_limit=candidate_limit
        )
        return self._call(self._selection.SelectRuntime, request, timeout)

    def explain_runtimes(
        self,
        isvc: types_pb2.InferenceService | None = None,
        model_spec: types_pb2.BaseModelSpec | None = None,
        *,
        model: selector_pb2.ModelLookup | None = None,
        timeout: float | None = None,
    ) -> selector_pb2.ExplainRuntimesResponse:
        """One row per runtime in scope, with its verdict and failing checks.

        Explains for ``isvc`` (``kubectl ome runtime explain --isvc``) or, without an
        InferenceService, for the model ``model`` names (``--model``); pass exactly one of them,
        else the server answers INVALID_ARGUMENT. ``model_spec`` applies to ``isvc`` only.
        """
        request = selector_pb2.ExplainRuntimesRequest(inference_service=isvc, model_spec=model_spec, model=model)
        return self._call(self._selection.ExplainRuntimes, request, timeout)

    def explain_model(
        self, name: str, namespace: str, *, timeout: float | None = None
    ) -> selector_pb2.ExplainRuntimesResponse:
        """``explain_runtimes`` for the BaseModel ``name`` in ``namespace``, else the
        ClusterBaseModel ``name``; accelerator-class and deployment-mode checks do not apply."""
        return self.explain_runtimes(model=selector_pb2.ModelLookup(name=name, namespace=namespace), timeout=timeout)

    def admit_inference_service(
        self, isvc: types_pb2.InferenceService, *, timeout: float | None = None
    ) -> selector_pb2.AdmitInferenceServiceResponse:
        """The InferenceService validating webhook's verdict: allowed with warnings, or denied.
        A denial is a normal answer (``allowed`` false), not an error."""
        request = selector_pb2.AdmitInferenceServiceRequest(inference_service=isvc)
        return self._call(self._selection.AdmitInferenceService, request, timeout)

    def reconcile_inference_service(
        self,
        isvc: types_pb2.InferenceService,
        has_runtime_ready_condition: bool = False,
        *,
        ome_namespace: str = "",
        timeout: float | None = None,
    ) -> selector_pb2.ReconcileInferenceServiceResponse:
        """What the controller does about the runtime: the runtime, the ``RuntimeReady``
        condition, events, log lines, requeue and each component's configuration, and for a
        pinned InferenceService (``autoSync: false``) the ``RuntimeDrifted`` condition and the pin
        (the status to record, a revision to create). ``has_runtime_ready_condition``: whether
        ``isvc`` already carries a ``RuntimeReady`` condition (OME sets ``RuntimeResolved`` only
        over an earlier one). ``ome_namespace``: where OME keeps runtime revisions (``""``: ``ome``)."""
        request = selector_pb2.ReconcileInferenceServiceRequest(
            inference_service=isvc, has_runtime_ready_condition=has_runtime_ready_condition, ome_namespace=ome_namespace
        )
        return self._call(self._selection.ReconcileInferenceService, request, timeout)

    def get_effective_runtime(
        self,
        isvc: types_pb2.InferenceService,
        *,
        ome_namespace: str = "",
        collection_limit: int = 0,
        timeout: float | None = None,
    ) -> selector_pb2.GetEffectiveRuntimeResponse:
        """``kubectl ome runtime effective``: the Live view (the runtime, its chain, each
        component's deployment mode and accelerator class with the rule that set them), the
        Active view (the pinned revision) and the Service rows (PIN, SYNC, STATUS, DRIFT,
        LIVE-RELATION, ISSUE). Revisions are read in ``ome_namespace`` (default ``ome``);
        ``collection_limit`` > 0 makes auto-selection over more runtimes ``Unavailable``."""
        request = selector_pb2.GetEffectiveRuntimeRequest(
            inference_service=isvc, ome_namespace=ome_namespace, collection_limit=collection_limit
        )
        return self._call(self._selection.GetEffectiveRuntime, request, timeout)

    def get_runtime_history(
        self,
        isvc: types_pb2.InferenceService,
        *,
        ome_namespace: str = "",
        collection_limit: int = 0,
        timeout: float | None = None,
    ) -> selector_pb2.GetRuntimeHistoryResponse:
        """``kubectl ome runtime history``: the revisions of the InferenceService's runtime in
        ``ome_namespace`` (default ``ome``), newest first (at most ``collection_limit`` when > 0)."""
        request = selector_pb2.GetRuntimeHistoryRequest(
            inference_service=isvc, ome_namespace=ome_namespace, collection_limit=collection_limit
        )
        return self._call(self._selection.GetRuntimeHistory, request, timeout)

    def plan_runtime_sync(
        self,
        isvc: types_pb2.InferenceService,
        *,
        ome_namespace: str = "",
        request_id: str = "",
        context: str = "",
        timeout: float | None = None,
    ) -> selector_pb2.PlanRuntimeSyncResponse:
        """What ``kubectl ome runtime sync`` would do: the token and preview, or the refusal
        (``refusal_message``). Nothing is changed: the caller sets the annotation."""
        request = selector_pb2.PlanRuntimeSyncRequest(
            inference_service=isvc, ome_namespace=ome_namespace, request_id=request_id, context=context
        )
        return self._call(self._selection.PlanRuntimeSync, request, timeout)

    def validate_serving_runtime(
        self,
        runtime: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime,
        *,
        timeout: float | None = None,
    ) -> selector_pb2.ValidateServingRuntimeResponse:
        """The ServingRuntime / ClusterServingRuntime validating webhook's verdict on creating
        or updating ``runtime``. A denial is a normal answer (``allowed`` false)."""
        if isinstance(runtime, types_pb2.ServingRuntime):
            request = selector_pb2.ValidateServingRuntimeRequest(serving_runtime=runtime)
        elif isinstance(runtime, types_pb2.ClusterServingRuntime):
            request = selector_pb2.ValidateServingRuntimeRequest(cluster_serving_runtime=runtime)
        else:
            raise TypeError(
                f"runtime must be a ServingRuntime or ClusterServingRuntime message, not {type(runtime).__name__}"
            )
        return self._call(self._selection.ValidateServingRuntime, request, timeout)

    def get_runtime_status(
        self, name: str, namespace: str = "", *, timeout: float | None = None
    ) -> selector_pb2.GetRuntimeStatusResponse:
        """What OME's controller writes on a cached runtime: its merged spec and chain,
        ``status.inheritanceChain``, the ``InheritanceReady`` condition and the events it records.
        With ``namespace`` the ServingRuntime ``namespace/name``, else the ClusterServingRuntime
        ``name``; a runtime the cache does not hold raises ``SelectorError`` (NOT_FOUND)."""
        kind = (
            selector_pb2.RUNTIME_KIND_SERVING_RUNTIME
            if namespace
            else selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
        )
        request = selector_pb2.GetRuntimeStatusRequest(
            runtime=selector_pb2.RuntimeRef(kind=kind, namespace=namespace, name=name)
        )
        return self._call(self._selection.GetRuntimeStatus, request, timeout)

    def watch_selections(
        self, namespace: str = "", label_selector: str = "", *, timeout: float | None = None
    ) -> SelectionWatch:
        """Stream the outcome of every cached InferenceService of ``namespace`` (every namespace
        when empty) whose labels match ``label_selector`` (Kubernetes syntax: ``k=v,k!=v,k in
        (a,b),k,!k``): the current outcomes, a marker, then after each cache write one ``change``
        per InferenceService whose outcome it changed (old and new outcome, the write's objects
        behind it as one-line causes, the reason) and the write's stats. ``timeout`` bounds the
        whole stream (default: none). A bad filter raises ``SelectorError`` (INVALID_ARGUMENT)
        on the first ``next``."""
        request = selector_pb2.WatchSelectionsRequest(namespace=namespace, label_selector=label_selector)
        return SelectionWatch(self._selection.WatchSelections(request, timeout=timeout))

    def preview_cache_change(
        self,
        upserts: Iterable[cache_pb2.CacheObject] = (),
        deletes: Iterable[cache_pb2.ObjectKey] = (),
        *,
        timeout: float | None = None,
    ) -> selector_pb2.PreviewCacheChangeResponse:
        """What upserting ``upserts`` and deleting ``deletes`` would change, without applying
        it: every cached InferenceService whose outcome would change, before and after, with the
        causes and the reason. The objects are validated as ``upsert_objects`` and
        ``delete_objects`` validate them (``SelectorError`` INVALID_ARGUMENT naming
        ``upserts[i]...`` / ``deletes[i]...``)."""
        request = selector_pb2.PreviewCacheChangeRequest(upserts=upserts, deletes=deletes)
        return self._call(self._selection.PreviewCacheChange, request, timeout)

    def get_runtime_tree(
        self,
        name: str,
        namespace: str = "",
        *,
        kind: str = "",
        show_unattributed_users: bool = False,
        timeout: float | None = None,
    ) -> selector_pb2.GetRuntimeTreeResponse:
        """The RuntimeTreeReport of ``kubectl ome runtime tree``: the runtime ``name`` (a
        ServingRuntime of ``namespace`` or a ClusterServingRuntime; ``kind`` ``ServingRuntime`` or
        ``ClusterServingRuntime`` to choose), the chains around it, and the InferenceServices that
        name them; with ``show_unattributed_users`` also those whose runtime their spec does not
        tell. ``SelectorError``: INVALID_ARGUMENT (bad name, kind or namespace), NOT_FOUND,
        FAILED_PRECONDITION (an ambiguous name, a runtime list over the 1,000-object limit), each
        with the page's message."""
        request = selector_pb2.GetRuntimeTreeRequest(
            name=name, namespace=namespace, kind=kind, show_unattributed_users=show_unattributed_users
        )
        return self._call(self._selection.GetRuntimeTree, request, timeout)

    def plan_revision_gc(
        self, request: selector_pb2.PlanRevisionGCRequest, *, timeout: float | None = None
    ) -> selector_pb2.PlanRevisionGCResponse:
        """OME's runtime-revision garbage collection, planned: for each revision in
        ``request.ome_namespace`` (default ``ome``; ``request.runtime`` for one runtime's), keep or
        delete, why, and what the controller writes (mark, unmark, delete). Nothing is changed:
        the caller acts. ``SelectorError``: INVALID_ARGUMENT naming the bad field."""
        return self._call(self._selection.PlanRevisionGC, request, timeout)

    def get_inference_service(
        self, namespace: str, name: str, *, timeout: float | None = None
    ) -> selector_pb2.GetInferenceServiceResponse:
        """The cached InferenceService ``namespace``/``name`` as cached (metadata, spec, status).
        ``SelectorError``: NOT_FOUND (``inferenceservices.ome.io "<name>" not found``),
        INVALID_ARGUMENT (a bad namespace or name)."""
        request = selector_pb2.GetInferenceServiceRequest(namespace=namespace, name=name)
        return self._call(self._selection.GetInferenceService, request, timeout)

    # --- CacheService --------------------------------------------------------------------------

    def apply_snapshot(
        self, version: str, objects: Iterable[cache_pb2.CacheObject], *, timeout: float | None = None
    ) -> cache_pb2.CacheStatus:
        """Replace the whole cache with ``objects``; returns the cache status after the write."""
        request = cache_pb2.ApplySnapshotRequest(version=version, objects=objects)
        return self._call(self._cache.ApplySnapshot, request, timeout).status

    def upsert_objects(
        self, objects: Iterable[cache_pb2.CacheObject], version: str = "", *, timeout: float | None = None
    ) -> cache_pb2.CacheStatus:
        """Create or replace ``objects`` (all or nothing); an empty version is derived by the server."""
        request = cache_pb2.UpsertObjectsRequest(version=version, objects=objects)
        return self._call(self._cache.UpsertObjects, request, timeout).status

    def delete_objects(
        self, keys: Iterable[cache_pb2.ObjectKey], version: str = "", *, timeout: float | None = None
    ) -> tuple[cache_pb2.CacheStatus, list[cache_pb2.ObjectKey]]:
        """Delete ``keys`` (all or nothing); returns the status and the keys that were not cached."""
        request = cache_pb2.DeleteObjectsRequest(version=version, keys=keys)
        response = self._call(self._cache.DeleteObjects, request, timeout)
        return response.status, list(response.not_found)

    def get_cache_status(self, *, timeout: float | None = None) -> cache_pb2.CacheStatus:
        """The cache's version, counts and sync state."""
        return self._call(self._cache.GetCacheStatus, cache_pb2.GetCacheStatusRequest(), timeout).status

    # --- health --------------------------------------------------------------------------------

    def health(self, service: str = "", *, timeout: float | None = None) -> str:
        """The ``grpc.health.v1`` status name of ``service`` (``""`` is the whole server):
        ``SERVING``, ``NOT_SERVING``, or ``SERVICE_UNKNOWN`` for a service the server does not know."""
        try:
            response = self._call(self._health_check, _health_pb2.HealthCheckRequest(service=service), timeout)
        except SelectorError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                return "SERVICE_UNKNOWN"
            raise
        return str(_health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))

    def wait_until_serving(self, timeout: float, service: str = "") -> None:
        """Poll health until ``service`` is SERVING; raise ``TimeoutError`` after ``timeout`` seconds.

        An unreachable server counts as not serving yet.
        """
        deadline = time.monotonic() + timeout
        delay = min(self.backoff, 0.05) or 0.05
        last = "UNREACHABLE"
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"{self.target}: not SERVING after {timeout:g}s (last status {last})")
            try:
                request = _health_pb2.HealthCheckRequest(service=service)
                response = self._health_check(request, timeout=min(remaining, self.timeout))
                last = str(_health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))
                if last == "SERVING":
                    return
            except grpc.RpcError as exc:
                error = SelectorError.from_rpc_error(exc)
                if error.code == grpc.StatusCode.NOT_FOUND:
                    last = "SERVICE_UNKNOWN"
                elif error.code not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise error from None
            time.sleep(min(delay, max(deadline - time.monotonic(), 0)))
            delay = min(delay * 2, 1.0)

    # --- plumbing ------------------------------------------------------------------------------

    def _call(
        self,
        method: Callable[..., _Response],
        request: object,
        timeout: float | None,
    ) -> _Response:
        try:
            return method(request, timeout=self.timeout if timeout is None else timeout)
        except grpc.RpcError as exc:  # after gRPC's own retries (service config) on UNAVAILABLE
            raise SelectorError.from_rpc_error(exc) from None
