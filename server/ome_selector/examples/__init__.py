"""The embedded example catalog, shipped as package data.

The ``*.yaml`` files in this folder are a small catalog that reproduces the examples of the OME
pages on runtime accelerator-class matching, runtime deployment-mode matching and runtime
selection scoring (its worked example). ``ome-selector serve`` and the offline ``select`` /
``explain`` commands load it when no ``--manifests`` are given. ``inferenceservices/`` holds
InferenceServices to try against it; they are not part of the catalog.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

_SUFFIXES = (".yaml", ".yml")


def example_paths() -> list[str]:
    """The catalog's YAML files, in load order (sorted by name)."""
    return _yaml_files(resources.files(__name__))


def inference_service_paths() -> list[str]:
    """The example InferenceServices, sorted by name (not part of the catalog)."""
    return _yaml_files(resources.files(__name__).joinpath("inferenceservices"))


def _yaml_files(folder: Traversable) -> list[str]:
    names = sorted((entry.name for entry in folder.iterdir() if entry.name.endswith(_SUFFIXES)), key=str.encode)
    return [str(folder.joinpath(name)) for name in names]
