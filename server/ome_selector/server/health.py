"""gRPC health (``grpc.health.v1``): CacheService SERVING from the start; ``""`` and SelectionService
NOT_SERVING until the cache has been loaded or synced once."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio  # type: ignore[attr-defined]  # missing from grpc-stubs
from ome.selector.v1 import cache_pb2, selector_pb2

from ome_selector.cache.store import CacheStore

log = logging.getLogger("ome_selector.server")


SELECTION_SERVICE = selector_pb2.DESCRIPTOR.services_by_name["SelectionService"].full_name
CACHE_SERVICE = cache_pb2.DESCRIPTOR.services_by_name["CacheService"].full_name
# Health entries that follow the cache's sync state.
SYNC_GATED_SERVICES = ("", SELECTION_SERVICE)


async def attach_health(store: CacheStore, server: grpc.aio.Server) -> health_aio.HealthServicer:
    """Add a health servicer whose sync-gated entries follow ``store``'s sync state."""
    servicer = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    serving, not_serving = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
    await servicer.set(CACHE_SERVICE, serving)
    synced = store.snapshot.synced
    for name in SYNC_GATED_SERVICES:
        await servicer.set(name, serving if synced else not_serving)
    if synced:
        return servicer

    loop = asyncio.get_running_loop()
    pending: set[asyncio.Task[None]] = set()
    became_serving = False

    async def mark_serving() -> None:
        for name in SYNC_GATED_SERVICES:
            await servicer.set(name, serving)
        log.info(
            "cache synced: %s is SERVING", SELECTION_SERVICE, extra={"fields": {"version": store.snapshot.version}}
        )

    def start_marking() -> None:
        task = loop.create_task(mark_serving())
        pending.add(task)
        task.add_done_callback(pending.discard)

    def on_write(snapshot: Any) -> None:
        # Called by the store after each successful write, possibly from another thread.
        nonlocal became_serving
        if snapshot.synced and not became_serving:
            became_serving = True
            loop.call_soon_threadsafe(start_marking)

    store.add_listener(on_write)
    return servicer
