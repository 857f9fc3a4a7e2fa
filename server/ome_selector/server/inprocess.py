"""The real servicers behind a ``grpc.aio`` server on 127.0.0.1, in a thread of the calling process
(what the fuzzer and the in-process tests call through a real channel)."""

from __future__ import annotations

import asyncio
import threading

import grpc

from ome_selector.cache.manifests import load_manifests
from ome_selector.cache.store import CacheStore
from ome_selector.examples import example_paths
from ome_selector.rpc import wire
from ome_selector.rpc.servicers import CacheServicer, SelectionServicer
from ome_selector.rpc.watch import SelectionTracker
from ome_selector.server.interceptor import RpcLoggingInterceptor


class InProcessServer:
    """The real servicers behind a ``grpc.aio`` server on 127.0.0.1, in a thread of its own;
    ``address`` is where it listens. Use as a context manager."""

    def __init__(self, store: CacheStore) -> None:
        self.store = store
        self.address = ""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: grpc.aio.Server | None = None
        self._tracker: SelectionTracker | None = None

    def __enter__(self) -> "InProcessServer":
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(30)
        return self

    async def _start(self) -> None:
        server = grpc.aio.server(interceptors=[RpcLoggingInterceptor()], options=[("grpc.so_reuseport", 0)])
        self._tracker = SelectionTracker(self.store)
        wire.add_selection_service(SelectionServicer(self.store, self._tracker), server)
        wire.add_cache_service(CacheServicer(self.store), server)
        port = server.add_insecure_port("127.0.0.1:0")
        await server.start()
        self._server = server
        self.address = f"127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        if self._tracker is not None:
            self._tracker.close()
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._server.stop(None), self._loop).result(30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(30)


def synced_store() -> CacheStore:
    """A store holding the embedded example catalog."""
    store = CacheStore()
    store.apply_snapshot("fuzz-v1", load_manifests(example_paths()).objects)
    return store
