"""The manifest loader on the v1.3 fields the runtime webhook and the deploymentStrategy warning
read: ``scalingPolicy`` (ratios are int-or-string quantities), each component's ``autoscaler``
(KEDA triggers, HPA metric sources and behavior are passed through as JSON objects),
``autoscalerPolicyRef``, ``deploymentStrategy`` (``rollingUpdate`` accepted, not read),
``modelCacheProviders`` and a model's ``distribution``.

A manifest with them loads with no warning; a pass-through field that is not an object, or holds
a key that is not a string, rejects the object with the path; a pass-through nested deeper than
protobuf's parser takes rejects it, never crashes the load.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import yaml
from google.protobuf import json_format
from ome_selector.cache.manifests import load_manifests

RUNTIME = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-llama-3-2-3b-instruct
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: 4.45.0.dev0}
      modelArchitecture: LlamaForCausalLM
      modelCacheProviders: [DragonFly]
      autoSelect: true
  scalingPolicy:
    mode: Proportional
    proportional:
      anchor: engine
      ratios: {decoder: 1, router: 250m, other: 0.5}
  engineConfig:
    minReplicas: 1
    deploymentStrategy:
      type: RollingUpdate
      rollingUpdate: {maxSurge: 1, maxUnavailable: 25%}
    autoscaler:
      class: KEDA
      keda:
        triggers:
          - type: prometheus
            metadata: {serverAddress: "http://prometheus:9090", threshold: "10", query: "sum(rate(x[1m]))"}
            authenticationRef: {name: keda-auth}
        idleReplicaCount: 0
        pollingInterval: 15
        cooldownPeriod: 300
        fallback: {failureThreshold: 3, replicas: 2}
        advanced: {restoreToOriginalReplicaCount: true}
  routerConfig:
    autoscaler:
      class: HPA
      hpa:
        metrics:
          - type: Resource
            resource: {name: cpu, target: {type: Utilization, averageUtilization: 80}}
          - type: Pods
            pods: {metric: {name: requests}, target: {type: AverageValue, averageValue: 10}}
        behavior: {scaleDown: {stabilizationWindowSeconds: 300, policies: [{type: Percent, value: 50, periodSeconds: 60}]}}
    autoscalerPolicyRef: {name: llama-autoscaling, kind: AutoscalerPolicy}
"""


def load(tmp_path: Path, text: str) -> Any:
    path = tmp_path / "runtime.yaml"
    path.write_text(textwrap.dedent(text))
    return path, load_manifests([str(path)])


def test_a_runtime_with_every_field_loads_with_no_warning(tmp_path: Path) -> None:
    _, result = load(tmp_path, RUNTIME)
    assert (result.errors, result.warnings, result.rejected_count) == ([], [], 0)
    [obj] = result.objects
    got = json_format.MessageToDict(obj.cluster_serving_runtime.spec)
    assert got["scalingPolicy"] == {
        "mode": "Proportional",
        "proportional": {"anchor": "engine", "ratios": {"decoder": "1", "router": "250m", "other": "0.5"}},
    }
    engine, router = got["engineConfig"], got["routerConfig"]
    assert engine["deploymentStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"},
    }
    assert engine["autoscaler"] == {
        "class": "KEDA",
        "keda": {
            "triggers": [
                {
                    "type": "prometheus",
                    "metadata": {
                        "serverAddress": "http://prometheus:9090",
                        "threshold": "10",
                        "query": "sum(rate(x[1m]))",
                    },
                    "authenticationRef": {"name": "keda-auth"},
                }
            ],
            "idleReplicaCount": 0,
            "pollingInterval": 15,
            "cooldownPeriod": 300,
            "fallback": {"failureThreshold": 3.0, "replicas": 2.0},
            "advanced": {"restoreToOriginalReplicaCount": True},
        },
    }
    assert [m["type"] for m in router["autoscaler"]["hpa"]["metrics"]] == ["Resource", "Pods"]
    assert router["autoscaler"]["hpa"]["metrics"][1]["pods"] == {
        "metric": {"name": "requests"},
        "target": {"type": "AverageValue", "averageValue": 10.0},
    }
    assert router["autoscalerPolicyRef"] == {"name": "llama-autoscaling", "kind": "AutoscalerPolicy"}
    assert got["supportedModelFormats"][0]["modelCacheProviders"] == ["DragonFly"]


def test_a_pass_through_field_must_be_an_object(tmp_path: Path) -> None:
    doc = yaml.safe_load(RUNTIME)
    doc["spec"]["routerConfig"]["autoscaler"]["hpa"]["behavior"] = ["scaleDown"]
    doc["spec"]["engineConfig"]["autoscaler"]["keda"]["triggers"] = [{"type": "cron"}, "cpu"]
    path, result = load(tmp_path, yaml.safe_dump(doc))
    assert result.errors == [
        f"{path}: document 0: invalid ClusterServingRuntime srt-llama-3-2-3b-instruct: "
        'spec.engineConfig.autoscaler.keda.triggers[1]: Invalid value: "cpu": must be of type object',
        f"{path}: document 0: invalid ClusterServingRuntime srt-llama-3-2-3b-instruct: "
        'spec.routerConfig.autoscaler.hpa.behavior: Invalid value: "[scaleDown]": must be of type object',
    ]


def test_keys_inside_a_pass_through_field_are_strings(tmp_path: Path) -> None:
    text = RUNTIME.replace('threshold: "10"', 'threshold: "10", 7: seven')
    path, result = load(tmp_path, text)
    assert result.errors == [
        f"{path}: document 0: invalid ClusterServingRuntime srt-llama-3-2-3b-instruct: "
        "spec.engineConfig.autoscaler.keda.triggers[0].metadata: Invalid value: 7: field names must be of type string"
    ]


def test_a_pass_through_field_nested_too_deep_is_rejected(tmp_path: Path) -> None:
    deep = "{a: " * 900 + "{}" + "}" * 900
    text = RUNTIME.replace("behavior: {scaleDown:", f"behavior: {{deep: {deep}, scaleDown:")
    path, result = load(tmp_path, text)
    assert (result.rejected_count, result.objects) == (1, [])
    assert result.errors == [
        f"{path}: document 0: invalid ClusterServingRuntime srt-llama-3-2-3b-instruct: "
        "spec.routerConfig.autoscaler.hpa.behavior: Message too deep. Max recursion depth is 64"
    ]


def test_a_ratio_that_is_not_a_number_or_text(tmp_path: Path) -> None:
    path, result = load(tmp_path, RUNTIME.replace("router: 250m", "router: [1]"))
    assert result.errors == [
        f"{path}: document 0: invalid ClusterServingRuntime srt-llama-3-2-3b-instruct: "
        'spec.scalingPolicy.proportional.ratios[router]: Invalid value: "[1]": must be of type string'
    ]
