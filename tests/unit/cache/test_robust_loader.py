"""docs/deploy.md, "What the loader reads, and what it rejects": one bad object never stops a load; the loader reads only regular files,
caps their size, expands `kind: List`, warns about unknown fields and names type errors by path.
Each test failed before the change."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CATALOG_MODELS, CATALOG_RUNTIMES, OME_CLUSTER, SHARED
from google.protobuf.descriptor import Descriptor
from ome.v1beta1 import types_pb2
from ome_selector import validation as bounds
from ome_selector.cache import crdfields, manifest_types, manifests
from ome_selector.cache.manifest_types import ManifestError
from ome_selector.cache.manifests import load_manifests, load_runtime, read_inference_services
from ome_selector_client import SelectorClient

CSR = "ClusterServingRuntime"
HUGE = "1" * 5000


def csr(name: str, version: str = "1.0.0", extra: str = "") -> str:
    return (
        f"apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata:\n  name: {name}\nspec:\n{extra}"
        "  supportedModelFormats:\n"
        f'    - modelFormat: {{name: safetensors, version: "{version}"}}\n'
        "      modelFramework: {name: transformers}\n      autoSelect: true\n      priority: 1\n"
    )


def write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def names(result: manifest_types.LoadResult) -> list[str]:
    return [o.cluster_serving_runtime.metadata.name for o in result.objects if o.HasField("cluster_serving_runtime")]


# --- one bad object ----------------------------------------------------------------------------


def test_a_5000_digit_version_rejects_its_object_only(tmp_path: Path) -> None:
    """Before: `unexpected ValueError: Exceeds the limit (4300 digits)` stopped serve."""
    file = write(tmp_path / "rt.yaml", csr("first") + "---\n" + csr("huge", HUGE) + "---\n" + csr("last"))
    result = load_manifests([file])
    assert names(result) == ["first", "last"]
    assert result.rejected_count == 1
    assert result.errors == [
        f"{file}: document 1: invalid ClusterServingRuntime huge: spec.supportedModelFormats[0].modelFormat.version: "
        f'Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters'
    ]
    [rejection] = result.rejected
    assert (rejection.file, rejection.document, rejection.item, rejection.kind, rejection.name) == (
        file,
        1,
        None,
        CSR,
        "huge",
    )
    assert not result.clean and result.path_errors == []


def test_an_unquoted_5000_digit_number_stays_text(tmp_path: Path) -> None:
    file = write(
        tmp_path / "rt.yaml",
        csr("ok")
        + "---\n"
        + csr("num").replace('version: "1.0.0"', f"version: {HUGE}")
        + "---\n"
        + csr("prio").replace("priority: 1", f"priority: {HUGE}"),
    )
    result = load_manifests([file])
    assert names(result) == ["ok"]
    assert [e.split(": ", 2)[2] for e in result.errors] == [
        f'invalid ClusterServingRuntime num: spec.supportedModelFormats[0].modelFormat.version: Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters',
        f'invalid ClusterServingRuntime prio: spec.supportedModelFormats[0].priority: Invalid value: "{"1" * 64}…" (5000 characters): must be of type integer',
    ]


def test_a_kind_that_is_a_list_is_named(tmp_path: Path) -> None:
    """Before: `unexpected TypeError: unhashable type: 'list'`, no file named."""
    file = write(tmp_path / "rt.yaml", csr("a").replace(f"kind: {CSR}", f"kind: [{CSR}]") + "---\n" + csr("b"))
    result = load_manifests([file])
    assert names(result) == ["b"]
    assert result.errors == [
        f'{file}: document 0: kind: Invalid value: "[ClusterServingRuntime]": must be of type string'
    ]
    with pytest.raises(ManifestError) as caught:
        load_runtime(write(tmp_path / "only.yaml", csr("a").replace(f"kind: {CSR}", f"kind: [{CSR}]")), "default")
    assert (
        str(caught.value)
        == f"{tmp_path / 'only.yaml'}: no ServingRuntime or ClusterServingRuntime (ome.io/v1beta1) found"
    )


def test_a_yaml_error_costs_only_its_document(tmp_path: Path) -> None:
    file = write(tmp_path / "rt.yaml", csr("a") + "---\nmetadata: {name: x\n---\n" + csr("c"))
    result = load_manifests([file])
    assert names(result) == ["a", "c"]
    assert result.errors == [
        f"{file}: document 1: invalid YAML: while parsing a flow mapping: did not find expected ',' or '}}' (line 13, column 1)".replace(
            "}}", "}"
        )
    ]


def test_bad_values_do_not_forge_lines(tmp_path: Path) -> None:
    file = write(tmp_path / "rt.yaml", csr('"evil\\nFAKE LOG LINE"') + "---\n" + csr("a" * 1_000_000))
    result = load_manifests([file])
    assert all("\n" not in line for line in result.errors)
    assert result.errors[0] == (
        f'{file}: document 0: invalid ClusterServingRuntime evil\\nFAKE LOG LINE: metadata.name: Invalid value: "evil\\nFAKE LOG LINE": '
        + bounds.SUBDOMAIN_RULE
    )
    assert len(result.errors[1]) < 1_000_000 // 100


def test_serve_starts_and_serves_the_rest(running_server, tmp_path: Path) -> None:
    """Before: serve exited before listening when one document of one file was bad."""
    bad = write(
        tmp_path / "bad.yaml",
        csr("huge", HUGE) + "---\n" + csr("x").replace(f"kind: {CSR}", f"kind: [{CSR}]") + "---\n" + csr("good"),
    )
    server = running_server(manifests=[bad])
    assert any(
        line.endswith(f'{bad}: document 1: kind: Invalid value: "[ClusterServingRuntime]": must be of type string')
        for line in server.lines
    )
    with SelectorClient(server.address) as client:
        status = client.get_cache_status()
    assert [(c.count) for c in status.counts if c.count] == [1]


# --- what is read ------------------------------------------------------------------------------


def _finishes(function: Any, timeout: float = 10.0) -> Any:
    """``function()`` in a thread: its result, or its exception re-raised; fails if it hangs."""
    box: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            box.append((True, function()))
        except BaseException as exc:  # re-raised below
            box.append((False, exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout)
    assert box, "did not finish (hangs)"
    ok, value = box[0]
    if not ok:
        raise value
    return value


def test_a_fifo_is_skipped_not_opened(tmp_path: Path) -> None:
    """Before: a `*.yaml` FIFO hung serve and select forever."""
    write(tmp_path / "a.yaml", csr("a"))
    os.mkfifo(tmp_path / "b.yaml")
    result = _finishes(lambda: load_manifests([str(tmp_path)]))
    assert names(result) == ["a"]
    assert result.warnings == [f"{tmp_path / 'b.yaml'}: skipped: a FIFO, not a regular file"]
    assert result.errors == []
    with pytest.raises(ManifestError) as caught:
        _finishes(lambda: read_inference_services(str(tmp_path / "b.yaml")))
    assert str(caught.value) == f"{tmp_path / 'b.yaml'}: skipped: a FIFO, not a regular file"


def test_a_link_to_dev_zero_is_not_read(tmp_path: Path) -> None:
    """Before: read until memory ran out."""
    os.symlink("/dev/zero", tmp_path / "zero.yaml")
    result = _finishes(lambda: load_manifests([str(tmp_path)]))
    assert result.warnings == [f"{tmp_path / 'zero.yaml'}: skipped: a character device, not a regular file"]


def test_files_over_the_cap_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bounds, "MAX_FILE_BYTES", 100)
    big = write(tmp_path / "big.yaml", csr("big"))
    result = load_manifests([big])
    size = os.path.getsize(big)
    assert (
        result.errors
        == result.path_errors
        == [f"{big}: Too long: may not be more than 100 bytes (a manifest file; this one has {size})"]
    )
    assert bounds.MAX_FILE_BYTES == 100 and manifests.bounds.MAX_FILE_BYTES == 100


def test_kubectl_list_output_is_expanded(tmp_path: Path) -> None:
    """Before: `kind: List` was skipped silently, then "model not found"."""
    items = [yaml.safe_load(csr("a")), yaml.safe_load(csr("B")), yaml.safe_load(csr("c"))]
    file = write(
        tmp_path / "list.yaml",
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}),
    )
    result = load_manifests([file])
    assert names(result) == ["a", "c"]
    assert result.errors == [
        f'{file}: document 0, items[1]: invalid ClusterServingRuntime B: metadata.name: Invalid value: "B": '
        + bounds.SUBDOMAIN_RULE
    ]
    typed = write(
        tmp_path / "typed.yaml",
        yaml.safe_dump({"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntimeList", "items": items[:1]}),
    )
    assert names(load_manifests([typed])) == ["a"]


def test_unknown_fields_are_warnings_with_their_path(tmp_path: Path) -> None:
    """Before: `spec.modle` was ignored silently."""
    isvc = "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: s, namespace: ns}\nspec:\n  modle: {name: m}\n  engine: {minReplica: 1}\n  predictor: {}\n"
    file = write(tmp_path / "isvc.yaml", isvc + "---\n" + csr("rt", extra="  containers: []\n  enginConfig: {}\n"))
    result = load_manifests([file])
    assert result.warnings == [
        f'{file}: document 0: InferenceService s: unknown field "spec.modle"',
        f'{file}: document 0: InferenceService s: unknown field "spec.engine.minReplica"',
        f'{file}: document 1: ClusterServingRuntime rt: unknown field "spec.enginConfig"',
    ]
    assert names(result) == ["rt"] and len(result.inference_services) == 1


def test_type_errors_name_the_path_and_the_type(tmp_path: Path) -> None:
    """Before: Python's `invalid literal for int() with base 10: 'two'`."""
    isvc = (
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: s, namespace: ns, labels: {a: 1}}\n"
        "spec:\n  model: name\n  engine: {minReplicas: two}\n  runtime: {autoSync: yes please}\n"
    )
    file = write(tmp_path / "isvc.yaml", isvc)
    with pytest.raises(ManifestError) as caught:
        read_inference_services(file)
    where = f"{file}: document 0: invalid InferenceService s"
    assert str(caught.value).splitlines() == [
        f"{where}: metadata.labels[a]: Invalid value: 1: must be of type string",
        f'{where}: spec.model: Invalid value: "name": must be of type object',
        f'{where}: spec.engine.minReplicas: Invalid value: "two": must be of type integer',
        f'{where}: spec.runtime.autoSync: Invalid value: "yes please": must be of type boolean',
    ]


def test_every_inference_service_of_a_file(tmp_path: Path) -> None:
    one = "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: NAME, namespace: ns}\nspec: {model: {name: m}}\n"
    file = write(
        tmp_path / "isvcs.yaml", one.replace("NAME", "a") + "---\n" + csr("rt") + "---\n" + one.replace("NAME", "b")
    )
    found, warnings = read_inference_services(file)
    assert ([i.metadata.name for i in found], warnings) == (["a", "b"], [])


# --- the CRD field table -----------------------------------------------------------------------

_CRDS = {
    "ServingRuntime": "ome.io_servingruntimes.yaml",
    "ClusterServingRuntime": "ome.io_clusterservingruntimes.yaml",
    "BaseModel": "ome.io_basemodels.yaml",
    "ClusterBaseModel": "ome.io_clusterbasemodels.yaml",
    "AcceleratorClass": "ome.io_acceleratorclasses.yaml",
    "InferenceService": "ome.io_inferenceservices.yaml",
}


def _crd_extras(descriptor: Descriptor, schema: dict[str, Any], out: dict[str, set[str]]) -> None:
    props = schema.get("properties", {})
    known = {f.json_name for f in descriptor.fields}
    out.setdefault(descriptor.full_name, set()).update(p for p in props if p not in known)
    for fd in descriptor.fields:
        sub = props.get(fd.json_name)
        if fd.message_type is None or sub is None or fd.message_type.full_name.startswith("google.protobuf"):
            continue
        if fd.message_type.GetOptions().map_entry:
            value = fd.message_type.fields_by_name["value"].message_type
            if value is not None:
                _crd_extras(value, sub.get("additionalProperties", {}), out)
        elif fd.message_type.full_name != "ome.v1beta1.ObjectMeta":
            _crd_extras(fd.message_type, sub.get("items", {}) if fd.is_repeated else sub, out)


def test_the_unmodelled_field_table_is_the_crds() -> None:
    found: dict[str, set[str]] = {}
    for kind, file in _CRDS.items():
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        crd = next(yaml.load_all((SHARED / "ome-catalog" / "crd" / "full" / file).read_text(), Loader=loader))
        [version] = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta1"]
        _crd_extras(getattr(types_pb2, kind).DESCRIPTOR, version["schema"]["openAPIV3Schema"], found)
    assert {k: frozenset(v) for k, v in found.items() if v} == crdfields.UNMODELLED


def test_the_real_catalog_and_cluster_have_no_unknown_fields() -> None:
    result = load_manifests([str(CATALOG_RUNTIMES), str(CATALOG_MODELS), str(OME_CLUSTER)])
    assert result.errors == [] and result.rejected_count == 0
    assert [w for w in result.warnings if "unknown field" in w] == []


def test_an_int_or_string_value_is_a_number_or_a_string(tmp_path: Path) -> None:
    """Kubernetes quantities and int-or-string fields (google.protobuf.Value in the protos) take a
    number or a string as written; anything else rejects the object, naming the path."""
    isvc = (
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: s, namespace: ns}\n"
        "spec:\n  model: {name: m}\n  engine:\n    minAvailable: [1]\n    runner:\n      name: c\n"
        "      resources: {limits: {cpu: 2, memory: 8Gi, nvidia.com/gpu: true}}\n"
        "      readinessProbe: {httpGet: {port: {name: http}}}\n"
    )
    file = write(tmp_path / "isvc.yaml", isvc)
    with pytest.raises(ManifestError) as caught:
        read_inference_services(file)
    where = f"{file}: document 0: invalid InferenceService s"
    assert str(caught.value).splitlines() == [
        f'{where}: spec.engine.minAvailable: Invalid value: "[1]": must be of type integer or string',
        f"{where}: spec.engine.runner.resources.limits[nvidia.com/gpu]: Invalid value: true: must be of type integer or string",
        f'{where}: spec.engine.runner.readinessProbe.httpGet.port: Invalid value: "{{name: http}}": must be of type integer or string',
    ]
    good = isvc.replace("[1]", "25%").replace("true", "1").replace("{name: http}", "http")
    [service], warnings = read_inference_services(write(tmp_path / "good.yaml", good))
    assert warnings == []
    runner = service.spec.engine.runner
    assert (runner.resources.limits["cpu"].number_value, runner.resources.limits["memory"].string_value) == (2, "8Gi")
    assert runner.readiness_probe.http_get.port.string_value == "http"
    assert service.spec.engine.min_available.string_value == "25%"
