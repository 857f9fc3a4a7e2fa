"""The package's folders are its layers, and no import runs upward (design/architecture.md, "One
boundary per RPC"): a module imports only modules of its own layer or of the layers below it."""

from __future__ import annotations

import ast
from pathlib import Path

import ome_selector

PACKAGE = Path(ome_selector.__file__).resolve().parent
# Bottom to top; a module may import its own layer and every layer before it.
LAYERS = ("examples", "domain", "texts", "validation", "rules", "cache", "engine", "flows", "rpc", "server", "cli")


def _layer(module: str) -> str:
    return module.removeprefix("ome_selector.").split(".")[0]


def _imports() -> list[tuple[str, str]]:
    """(importing module, imported module) for every ome_selector import, lazy ones included."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(("ome_selector", *path.relative_to(PACKAGE).with_suffix("").parts))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "ome_selector":
                if node.module == "ome_selector":
                    out.extend((module, f"ome_selector.{alias.name}") for alias in node.names)
                else:
                    out.append((module, node.module))
            elif isinstance(node, ast.Import):
                out.extend((module, a.name) for a in node.names if a.name.startswith("ome_selector."))
    return out


def test_every_module_is_in_a_layer() -> None:
    assert {_layer(module) for module, _ in _imports()} <= set(LAYERS)
    assert sorted(p.name for p in PACKAGE.iterdir() if not p.name.startswith("__")) == sorted(LAYERS)


def test_no_import_runs_upward() -> None:
    upward = [
        f"{module} -> {imported}"
        for module, imported in _imports()
        if LAYERS.index(_layer(imported)) > LAYERS.index(_layer(module))
    ]
    assert upward == []
