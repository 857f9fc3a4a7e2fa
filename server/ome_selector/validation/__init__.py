"""Validation of every input, in one place: each RPC's decode and every cache write call this
package, so one input gets the same verdict everywhere. Violations are ``FieldViolation``s with
proto field paths (``texts/fieldpaths.py`` gives the manifest's camelCase). The names are
``names.py``'s, ``bounds.py``'s, ``objects.py``'s, ``selection.py``'s and ``revision_gc.py``'s,
all importable from here.

- Cache objects: ``validate_object`` (kind, names, namespaces, metadata, bounds, CRD enums and
  required fields), ``validate_spec`` (the bounds under any spec), ``isvc_spec_violations``,
  ``model_spec_violations``, ``runtime_spec_violations``; the kinds a CacheObject holds.
- Requests: ``inference_service`` and ``model_spec`` (what a selection request carries).

Bounds: the API server's limits on Kubernetes objects, plus ours (README, "Bounds").

Kubernetes' own (k8s.io/apimachinery ``pkg/util/validation``, ``pkg/api/validation``):

- object names: DNS-1123 subdomain, at most ``MAX_NAME_LENGTH`` (253) characters;
- namespaces: DNS-1123 label, at most ``MAX_NAMESPACE_LENGTH`` (63);
- label keys: an optional DNS-1123 subdomain prefix (at most 253) and ``/``, then a name of at
  most ``MAX_LABEL_VALUE_LENGTH`` (63) alphanumerics, ``-``, ``_``, ``.``; label values: at most
  63 of the same, possibly empty;
- annotations: keys as label keys, keys and values together at most ``MAX_ANNOTATIONS_BYTES``
  (256 KiB);
- one object: at most ``MAX_OBJECT_BYTES`` (1.5 MiB, etcd's default request limit).

Ours: versions at most ``versions.MAX_VERSION_LENGTH`` (128) characters (anything longer is not
a version, and Python refuses to convert numbers of more than 4,300 digits); at most
``MAX_LIST_ITEMS`` (1,024) items in ``supportedModelFormats``, ``acceleratorClasses`` and the
other lists of a runtime; a manifest file at most ``MAX_FILE_BYTES`` (64 MiB).
"""

from __future__ import annotations

from ome_selector.domain.versions import MAX_VERSION_LENGTH
from ome_selector.validation.bounds import (
    object_size,
    validate_spec,
)
from ome_selector.validation.names import (
    LABEL_RULE,
    LABEL_VALUE_RULE,
    MAX_ANNOTATIONS_BYTES,
    MAX_CACHE_VERSION_LENGTH,
    MAX_FILE_BYTES,
    MAX_LABEL_VALUE_LENGTH,
    MAX_LIST_ITEMS,
    MAX_NAME_LENGTH,
    MAX_NAMESPACE_LENGTH,
    MAX_OBJECT_BYTES,
    MAX_VIOLATIONS_PER_OBJECT,
    QUALIFIED_NAME_RULE,
    SUBDOMAIN_RULE,
    cache_version,
    items,
    label,
    metadata,
    name_problem,
    qualified_name,
    subdomain,
    validate_name,
    version,
)
from ome_selector.validation.objects import (
    AUTOSCALER_CLASSES,
    AUTOSCALER_POLICY_KINDS,
    COMPONENT_CONFIGS,
    ENUM_TO_KIND,
    KIND_TO_ENUM,
    KIND_TO_FIELD,
    NAMESPACED,
    POLICIES,
    RUNTIME_KINDS,
    SCALING_MODES,
    SERVICE_MODES,
    Key,
    isvc_spec_violations,
    model_spec_violations,
    object_key,
    policy_fields,
    runtime_spec_violations,
    unwrap,
    validate_object,
)
from ome_selector.validation.revision_gc import MAX_TIME_LENGTH, revision_gc_request
from ome_selector.validation.selection import (
    explain_request,
    inference_service,
    model_spec,
    select_request,
)

__all__ = [
    "MAX_TIME_LENGTH",
    "MAX_VERSION_LENGTH",
    "AUTOSCALER_CLASSES",
    "AUTOSCALER_POLICY_KINDS",
    "COMPONENT_CONFIGS",
    "ENUM_TO_KIND",
    "KIND_TO_FIELD",
    "KIND_TO_ENUM",
    "Key",
    "LABEL_RULE",
    "LABEL_VALUE_RULE",
    "MAX_ANNOTATIONS_BYTES",
    "MAX_CACHE_VERSION_LENGTH",
    "MAX_FILE_BYTES",
    "MAX_LABEL_VALUE_LENGTH",
    "MAX_LIST_ITEMS",
    "MAX_NAMESPACE_LENGTH",
    "MAX_NAME_LENGTH",
    "MAX_OBJECT_BYTES",
    "MAX_VIOLATIONS_PER_OBJECT",
    "NAMESPACED",
    "POLICIES",
    "QUALIFIED_NAME_RULE",
    "RUNTIME_KINDS",
    "SCALING_MODES",
    "SERVICE_MODES",
    "SUBDOMAIN_RULE",
    "cache_version",
    "explain_request",
    "inference_service",
    "isvc_spec_violations",
    "items",
    "label",
    "metadata",
    "model_spec",
    "model_spec_violations",
    "name_problem",
    "object_key",
    "object_size",
    "policy_fields",
    "qualified_name",
    "revision_gc_request",
    "runtime_spec_violations",
    "select_request",
    "subdomain",
    "unwrap",
    "validate_name",
    "validate_object",
    "validate_spec",
    "version",
]
