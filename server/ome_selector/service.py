"""Thin gRPC servicers: translate, delegate to ``api`` / ``CacheStore``, map errors.

Each call reads ``store.snapshot`` once, so an answer is computed on one consistent snapshot
even while a cache write swaps in the next. ``RequestError`` becomes a rich status
(``google.rpc.Status``; for INVALID_ARGUMENT with a ``google.rpc.BadRequest`` detail listing
every field violation). Any other exception becomes INTERNAL with a short message; the
traceback goes to the log, never to the caller.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Callable, TypeVar

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status

from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2, selector_pb2_grpc
from ome_selector import api, fieldpaths
from ome_selector.errors import FieldViolation, RequestError, bound
from ome_selector.store import CacheStore

log = logging.getLogger(__name__)

INTERNAL_MESSAGE = "internal error"

T = TypeVar("T")


def rich_status(error: RequestError) -> status_pb2.Status:
    """The ``google.rpc.Status`` for a ``RequestError``: field paths in the manifest's camelCase
    (``fieldpaths.json_path``), Kubernetes texts, every text bounded so the status always fits in
    gRPC's metadata (``fieldpaths.present``). INVALID_ARGUMENT always carries a
    ``google.rpc.BadRequest`` with at least one field violation."""
    code = code_pb2.Code.Value(error.code) if error.code in code_pb2.Code.keys() else code_pb2.INTERNAL
    message, violations = fieldpaths.present(error)
    if code == code_pb2.INVALID_ARGUMENT and not violations:
        violations = [FieldViolation("request", bound(message, fieldpaths.MAX_DESCRIPTION_BYTES))]
    status = status_pb2.Status(code=code, message=message)
    if violations:
        bad_request = error_details_pb2.BadRequest(
            field_violations=[
                error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                for v in violations
            ]
        )
        detail = any_pb2.Any()
        detail.Pack(bad_request)
        status.details.append(detail)
    return status


async def _answer(context: grpc.aio.ServicerContext, method: str, compute: Callable[[], T], *, offload: bool = False) -> T:
    """Run ``compute`` (in a worker thread with ``offload``, so a long cache write does not stall
    the event loop and health checks); on failure abort the call with the mapped status."""
    try:
        return await asyncio.to_thread(compute) if offload else compute()
    except RequestError as error:
        status = rich_status(error)
    except Exception:
        log.exception("%s failed", method)
        status = status_pb2.Status(code=code_pb2.INTERNAL, message=INTERNAL_MESSAGE)
    await context.abort_with_status(rpc_status.to_status(status))  # type: ignore[attr-defined]  # missing from grpc-stubs
    raise AssertionError("abort_with_status returned")  # pragma: no cover


class SelectionServicer(selector_pb2_grpc.SelectionServiceServicer):
    """``ome.selector.v1.SelectionService`` over a ``CacheStore``."""

    def __init__(self, store: CacheStore) -> None:
        self._store = store

    async def SelectRuntime(
        self, request: selector_pb2.SelectRuntimeRequest, context: grpc.aio.ServicerContext
    ) -> selector_pb2.SelectRuntimeResponse:
        """``ome.selector.v1.SelectionService/SelectRuntime``; contract in protos/ome/selector/v1/selector.proto."""
        return await _answer(
            context, "SelectRuntime", lambda: api.select_runtime(self._store.snapshot, request)
        )

    async def ExplainRuntimes(
        self, request: selector_pb2.ExplainRuntimesRequest, context: grpc.aio.ServicerContext
    ) -> selector_pb2.ExplainRuntimesResponse:
        """``ome.selector.v1.SelectionService/ExplainRuntimes``; contract in protos/ome/selector/v1/selector.proto."""
        return await _answer(
            context, "ExplainRuntimes", lambda: api.explain_runtimes(self._store.snapshot, request)
        )

    async def AdmitInferenceService(
        self, request: selector_pb2.AdmitInferenceServiceRequest, context: grpc.aio.ServicerContext
    ) -> selector_pb2.AdmitInferenceServiceResponse:
        """``ome.selector.v1.SelectionService/AdmitInferenceService``; contract in protos/ome/selector/v1/selector.proto."""
        return await _answer(
            context, "AdmitInferenceService", lambda: api.admit_inference_service(self._store.snapshot, request)
        )

    async def ReconcileInferenceService(
        self, request: selector_pb2.ReconcileInferenceServiceRequest, context: grpc.aio.ServicerContext
    ) -> selector_pb2.ReconcileInferenceServiceResponse:
        """``ome.selector.v1.SelectionService/ReconcileInferenceService``; contract in protos/ome/selector/v1/selector.proto."""
        return await _answer(
            context, "ReconcileInferenceService", lambda: api.reconcile_inference_service(self._store.snapshot, request)
        )

    async def GetEffectiveRuntime(
        self, request: selector_pb2.GetEffectiveRuntimeRequest, context: grpc.aio.ServicerContext
    ) -> selector_pb2.GetEffectiveRuntimeResponse:
        """``ome.selector.v1.SelectionService/GetEffectiveRuntime``; contract in protos/ome/selector/v1/selector.proto."""
        return await _answer(
            context, "GetEffectiveRuntime", lambda: api.get_effective_runtime(self._store.snapshot, request)
        )

    async def ValidateServingRuntime(
        self, request: selector_pb2.ValidateServingRuntimeRequest, context: grpc.aio.ServicerContext
    ) -> selector_pb2.ValidateServingRuntimeResponse:
        """``ome.selector.v1.SelectionService/ValidateServingRuntime``; contract in protos/ome/selector/v1/selector.proto."""
        return await _answer(
            context, "ValidateServingRuntime", lambda: api.validate_serving_runtime(self._store.snapshot, request)
        )


class CacheServicer(cache_pb2_grpc.CacheServiceServicer):
    """``ome.selector.v1.CacheService`` over a ``CacheStore``.

    Writes are serialized with an ``asyncio.Lock`` and run in a worker thread: a write is
    CPU-bound (validation and compilation of the whole snapshot), and the store swaps the
    snapshot atomically, so readers never wait for the lock and never see half a write.
    """

    def __init__(self, store: CacheStore) -> None:
        self._store = store
        self._write_lock = asyncio.Lock()

    async def ApplySnapshot(
        self, request: cache_pb2.ApplySnapshotRequest, context: grpc.aio.ServicerContext
    ) -> cache_pb2.ApplySnapshotResponse:
        """``ome.selector.v1.CacheService/ApplySnapshot``; contract in protos/ome/selector/v1/cache.proto."""
        async with self._write_lock:
            status = await _answer(
                context, "ApplySnapshot", offload=True, compute=lambda: self._store.apply_snapshot(request.version, request.objects)
            )
        return cache_pb2.ApplySnapshotResponse(status=status)

    async def UpsertObjects(
        self, request: cache_pb2.UpsertObjectsRequest, context: grpc.aio.ServicerContext
    ) -> cache_pb2.UpsertObjectsResponse:
        """``ome.selector.v1.CacheService/UpsertObjects``; contract in protos/ome/selector/v1/cache.proto."""
        async with self._write_lock:
            status = await _answer(
                context, "UpsertObjects", offload=True, compute=lambda: self._store.upsert(request.version, request.objects)
            )
        return cache_pb2.UpsertObjectsResponse(status=status)

    async def DeleteObjects(
        self, request: cache_pb2.DeleteObjectsRequest, context: grpc.aio.ServicerContext
    ) -> cache_pb2.DeleteObjectsResponse:
        """``ome.selector.v1.CacheService/DeleteObjects``; contract in protos/ome/selector/v1/cache.proto."""
        async with self._write_lock:
            status, not_found = await _answer(
                context, "DeleteObjects", offload=True, compute=lambda: self._store.delete(request.version, request.keys)
            )
        return cache_pb2.DeleteObjectsResponse(status=status, not_found=not_found)

    async def GetCacheStatus(
        self, request: cache_pb2.GetCacheStatusRequest, context: grpc.aio.ServicerContext
    ) -> cache_pb2.GetCacheStatusResponse:
        """``ome.selector.v1.CacheService/GetCacheStatus``; contract in protos/ome/selector/v1/cache.proto."""
        status = await _answer(context, "GetCacheStatus", self._store.status)
        return cache_pb2.GetCacheStatusResponse(status=status)
