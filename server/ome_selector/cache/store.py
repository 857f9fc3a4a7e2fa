"""The cache store: validated, all-or-nothing writes that swap in a new immutable Snapshot.

Every write validates the whole request first; any violation raises ``RequestError``
(INVALID_ARGUMENT) naming each bad object and field, and the current snapshot stays exactly as
it was. Readers take ``store.snapshot`` once per request.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import threading
from collections.abc import Callable, Iterator, Sequence

from google.protobuf.timestamp_pb2 import Timestamp
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.cache.ingest import apply_defaults, compile_runtime
from ome_selector.cache.snapshot import Snapshot, fields_but_spec
from ome_selector.cache.specs import SHARED, Lookup, SharedSpecs
from ome_selector.cache.wire_objects import WireRuntime
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.answers import DEFAULT_MAX_MESSAGE_BYTES
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.texts import requests
from ome_selector.validation import (
    ENUM_TO_KIND,
    KIND_TO_ENUM,
    NAMESPACED,
    Key,
    object_key,
    validate_name,
    validate_object,
)

Listener = Callable[[Snapshot], None]

# Objects in one ApplySnapshot at most (--max-objects, the bound of a manifest load too).
DEFAULT_MAX_OBJECTS = 100_000
# Objects in one UpsertObjects, keys in one DeleteObjects, at most (--max-write-objects).
DEFAULT_MAX_WRITE_OBJECTS = 10_000


def _count_bound(field: str, count: int, limit: int, flag: str) -> list[FieldViolation]:
    """``<field>: Too many: <count>: must have at most <limit> items (the server's <flag>)``,
    when ``count`` passes ``limit``."""
    return [FieldViolation(field, f"{errors.too_many(count, limit)} (the server's {flag})")] if count > limit else []


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """The cyclic garbage collector off while the block runs, and on again after it, however it
    ends (left off when it was off before). A whole snapshot allocates millions of objects that
    all stay; the collections those allocations set off would walk them again and again (at
    50,000 runtimes about a tenth of an ApplySnapshot) and free nothing."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclasses.dataclass(frozen=True, slots=True)
class Prepared:
    """The objects of a write, validated, unique by key and defaulted (``prepare_write``), and
    the runtimes among them compiled (``ingest.compile_runtime``; each spec compiled once,
    ``cache.specs``). A runtime's object holds everything but its spec, which is the compiled
    runtime's ``spec`` (shared by every runtime with an equal spec)."""

    objects: dict[Key, cache_pb2.CacheObject]
    runtimes: dict[Key, d.Runtime]


_RUNTIME_FIELDS = {"serving_runtime": d.SERVING_RUNTIME, "cluster_serving_runtime": d.CLUSTER_SERVING_RUNTIME}


def prepare_write(
    objects: Sequence[cache_pb2.CacheObject | WireRuntime],
    field: str = "objects",
    shared: SharedSpecs = SHARED,
) -> Prepared:
    """The objects of a write, validated (``validation.validate_object``, paths ``<field>[i]...``;
    a runtime's spec found in ``shared`` is not checked again), unique by key and defaulted
    (``ingest.apply_defaults``), with the runtimes compiled; raises ``RequestError``
    (INVALID_ARGUMENT) with every violation.

    The prepared objects are new messages, never ``objects`` themselves or parts of them: a
    decoded request's messages all live in one block of memory that a single kept part would
    keep whole. A runtime's object is stored without its spec (``_without_spec``); its
    defaulted spec is ``shared``'s (``Runtime.spec``). A ``WireRuntime`` (an ApplySnapshot read
    from its bytes, ``cache.wire_objects``) whose spec ``shared`` holds is stored as decoded
    without its spec; any other is decoded whole and goes the same way as a message."""
    violations: list[FieldViolation] = []
    prepared: dict[Key, cache_pb2.CacheObject] = {}
    runtimes: dict[Key, d.Runtime] = {}
    first_index: dict[Key, int] = {}
    for i, item in enumerate(objects):
        if isinstance(item, WireRuntime):
            known = shared.known(item.spec)
            if known is not None:
                _prepare_known(
                    item, known, shared.spec_size(item.spec), field, i, prepared, runtimes, first_index, violations
                )
                continue
            obj = item.decoded()
            which = item.which
            kind: str | None = _RUNTIME_FIELDS[which]
            lookup: Lookup | None = shared.find(getattr(obj, which).spec, bytes(item.spec))
        else:
            obj = item
            which = obj.WhichOneof("object") or ""
            kind = _RUNTIME_FIELDS.get(which)
            lookup = None if kind is None else shared.find(getattr(obj, which).spec)
        found = validate_object(obj, f"{field}[{i}].", spec_checked=lookup is not None and lookup.checked)
        if found:
            violations += found
            continue
        key: Key
        if kind is None:
            key = object_key(obj)
        else:
            meta = getattr(obj, which).metadata
            key = (kind, meta.namespace if kind == d.SERVING_RUNTIME else "", meta.name)
        if _duplicate(key, i, field, first_index, violations):
            continue
        if kind is None or lookup is None:
            prepared[key] = apply_defaults(obj)
            continue
        if isinstance(item, WireRuntime):  # decoded here: its spec is no one else's
            spec, own = shared.shared(lookup, getattr(obj, which).spec)
            slim = prepared[key] = item.slim
        else:
            spec, own = shared.shared(lookup)
            slim = prepared[key] = _without_spec(obj, which)
        runtimes[key] = compile_runtime(kind, getattr(slim, which), own, spec)
    if violations:
        raise RequestError.invalid(violations)
    return Prepared(prepared, runtimes)


def _duplicate(key: Key, i: int, field: str, first_index: dict[Key, int], violations: list[FieldViolation]) -> bool:
    """Whether ``key`` came before ``<field>[i]`` in the write (then a violation is added), else
    remember ``i`` as its first index."""
    first = first_index.get(key)
    if first is not None:
        violations.append(FieldViolation(f"{field}[{i}]", requests.duplicate_object(key, f"{field}[{first}]")))
        return True
    first_index[key] = i
    return False


def _prepare_known(
    item: WireRuntime,
    known: tuple[types_pb2.ServingRuntimeSpec, d.Compiled],
    spec_size: int,
    field: str,
    i: int,
    prepared: dict[Key, cache_pb2.CacheObject],
    runtimes: dict[Key, d.Runtime],
    first_index: dict[Key, int],
    violations: list[FieldViolation],
) -> None:
    """``prepare_write``'s step for a runtime read from the wire whose spec the tables hold
    (``known``: the defaulted spec and its compiled form; ``spec_size``: the spec's decoded
    ``ByteSize()``): the object's own fields validated (the object's size counts the spec), the
    slim object stored, the runtime compiled on the shared spec."""
    slim = item.slim
    found = validate_object(slim, f"{field}[{i}].", spec_checked=True, size=item.byte_size(spec_size))
    if found:
        violations += found
        return
    kind = _RUNTIME_FIELDS[item.which]
    runtime = getattr(slim, item.which)
    meta = runtime.metadata
    key = (kind, meta.namespace if kind == d.SERVING_RUNTIME else "", meta.name)
    if _duplicate(key, i, field, first_index, violations):
        return
    spec, own = known
    prepared[key] = slim
    runtimes[key] = compile_runtime(kind, runtime, own, spec)


def _without_spec(obj: cache_pb2.CacheObject, which: str) -> cache_pb2.CacheObject:
    """A new CacheObject with the runtime ``obj.<which>`` but for its spec (``fields_but_spec``)."""
    out = cache_pb2.CacheObject()
    target = getattr(out, which)
    for fd, value in fields_but_spec(getattr(obj, which)):
        if fd.message_type is None:
            setattr(target, fd.name, value)
        else:
            getattr(target, fd.name).CopyFrom(value)
    return out


def resolve_keys(keys: Sequence[cache_pb2.ObjectKey], field: str = "keys") -> tuple[list[Key], list[FieldViolation]]:
    """The keys of a delete, each checked (kind, name, namespace as the kind needs) and unique;
    returns (keys, violations with paths ``<field>[i]...``)."""
    violations: list[FieldViolation] = []
    resolved: list[Key] = []
    first_index: dict[Key, int] = {}
    for i, key in enumerate(keys):
        k, found = _key_of(key, f"{field}[{i}]")
        violations += found
        if k is not None and not found:
            if k in first_index:
                violations.append(FieldViolation(f"{field}[{i}]", requests.duplicate_key(f"{field}[{first_index[k]}]")))
            first_index.setdefault(k, i)
            resolved.append(k)
    return resolved, violations


def _key_of(key: cache_pb2.ObjectKey, path: str) -> tuple[Key | None, list[FieldViolation]]:
    kind = ENUM_TO_KIND.get(key.kind)
    if kind is None:
        problem = (
            errors.required() if key.kind == cache_pb2.OBJECT_KIND_UNSPECIFIED else requests.unknown_kind(key.kind)
        )
        return None, [FieldViolation(f"{path}.kind", problem)]
    violations = validate_name(key.name, f"{path}.name")
    if kind in NAMESPACED:
        violations += validate_name(key.namespace, f"{path}.namespace", "namespace")
    elif key.namespace:
        violations.append(FieldViolation(f"{path}.namespace", requests.cluster_scoped(kind)))
    return (kind, key.namespace if kind in NAMESPACED else "", key.name), violations


class CacheStore:
    """Holds the current Snapshot; writes are serialised and swap atomically. ``max_objects``
    bounds the objects of an ApplySnapshot, ``max_write_objects`` those of an UpsertObjects
    and the keys of a DeleteObjects (a write past them is INVALID_ARGUMENT and changes nothing)."""

    def __init__(
        self,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
        *,
        max_objects: int = DEFAULT_MAX_OBJECTS,
        max_write_objects: int = DEFAULT_MAX_WRITE_OBJECTS,
    ) -> None:
        """``max_message_bytes``: the cap on the ``no runtime found`` message in answers read from
        this store's snapshots (``domain.answers``; 0 = no cap); ``max_objects``: objects of one
        ApplySnapshot; ``max_write_objects``: objects of one UpsertObjects, keys of one DeleteObjects."""
        if max_message_bytes < 0:
            raise ValueError(f"max_message_bytes must be 0 or more, got {max_message_bytes}")
        self.max_message_bytes = max_message_bytes
        self.max_objects = max_objects
        self.max_write_objects = max_write_objects
        self._snapshot = Snapshot("", {}, synced=False, generation=0, max_message_bytes=max_message_bytes)
        self._base_version = ""
        self._lock = threading.Lock()
        self._listeners: list[Listener] = []

    @property
    def snapshot(self) -> Snapshot:
        """The current immutable snapshot."""
        return self._snapshot

    def add_listener(self, callback: Listener) -> None:
        """Call ``callback(snapshot)`` after every successful write, in write order, inside the
        write (a listener must be quick)."""
        self._listeners.append(callback)

    def remove_listener(self, callback: Listener) -> None:
        """Stop calling ``callback`` (no error when it is not a listener)."""
        with self._lock:
            self._listeners = [c for c in self._listeners if c != callback]

    def _swap(self, new: Snapshot) -> cache_pb2.CacheStatus:
        self._snapshot = new
        for callback in self._listeners:
            callback(new)
        return self.status()

    def _version(self, version: str, generation: int) -> str:
        """``version``, or ``<last version the controller chose>+<generation>`` when empty."""
        if version:
            self._base_version = version
            return version
        return f"{self._base_version or 'unversioned'}+{generation}"

    def apply_snapshot(
        self, version: str, objects: Sequence[cache_pb2.CacheObject | WireRuntime]
    ) -> cache_pb2.CacheStatus:
        """Replace the whole cache. ``version`` (opaque, chosen by the controller) is required;
        ``objects`` may be read from the request's bytes (``cache.wire_objects``)."""
        with self._lock:
            violations = (
                bounds.cache_version(version, "version") if version else [FieldViolation("version", errors.required())]
            )
            too_many = _count_bound("objects", len(objects), self.max_objects, "--max-objects")
            if too_many:
                raise RequestError.invalid(violations + too_many)
            old = self._snapshot
            with gc_paused():
                try:
                    prepared = prepare_write(objects)
                except RequestError as err:
                    raise RequestError.invalid(violations + err.violations) from None
                if violations:
                    raise RequestError.invalid(violations)
                snapshot = Snapshot(
                    version,
                    prepared.objects,
                    synced=True,
                    generation=old.generation + 1,
                    previous=old,
                    max_message_bytes=self.max_message_bytes,
                    compiled=prepared.runtimes,
                )
            self._base_version = version
            return self._swap(snapshot)

    def upsert(self, version: str, objects: Sequence[cache_pb2.CacheObject]) -> cache_pb2.CacheStatus:
        """Create or replace ``objects`` (all or nothing). An empty version derives
        ``<previous>+<generation>``."""
        with self._lock:
            violations = bounds.cache_version(version, "version")
            if not objects:
                violations.append(FieldViolation("objects", requests.NO_OBJECTS))
            violations += _count_bound("objects", len(objects), self.max_write_objects, "--max-write-objects")
            if violations:
                raise RequestError.invalid(violations)
            prepared = prepare_write(objects)
            old = self._snapshot
            generation = old.generation + 1
            return self._swap(
                old.with_changes(
                    self._version(version, generation),
                    prepared.objects,
                    synced=old.synced,
                    generation=generation,
                    compiled=prepared.runtimes,
                )
            )

    def delete(
        self, version: str, keys: Sequence[cache_pb2.ObjectKey]
    ) -> tuple[cache_pb2.CacheStatus, list[cache_pb2.ObjectKey]]:
        """Delete ``keys`` (all or nothing); returns the status and the keys that were not cached."""
        with self._lock:
            violations = bounds.cache_version(version, "version")
            if not keys:
                violations.append(FieldViolation("keys", requests.NO_KEYS))
            too_many = _count_bound("keys", len(keys), self.max_write_objects, "--max-write-objects")
            if too_many:
                raise RequestError.invalid(violations + too_many)
            resolved, found = resolve_keys(keys)
            violations += found
            if violations:
                raise RequestError.invalid(violations)
            old = self._snapshot
            missing = [key for k, key in zip(resolved, keys) if k not in old.objects]
            if len(missing) == len(keys):  # nothing to delete: the cache stays exactly as it was
                return self.status(), missing
            generation = old.generation + 1
            status = self._swap(
                old.with_changes(
                    self._version(version, generation), {}, resolved, synced=old.synced, generation=generation
                )
            )
            return status, missing

    def status(self) -> cache_pb2.CacheStatus:
        """Version, sync state, generation, counts per kind and last update of the snapshot."""
        snap = self._snapshot
        status = cache_pb2.CacheStatus(version=snap.version, synced=snap.synced, generation=snap.generation)
        for kind, count in snap.counts().items():
            status.counts.add(kind=KIND_TO_ENUM[kind], count=count)
        if snap.last_update is not None:
            ts = Timestamp()
            ts.FromNanoseconds(int(snap.last_update * 1e9))
            status.last_update.CopyFrom(ts)
        return status
