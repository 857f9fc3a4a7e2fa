"""Immutable, versioned cache snapshots (the go-control-plane snapshot idea).

A ``Snapshot`` is a complete set of validated, defaulted objects, compiled, and never changes
after it is built: runtimes are compiled and listed in OME's fetch order (the ServingRuntimes of
each namespace, and the ClusterServingRuntimes; each newest first, then by name), models are
compiled and indexed, and every runtime that names a parent with ``ome.io/inherit-from`` gets its
merged spec compiled (or its chain error). Readers hold a reference; writers build the next
snapshot and the store swaps it in.

``Snapshot.build`` compiles everything; ``Snapshot.with_changes`` derives the next snapshot from
this one and a write: only the objects the write carries are compiled, only the runtime groups
they belong to are updated (``RuntimeGroup.changed``), and inheritance is resolved again only
for runtimes whose chain can reach a changed runtime. Caches live beside snapshots
(``engine/memo.py``), keyed by content, so a write never empties them.

The tables with an entry per cached object of a kind (``_SHARED``) are persistent maps
(``immutables.Map``, a hash array mapped trie): the next snapshot shares all but the few nodes a
write changes, so a write neither copies them (a few milliseconds at 50,000 runtimes) nor hands
the cyclic collector new tables to walk (one pass over a copied table of 50,000 entries holds
the GIL for about a millisecond, and the young and middle generations each walked it).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import immutables
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector.cache.chains import ChainWalk, chain_can_reach, walk_chain
from ome_selector.cache.groups import EMPTY_GROUP, RuntimeGroup
from ome_selector.cache.groups import mask_from_positions as mask_from_positions  # engine.evaluation's import
from ome_selector.cache.ingest import compile_model, compile_revision, compile_runtime, compile_spec
from ome_selector.cache.merge import merge_specs
from ome_selector.domain import objects as d
from ome_selector.domain.answers import DEFAULT_MAX_MESSAGE_BYTES
from ome_selector.validation import KIND_TO_FIELD, Key, unwrap

_RUNTIME_KINDS = (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME)
# (revision namespace, owner runtime name, content hash): what a roll forward looks revisions up by.
ContentKey = tuple[str, str, str]


@dataclasses.dataclass(frozen=True, slots=True)
class _Parts:
    """What a snapshot is made of; shared by ``build`` and ``with_changes``. While a snapshot is
    made the tables are mutable (dicts, or ``immutables.Map.mutate()`` of the previous
    snapshot's); ``_shared`` turns the ``_SHARED`` ones into persistent maps."""

    objects: Any  # Key -> cache_pb2.CacheObject
    compiled: Any  # Key -> compiled object (d.Runtime, d.Model, ...)
    serving_runtimes: Any  # (namespace, name) -> d.Runtime
    cluster_serving_runtimes: Any  # name -> d.Runtime
    base_models: Any  # (namespace, name) -> d.Model
    cluster_models: Any  # name -> d.Model
    accelerator_classes: dict[str, types_pb2.AcceleratorClass]
    inference_services: Any  # (namespace, name) -> types_pb2.InferenceService
    revisions: Any  # (namespace, name) -> d.Revision
    revisions_by_content: dict[ContentKey, tuple[str, ...]]
    # The keys of the runtimes that name a parent (``ome.io/inherit-from``), so a write finds
    # the chains it can break without a pass over every runtime.
    parented: dict[Key, None]


# The tables kept as persistent maps: one entry per cached object of their kinds.
_SHARED = (
    "objects",
    "compiled",
    "serving_runtimes",
    "cluster_serving_runtimes",
    "base_models",
    "cluster_models",
    "inference_services",
    "revisions",
)


def _shared(parts: _Parts) -> _Parts:
    """``parts`` with each ``_SHARED`` table a persistent map: a dict is copied into one, a
    mutation of a previous snapshot's map is finished."""

    def persistent(table: Any) -> Any:
        return immutables.Map(table) if isinstance(table, dict) else table.finish()

    tables: dict[str, Any] = {name: persistent(getattr(parts, name)) for name in _SHARED}
    return dataclasses.replace(parts, **tables)


class Snapshot:
    """A complete, consistent, versioned view of the cache. Do not mutate.

    Attributes: ``version``, ``synced``, ``generation``, ``last_update`` (epoch seconds or None);
    ``objects`` (key -> defaulted CacheObject; a runtime's as ``store.prepare_write`` keeps it,
    without its spec, which is its Runtime's ``spec``: ``stored_object`` puts it back);
    ``serving_runtimes`` ((namespace, name) -> Runtime) and ``cluster_serving_runtimes``
    (name -> Runtime), with inheritance resolved;
    ``namespaced`` (namespace -> RuntimeGroup) and ``cluster`` (RuntimeGroup); ``base_models``,
    ``cluster_models``, ``accelerator_classes``; ``inference_services`` ((namespace, name) ->
    InferenceService; selection never reads them, their outcomes live beside the snapshot in
    ``outcomes.Selections``); ``revisions`` ((namespace, name) -> Revision) and
    ``revisions_by_content`` ((namespace, owner runtime name, content hash) -> revision names,
    sorted); ``written``: the keys ``with_changes`` upserted or deleted to make it from the
    previous snapshot (None for a snapshot built whole); ``max_message_bytes``: the cap on the
    ``no runtime found`` message of answers read from it (``domain.answers``; 0 = no cap), carried
    to every snapshot derived from it; ``lineage``: an object shared by the snapshots one store
    makes (``previous``'s, or a new one), so that what is kept beside one snapshot is only ever
    carried to a later snapshot of the same store (``outcomes.selections_for``).
    """

    def __init__(
        self,
        version: str,
        objects: Mapping[Key, cache_pb2.CacheObject],
        *,
        synced: bool,
        generation: int,
        previous: Snapshot | None = None,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        compiled: Mapping[Key, Any] | None = None,
    ) -> None:
        """A snapshot of ``objects`` (validated and defaulted), every object compiled (``compiled``:
        objects already compiled, as ``store.prepare_write`` compiles runtimes). A runtime whose
        chain no longer resolves keeps the last chain it had in ``previous``."""
        objects = dict(objects)
        done = compiled or {}
        compiled = {key: done[key] if key in done else _compile(key, obj) for key, obj in objects.items()}
        parts = _Parts(objects, compiled, {}, {}, {}, {}, {}, {}, {}, {}, {})
        for key, value in compiled.items():
            _index(parts, key, value)
        _resolve_all(parts, _lookup(previous))
        by_namespace: dict[str, list[d.Runtime]] = {}
        for (namespace, _), rt in parts.serving_runtimes.items():
            by_namespace.setdefault(namespace, []).append(rt)
        namespaced = {ns: RuntimeGroup.build(rts) for ns, rts in by_namespace.items()}
        cluster = RuntimeGroup.build(parts.cluster_serving_runtimes.values())
        lineage = previous.lineage if previous is not None else object()
        self._init(version, synced, generation, _shared(parts), namespaced, cluster, max_message_bytes, lineage)

    def _init(
        self,
        version: str,
        synced: bool,
        generation: int,
        parts: _Parts,
        namespaced: dict[str, RuntimeGroup],
        cluster: RuntimeGroup,
        max_message_bytes: int,
        lineage: object,
    ) -> None:
        self.version = version
        self.lineage = lineage
        self.max_message_bytes = max_message_bytes
        self.synced = synced
        self.generation = generation
        self.last_update = time.time() if generation > 0 else None
        self._parts = parts
        self.objects = parts.objects
        self.serving_runtimes = parts.serving_runtimes
        self.cluster_serving_runtimes = parts.cluster_serving_runtimes
        self.base_models = parts.base_models
        self.cluster_models = parts.cluster_models
        self.accelerator_classes = parts.accelerator_classes
        self.inference_services = parts.inference_services
        self.revisions = parts.revisions
        self.revisions_by_content = parts.revisions_by_content
        self.namespaced = namespaced
        self.cluster = cluster
        self.written: frozenset[Key] | None = None  # set by with_changes

    def stored_object(self, key: Key) -> cache_pb2.CacheObject | None:
        """The object cached under ``key`` as written (with the CRD defaults), a runtime with
        its spec; a new message, or None when nothing is cached under ``key``."""
        obj = self.objects.get(key)
        if obj is None:
            return None
        out = cache_pb2.CacheObject()
        out.CopyFrom(obj)
        if key[0] not in _RUNTIME_KINDS:
            return out
        runtime = _stored(self.serving_runtimes, self.cluster_serving_runtimes, key)
        if runtime is not None:
            getattr(out, KIND_TO_FIELD[key[0]]).spec.CopyFrom(runtime.spec)
        return out

    def with_changes(
        self,
        version: str,
        upserts: Mapping[Key, cache_pb2.CacheObject],
        deletes: Iterable[Key] = (),
        *,
        synced: bool,
        generation: int,
        compiled: Mapping[Key, Any] | None = None,
    ) -> Snapshot:
        """The next snapshot: this one with ``upserts`` (validated, defaulted objects) created or
        replaced and ``deletes`` removed (``compiled``: upserts already compiled, as in
        ``Snapshot``). Costs what the write carries plus a copy of the key tables, not a
        recompilation of the cache."""
        done = compiled or {}
        old = self._parts
        parts = _Parts(
            old.objects.mutate(),
            old.compiled.mutate(),
            old.serving_runtimes.mutate(),
            old.cluster_serving_runtimes.mutate(),
            old.base_models.mutate(),
            old.cluster_models.mutate(),
            dict(old.accelerator_classes),
            old.inference_services.mutate(),
            old.revisions.mutate(),
            dict(old.revisions_by_content),
            dict(old.parented),
        )
        changed: set[Key] = set()  # runtime keys the write carries
        for key in deletes:
            if key in parts.objects:
                del parts.objects[key], parts.compiled[key]
                _unindex(parts, key)
                if key[0] in _RUNTIME_KINDS:
                    changed.add(key)
        for key, obj in upserts.items():
            parts.objects[key] = obj
            value = parts.compiled[key] = done[key] if key in done else _compile(key, obj)
            _index(parts, key, value)
            if key[0] in _RUNTIME_KINDS:
                changed.add(key)
        if changed:
            changed |= _resolve_affected(parts, changed, _lookup(self))
        namespaced, cluster = dict(self.namespaced), self.cluster
        by_group: dict[str | None, tuple[list[d.Runtime], list[d.Runtime]]] = {}
        for key in changed:
            removed, added = by_group.setdefault(None if key[0] == d.CLUSTER_SERVING_RUNTIME else key[1], ([], []))
            before, after = (
                _stored(self.serving_runtimes, self.cluster_serving_runtimes, key),
                _stored(parts.serving_runtimes, parts.cluster_serving_runtimes, key),
            )
            if before is not None:
                removed.append(before)
            if after is not None:
                added.append(after)
        for group_name, (removed, added) in by_group.items():
            if group_name is None:
                cluster = cluster.changed(removed, added)
            else:
                updated = namespaced.get(group_name, EMPTY_GROUP).changed(removed, added)
                if len(updated):
                    namespaced[group_name] = updated
                else:
                    namespaced.pop(group_name, None)
        snapshot = Snapshot.__new__(Snapshot)
        snapshot._init(
            version, synced, generation, _shared(parts), namespaced, cluster, self.max_message_bytes, self.lineage
        )
        snapshot.written = frozenset(upserts).union(key for key in deletes if key in self.objects)
        return snapshot

    def walk(self, head: d.Runtime) -> ChainWalk:
        """OME's walk of ``head``'s inheritance chain in this snapshot (``walk_chain``; parents
        looked up as ``parent`` does)."""
        return walk_chain(head, lambda name: self.parent(head, name))

    def parent(self, head: d.Runtime, name: str) -> d.Runtime | None:
        """The runtime (as compiled) a parent name means in ``head``'s chain
        (runtime-inheritance.md, "Chain limits": a ClusterServingRuntime's parents are
        ClusterServingRuntimes; a ServingRuntime's are looked up in its namespace first, for the
        whole walk), or None."""
        return _parent(self._parts, head, name)

    def runtimes_with_parent(self) -> list[d.Runtime]:
        """The runtimes that name a parent (``ome.io/inherit-from``), as resolved: ServingRuntimes,
        then ClusterServingRuntimes; found from the ``parented`` keys, not by a pass over every
        runtime."""
        return _with_parent(self._parts)

    def runtimes_in_scope(self, namespace: str) -> tuple[RuntimeGroup, RuntimeGroup]:
        """(ServingRuntimes of ``namespace``, ClusterServingRuntimes), each a group in fetch order."""
        return self.namespaced.get(namespace, EMPTY_GROUP), self.cluster

    def counts(self) -> dict[str, int]:
        """Objects per kind."""
        parts = self._parts
        return {
            d.SERVING_RUNTIME: len(parts.serving_runtimes),
            d.CLUSTER_SERVING_RUNTIME: len(parts.cluster_serving_runtimes),
            d.BASE_MODEL: len(parts.base_models),
            d.CLUSTER_BASE_MODEL: len(parts.cluster_models),
            d.ACCELERATOR_CLASS: len(parts.accelerator_classes),
            d.INFERENCE_SERVICE: len(parts.inference_services),
            d.CONTROLLER_REVISION: len(parts.revisions),
        }

    def revisions_holding(self, namespace: str, owner: str, full_hash: str) -> tuple[d.Revision, ...]:
        """The revisions in ``namespace`` labelled ``ome.io/runtime-of: <owner>`` whose spec has
        ``full_hash``, by name: the revisions a roll forward to that spec can share."""
        names = self.revisions_by_content.get((namespace, owner, full_hash), ())
        return tuple(self.revisions[(namespace, name)] for name in names)


def _lookup(snapshot: Snapshot | None) -> Callable[[Key], d.Runtime | None]:
    """The resolved runtime stored under a key in ``snapshot`` (None without one)."""
    if snapshot is None:
        return lambda key: None
    return lambda key: _stored(snapshot.serving_runtimes, snapshot.cluster_serving_runtimes, key)


def fields_but_spec(runtime: Message) -> list[tuple[FieldDescriptor, Any]]:
    """``ListFields()`` of a ServingRuntime or ClusterServingRuntime message without ``spec``:
    what a stored runtime object keeps (``store.prepare_write``)."""
    return [(fd, value) for fd, value in runtime.ListFields() if fd.name != "spec"]


def _stored(
    serving: Mapping[tuple[str, str], d.Runtime], cluster: Mapping[str, d.Runtime], key: Key
) -> d.Runtime | None:
    """The (resolved) runtime stored under ``key``, or None."""
    return cluster.get(key[2]) if key[0] == d.CLUSTER_SERVING_RUNTIME else serving.get((key[1], key[2]))


def _compile(key: Key, obj: cache_pb2.CacheObject) -> Any:
    unwrapped = unwrap(obj)
    assert unwrapped is not None
    kind, message = unwrapped
    if kind in _RUNTIME_KINDS:
        return compile_runtime(kind, message)  # type: ignore[arg-type]
    if kind in (d.BASE_MODEL, d.CLUSTER_BASE_MODEL):
        return compile_model(kind, key[1], key[2], message.spec)  # type: ignore[attr-defined]
    if kind == d.CONTROLLER_REVISION:
        return compile_revision(message)  # type: ignore[arg-type]
    return message


def _content_key(revision: d.Revision) -> ContentKey:
    return (revision.namespace, revision.owner_name, revision.full_hash)


def _index(parts: _Parts, key: Key, value: Any) -> None:
    kind = key[0]
    if kind in _RUNTIME_KINDS:
        if value.parent is not None:
            parts.parented[key] = None
        else:
            parts.parented.pop(key, None)
    if kind == d.SERVING_RUNTIME:
        parts.serving_runtimes[(key[1], key[2])] = value
    elif kind == d.CLUSTER_SERVING_RUNTIME:
        parts.cluster_serving_runtimes[key[2]] = value
    elif kind == d.BASE_MODEL:
        parts.base_models[(key[1], key[2])] = value
    elif kind == d.CLUSTER_BASE_MODEL:
        parts.cluster_models[key[2]] = value
    elif kind == d.INFERENCE_SERVICE:
        parts.inference_services[(key[1], key[2])] = value
    elif kind == d.CONTROLLER_REVISION:
        replaced = parts.revisions.get((key[1], key[2]))
        if replaced is not None:
            _unindex_content(parts, replaced)
        parts.revisions[(key[1], key[2])] = value
        content = _content_key(value)
        parts.revisions_by_content[content] = tuple(sorted((*parts.revisions_by_content.get(content, ()), key[2])))
    else:
        parts.accelerator_classes[key[2]] = value


def _unindex_content(parts: _Parts, revision: d.Revision) -> None:
    content = _content_key(revision)
    names = tuple(n for n in parts.revisions_by_content.get(content, ()) if n != revision.name)
    if names:
        parts.revisions_by_content[content] = names
    else:
        parts.revisions_by_content.pop(content, None)


def _unindex(parts: _Parts, key: Key) -> Any:
    """Remove ``key`` from the per-kind table and return what was stored there."""
    kind = key[0]
    parts.parented.pop(key, None)
    if kind == d.SERVING_RUNTIME:
        return parts.serving_runtimes.pop((key[1], key[2]), None)
    if kind == d.CLUSTER_SERVING_RUNTIME:
        return parts.cluster_serving_runtimes.pop(key[2], None)
    if kind == d.BASE_MODEL:
        return parts.base_models.pop((key[1], key[2]), None)
    if kind == d.CLUSTER_BASE_MODEL:
        return parts.cluster_models.pop(key[2], None)
    if kind == d.INFERENCE_SERVICE:
        return parts.inference_services.pop((key[1], key[2]), None)
    if kind == d.CONTROLLER_REVISION:
        revision = parts.revisions.pop((key[1], key[2]), None)
        if revision is not None:
            _unindex_content(parts, revision)
        return revision
    return parts.accelerator_classes.pop(key[2], None)


def _store_runtime(parts: _Parts, rt: d.Runtime) -> None:
    if rt.kind == d.SERVING_RUNTIME:
        parts.serving_runtimes[(rt.namespace, rt.name)] = rt
    else:
        parts.cluster_serving_runtimes[rt.name] = rt


def _with_parent(parts: _Parts) -> list[d.Runtime]:
    """The runtimes that name a parent: ServingRuntimes, then ClusterServingRuntimes."""
    namespaced = [parts.serving_runtimes[(k[1], k[2])] for k in parts.parented if k[0] == d.SERVING_RUNTIME]
    return namespaced + [parts.cluster_serving_runtimes[k[2]] for k in parts.parented if k[0] != d.SERVING_RUNTIME]


Previous = Callable[[Key], "d.Runtime | None"]


def _resolve_all(parts: _Parts, previous: Previous) -> None:
    """Resolve the chain of every runtime that names a parent."""
    for rt in [_resolve_inheritance(parts, rt, previous) for rt in _with_parent(parts)]:
        _store_runtime(parts, rt)


def _resolve_affected(parts: _Parts, changed: set[Key], previous: Previous) -> set[Key]:
    """Resolve again every runtime with a parent whose chain can reach a changed runtime: the
    changed ones themselves, and those whose chain, parent or chain error names a changed runtime
    (a new parent can mend a broken chain). Returns the keys of the runtimes stored anew."""
    names = {key[2] for key in changed}
    out: set[Key] = set()
    for rt in _with_parent(parts):
        if chain_can_reach(rt, changed, names):
            _store_runtime(parts, _resolve_inheritance(parts, parts.compiled[rt.key], previous))
            out.add(rt.key)
    return out


def _parent(parts: _Parts, head: d.Runtime, name: str) -> d.Runtime | None:
    """runtime-inheritance.md: a ClusterServingRuntime's parents are ClusterServingRuntimes; a
    ServingRuntime's are looked up in its namespace first, for the whole walk. The parent is read
    as compiled (its own spec), never as resolved."""
    if head.kind == d.SERVING_RUNTIME:
        found = parts.compiled.get((d.SERVING_RUNTIME, head.namespace, name))
        if found is not None:
            return found  # type: ignore[no-any-return]
    return parts.compiled.get((d.CLUSTER_SERVING_RUNTIME, "", name))  # type: ignore[no-any-return]


def _resolve_inheritance(parts: _Parts, head: d.Runtime, previous: Previous) -> d.Runtime:
    """A copy of ``head`` (as compiled) with its chain (root first) and merged spec, or its chain
    error (runtime-inheritance.md, "Chain limits"); a broken chain keeps ``last_chain`` from the
    runtime ``previous`` held under the key, else from the object's status ("When a chain
    breaks": ``inheritanceChain`` keeps the last chain that resolved)."""
    walk = walk_chain(head, lambda name: _parent(parts, head, name))
    if walk.reason is not None:
        before = previous(head.key)
        last = (before.status_chain if before is not None else ()) or head.last_chain
        return dataclasses.replace(head, inheritance_error=walk.error, inheritance_reason=walk.reason, last_chain=last)
    members = walk.members
    merged = members[-1].spec
    for child in reversed(members[:-1]):
        merged = merge_specs(merged, child.spec)  # type: ignore[assignment]
    resolved = tuple(rt.name for rt in reversed(members))
    return dataclasses.replace(
        head,
        effective=compile_spec(merged),
        merged_spec=merged,
        chain=resolved,
        chain_keys=tuple(m.key for m in reversed(members)),
        last_chain=resolved,
    )
