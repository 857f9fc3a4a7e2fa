"""Fields of the OME CRDs (ome-catalog/crd/full, ome.io/v1beta1) that the protos do not model.

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

# Kubernetes PodSpec fields the OME CRDs inline in LeaderSpec and WorkerSpec.
POD_SPEC = frozenset(
    {
        "activeDeadlineSeconds",
        "affinity",
        "automountServiceAccountToken",
        "containers",
        "dnsConfig",
        "dnsPolicy",
        "enableServiceLinks",
        "ephemeralContainers",
        "hostAliases",
        "hostIPC",
        "hostNetwork",
        "hostPID",
        "hostUsers",
        "hostname",
        "imagePullSecrets",
        "initContainers",
        "nodeName",
        "nodeSelector",
        "os",
        "overhead",
        "preemptionPolicy",
        "priority",
        "priorityClassName",
        "readinessGates",
        "resourceClaims",
        "restartPolicy",
        "runtimeClassName",
        "schedulerName",
        "schedulingGates",
        "securityContext",
        "serviceAccount",
        "serviceAccountName",
        "setHostnameAsFQDN",
        "shareProcessNamespace",
        "subdomain",
        "terminationGracePeriodSeconds",
        "tolerations",
        "topologySpreadConstraints",
        "volumes",
    }
)
# EngineSpec, DecoderSpec and RouterSpec: the PodSpec fields plus OME's component fields.
COMPONENT_SPEC = POD_SPEC | frozenset(
    {
        "canaryTrafficPercent",
        "containerConcurrency",
        "kedaConfig",
        "maxUnavailable",
        "minAvailable",
        "scaleMetric",
        "scaleTarget",
        "timeoutSeconds",
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
    "ome.v1beta1.Container": frozenset(
        {
            "env",
            "envFrom",
            "imagePullPolicy",
            "lifecycle",
            "livenessProbe",
            "ports",
            "readinessProbe",
            "resizePolicy",
            "resources",
            "restartPolicy",
            "securityContext",
            "startupProbe",
            "stdin",
            "stdinOnce",
            "terminationMessagePath",
            "terminationMessagePolicy",
            "tty",
            "volumeDevices",
            "volumeMounts",
            "workingDir",
        }
    ),
    "ome.v1beta1.DecoderSpec": COMPONENT_SPEC,
    "ome.v1beta1.DeploymentStrategy": frozenset({"rollingUpdate"}),
    "ome.v1beta1.EngineSpec": COMPONENT_SPEC,
    "ome.v1beta1.InferenceServiceStatus": frozenset({"address", "annotations", "components", "modelStatus", "url"}),
    "ome.v1beta1.InferenceServiceSpec": frozenset({"kedaConfig", "predictor"}),
    "ome.v1beta1.LeaderSpec": POD_SPEC,
    "ome.v1beta1.RouterSpec": COMPONENT_SPEC,
    "ome.v1beta1.ServingRuntimeSpec": frozenset(
        {
            "affinity",
            "annotations",
            "containers",
            "dnsPolicy",
            "hostIPC",
            "hostNetwork",
            "imagePullSecrets",
            "labels",
            "nodeSelector",
            "schedulerName",
            "tolerations",
            "volumes",
            "workers",
        }
    ),
    "ome.v1beta1.SupportedModelFormat": frozenset({"acceleratorConfig"}),
    "ome.v1beta1.WorkerSpec": POD_SPEC,
}
