"""Runtime specs by content: what a cache write learns of a ServingRuntimeSpec once, shared by
every runtime object that carries the same spec (a cluster of 10,000 runtimes holds a few hundred
distinct specs, and a controller's resync sends the same ones again).

A spec found here has passed the spec checks of ``validation.validate_object`` (bounds, the
CRD-required entry fields, the scaling enums), so a write checks only the object's own fields
again. The spec with the CRD defaults (``ingest.apply_defaults``; a message of the tables' own,
never the writer's) and its ``ingest.compile_spec`` are shared by identity: every cached
runtime with that spec holds these two (``Runtime.spec``, ``Runtime.own``), and nothing may
change them. At 10,000 runtimes of a few hundred distinct specs that is a few hundred decoded
specs instead of 10,000 (a decoded spec of OME's catalog is about 6 times its 1.6 KB of bytes).

- Keys are the spec's serialized bytes as the writer sent it (before the CRD defaults): equal
  bytes are equal specs; a spec serialized another way is a miss, never a wrong hit.
- Specs that differ only in their entries' ``priority`` share a template (the spec with every
  priority cleared). A priority is read by one check only (at least 1 when set) and compiles
  into ``Entry.priority`` only, so a template's verdict plus that check is the spec's verdict,
  and its compiled spec with each entry's priority replaced is the spec's.
- Only valid specs are held. The tables hold at most ``MAX_TABLE_BYTES`` (8 MiB) of keys and
  the specs they decode to (about 6 times as much); a new spec when they are full starts them
  afresh (the next writes check and compile again; the runtimes cached keep theirs).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import cast

from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import SpecDefaults, compile_spec, set_spec_defaults, spec_defaults
from ome_selector.domain import objects as d

_ServingRuntimeSpec = types_pb2.ServingRuntimeSpec
MAX_TABLE_BYTES = 8 * 1024 * 1024


@dataclasses.dataclass(slots=True)
class Lookup:
    """What the tables know of one spec: ``checked`` when it passes the spec checks (no need to
    run them); ``shared`` when its defaulted spec and compiled form are known; ``defaults``:
    what ``ingest.apply_defaults`` sets in it; ``raw`` (its serialized bytes), ``template`` (the
    template's key, None when not needed) and ``template_compiled`` for ``shared``."""

    raw: bytes
    checked: bool
    shared: tuple[types_pb2.ServingRuntimeSpec, d.Compiled] | None
    defaults: SpecDefaults
    template: bytes | None = None
    template_compiled: d.Compiled | None = None


class SharedSpecs:
    """The tables (see the module docstring). ``find`` before validation, ``compiled`` after
    the defaults; safe to use from several threads. ``max_bytes``: the keys' bytes at most."""

    def __init__(self, max_bytes: int = MAX_TABLE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._by_bytes: dict[bytes, tuple[types_pb2.ServingRuntimeSpec, d.Compiled]] = {}
        self._templates: dict[bytes, d.Compiled] = {}
        # Key -> its spec's decoded ``ByteSize()`` before the defaults, for the keys where that
        # is not the key's length (bytes in another encoding than this decoder's).
        self._sizes: dict[bytes, int] = {}
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._by_bytes)

    def known(self, raw: bytes | memoryview) -> tuple[types_pb2.ServingRuntimeSpec, d.Compiled] | None:
        """(the defaulted spec, its compiled form) of the spec serialized as ``raw`` when the
        tables hold it (it passed the spec checks), else None."""
        return self._by_bytes.get(cast(bytes, raw))  # a memoryview hashes and compares as its bytes

    def spec_size(self, raw: bytes | memoryview) -> int:
        """``ByteSize()`` of the spec ``raw`` decodes to, before the defaults, for a key the
        tables hold (``known``)."""
        return self._sizes.get(cast(bytes, raw), len(raw))

    def find(self, spec: types_pb2.ServingRuntimeSpec, raw: bytes | None = None) -> Lookup:
        """What is known of ``spec`` (as the writer sent it, before defaults); ``raw``: its
        bytes as they came on the wire, when known (else serialized here)."""
        if raw is None:
            raw = spec.SerializeToString()
        found = self._by_bytes.get(raw)
        if found is not None:
            return Lookup(raw, True, found, ())
        template = _template_key(raw)
        shared = self._templates.get(template)
        checked = shared is not None and all(
            e.priority >= 1 for e in spec.supported_model_formats if e.HasField("priority")
        )
        return Lookup(raw, checked, None, spec_defaults(spec), template, shared if checked else None)

    def shared(
        self, lookup: Lookup, adopt: types_pb2.ServingRuntimeSpec | None = None
    ) -> tuple[types_pb2.ServingRuntimeSpec, d.Compiled]:
        """(the looked-up spec with the CRD defaults, its compiled form), for a spec that passed
        the spec checks: the same two objects for every equal spec, remembered for the next ones.
        Neither may be changed. ``adopt``: the spec decoded from ``lookup.raw`` by the caller,
        a message no one else holds (not part of a request), taken as the tables' own and given
        the defaults, instead of decoding it again."""
        if lookup.shared is not None:
            return lookup.shared
        spec = adopt if adopt is not None else _ServingRuntimeSpec.FromString(lookup.raw)
        size = spec.ByteSize()
        set_spec_defaults(spec, lookup.defaults)
        if lookup.template_compiled is not None:
            compiled = _with_priorities(lookup.template_compiled, spec)
        else:
            compiled = compile_spec(spec)
        out = (spec, compiled)
        with self._lock:
            added = len(lookup.raw) + (0 if lookup.template is None else len(lookup.template))
            if self._bytes + added > self.max_bytes:
                self._by_bytes.clear()
                self._templates.clear()
                self._sizes.clear()
                self._bytes = 0
            self._by_bytes[lookup.raw] = out
            if size != len(lookup.raw):
                self._sizes[lookup.raw] = size
            self._bytes += len(lookup.raw)
            if lookup.template is not None and lookup.template not in self._templates:
                self._templates[lookup.template] = compiled
                self._bytes += len(lookup.template)
        lookup.shared = out
        return out

    @property
    def size(self) -> int:
        """Bytes of keys held."""
        return self._bytes

    def clear(self) -> None:
        """Forget every spec."""
        with self._lock:
            self._by_bytes.clear()
            self._templates.clear()
            self._sizes.clear()
            self._bytes = 0


def _template_key(raw: bytes) -> bytes:
    """The serialized bytes of the spec ``raw`` with every entry's ``priority`` cleared."""
    spec = _ServingRuntimeSpec.FromString(raw)
    for entry in spec.supported_model_formats:
        entry.ClearField("priority")
    return spec.SerializeToString()


def _with_priorities(template: d.Compiled, spec: types_pb2.ServingRuntimeSpec) -> d.Compiled:
    """``template`` (the compiled form of a spec equal to ``spec`` but for its priorities) with
    each entry's priority read from ``spec``."""
    entries = []
    changed = False
    for entry, e in zip(template.entries, spec.supported_model_formats, strict=True):
        priority = e.priority if e.HasField("priority") else None
        if priority != entry.priority:
            changed = True
            entry = d.Entry(
                index=entry.index,
                model_format=entry.model_format,
                model_framework=entry.model_framework,
                architecture=entry.architecture,
                quantization=entry.quantization,
                pipeline=entry.pipeline,
                auto_select=entry.auto_select,
                priority=priority,
            )
        entries.append(entry)
    if not changed:
        return template
    fields = {name: getattr(template, name) for name in _COMPILED_FIELDS}
    fields["entries"] = tuple(entries)
    return d.Compiled(**fields)


_COMPILED_FIELDS = tuple(f.name for f in dataclasses.fields(d.Compiled))


# The server's tables: every store's writes share them (keys are content, so sharing is safe).
SHARED = SharedSpecs()
