"""The value objects of the rule modules are immutable (domain.py: "Immutable domain objects
compiled once at ingestion"; snapshots, caches and answers share them between requests), so a
write to any field fails. Found by ``scripts/mutation.py`` (``frozen=True`` -> ``False``)."""

from __future__ import annotations

import dataclasses
import inspect
from types import ModuleType

import pytest
from ome_selector.cache import chains, ingest, snapshot
from ome_selector.domain import objects as domain
from ome_selector.domain import quantities, sizes, versions
from ome_selector.engine import evaluation as engine
from ome_selector.engine import fits, ranking
from ome_selector.flows import admission, components, effective, reconcile, resolution, runtime_webhook
from ome_selector.rules import accelerators, results

MODULES: tuple[ModuleType, ...] = (
    accelerators,
    admission,
    chains,
    results,
    components,
    domain,
    effective,
    engine,
    fits,
    ranking,
    ingest,
    quantities,
    reconcile,
    resolution,
    runtime_webhook,
    sizes,
    snapshot,
    versions,
)
VALUE_CLASSES = sorted(
    (
        (module.__name__.rsplit(".", 1)[-1], cls)
        for module in MODULES
        for _, cls in inspect.getmembers(module, inspect.isclass)
        if dataclasses.is_dataclass(cls) and cls.__module__ == module.__name__
    ),
    key=lambda pair: (pair[0], pair[1].__name__),
)


def test_every_rule_module_value_class_is_found() -> None:
    # The classes the runner mutates; a new one joins the test below by itself.
    names = {f"{m}.{c.__name__}" for m, c in VALUE_CLASSES}
    assert {
        "results.Failure",
        "results.EntryMismatch",
        "results.ModelFit",
        "accelerators.Assignment",
        "objects.Compiled",
        "admission.Admission",
        "resolution.Decision",
        "snapshot._Parts",
    } <= names


@pytest.mark.parametrize("cls", [pytest.param(c, id=f"{m}.{c.__name__}") for m, c in VALUE_CLASSES])
def test_value_objects_are_frozen(cls: type) -> None:
    fields = dataclasses.fields(cls)
    instance = cls(*(None for f in fields if f.init))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(instance, fields[0].name, "changed")
