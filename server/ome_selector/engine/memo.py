"""Caches beside the snapshots (the go-control-plane idea: the snapshot never changes, caches
live next to it). Both are keyed by content, not by object name or snapshot generation, so a
cache write never makes an entry wrong and never has to empty them:

- ``FIT_BASES``: a model's fit against a runtime spec apart from the score (the priorities),
  keyed by the model's serialized spec (``Model.cache_key``) and ``Compiled.fit_id``; runtimes
  that differ only in priorities share it.
- ``FORMAT_FAILURES``: the model-format check's failure (or None) of a model against a runtime's
  entries, keyed by ``Model.cache_key`` and ``Compiled.format_id``; runtimes with the same
  entries share it, which is what makes the ``no runtime found`` message cheap to write.
- ``EVALUATIONS``: a model's ``Evaluation`` of a runtime whose entries can match it and that the
  request-side checks passed (it then reads only the two), keyed by ``Model.cache_key`` and the
  runtime object (by ``id``; the entry holds the runtime, so the id is not reused while it is
  kept): candidates listed again (FULL view, ExplainRuntimes pages) are not evaluated again.
- ``REQUEST_CHECKS``: the disabled, accelerator-class and deployment-mode failures of a request
  (``Request`` without its namespace and model name, which no check reads) against a spec's
  ``disabled``, ``classes`` and declared modes (``engine.explain_rows``): a few per request.

Each is bounded in bytes (an estimate: the texts held plus a fixed overhead per entry); when over
budget, the models seen longest ago are dropped first. Safe to use from several threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, MutableMapping
from typing import Any, Generic, TypeVar

V = TypeVar("V")
_ENTRY_OVERHEAD = 160  # bytes: dict slot, key and value objects, roughly


class ModelKeyedCache(Generic[V]):
    """``{model key: {item key: value}}`` bounded to about ``budget`` bytes.

    ``table(model_key)`` returns the inner dict for one model; callers read it directly and add to
    it with ``add``, which accounts the size and evicts whole models, oldest first.
    """

    def __init__(self, budget: int, size_of: Callable[[V], int]) -> None:
        self.budget = budget
        self._size_of = size_of
        self._tables: dict[object, MutableMapping[object, V]] = {}
        self._sizes: dict[object, int] = {}
        self._total = 0
        self._lock = threading.Lock()

    def table(self, model_key: object) -> MutableMapping[object, V]:
        """The inner table of ``model_key`` (created empty when new)."""
        table = self._tables.get(model_key)
        if table is None:
            with self._lock:
                table = self._tables.get(model_key)
                if table is None:
                    table = self._tables[model_key] = {}
                self._sizes.setdefault(model_key, 0)
        return table

    def add(self, model_key: object, table: MutableMapping[object, V], key: object, value: V) -> V:
        """Store ``value`` under ``key`` in ``table`` (from ``table(model_key)``) and return it."""
        table[key] = value
        size = _ENTRY_OVERHEAD + self._size_of(value)
        with self._lock:
            if model_key in self._sizes:
                self._sizes[model_key] += size
            self._total += size
            if self._total > self.budget:
                self._evict()
        return value

    def _evict(self) -> None:
        target = self.budget * 3 // 4
        while self._total > target and self._tables:
            oldest = next(iter(self._tables))
            del self._tables[oldest]
            self._total -= self._sizes.pop(oldest, 0)
        if not self._tables:
            self._total = 0

    @property
    def size(self) -> int:
        """Estimated bytes held."""
        return self._total

    def clear(self) -> None:
        """Drop everything."""
        with self._lock:
            self._tables.clear()
            self._sizes.clear()
            self._total = 0


# Per-entry sizes measured with tracemalloc on the OME catalog (every model against every runtime):
# a fit holds about 560 bytes of objects besides the dict slot, a format failure about 240.
def _fit_size(fit: object) -> int:
    size = 560
    for failure in (fit.format_failure, fit.size_failure):  # type: ignore[attr-defined]
        if failure is not None:
            size += len(failure.message) * 2
    return size + 64 * len(fit.scoring)  # type: ignore[attr-defined]


def _failure_size(failure: object) -> int:
    return 240 + (0 if failure is None else len(failure.message) * 2)  # type: ignore[attr-defined]


def _messages_size(failures: Any) -> int:
    return sum(len(f.message) * 2 for f in failures)  # type: ignore[no-any-return]


def _evaluation_size(entry: Any) -> int:
    return 700 + _messages_size(entry[1].failures)


def _failures_size(checks: Any) -> int:
    return 120 + 240 * len(checks.failures) + _messages_size(checks.failures)


FIT_BASES: ModelKeyedCache[object] = ModelKeyedCache(24 << 20, _fit_size)
FORMAT_FAILURES: ModelKeyedCache[object] = ModelKeyedCache(24 << 20, _failure_size)
REQUEST_CHECKS: ModelKeyedCache[object] = ModelKeyedCache(4 << 20, _failures_size)
EVALUATIONS: ModelKeyedCache[object] = ModelKeyedCache(16 << 20, _evaluation_size)
