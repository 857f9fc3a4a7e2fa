"""What the server serves at start: the manifests (or the embedded examples) in a ``CacheStore``,
and the interpreter tuned for a process that holds one large snapshot."""

from __future__ import annotations

import ctypes
import gc
import logging
import sys
import threading
from typing import Any, Callable, Sequence

from ome_selector.cache import manifests as manifest_loader
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.server.metrics import ServerMetrics

log = logging.getLogger("ome_selector.server")


def load_store(
    store: CacheStore,
    paths: Sequence[str],
    *,
    strict: bool = False,
    metrics: ServerMetrics | None = None,
    max_objects: int = manifest_loader.DEFAULT_MAX_OBJECTS,
) -> bool:
    """Load manifests into ``store`` as one snapshot; log what was found, each rejected object
    included, and serve the rest. False on failure: the snapshot is refused, the load passed
    ``max_objects``, or with ``strict`` any object, file or folder was rejected."""
    result = manifest_loader.load_manifests(paths, max_objects=max_objects)
    if metrics is not None:
        metrics.manifest_rejected.set(result.rejected_count)
    for line in result.skipped:
        log.info("%s", line)
    for line in result.warnings:
        log.warning("%s", line)
    for line in result.errors:
        log.error("%s", line)
    if result.over_limit:
        return False
    if strict and not result.clean:
        unreadable = len(result.path_errors) + len(result.unreadable_folders)
        log.error("--strict: %d objects rejected, %d paths unreadable", result.rejected_count, unreadable)
        return False
    version = manifest_loader.manifests_version(result.objects)
    try:
        status = store.apply_snapshot(version, result.objects)
    except RequestError as error:
        log.error("manifests rejected: %s", error.message)
        for violation in error.violations:
            log.error("  %s: %s", violation.field, violation.description)
        return False
    log.info(
        "cache loaded from manifests",
        extra={
            "fields": {
                "version": status.version,
                "objects": len(result.objects),
                "rejected": result.rejected_count,
                "path_errors": len(result.path_errors),
            }
        },
    )
    return True


# How long a worker thread may hold the GIL before the event loop gets it (seconds; Python's
# default is 0.005): large answers run in worker threads, and health checks and small calls on
# the loop should wait for them no more than this.
SWITCH_INTERVAL = 0.0005


# The cyclic collector's thresholds (``gc.set_threshold``; Python's default is (700, 10, 10)): a
# full collection walks every live object that is not frozen, the engine's caches and the newest
# snapshot's groups included (tens of milliseconds at 50,000 runtimes), and by default it ran
# every few hundred answers. Here it runs after 1,000 collections of the middle generation (about
# every 7 million allocations of containers); the young generations are collected as by default.
# A group dropped from the snapshots is freed by reference counting (``RuntimeGroup.changed``), so
# little waits for a full collection.
GC_THRESHOLDS = (700, 10, 1000)


# How long after a bulk write its snapshot is frozen out of the collector's way (seconds): after
# the write has answered, so the collection (about 0.1 s at 50,000 runtimes) is not part of it.
FREEZE_DELAY_S = 0.5


# How long after a bulk write the C heap is trimmed (seconds): by then the write's request,
# hundreds of MB decoded at 50,000 runtimes, has been freed.
TRIM_DELAY_S = 2.0


def _malloc_trim() -> None:
    """Give the C heap's free pages back to the system (glibc's ``malloc_trim``; nothing
    elsewhere). A decoded request is freed in small blocks that the allocator otherwise keeps:
    about 300 MB of RSS after an ApplySnapshot of 50,000 runtimes."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass


def _collect_and_freeze() -> None:
    """Collect garbage, then ``gc.freeze()`` what is left."""
    gc.collect()
    gc.freeze()


class _FreezeAfterBulkWrites:
    """Store listener: after a write that changed the number of cached objects by a tenth or
    more (a first sync, an ApplySnapshot of a new cluster), collect garbage and ``gc.freeze()``
    what is left ``freeze_delay`` seconds later (after the write has answered), so the cyclic
    collector stops walking the compiled snapshot (hundreds of thousands of long-lived objects
    at 10,000 runtimes) and stalling answers for tens of milliseconds, and trim the C heap
    ``trim_delay`` seconds after the write (``_malloc_trim``). Small writes do not freeze:
    freezing also freezes any not-yet-collected cyclic garbage of the calls in flight, which
    would then never be freed. ``timer(delay, function)``: runs ``function`` once ``delay``
    seconds later, on another thread (a started daemon ``threading.Timer`` by default)."""

    def __init__(
        self,
        objects: int,
        *,
        freeze_delay: float = FREEZE_DELAY_S,
        trim_delay: float = TRIM_DELAY_S,
        timer: Callable[[float, Callable[[], None]], object] | None = None,
    ) -> None:
        self.objects = objects
        self.freeze_delay = freeze_delay
        self.trim_delay = trim_delay
        self._timer = timer or _start_timer

    def __call__(self, snapshot: Any) -> None:
        count = len(snapshot.objects)
        if abs(count - self.objects) * 10 >= max(self.objects, 100):
            self.objects = count
            self._timer(self.freeze_delay, _collect_and_freeze)
            self._timer(self.trim_delay, _malloc_trim)


def _start_timer(delay: float, function: Callable[[], None]) -> threading.Timer:
    timer = threading.Timer(delay, function)
    timer.daemon = True
    timer.start()
    return timer


def tune_interpreter(store: CacheStore) -> None:
    """Process settings for a long-running server: a short GIL switch interval (see
    ``SWITCH_INTERVAL``), rare full collections (``GC_THRESHOLDS``), and the loaded cache frozen
    out of the cyclic collector's way now and after every bulk write (``_FreezeAfterBulkWrites``).
    Frozen objects are still freed by reference counting when a later snapshot replaces them."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    gc.set_threshold(*GC_THRESHOLDS)
    gc.collect()
    gc.freeze()
    store.add_listener(_FreezeAfterBulkWrites(len(store.snapshot.objects)))
