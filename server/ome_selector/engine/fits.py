"""A model's fit against runtime specs, cached beside the snapshots (``memo``): the part that does
not depend on the priorities is shared by every spec with the same ``Compiled.fit_id``, the
model-format failure by every spec with the same ``Compiled.format_id``."""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any

from ome_selector.domain import objects as d
from ome_selector.engine import memo as caches
from ome_selector.rules.model_format import fit_model, format_match, format_matches
from ome_selector.rules.results import Failure, ModelFit
from ome_selector.rules.scoring import Weights, entry_weights, weighted


@dataclass(frozen=True, slots=True)
class FitBase:
    """What a model's fit against a spec holds apart from the priorities, shared by every spec with
    the same ``fit_id``: the first strictly matching entry's position (-1: none), the check
    failures, the size range's bounds, and (position, weights) of each entry that can score."""

    match: int
    format_failure: Failure | None
    size_failure: Failure | None
    distance_low: float | None
    distance_high: float | None
    scoring: tuple[tuple[int, Weights], ...]
    # Every weight below 2**31 in size: with an int32 priority no sum or product leaves int64,
    # so the score needs no wrapping (rules.scoring.weighted).
    small: bool

    def scored(self, spec: d.Compiled) -> tuple[int, int]:
        """(score, index of the first entry with it) against ``spec`` (with this ``fit_id``), from
        its own priorities: (0, -1) when no entry scores above 0."""
        entries = spec.entries
        best, best_index = 0, -1
        small = self.small
        for position, weights in self.scoring:
            entry = entries[position]
            if small:
                fmt, fw = weights
                score = ((fmt or 0) + (fw or 0)) * entry.effective_priority
            else:
                score = weighted(weights, entry.effective_priority)
            if score > best:
                best, best_index = score, entry.index
        return best, best_index

    def score(self, spec: d.Compiled) -> int:
        """The score against ``spec``."""
        return self.scored(spec)[0]

    def scores(self, specs: Iterable[d.Compiled]) -> list[int]:
        """``score`` against each of ``specs`` (each with this ``fit_id``), in order."""
        if not (self.small and len(self.scoring) == 1):
            return [self.scored(spec)[0] for spec in specs]
        # One entry can score: its weights' sum times its priority (``scored``), 0 when not above 0.
        ((position, (fmt, fw)),) = self.scoring
        weight = (fmt or 0) + (fw or 0)
        out = []
        for spec in specs:
            priority = spec.entries[position].priority
            score = weight * (1 if priority is None else priority)
            out.append(score if score > 0 else 0)
        return out

    def fit_for(self, spec: d.Compiled) -> ModelFit:
        """The fit against ``spec`` (with this ``fit_id``): the score from its own priorities."""
        entries = spec.entries
        best, best_index = self.scored(spec)
        return ModelFit(
            entries[self.match] if self.match >= 0 else None,
            best,
            best_index,
            self.format_failure,
            self.size_failure,
            self.distance_low,
            self.distance_high,
        )


def _new_fit_base(spec: d.Compiled, model: d.Model) -> FitBase:
    whole = fit_model(spec, model)
    scoring = tuple(
        (position, weights)
        for position, entry in enumerate(() if model.sharded else spec.entries)  # Sharded scores 0 (fit_model)
        if entry.auto_select is not False and (weights := entry_weights(entry, model)) is not None
    )
    return FitBase(
        -1 if whole.match is None else spec.entries.index(whole.match),
        whole.format_failure,
        whole.size_failure,
        whole.distance_low,
        whole.distance_high,
        scoring,
        all(abs(w) < 2**31 for _, pair in scoring for w in pair if w is not None),
    )


def fit_base(spec: d.Compiled, model: d.Model) -> FitBase:
    """The model's ``FitBase`` for ``spec.fit_id``, from ``caches.FIT_BASES`` (made afresh for a
    spec without one)."""
    if not spec.fit_id:
        return _new_fit_base(spec, model)
    table = caches.FIT_BASES.table(model.cache_key)
    base = table.get(spec.fit_id)
    if base is None:
        base = caches.FIT_BASES.add(model.cache_key, table, spec.fit_id, _new_fit_base(spec, model))
    return base  # type: ignore[return-value]


def fit(spec: d.Compiled, model: d.Model) -> ModelFit:
    """The model's fit against ``spec`` (``rules.model_format.fit_model``): all but the score from
    ``caches.FIT_BASES``, shared by specs with the same ``fit_id`` (so runtimes that differ only in
    priorities share the work); a spec without one (``fit_id`` 0) is fitted whole."""
    return fit_base(spec, model).fit_for(spec)


def format_failure(
    spec: d.Compiled, model: d.Model, table: MutableMapping[object, Any] | None = None
) -> Failure | None:
    """The model-format check's failure of ``model`` against ``spec``'s entries, shared by every
    spec with the same ``format_id`` (``caches.FORMAT_FAILURES``; ``table`` is the model's table
    when the caller holds it, so that what it reads next is what was stored)."""
    if table is None:
        table = caches.FORMAT_FAILURES.table(model.cache_key)
    found = table.get(spec.format_id, table)
    if found is not table:
        return found  # type: ignore[return-value]
    return caches.FORMAT_FAILURES.add(model.cache_key, table, spec.format_id, format_match(spec, model)[1])  # type: ignore[return-value]


def format_passes(spec: d.Compiled, model: d.Model, table: MutableMapping[object, Any]) -> bool:
    """``format_failure(spec, model, table) is None`` (``table``: the model's table of
    ``caches.FORMAT_FAILURES``), without building a failure's texts: a match is stored (its
    failure is None); a failure is built by ``format_failure`` when an answer shows it."""
    found = table.get(spec.format_id, table)
    if found is not table:
        return found is None
    if not format_matches(spec, model):
        return False
    caches.FORMAT_FAILURES.add(model.cache_key, table, spec.format_id, None)
    return True
