"""Fields of the OME CRDs (ome-catalog/crd/full, ome.io/v1beta1) that the protos do not model:
metadata beyond ome.v1beta1.ObjectMeta, and parts of the model, accelerator and status kinds
selection never reads (the runtime specs and InferenceService components are modelled whole,
protos/crdgen.py).

The loader warns about a field that is neither in the proto message nor listed here for it, as
kubectl's strict field validation would (``unknown field "spec.modle"``); fields listed here are
accepted and not read. Keyed by proto message full name; tests/test_robust_loader.py checks the
table against the CRDs' OpenAPI schemas in ../shared.
"""

from __future__ import annotations

# Kubernetes ObjectMeta fields (k8s.io/apimachinery meta/v1) beyond ome.v1beta1.ObjectMeta.
OBJECT_META = frozenset(
    {
        "generateName",
        "selfLink",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)

UNMODELLED: dict[str, frozenset[str]] = {
    "ome.v1beta1.AcceleratorCapabilities": frozenset({"clockSpeedMHz", "levelZeroVersion"}),
    "ome.v1beta1.AcceleratorClass": frozenset({"status"}),
    "ome.v1beta1.AcceleratorClassSpec": frozenset({"integration"}),
    "ome.v1beta1.AcceleratorDiscovery": frozenset({"affinity", "deviceIDs", "pciVendorID"}),
    "ome.v1beta1.AcceleratorPerformance": frozenset({"latency"}),
    "ome.v1beta1.BaseModel": frozenset({"status"}),
    "ome.v1beta1.BaseModelSpec": frozenset(
        {
            "additionalMetadata",
            "apiCapabilities",
            "compartmentID",
            "maxTokens",
            "modelConfiguration",
            "servingMode",
            "storage",
        }
    ),
    "ome.v1beta1.ClusterBaseModel": frozenset({"status"}),
    "ome.v1beta1.InferenceServiceStatus": frozenset({"address", "annotations", "components", "modelStatus", "url"}),
}
