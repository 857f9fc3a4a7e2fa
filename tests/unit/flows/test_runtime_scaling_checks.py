"""The runtime webhook's ``scalingPolicy``, ``autoscalerPolicyRef`` and per-component
``autoscaler`` checks (``api.validate_serving_runtime``), and the CRD enums the API server checks
first.

serving-runtimes.md:

* "Scaling policy": "the webhook rejects any mode but ``Independent``, the default, with
  ``ScalingModeNotImplemented``";
* "The engine, decoder and router": "since v1.3 the webhook rejects ``autoscalerPolicyRef`` in a
  runtime";
* "Common errors": "The webhook also checks ``scalingPolicy``, ``autoscalerPolicyRef`` and each
  component's ``autoscaler``. For a disabled runtime, it checks only the inheritance,
  ``scalingPolicy`` and ``autoscalerPolicyRef``."

The pages quote only the reason ``ScalingModeNotImplemented``; the whole texts are OME's
(pkg/validation), written here as literals. The UPDATE ratchet of ``scalingPolicy`` (only a policy
the write sets or changes is checked) is the one rule of the webhooks that reads the old object.
ome-docs/reference/api/ome.v1beta1.md gives the enums (``Independent``, ``Proportional``,
``Pinned``; ``HPA``, ``KEDA``, ``External``, ``None``; ``AutoscalerPolicy``,
``ClusterAutoscalerPolicy``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers_docs import SGLANG_PROFILE, accelerator_class, runtime
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.domain.errors import FieldViolation, RequestError
from test_admission_operations import CSR_WEBHOOK, SR_WEBHOOK, doc, runtime_verdict, validate, violations

CREATE, UPDATE = pb.ADMISSION_OPERATION_CREATE, pb.ADMISSION_OPERATION_UPDATE


def scaling(mode: str | None = None, **proportional: Any) -> dict[str, Any]:
    policy: dict[str, Any] = {} if mode is None else {"mode": mode}
    if proportional:
        policy["proportional"] = proportional
    return policy


def rt(disabled: bool | None = None, namespace: str | None = None, **spec: Any) -> dict[str, Any]:
    """A ClusterServingRuntime (a ServingRuntime with ``namespace``) with extra spec fields."""
    return runtime("srt-llama-3-2-3b-instruct", namespace=namespace, disabled=disabled, spec=spec)


def created(item: dict[str, Any], *sources: Any) -> tuple[bool, str, str, list[str]]:
    return runtime_verdict(validate(list(sources), CREATE, item))


def not_implemented(mode: str) -> str:
    return (
        f'spec.scalingPolicy.mode "{mode}" is accepted by the API but not implemented: no controller applies it, '
        'so the policy would silently behave like "Independent"; use "Independent" or omit the policy '
        "(ScalingModeNotImplemented)"
    )


PINNED = not_implemented("Pinned")
PROPORTIONAL = not_implemented("Proportional")


class TestScalingPolicy:
    @pytest.mark.parametrize(
        "policy",
        [pytest.param(None, id="no-policy"), pytest.param({}, id="empty"), pytest.param(scaling("Independent"))],
    )
    def test_independent_is_allowed(self, policy: dict[str, Any] | None) -> None:
        item = rt() if policy is None else rt(scalingPolicy=policy)
        assert created(item) == (True, "", CSR_WEBHOOK, [])

    @pytest.mark.parametrize(
        "policy, message",
        [
            pytest.param(scaling("Proportional", anchor="engine", ratios={"decoder": "1"}), PROPORTIONAL),
            pytest.param(scaling("Proportional"), PROPORTIONAL, id="Proportional-without-its-block"),
            pytest.param(scaling("Pinned"), PINNED),
        ],
    )
    @pytest.mark.parametrize("namespace, webhook", [(None, CSR_WEBHOOK), ("llama-demo", SR_WEBHOOK)])
    def test_any_other_mode_is_rejected(
        self, policy: dict[str, Any], message: str, namespace: str | None, webhook: str
    ) -> None:
        got = created(rt(namespace=namespace, scalingPolicy=policy))
        assert got == (False, message, webhook, [])
        assert "ScalingModeNotImplemented" in got[1]

    def test_a_disabled_runtime_is_checked_too(self) -> None:
        assert created(rt(disabled=True, scalingPolicy=scaling("Pinned"))) == (False, PINNED, CSR_WEBHOOK, [])

    def test_a_mode_outside_the_enum_is_the_api_servers_error(self) -> None:
        with pytest.raises(RequestError) as error:
            created(rt(scalingPolicy=scaling("Coordinated")))
        assert violations(error) == [
            FieldViolation(
                "cluster_serving_runtime.spec.scaling_policy.mode",
                'Unsupported value: "Coordinated": supported values: "Independent", "Proportional", "Pinned"',
            )
        ]


class TestScalingPolicyOnUpdate:
    """The ratchet: on UPDATE only a policy the write sets or changes is checked, so a stored
    runtime that carries one keeps accepting unrelated updates."""

    def update(self, old: dict[str, Any] | None, new: dict[str, Any] | None, **labels: str) -> tuple[Any, ...]:
        stored = rt() if old is None else rt(scalingPolicy=old)
        changed = rt() if new is None else rt(scalingPolicy=new)
        changed["metadata"]["labels"] = dict(labels)
        return runtime_verdict(validate([stored], UPDATE, changed, stored))

    def test_an_unchanged_policy_is_not_checked(self) -> None:
        assert self.update(scaling("Pinned"), scaling("Pinned"), team="a") == (True, "", CSR_WEBHOOK, [])

    def test_ratios_compare_as_quantities(self) -> None:
        old = scaling("Proportional", ratios={"decoder": "1", "router": "250m"})
        new = scaling("Proportional", ratios={"decoder": "1000m", "router": "0.25"})
        assert self.update(old, new) == (True, "", CSR_WEBHOOK, [])

    @pytest.mark.parametrize(
        "old, new, message",
        [
            pytest.param(None, scaling("Pinned"), PINNED, id="newly-set"),
            pytest.param(scaling("Independent"), scaling("Pinned"), PINNED, id="changed-mode"),
            pytest.param(scaling("Proportional"), scaling("Pinned"), PINNED, id="from-one-to-another"),
            pytest.param(
                scaling("Proportional", ratios={"decoder": "1"}),
                scaling("Proportional", ratios={"decoder": "2"}),
                PROPORTIONAL,
                id="changed-ratio",
            ),
            pytest.param(
                scaling("Proportional", ratios={"decoder": "1"}),
                scaling("Proportional", ratios={"decoder": "1", "router": "1"}),
                PROPORTIONAL,
                id="added-ratio",
            ),
            pytest.param(
                scaling("Proportional", anchor="engine"),
                scaling("Proportional", anchor="decoder"),
                PROPORTIONAL,
                id="changed-anchor",
            ),
            pytest.param(scaling("Pinned", anchor="engine"), scaling("Pinned"), PINNED, id="dropped-proportional"),
        ],
    )
    def test_a_set_or_changed_policy_is_checked(
        self, old: dict[str, Any] | None, new: dict[str, Any], message: str
    ) -> None:
        assert self.update(old, new) == (False, message, CSR_WEBHOOK, [])

    def test_removing_the_policy_is_allowed(self) -> None:
        assert self.update(scaling("Pinned"), None) == (True, "", CSR_WEBHOOK, [])

    def test_an_update_without_the_old_runtime_is_checked_as_a_create(self) -> None:
        got = validate([], UPDATE, rt(scalingPolicy=scaling("Pinned")))
        assert runtime_verdict(got) == (False, PINNED, CSR_WEBHOOK, [])

    def test_the_ratchet_covers_a_disabled_runtime_too(self) -> None:
        stored = rt(disabled=True, scalingPolicy=scaling("Pinned"))
        changed = rt(disabled=True, scalingPolicy=scaling("Proportional"))
        assert runtime_verdict(validate([stored], UPDATE, changed, stored)) == (False, PROPORTIONAL, CSR_WEBHOOK, [])


POLICY_REF = {"name": "llama-autoscaling"}


def policy_ref_denial(component: str) -> str:
    return (
        f"{component}: autoscalerPolicyRef is not supported on serving runtimes; policy refs attach on the "
        "InferenceService only"
    )


class TestAutoscalerPolicyRef:
    @pytest.mark.parametrize("component", ["engineConfig", "decoderConfig", "routerConfig"])
    def test_rejected_in_every_component_config(self, component: str) -> None:
        got = created(rt(**{component: {"autoscalerPolicyRef": POLICY_REF}}))
        assert got == (False, policy_ref_denial(component), CSR_WEBHOOK, [])

    def test_engine_config_first(self) -> None:
        item = rt(routerConfig={"autoscalerPolicyRef": POLICY_REF}, decoderConfig={"autoscalerPolicyRef": POLICY_REF})
        assert created(item)[1] == policy_ref_denial("decoderConfig")

    def test_a_disabled_runtime_is_checked_too(self) -> None:
        item = rt(disabled=True, engineConfig={"autoscalerPolicyRef": POLICY_REF})
        assert created(item) == (False, policy_ref_denial("engineConfig"), CSR_WEBHOOK, [])

    def test_a_policy_ref_on_an_update_is_checked_however_the_runtime_was_stored(self) -> None:
        stored = rt(engineConfig={"autoscalerPolicyRef": POLICY_REF})
        changed = copy.deepcopy(stored)
        changed["metadata"]["labels"] = {"team": "a"}
        assert runtime_verdict(validate([stored], UPDATE, changed, stored))[1] == policy_ref_denial("engineConfig")

    def test_without_a_name_or_with_another_kind_the_api_server_rejects_it(self) -> None:
        item = rt(engineConfig={"autoscalerPolicyRef": {"kind": "Policy"}})
        with pytest.raises(RequestError) as error:
            created(item)
        assert violations(error) == [
            FieldViolation("cluster_serving_runtime.spec.engine_config.autoscaler_policy_ref.name", "Required value"),
            FieldViolation(
                "cluster_serving_runtime.spec.engine_config.autoscaler_policy_ref.kind",
                'Unsupported value: "Policy": supported values: "AutoscalerPolicy", "ClusterAutoscalerPolicy"',
            ),
        ]


def keda(**fields: Any) -> dict[str, Any]:
    return {"class": "KEDA", "keda": fields}


TRIGGER = {"type": "prometheus", "metadata": {"serverAddress": "http://prometheus:9090", "threshold": "10"}}
HPA_METRIC_TYPES = "Resource|Pods|Object|External|ContainerResource"


class TestComponentAutoscaler:
    @pytest.mark.parametrize(
        "autoscaler",
        [
            pytest.param({"class": "KEDA"}, id="no-keda-block"),
            pytest.param(keda(), id="no-triggers"),
            pytest.param(keda(triggers=[]), id="empty-triggers"),
        ],
    )
    def test_keda_needs_a_trigger(self, autoscaler: dict[str, Any]) -> None:
        got = created(rt(engineConfig={"autoscaler": autoscaler}))
        assert got == (
            False,
            "engineConfig: KedaTriggersRequired: class=keda requires at least 1 trigger",
            CSR_WEBHOOK,
            [],
        )

    @pytest.mark.parametrize(
        "metric, message",
        [
            pytest.param(
                {"resource": {"name": "cpu"}},
                f"HPAMetricMalformed: hpa.metrics[1].type is empty; must be one of {HPA_METRIC_TYPES}",
                id="no-type",
            ),
            *(
                pytest.param(
                    {"type": kind, **({"resource": {"name": "cpu"}} if kind == "Pods" else {})},
                    f"HPAMetricMalformed: hpa.metrics[1].type={kind} but hpa.metrics[1].{source} is nil",
                    id=kind,
                )
                for kind, source in [
                    ("Resource", "resource"),
                    ("Pods", "pods"),
                    ("Object", "object"),
                    ("External", "external"),
                    ("ContainerResource", "containerResource"),
                ]
            ),
            pytest.param(
                {"type": "Memory"},
                f'HPAMetricMalformed: hpa.metrics[1].type "Memory" is not one of {HPA_METRIC_TYPES}',
                id="unknown-type",
            ),
        ],
    )
    def test_each_hpa_metric_needs_its_source(self, metric: dict[str, Any], message: str) -> None:
        good = {
            "type": "Resource",
            "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
        }
        autoscaler = {"class": "HPA", "hpa": {"metrics": [good, metric]}}
        assert created(rt(decoderConfig={"autoscaler": autoscaler})) == (
            False,
            f"decoderConfig: {message}",
            CSR_WEBHOOK,
            [],
        )

    @pytest.mark.parametrize("idle, minimum", [(2, 2), (3, 2)])
    def test_keda_idle_replicas_below_min_replicas(self, idle: int, minimum: int) -> None:
        router = {"minReplicas": minimum, "autoscaler": keda(triggers=[TRIGGER], idleReplicaCount=idle)}
        assert created(rt(routerConfig=router)) == (
            False,
            "routerConfig: KedaIdleBelowMin: keda.idleReplicaCount must be < minReplicas "
            f"(got idleReplicaCount={idle}, minReplicas={minimum})",
            CSR_WEBHOOK,
            [],
        )

    @pytest.mark.parametrize(
        "component",
        [
            pytest.param({"autoscaler": keda(triggers=[TRIGGER])}, id="keda"),
            pytest.param(
                {"minReplicas": 1, "autoscaler": keda(triggers=[TRIGGER], idleReplicaCount=0)}, id="idle-below"
            ),
            pytest.param({"autoscaler": keda(triggers=[TRIGGER], idleReplicaCount=4)}, id="idle-without-min"),
            pytest.param({"autoscaler": {"class": "HPA"}}, id="hpa-default-metric"),
            pytest.param({"autoscaler": {"class": "HPA", "hpa": {"metrics": []}}}, id="hpa-no-metrics"),
            pytest.param({"autoscaler": {"class": "External"}}, id="external"),
            pytest.param({"autoscaler": {"class": "None"}}, id="none"),
            pytest.param(
                {"minReplicas": 0, "autoscaler": {"class": "HPA", "keda": {"idleReplicaCount": 0}}}, id="hpa-with-keda"
            ),
        ],
    )
    def test_valid_blocks_are_allowed(self, component: dict[str, Any]) -> None:
        assert created(rt(engineConfig=component)) == (True, "", CSR_WEBHOOK, [])

    def test_engine_config_first(self) -> None:
        item = rt(
            routerConfig={"autoscaler": keda()},
            decoderConfig={"autoscaler": {"class": "HPA", "hpa": {"metrics": [{}]}}},
        )
        assert created(item)[1] == (
            f"decoderConfig: HPAMetricMalformed: hpa.metrics[0].type is empty; must be one of {HPA_METRIC_TYPES}"
        )

    def test_not_checked_for_a_disabled_runtime(self) -> None:
        """ "For a disabled runtime, it checks only the inheritance, scalingPolicy and autoscalerPolicyRef"."""
        assert created(rt(disabled=True, engineConfig={"autoscaler": keda()})) == (True, "", CSR_WEBHOOK, [])

    def test_the_class_is_required_and_in_its_enum(self) -> None:
        item = rt(engineConfig={"autoscaler": {"keda": {}}}, routerConfig={"autoscaler": {"class": "keda"}})
        with pytest.raises(RequestError) as error:
            created(item)
        assert violations(error) == [
            FieldViolation("cluster_serving_runtime.spec.engine_config.autoscaler.autoscaler_class", "Required value"),
            FieldViolation(
                "cluster_serving_runtime.spec.router_config.autoscaler.autoscaler_class",
                'Unsupported value: "keda": supported values: "HPA", "KEDA", "External", "None"',
            ),
        ]


class TestOrder:
    """Profile marker, inheritance, scalingPolicy, autoscalerPolicyRef, the disabled cut, the
    component autoscalers, then accelerator classes and priorities."""

    def test_the_profile_marker_before_the_scaling_policy(self) -> None:
        profile = doc(SGLANG_PROFILE)
        profile["spec"].update(disabled=False, scalingPolicy=scaling("Pinned"))
        assert (
            created(profile)[1] == 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
        )

    def test_the_inheritance_before_the_scaling_policy(self) -> None:
        item = rt(scalingPolicy=scaling("Pinned"))
        item["metadata"]["annotations"] = {"ome.io/inherit-from": "sglang-profile"}
        assert created(item)[1] == (
            'inherit-from parent "sglang-profile" not found (chain so far: [srt-llama-3-2-3b-instruct])'
        )

    def test_the_scaling_policy_before_the_policy_ref(self) -> None:
        item = rt(scalingPolicy=scaling("Pinned"), engineConfig={"autoscalerPolicyRef": POLICY_REF})
        assert created(item)[1] == PINNED

    def test_the_policy_ref_before_the_autoscaler(self) -> None:
        item = rt(decoderConfig={"autoscaler": keda()}, routerConfig={"autoscalerPolicyRef": POLICY_REF})
        assert created(item)[1] == policy_ref_denial("routerConfig")

    def test_the_autoscaler_before_the_accelerator_classes(self) -> None:
        item = rt(engineConfig={"autoscaler": keda()}, acceleratorRequirements={"acceleratorClasses": ["nvidia-h200"]})
        assert created(item, accelerator_class("nvidia-h100"))[1] == (
            "engineConfig: KedaTriggersRequired: class=keda requires at least 1 trigger"
        )
