"""ExplainRuntimes' rows of the runtimes that are not candidates (reference/kubectl-ome/runtime.md,
``explain``): every failing check in canonical order (troubleshoot-runtime-selection.md, Step 2),
the first primary, from two parts shared by content instead of every check run again per row:

- ``RequestChecks``: the failures of ``checks.REQUEST_SIDE`` (disabled, accelerator class,
  deployment mode), which read the request and only the spec's ``disabled``, ``classes`` and
  declared modes (``memo.REQUEST_CHECKS``; a catalog of 206 runtimes has 4 such combinations);
- the model's ``FitBase`` for the spec's ``fit_id`` (``memo.FIT_BASES``): the failures of
  ``checks.MODEL_SIDE`` (model format, model size) and the first matching entry.

A runtime with a failure in either part is EXCLUDED with exactly ``evaluation.evaluate``'s
failures. One with none passes every check and its verdict reads the priorities (the score), so
it is evaluated whole (``evaluate``). Pure Python, no gRPC."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass
from typing import NamedTuple

from ome_selector.domain import objects as d
from ome_selector.engine import memo as caches
from ome_selector.engine.evaluation import Evaluation, evaluate
from ome_selector.engine.fits import FitBase, fit_base
from ome_selector.rules.checks import REQUEST_SIDE
from ome_selector.rules.results import Failure, ModelFit

_NO_FIT = ModelFit(None, 0, -1, None, None, None, None)  # the request-side checks never read it


@dataclass(frozen=True, slots=True, eq=False)
class RequestChecks:
    """The request-side failures (``checks.REQUEST_SIDE``, in order) shared by every spec with the
    same ``disabled``, ``classes`` and declared modes; compared by identity (one per content in
    ``memo.REQUEST_CHECKS``)."""

    failures: tuple[Failure, ...]


class Excluded(NamedTuple):
    """An EXCLUDED row: the runtime, its request-side part, the model's ``FitBase`` for its spec,
    and the index of its first matching entry (-1: none). A named tuple: one is made per row
    listed, and a tuple is made several times faster than a frozen dataclass."""

    runtime: d.Runtime
    request: RequestChecks
    model: FitBase
    match_index: int

    @property
    def failures(self) -> tuple[Failure, ...]:
        """Every failing check in canonical order, as ``evaluate`` gives them."""
        base = self.model
        side = tuple(f for f in (base.format_failure, base.size_failure) if f is not None)
        return self.request.failures + side


class RowMaker:
    """The rows of one model and request: ``rows(runtimes)`` gives each an ``Excluded`` row, or
    its whole ``Evaluation`` when it passes every check. The memo tables are read once."""

    __slots__ = ("_model", "_request", "_request_key", "_checks", "_bases")

    def __init__(self, model: d.Model, request: d.Request | None) -> None:
        self._model = model
        self._request = request
        self._request_key = None if request is None else request.checks_key
        self._checks: MutableMapping[object, object] = caches.REQUEST_CHECKS.table(self._request_key)
        self._bases: MutableMapping[object, object] = caches.FIT_BASES.table(model.cache_key)

    def _request_checks(self, spec: d.Compiled, key: tuple[object, ...]) -> RequestChecks:
        request = self._request
        made = RequestChecks(tuple(f for check in REQUEST_SIDE for f in check(spec, _NO_FIT, request)))
        return caches.REQUEST_CHECKS.add(self._request_key, self._checks, key, made)  # type: ignore[return-value]

    def rows(self, runtimes: Iterable[d.Runtime]) -> list[Excluded | Evaluation]:
        """Each runtime's row, matched on its own spec."""
        checks_table, bases, model, request = self._checks, self._bases, self._model, self._request
        out: list[Excluded | Evaluation] = []
        for runtime in runtimes:
            spec = runtime.own
            key = (spec.disabled, spec.classes, spec.engine_mode, spec.decoder_mode)
            checks = checks_table.get(key)
            if checks is None:
                checks = self._request_checks(spec, key)
            base = bases.get(spec.fit_id) if spec.fit_id else None
            if base is None:
                base = fit_base(spec, model)
            assert isinstance(checks, RequestChecks) and isinstance(base, FitBase)
            if checks.failures or base.format_failure is not None or base.size_failure is not None:
                out.append(Excluded(runtime, checks, base, spec.entries[base.match].index if base.match >= 0 else -1))
            else:
                out.append(evaluate(runtime, spec, model, request))
        return out
