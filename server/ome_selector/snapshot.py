"""Immutable, versioned cache snapshots (the go-control-plane snapshot idea).

A ``Snapshot`` is built from a complete set of validated, defaulted objects and never changes
afterwards: runtimes are compiled, listed in OME's fetch order (namespace-scoped per namespace,
cluster-scoped; each newest first, then by name), models are compiled and indexed, and every
runtime that names a parent with ``ome.io/inherit-from`` gets its merged spec compiled (or its
chain error). Readers hold a reference; writers build a new snapshot and swap it in.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from . import domain as d
from . import messages
from .checks import ModelFit, fit_model
from .ingest import Key, compile_model, compile_runtime, compile_spec, merge_specs, unwrap

MAX_CHAIN = 5
_FIT_CACHE_MODELS = 256
_MEMO_ENTRIES = 4096


def fetch_order(runtimes: list[d.Runtime]) -> tuple[d.Runtime, ...]:
    """Newest ``creationTimestamp`` first (absent counts as oldest), then name ascending."""
    return tuple(sorted(runtimes, key=lambda r: (r.created is None, -(r.created or 0.0), r.name)))


class Snapshot:
    """A complete, consistent, versioned view of the cache. Do not mutate."""

    def __init__(
        self,
        version: str,
        objects: Mapping[Key, cache_pb2.CacheObject],
        *,
        synced: bool,
        generation: int,
        previous: "Snapshot | None" = None,
    ) -> None:
        self.version = version
        self.synced = synced
        self.generation = generation
        self.last_update = time.time() if generation > 0 else None
        self.objects: dict[Key, cache_pb2.CacheObject] = dict(objects)
        reuse = previous._compiled if previous is not None else {}
        self._compiled: dict[Key, tuple[cache_pb2.CacheObject, Any]] = {}
        runtimes: dict[Key, d.Runtime] = {}
        self.base_models: dict[tuple[str, str], d.Model] = {}
        self.cluster_models: dict[str, d.Model] = {}
        self.accelerator_classes: dict[str, types_pb2.AcceleratorClass] = {}
        for key, obj in self.objects.items():
            cached = reuse.get(key)
            if cached is not None and cached[0] is obj:
                compiled = cached[1]
            else:
                compiled = self._compile(key, obj)
            self._compiled[key] = (obj, compiled)
            kind = key[0]
            if kind in (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME):
                runtimes[key] = compiled
            elif kind == d.BASE_MODEL:
                self.base_models[(key[1], key[2])] = compiled
            elif kind == d.CLUSTER_BASE_MODEL:
                self.cluster_models[key[2]] = compiled
            else:
                self.accelerator_classes[key[2]] = compiled
        self.serving_runtimes: dict[tuple[str, str], d.Runtime] = {}
        self.cluster_serving_runtimes: dict[str, d.Runtime] = {}
        for key, rt in runtimes.items():
            if rt.kind == d.SERVING_RUNTIME:
                self.serving_runtimes[(rt.namespace, rt.name)] = rt
            else:
                self.cluster_serving_runtimes[rt.name] = rt
        resolved = [self._resolve_inheritance(rt) for rt in runtimes.values() if rt.parent is not None]
        for rt in resolved:
            if rt.kind == d.SERVING_RUNTIME:
                self.serving_runtimes[(rt.namespace, rt.name)] = rt
            else:
                self.cluster_serving_runtimes[rt.name] = rt
        by_namespace: dict[str, list[d.Runtime]] = {}
        for (namespace, _), rt in self.serving_runtimes.items():
            by_namespace.setdefault(namespace, []).append(rt)
        self.namespaced: dict[str, tuple[d.Runtime, ...]] = {ns: fetch_order(rts) for ns, rts in by_namespace.items()}
        self.cluster: tuple[d.Runtime, ...] = fetch_order(list(self.cluster_serving_runtimes.values()))
        # (format name, architecture, quantization) -> runtimes with an entry that has exactly
        # these: only they can match a model strictly (serving-runtimes.md, supported formats).
        index: dict[tuple[str, str | None, str | None], list[d.Runtime]] = {}
        for rt in (*self.serving_runtimes.values(), *self.cluster_serving_runtimes.values()):
            for sig in {(e.model_format.name, e.architecture, e.quantization) for e in rt.own.entries if e.model_format is not None}:
                index.setdefault(sig, []).append(rt)
        self.match_index: dict[tuple[str, str | None, str | None], tuple[d.Runtime, ...]] = {k: tuple(v) for k, v in index.items()}
        self._fits: dict[object, dict[int, ModelFit]] = {}
        self.memo: dict[object, object] = {}

    @staticmethod
    def _compile(key: Key, obj: cache_pb2.CacheObject) -> Any:
        unwrapped = unwrap(obj)
        assert unwrapped is not None
        kind, message = unwrapped
        if kind in (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME):
            return compile_runtime(kind, message)  # type: ignore[arg-type]
        if kind in (d.BASE_MODEL, d.CLUSTER_BASE_MODEL):
            return compile_model(kind, key[1], key[2], message.spec, key)  # type: ignore[attr-defined]
        return message

    def _parent(self, head: d.Runtime, name: str) -> d.Runtime | None:
        """runtime-inheritance.md: a ClusterServingRuntime's parents are ClusterServingRuntimes; a
        ServingRuntime's are looked up in its namespace first, for the whole walk."""
        if head.kind == d.SERVING_RUNTIME:
            found = self.serving_runtimes.get((head.namespace, name))
            if found is not None:
                return found
        return self.cluster_serving_runtimes.get(name)

    def _resolve_inheritance(self, head: d.Runtime) -> d.Runtime:
        """A copy of ``head`` with its chain (root first) and merged spec, or its chain error."""
        chain = [head.name]
        members = [head]
        current = head
        error = None
        while current.parent:
            parent_name = current.parent
            if len(chain) >= MAX_CHAIN:
                error = messages.inherit_max_depth(chain)
                break
            if parent_name in chain:
                error = messages.inherit_cycle([*chain, parent_name])
                break
            parent = self._parent(head, parent_name)
            if parent is None:
                error = messages.inherit_parent_not_found(parent_name, chain)
                break
            chain.append(parent_name)
            members.append(parent)
            current = parent
        if error is not None:
            return dataclasses.replace(head, inheritance_error=error)
        merged = members[-1].spec
        for child in reversed(members[:-1]):
            merged = merge_specs(merged, child.spec)  # type: ignore[assignment]
        return dataclasses.replace(
            head,
            effective=compile_spec(merged),
            merged_spec=merged,
            chain=tuple(reversed(chain)),
            chain_keys=tuple(m.key for m in reversed(members)),
        )

    def fit(self, spec: d.Compiled, model: d.Model) -> ModelFit:
        """The model's fit against ``spec``, memoised for the snapshot's lifetime."""
        per_model = self._fits.get(model.cache_key)
        if per_model is None:
            if len(self._fits) >= _FIT_CACHE_MODELS:
                self._fits.clear()
                self.memo.clear()
            per_model = self._fits[model.cache_key] = {}
        fit = per_model.get(id(spec))
        if fit is None:
            fit = per_model[id(spec)] = fit_model(spec, model)
        return fit

    def remember(self, key: object, value: object) -> None:
        """Memoise a per-snapshot result (bounded; cleared wholesale when full)."""
        if len(self.memo) >= _MEMO_ENTRIES:
            self.memo.clear()
        self.memo[key] = value

    def runtimes_in_scope(self, namespace: str) -> tuple[tuple[d.Runtime, ...], tuple[d.Runtime, ...]]:
        """(ServingRuntimes of ``namespace``, ClusterServingRuntimes), each in fetch order."""
        return self.namespaced.get(namespace, ()), self.cluster

    def counts(self) -> dict[str, int]:
        """Objects per kind."""
        out = {kind: 0 for kind in (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME, d.BASE_MODEL, d.CLUSTER_BASE_MODEL, d.ACCELERATOR_CLASS)}
        for kind, _, _ in self.objects:
            out[kind] += 1
        return out
