"""Thin gRPC servicers: translate, delegate to ``api`` / ``CacheStore``, map errors.

Each call reads ``store.snapshot`` once, so an answer is computed on one consistent snapshot
even while a cache write swaps in the next. ``RequestError`` becomes a rich status
(``google.rpc.Status``; for INVALID_ARGUMENT with a ``google.rpc.BadRequest`` detail listing
every field violation). Any other exception becomes INTERNAL with a short message; the
traceback goes to the log, never to the caller.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import time
from typing import Any, AsyncIterator, Callable, Iterator, TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import Message
from google.rpc import code_pb2, error_details_pb2, status_pb2  # type: ignore[import-untyped]
from grpc_status import rpc_status
from ome.selector.v1 import cache_pb2, selector_pb2

from ome_selector.cache.groups import RuntimeGroup
from ome_selector.cache.store import CacheStore, gc_paused
from ome_selector.cache.wire_objects import SplitSnapshotRequest
from ome_selector.domain.errors import FieldViolation, RequestError, bound
from ome_selector.engine import evaluation as engine
from ome_selector.rpc import api
from ome_selector.rpc.common import Rpc
from ome_selector.rpc.watch import SelectionTracker
from ome_selector.rpc.wire import UndecodableRequest
from ome_selector.texts import fieldpaths

log = logging.getLogger("ome_selector.service")

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


# Offloaded work runs on one thread for answers and one for cache writes: the work holds the GIL
# anyway, and the event loop (health checks, small calls) then competes with those two threads
# instead of a pool of them, and a write never queues behind answers.
ANSWERS = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ome-selector-answers")
WRITES = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="ome-selector-writes")


async def _answer(
    context: grpc.aio.ServicerContext,
    method: str,
    compute: Callable[[], T],
    *,
    offload: concurrent.futures.Executor | None = None,
) -> T:
    """Run ``compute`` (on the ``offload`` executor when given, so a long answer or cache write
    does not stall the event loop and health checks); on failure abort the call with the mapped
    status."""
    try:
        return await asyncio.get_running_loop().run_in_executor(offload, compute) if offload is not None else compute()
    except RequestError as error:
        status = rich_status(error)
    except Exception:
        log.exception("%s failed", method)
        status = status_pb2.Status(code=code_pb2.INTERNAL, message=INTERNAL_MESSAGE)
    await context.abort_with_status(rpc_status.to_status(status))  # type: ignore[attr-defined]  # missing from grpc-stubs
    raise AssertionError("abort_with_status returned")  # pragma: no cover


# Above this many ClusterServingRuntimes an answer that lists every runtime in scope (FULL,
# ExplainRuntimes, the views) may take milliseconds, so it is computed in a worker thread and a
# health check or a small call never waits behind it on the event loop. Below it, and for the
# answers whose size and work are bounded at any size (``BOUNDED_ANSWERS``: the candidates that
# can match, a capped no-runtime message), the thread hop and the GIL hand-offs cost more than
# the answer (measured with shared/tools/real_traffic.py at 10,094 runtimes: 3.7 -> 2.8x the
# floor, health stall 1.5 -> 1.3).
# An ExplainRuntimes page of at most ``BOUNDED_PAGE`` rows is bounded too: the candidates that can
# match, then the page's rows.
OFFLOAD_RUNTIMES = 1000
BOUNDED_ANSWERS = frozenset({"SelectRuntime", "AdmitInferenceService", "ReconcileInferenceService"})
BOUNDED_PAGE = 100


def _offloaded(method: str, full_view: bool, cluster_runtimes: int, page_size: int = 0) -> bool:
    """Whether ``method``'s answer runs in the ``ANSWERS`` worker thread; ``full_view``: the
    request asks for SelectRuntime's FULL view (every exclusion); ``page_size``: the request's
    (ExplainRuntimes; 0 is every row)."""
    if cluster_runtimes < OFFLOAD_RUNTIMES:
        return False
    if method == "SelectRuntime":
        return full_view
    if method == "ExplainRuntimes":
        return not 0 < page_size <= BOUNDED_PAGE
    return method not in BOUNDED_ANSWERS


class SelectionServicer:
    """``ome.selector.v1.SelectionService`` over a ``CacheStore``: one method per row of
    ``api.SELECTION_RPCS``, each answering on the snapshot it reads once (contracts in
    protos/ome/selector/v1/selector.proto), and ``WatchSelections``, a stream from the
    ``tracker``. ``wire.add_selection_service`` registers them."""

    def __init__(self, store: CacheStore, tracker: SelectionTracker | None = None) -> None:
        self._store = store
        self._tracker = tracker

    async def WatchSelections(
        self, request: selector_pb2.WatchSelectionsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[selector_pb2.WatchSelectionsResponse | bytes]:
        """``ome.selector.v1.SelectionService/WatchSelections``: the tracker's events for the
        request's namespace and label selector until the client leaves or the server drains.
        An advance's events come already serialized (``bytes``, shared by the watchers of one
        filter), which the method's serializer sends as they are (``wire.passthrough``)."""
        if self._tracker is None:
            await context.abort(grpc.StatusCode.UNIMPLEMENTED, "WatchSelections needs a selection tracker")
            return
        try:
            watcher = self._tracker.subscribe(request.namespace, request.label_selector, asyncio.get_running_loop())
        except RequestError as error:
            await context.abort_with_status(rpc_status.to_status(rich_status(error)))  # type: ignore[attr-defined]
            return
        try:
            async for event in watcher.stream(wire=True):
                yield event
        finally:
            watcher.close()

    async def _answer(self, context: grpc.aio.ServicerContext, method: str, request: Message) -> Message | bytes:
        """The ``api.SELECTION_RPCS`` row ``method`` on the snapshot read once: on the event loop
        for a small cache, in a worker thread for a large one."""
        snapshot = self._store.snapshot
        full = getattr(request, "view", None) == selector_pb2.SELECT_RUNTIME_VIEW_FULL
        page_size = getattr(request, "page_size", 0)
        offload = ANSWERS if _offloaded(method, full, len(snapshot.cluster), page_size) else None
        # An Rpc row may give its answer serialized (``Rpc.parsed``): the method's serializer sends
        # bytes as they are. Anything else in the table is called as ``row(snapshot, request)``.
        row = api.SELECTION_RPCS[method]
        serialized = isinstance(row, Rpc)
        return await _answer(
            context,
            method,
            lambda: row(snapshot, request, True) if serialized else row(snapshot, request),
            offload=offload,
        )

    async def SelectRuntime(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "SelectRuntime", request)

    async def ExplainRuntimes(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "ExplainRuntimes", request)

    async def AdmitInferenceService(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "AdmitInferenceService", request)

    async def ReconcileInferenceService(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "ReconcileInferenceService", request)

    async def GetEffectiveRuntime(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "GetEffectiveRuntime", request)

    async def ValidateServingRuntime(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "ValidateServingRuntime", request)

    async def PreviewCacheChange(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "PreviewCacheChange", request)

    async def GetRuntimeStatus(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "GetRuntimeStatus", request)

    async def GetRuntimeHistory(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "GetRuntimeHistory", request)

    async def PlanRuntimeSync(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "PlanRuntimeSync", request)

    async def GetRuntimeTree(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "GetRuntimeTree", request)

    async def PlanRevisionGC(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "PlanRevisionGC", request)

    async def GetInferenceService(self, request: Message, context: grpc.aio.ServicerContext) -> Message | bytes:
        return await self._answer(context, "GetInferenceService", request)


def _apply_snapshot(
    store: CacheStore, request: cache_pb2.ApplySnapshotRequest | SplitSnapshotRequest
) -> cache_pb2.ApplySnapshotResponse:
    """A request ``wire`` split into its objects (``cache.wire_objects``) is decoded here, in the
    write's thread; an object that does not decode is the request's INVALID_ARGUMENT, as when
    the whole request does not (``wire.UndecodableRequest``), and nothing changes."""
    if isinstance(request, SplitSnapshotRequest):
        with gc_paused():  # one pause for the decode and the build (``store.gc_paused``)
            objects = request.decode()
            if objects is None:
                raise UndecodableRequest(request.message_type, request.size).error()
            status = store.apply_snapshot(request.version, objects)
        return cache_pb2.ApplySnapshotResponse(status=status)
    return cache_pb2.ApplySnapshotResponse(status=store.apply_snapshot(request.version, request.objects))


def _upsert_objects(store: CacheStore, request: cache_pb2.UpsertObjectsRequest) -> cache_pb2.UpsertObjectsResponse:
    return cache_pb2.UpsertObjectsResponse(status=store.upsert(request.version, request.objects))


def _delete_objects(store: CacheStore, request: cache_pb2.DeleteObjectsRequest) -> cache_pb2.DeleteObjectsResponse:
    status, not_found = store.delete(request.version, request.keys)
    return cache_pb2.DeleteObjectsResponse(status=status, not_found=not_found)


# The longest a turn of the event loop carries results forward (seconds; ``_carry_forward``).
CARRY_TURN_SECONDS = 0.0002
# The pause between two such turns (seconds): the loop then waits for events, which lets grpc's
# poller thread take the GIL and hand over the calls that came in (with turns one after another
# it would wait for them all).
CARRY_PAUSE_SECONDS = 0.001


def _carry_forward(loop: asyncio.AbstractEventLoop, store: CacheStore) -> None:
    """Carry the answered results of the ClusterServingRuntimes' group through the write just
    made (``engine.carrying_forward``) on the event loop, a turn at a time between calls (at
    least one result, then up to ``CARRY_TURN_SECONDS``): the first answers after a write then
    cost what answers between writes cost, and a call waits for one turn at most, not for the
    whole carry holding the GIL in another thread. A later write stops it (it carries from here).
    A failure is logged; answers then carry lazily."""
    group = store.snapshot.cluster
    loop.call_soon(_carry_turn, loop, store, group, engine.carrying_forward(group))


def _carry_turn(loop: asyncio.AbstractEventLoop, store: CacheStore, group: RuntimeGroup, steps: Iterator[int]) -> None:
    """One turn of ``_carry_forward``: the next of ``steps`` until the turn's time is up, then
    the next turn after a pause; nothing once ``group`` is no longer the snapshot's."""
    if store.snapshot.cluster is not group:
        return
    deadline = time.perf_counter() + CARRY_TURN_SECONDS
    try:
        for _ in steps:
            if time.perf_counter() >= deadline:
                loop.call_later(CARRY_PAUSE_SECONDS, _carry_turn, loop, store, group, steps)
                return
    except Exception:
        log.exception("carrying results through a write failed")


# The cache writes: RPC name -> the ``CacheStore`` call that answers it (contracts in
# protos/ome/selector/v1/cache.proto); each ``CacheServicer`` write method calls its row.
CACHE_WRITES: dict[str, Callable[[CacheStore, Any], Message]] = {
    "ApplySnapshot": _apply_snapshot,
    "UpsertObjects": _upsert_objects,
    "DeleteObjects": _delete_objects,
}


class CacheServicer:
    """``ome.selector.v1.CacheService`` over a ``CacheStore``: one write method per row of
    ``CACHE_WRITES``, and ``GetCacheStatus``.

    Writes are serialized with an ``asyncio.Lock`` and run in a worker thread: a write is
    CPU-bound (validation and compilation of the whole snapshot), and the store swaps the
    snapshot atomically, so readers never wait for the lock and never see half a write.
    """

    def __init__(self, store: CacheStore) -> None:
        self._store = store
        self._write_lock = asyncio.Lock()

    async def _write(self, context: grpc.aio.ServicerContext, method: str, request: Message) -> Message:
        """Run the ``CACHE_WRITES`` row ``method`` under the write lock, in a worker thread."""
        async with self._write_lock:
            write = CACHE_WRITES[method]
            response = await _answer(context, method, lambda: write(self._store, request), offload=WRITES)
            if method != "ApplySnapshot":  # a snapshot builds its groups anew: nothing to carry
                _carry_forward(asyncio.get_running_loop(), self._store)
            return response

    async def GetCacheStatus(
        self, request: cache_pb2.GetCacheStatusRequest, context: grpc.aio.ServicerContext
    ) -> cache_pb2.GetCacheStatusResponse:
        """``ome.selector.v1.CacheService/GetCacheStatus``; contract in protos/ome/selector/v1/cache.proto."""
        status = await _answer(context, "GetCacheStatus", self._store.status)
        return cache_pb2.GetCacheStatusResponse(status=status)

    async def ApplySnapshot(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        return await self._write(context, "ApplySnapshot", request)

    async def UpsertObjects(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        return await self._write(context, "UpsertObjects", request)

    async def DeleteObjects(self, request: Message, context: grpc.aio.ServicerContext) -> Message:
        return await self._write(context, "DeleteObjects", request)
