"""One object of a cache write described as the cause of a change, in one line of the fields the
selection reads: ``ClusterServingRuntime vllm-llama: priority 2 → 4`` (README "Watch selections
and preview a change"). Texts in messages.py. Pure Python, no gRPC.

Runtimes: ``disabled``, ``acceleratorClasses``, the engine and decoder modes
(``engineConfig`` / ``decoderConfig`` ``ome.io/deploymentMode``), ``modelSizeRange``,
``ome.io/inherit-from`` and, per ``supportedModelFormats`` entry, ``modelFormat``,
``modelFramework``, ``modelArchitecture``, ``quantization``, ``autoSelect`` and ``priority`` (the
entry index is named when the runtime has more than one entry); a different number of entries is
one change. Models: ``modelFormat``, ``modelFramework``, ``modelArchitecture``, ``quantization``,
``modelParameterSize``, ``disabled``. AcceleratorClasses and InferenceServices: the ``spec``
fields (camelCase) and labels that differ. Runtime revisions: ``metadata.labels`` (the runtime
they belong to) and ``data`` (the spec they hold).
"""

from __future__ import annotations

from google.protobuf.message import Message

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.texts import messages
from ome_selector.validation import Key


def _spec_text(spec: d.Spec | None) -> str | None:
    """``safetensors 1.0.0`` (name, then version and a non-default operator and weight)."""
    if spec is None:
        return None
    parts = [spec.name]
    if spec.version is not None:
        parts.append(spec.version)
    if spec.operator not in (None, "Equal"):
        parts.append(spec.operator)  # type: ignore[arg-type]
    if spec.weight != 1:
        parts.append(f"weight {spec.weight}")
    return " ".join(parts)


def _entry_fields(entry: d.Entry) -> dict[str, object]:
    return {
        "modelFormat": _spec_text(entry.model_format),
        "modelFramework": _spec_text(entry.model_framework),
        "modelArchitecture": entry.architecture,
        "quantization": entry.quantization,
        "autoSelect": entry.auto_select,
        "priority": entry.priority,
    }


def _runtime_changes(old: d.Runtime, new: d.Runtime) -> list[str]:
    a, b = old.own, new.own
    out = []
    for field, before, after in (
        ("disabled", a.disabled, b.disabled),
        ("acceleratorClasses", messages.go_list(a.classes), messages.go_list(b.classes)),
        ("engine deploymentMode", a.engine_mode, b.engine_mode),
        ("decoder deploymentMode", a.decoder_mode, b.decoder_mode),
        ("modelSizeRange", a.size_range.label if a.size_range else None, b.size_range.label if b.size_range else None),
        ("inherit-from", old.parent, new.parent),
    ):
        if before != after:
            out.append(messages.field_change(field, before, after))
    if len(a.entries) != len(b.entries):
        out.append(messages.ENTRY_COUNT.format(before=len(a.entries), after=len(b.entries)))
        return out
    for i, (x, y) in enumerate(zip(a.entries, b.entries)):
        prefix = f"supportedModelFormats[{i}]." if len(a.entries) > 1 else ""
        fx, fy = _entry_fields(x), _entry_fields(y)
        out += [messages.field_change(prefix + field, fx[field], fy[field]) for field in fx if fx[field] != fy[field]]
    return out


def _model_changes(old: d.Model, new: d.Model) -> list[str]:
    out = []
    for field, before, after in (
        (
            "modelFormat",
            _spec_text(old.model_format if old.model_format.name else None),
            _spec_text(new.model_format if new.model_format.name else None),
        ),
        ("modelFramework", _spec_text(old.model_framework), _spec_text(new.model_framework)),
        ("modelArchitecture", old.architecture, new.architecture),
        ("quantization", old.quantization, new.quantization),
        ("modelParameterSize", old.size_text, new.size_text),
        ("disabled", old.disabled, new.disabled),
    ):
        if before != after:
            out.append(messages.field_change(field, before, after))
    return out


def _message_changes(old: Message, new: Message) -> list[str]:
    """The ``spec`` fields (and labels) that differ, by JSON name."""
    names = []
    if old.metadata.labels != new.metadata.labels:  # type: ignore[attr-defined]
        names.append("metadata.labels")
    old_spec, new_spec = old.spec, new.spec  # type: ignore[attr-defined]
    for fd in old_spec.DESCRIPTOR.fields:
        if getattr(old_spec, fd.name) != getattr(new_spec, fd.name):
            names.append(fd.json_name)
    return [messages.FIELDS_CHANGED.format(fields=", ".join(names))] if names else []


def _compiled(snapshot: Snapshot, key: Key) -> object:
    kind, namespace, name = key
    if kind == d.SERVING_RUNTIME:
        return snapshot.serving_runtimes.get((namespace, name))
    if kind == d.CLUSTER_SERVING_RUNTIME:
        return snapshot.cluster_serving_runtimes.get(name)
    if kind == d.BASE_MODEL:
        return snapshot.base_models.get((namespace, name))
    if kind == d.CLUSTER_BASE_MODEL:
        return snapshot.cluster_models.get(name)
    if kind == d.INFERENCE_SERVICE:
        return snapshot.inference_services.get((namespace, name))
    if kind == d.CONTROLLER_REVISION:
        return snapshot.revisions.get((namespace, name))
    return snapshot.accelerator_classes.get(name)


def _revision_changes(old: d.Revision, new: d.Revision) -> list[str]:
    """A revision's runtime labels (``metadata.labels``) and the spec it holds (``data``)."""
    names = []
    if (old.owner_kind, old.owner_namespace, old.owner_name) != (new.owner_kind, new.owner_namespace, new.owner_name):
        names.append("metadata.labels")
    if old.full_hash != new.full_hash:
        names.append("data")
    return [messages.FIELDS_CHANGED.format(fields=", ".join(names))] if names else []


def object_name(key: Key) -> str:
    """``<Kind> <name>`` or ``<Kind> <namespace>/<name>``."""
    kind, namespace, name = key
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def describe(old: Snapshot, new: Snapshot, key: Key) -> str:
    """The object ``key`` of a write from ``old`` to ``new`` as one line: ``created``,
    ``deleted``, or each field the selection reads that changed (see the module docstring)."""
    before, after = _compiled(old, key), _compiled(new, key)
    if before is None:
        return messages.cause(object_name(key), [messages.CAUSE_CREATED])
    if after is None:
        return messages.cause(object_name(key), [messages.CAUSE_DELETED])
    if isinstance(before, d.Runtime) and isinstance(after, d.Runtime):
        return messages.cause(object_name(key), _runtime_changes(before, after))
    if isinstance(before, d.Model) and isinstance(after, d.Model):
        return messages.cause(object_name(key), _model_changes(before, after))
    if isinstance(before, d.Revision) and isinstance(after, d.Revision):
        return messages.cause(object_name(key), _revision_changes(before, after))
    assert isinstance(before, Message) and isinstance(after, Message)
    return messages.cause(object_name(key), _message_changes(before, after))
