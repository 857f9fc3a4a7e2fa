"""Operator and constant mutation testing of the rule modules against the fast test layer.

Usage (from the repository root, with the dev venv)::

    .venv/bin/python scripts/mutation.py                 # 150 random mutants, seed 12, 2 jobs
    .venv/bin/python scripts/mutation.py --sample 0      # every mutant (slow: about 2,000)
    .venv/bin/python scripts/mutation.py --list          # the mutants, without running them
    .venv/bin/python scripts/mutation.py --ids checks.py:41 accelerators.py:7
    .venv/bin/python scripts/mutation.py --without-new-tests   # without the tests the mutants found
    .venv/bin/python scripts/mutation.py --rerun build/mutation.json  # only that run's survivors

Each mutant changes one place of one module: a comparison (``<`` / ``<=``, ``>`` / ``>=``,
``==`` / ``!=``, ``in`` / ``not in``, ``is`` / ``is not``), ``and`` / ``or``, an arithmetic or set
operator, a removed ``not`` or unary minus, ``True`` / ``False``, an integer ``n`` -> ``n + 1``,
or a plain string constant (not a docstring, an f-string part or an annotation) -> ``""`` (or
``"~"`` for an empty one). ``dataclass(slots=...)`` is left alone: it changes only the memory
layout, so its mutants are equivalent by construction. The mutated module is written to a temporary directory together with
a ``sitecustomize.py`` (put first on ``PYTHONPATH``) that makes ``ome_selector.<module>`` load
from it; the rest of the package is the installed one, and the working tree is never touched. A mutant is *caught* when ``pytest -m fast -x`` fails (or times out): first on
the test files closest to the mutated module, then on the other rule-level test files, then, if
they all pass, on the whole fast layer.

It prints one line per mutant and ``caught N/M (P%)`` at the end, and writes the results as
JSON (``--out``, default ``build/mutation.json``). The exit status is 0 when the share caught is
at least ``--target`` percent (default 95), 1 otherwise.

Why not mutmut (3.8.1 on PyPI): it is configured through ``[tool.mutmut]`` in pyproject.toml or
setup.cfg, copies the project into ``mutants/`` and runs its own test driver; this runner needs no
configuration, samples a fixed random subset and runs the fast layer exactly as CI does.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "server" / "ome_selector"
# The rule modules: the checks, versions, sizes, quantities, accelerator-class policy, ingestion,
# the snapshot (runtime groups in fetch order, inheritance chains, incremental writes), the engine, what was lifecycle.py
# (resolution, admission, components, effective, reconcile), the runtime webhook and the runtime
# tree.
# The selection checks (rules/), one file per check.
RULES_FILES = (
    "checks.py",
    "results.py",
    "disabled.py",
    "accelerator_class.py",
    "deployment_mode.py",
    "model_format.py",
    "model_size.py",
    "scoring.py",
    "auto_select.py",
)
RULE_MODULES = (
    *RULES_FILES,
    "versions.py",
    "sizes.py",
    "quantities.py",
    "accelerators.py",
    "ingest.py",
    "groups.py",
    "chains.py",
    "snapshot.py",
    "engine.py",
    "resolution.py",
    "admission.py",
    "components.py",
    "effective.py",
    "reconcile.py",
    "runtime_webhook.py",
    "tree.py",
)
# Where each rule module lives in the package (its mutant ids keep the file name).
MODULE_PATHS = {
    **{module: f"rules/{module}" for module in RULES_FILES},
    "versions.py": "domain/versions.py",
    "sizes.py": "domain/sizes.py",
    "quantities.py": "domain/quantities.py",
    "accelerators.py": "rules/accelerators.py",
    "ingest.py": "cache/ingest.py",
    "groups.py": "cache/groups.py",
    "chains.py": "cache/chains.py",
    "snapshot.py": "cache/snapshot.py",
    "engine.py": "engine/evaluation.py",
    "fits.py": "engine/fits.py",
    "ranking.py": "engine/ranking.py",
    "resolution.py": "flows/resolution.py",
    "admission.py": "flows/admission.py",
    "components.py": "flows/components.py",
    "effective.py": "flows/effective.py",
    "reconcile.py": "flows/reconcile.py",
    "runtime_webhook.py": "flows/runtime_webhook.py",
    "tree.py": "flows/tree.py",
}
# Rule-level test files run first: most mutants fail one of them within a few seconds.
QUICK_TESTS = (
    "tests/unit/rules/test_check_table.py",
    "tests/unit/*/test_mutants_*.py",
    "tests/unit/domain/test_versions.py",
    "tests/unit/domain/test_sizes.py",
    "tests/unit/rules/test_accelerators.py",
    "tests/docs/test_matching_docs.py",
    "tests/docs/test_scoring_ranking.py",
    "tests/unit/flows/test_admission.py",
    "tests/unit/flows/test_reconcile.py",
    "tests/unit/flows/test_effective.py",
    "tests/unit/flows/test_named_runtime.py",
    "tests/docs/test_explain_reasons.py",
    "tests/unit/flows/test_runtime_webhook.py",
    "tests/unit/cache/test_cache_writes.py",
    "tests/unit/engine/test_fast_path.py",
)
# Run before the quick files: the tests closest to each module (most mutants die here).
FOCUS_TESTS = {
    **{
        module: (
            "tests/unit/rules/test_check_table.py",
            "tests/unit/rules/test_mutants_checks.py",
            "tests/docs/test_matching_docs.py",
        )
        for module in RULES_FILES
    },
    "versions.py": (
        "tests/unit/domain/test_mutants_versions.py",
        "tests/unit/domain/test_versions.py",
        "tests/unit/rules/test_check_table.py",
    ),
    "sizes.py": ("tests/unit/domain/test_sizes.py", "tests/unit/rules/test_check_table.py"),
    "quantities.py": ("tests/unit/rules/test_mutants_accelerators.py", "tests/unit/rules/test_accelerators.py"),
    "accelerators.py": ("tests/unit/rules/test_mutants_accelerators.py", "tests/unit/rules/test_accelerators.py"),
    "ingest.py": (
        "tests/unit/cache/test_mutants_ingest.py",
        "tests/unit/rules/test_check_table.py",
        "tests/docs/test_matching_docs.py",
    ),
    "groups.py": ("tests/unit/cache/test_mutants_groups.py", "tests/unit/engine/test_fast_path.py"),
    "chains.py": ("tests/unit/cache/test_mutants_snapshot.py", "tests/unit/cache/test_cache_writes.py"),
    "snapshot.py": (
        "tests/unit/cache/test_mutants_snapshot.py",
        "tests/unit/cache/test_cache_writes.py",
        "tests/unit/engine/test_fast_path.py",
    ),
    "runtime_webhook.py": ("tests/unit/flows/test_runtime_webhook.py",),
    "fits.py": ("tests/unit/engine/test_fit_sharing.py", "tests/unit/engine/test_fast_path.py"),
    "ranking.py": (
        "tests/unit/engine/test_fit_sharing.py",
        "tests/docs/test_scoring_ranking.py",
        "tests/unit/engine/test_fast_path.py",
    ),
    "engine.py": (
        "tests/unit/engine/test_fast_path.py",
        "tests/docs/test_scoring_ranking.py",
        "tests/docs/test_no_runtime_message.py",
        "tests/docs/test_explain_reasons.py",
    ),
    **{
        module: (
            "tests/unit/flows/test_mutants_lifecycle.py",
            "tests/unit/flows/test_admission.py",
            "tests/unit/flows/test_reconcile.py",
            "tests/unit/flows/test_effective.py",
            "tests/unit/flows/test_named_runtime.py",
        )
        for module in ("resolution.py", "admission.py", "components.py", "effective.py", "reconcile.py")
    },
    "tree.py": ("tests/unit/flows/test_tree.py",),
}
NEW_TESTS = ("tests/unit/rules/test_check_table.py", "tests/unit/*/test_mutants_*.py")

_COMPARE = {
    ast.Lt: (ast.LtE,),
    ast.LtE: (ast.Lt,),
    ast.Gt: (ast.GtE,),
    ast.GtE: (ast.Gt,),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
}
_BINARY = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Add,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
    ast.Pow: ast.Mult,
    ast.BitOr: ast.BitAnd,
    ast.BitAnd: ast.BitOr,
}
_SYMBOL = {
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.And: "and",
    ast.Or: "or",
}


@dataclass(frozen=True)
class Mutant:
    """One mutation: ``id`` is ``<module>:<index>`` (the index in the module's traversal order)."""

    id: str
    module: str
    index: int
    line: int
    description: str
    source_line: str


class _Mutator(ast.NodeTransformer):
    """Visits a module in a fixed order, numbering every mutation point; with ``target`` set, it
    applies the mutation with that number. Annotations, docstrings and f-strings are skipped."""

    def __init__(self, target: int | None = None) -> None:
        self.target = target
        self.points: list[tuple[int, str]] = []
        self.applied = False
        self._keyword: str | None = None  # the keyword argument being visited, for descriptions

    def _hit(self, node: ast.AST, description: str) -> bool:
        index = len(self.points)
        self.points.append((getattr(node, "lineno", 0), description))
        if index == self.target:
            self.applied = True
            return True
        return False

    # ---- skipped subtrees
    def visit_arg(self, node: ast.arg) -> ast.AST:
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        if node.value is not None:
            node.value = self.visit(node.value)
        return node

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.args.kw_defaults = [None if d is None else self.visit(d) for d in node.args.kw_defaults]
        node.body = self._body(node.body)
        return node

    visit_FunctionDef = _visit_function  # type: ignore[assignment]
    visit_AsyncFunctionDef = _visit_function  # type: ignore[assignment]

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.body = self._body(node.body)
        return node

    def visit_Module(self, node: ast.Module) -> ast.AST:
        node.body = self._body(node.body)
        return node

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out = []
        for i, statement in enumerate(body):
            is_docstring = (
                i == 0
                and isinstance(statement, ast.Expr)
                and isinstance(statement.value, ast.Constant)
                and isinstance(statement.value.value, str)
            )
            out.append(statement if is_docstring else self.visit(statement))
        return out

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                value.value = self.visit(value.value)
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        return node

    def visit_keyword(self, node: ast.keyword) -> ast.AST:
        if node.arg == "slots":  # dataclass(slots=...) changes memory layout only: always equivalent
            return node
        outer, self._keyword = self._keyword, node.arg
        node.value = self.visit(node.value)
        self._keyword = outer
        return node

    # ---- mutation points
    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        for i, op in enumerate(node.ops):
            for replacement in _COMPARE.get(type(op), ()):
                if self._hit(node, f"{_SYMBOL[type(op)]} -> {_SYMBOL[replacement]}"):
                    node.ops[i] = replacement()
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        other = ast.Or if isinstance(node.op, ast.And) else ast.And
        if self._hit(node, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[other]}"):
            node.op = other()
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        replacement = _BINARY.get(type(node.op))
        if replacement is not None and self._hit(node, f"{_SYMBOL[type(node.op)]} -> {_SYMBOL[replacement]}"):
            node.op = replacement()
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        replacement = _BINARY.get(type(node.op))
        if replacement is not None and self._hit(node, f"{_SYMBOL[type(node.op)]}= -> {_SYMBOL[replacement]}="):
            node.op = replacement()
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not) and self._hit(node, "not x -> x"):
            return node.operand
        if isinstance(node.op, ast.USub) and self._hit(node, "-x -> x"):
            return node.operand
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        value = node.value
        named = f"{self._keyword}=" if self._keyword else ""
        if isinstance(value, bool):
            if self._hit(node, f"{named}{value} -> {not value}"):
                return ast.copy_location(ast.Constant(not value), node)
        elif isinstance(value, int):
            if self._hit(node, f"{value} -> {value + 1}"):
                return ast.copy_location(ast.Constant(value + 1), node)
        elif isinstance(value, str):
            replacement = "" if value else "~"
            if self._hit(node, f"{value[:40]!r} -> {replacement!r}"):
                return ast.copy_location(ast.Constant(replacement), node)
        return node


def enumerate_mutants(modules: tuple[str, ...] = RULE_MODULES) -> list[Mutant]:
    """Every mutant of ``modules``, in a fixed order."""
    out = []
    for module in modules:
        text = (PACKAGE / MODULE_PATHS[module]).read_text()
        lines = text.splitlines()
        mutator = _Mutator()
        mutator.visit(ast.parse(text))
        for index, (line, description) in enumerate(mutator.points):
            out.append(
                Mutant(f"{module}:{index}", module, index, line, description, lines[line - 1].strip() if line else "")
            )
    return out


def mutated_source(mutant: Mutant | None, module: str) -> str:
    """The module's source with ``mutant`` applied (None: the unmutated module, unparsed alike)."""
    tree = ast.parse((PACKAGE / MODULE_PATHS[module]).read_text())
    mutator = _Mutator(None if mutant is None else mutant.index)
    tree = mutator.visit(tree)
    if mutant is not None and not mutator.applied:
        raise RuntimeError(f"mutant {mutant.id} not applied")
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _pytest(env: dict[str, str], targets: list[str], extra: list[str], timeout: float) -> tuple[str, float]:
    """Run the fast layer on ``targets``: ``passed``, ``failed`` or ``timeout``, and the time."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-m", "fast", *extra, *targets]
    start = time.monotonic()
    try:
        process = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start
    elapsed = time.monotonic() - start
    # 0: all passed; 5: nothing collected (counts as passed); anything else: a failure or error.
    return ("passed" if process.returncode in (0, 5) else "failed"), elapsed


def _quick_targets(
    extra: list[str], patterns: tuple[str, ...] = QUICK_TESTS, leave_out: tuple[str, ...] = ()
) -> list[str]:
    out: list[str] = []
    for pattern in patterns:
        for path in sorted(ROOT.glob(pattern)):
            relative = str(path.relative_to(ROOT))
            ignored = any(
                relative == e.split("=", 1)[-1] or Path(relative).match(e.split("=", 1)[-1])
                for e in extra
                if e.startswith("--ignore")
            )
            if not ignored and relative not in leave_out and relative not in out:
                out.append(relative)
    return out


_SITECUSTOMIZE = """\
import importlib.util, json, os, sys
_FILES = json.loads(os.environ.get("OME_MUTANT_FILES", "{}"))


class _MutantFinder:
    @staticmethod
    def find_spec(fullname, path=None, target=None):
        return importlib.util.spec_from_file_location(fullname, _FILES[fullname]) if fullname in _FILES else None


if _FILES:
    sys.meta_path.insert(0, _MutantFinder)
"""


def _environment(tmp: Path, files: dict[str, str]) -> dict[str, str]:
    """PYTHONPATH with a ``sitecustomize`` that loads ``files`` (module name -> path) instead of
    the installed modules; the rest of the package (and its examples) stays where it is."""
    (tmp / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    pythonpath = os.pathsep.join(p for p in (str(tmp), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": pythonpath, "OME_MUTANT_FILES": json.dumps(files)}


def run_mutant(mutant: Mutant | None, extra: list[str], timeout: float) -> dict[str, object]:
    """Write the mutated module (every rule module, unparsed, for the baseline) to a temporary
    directory and run the two stages against it; the result as a dict."""
    with tempfile.TemporaryDirectory(prefix="ome-mutant-") as name:
        tmp = Path(name)
        files = {}
        for module in RULE_MODULES if mutant is None else (mutant.module,):
            path = tmp / module
            path.write_text(mutated_source(mutant, module))
            files["ome_selector." + MODULE_PATHS[module].removesuffix(".py").replace("/", ".")] = str(path)
        env = _environment(tmp, files)
        focus = _quick_targets(extra, FOCUS_TESTS.get(mutant.module, ()) if mutant is not None else ())
        status, elapsed, stage = "passed", 0.0, "focus"
        if focus:
            status, elapsed = _pytest(env, focus, extra, timeout)
        if status == "passed":
            quick = _quick_targets(extra, leave_out=tuple(focus))
            status, more = _pytest(env, quick, extra, timeout)
            elapsed += more
            stage = "quick"
        if status == "passed":
            status, more = _pytest(env, ["tests"], extra, timeout)
            elapsed += more
            stage = "fast layer"
    result: dict[str, object] = asdict(mutant) if mutant is not None else {"id": "baseline"}
    result.update(status=status, caught=status != "passed", stage=stage, seconds=round(elapsed, 1))
    return result


def _shadowing_works() -> bool:
    """The mutated file must be the module the tests import."""
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "sizes.py").write_text("SHADOW = True\n")
        env = _environment(tmp, {"ome_selector.domain.sizes": str(tmp / "sizes.py")})
        code = (
            "import ome_selector.domain.sizes as s, ome_selector.domain.objects as d;"
            " print(getattr(s, 'SHADOW', False), d.__file__)"
        )
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
        return out.stdout.split() == ["True", str(PACKAGE / "domain" / "objects.py")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sample", type=int, default=150, help="random mutants to run; 0 runs every mutant (default 150)"
    )
    parser.add_argument("--seed", type=int, default=12, help="seed of the sample (default 12)")
    parser.add_argument("--jobs", type=int, default=2, help="mutants run in parallel (default 2)")
    parser.add_argument(
        "--timeout", type=float, default=300.0, help="seconds per pytest run; a timeout counts as caught"
    )
    parser.add_argument("--modules", nargs="+", default=list(RULE_MODULES), help="rule modules to mutate")
    parser.add_argument("--ids", nargs="+", help="run only these mutant ids (module:index)")
    parser.add_argument("--rerun", type=Path, help="run only the survivors of this earlier result file")
    parser.add_argument(
        "--without-new-tests",
        action="store_true",
        help="leave out tests/unit/rules/test_check_table.py and tests/unit/*/test_mutants_*.py",
    )
    parser.add_argument("--skip-baseline", action="store_true", help="do not first run the unmutated modules")
    parser.add_argument("--list", action="store_true", help="print the selected mutants and exit")
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "mutation.json", help="result file (JSON)")
    parser.add_argument("--target", type=float, default=95.0, help="percent caught needed for exit status 0")
    args = parser.parse_args(argv)

    mutants = enumerate_mutants(tuple(args.modules))
    total_points = len(mutants)
    if args.ids:
        wanted = set(args.ids)
        mutants = [m for m in mutants if m.id in wanted]
    elif args.rerun:
        earlier = json.loads(args.rerun.read_text())
        survivors = {r["id"] for r in earlier["results"] if not r["caught"]}
        mutants = [m for m in mutants if m.id in survivors]
    elif args.sample:
        mutants = sorted(
            random.Random(args.seed).sample(mutants, min(args.sample, len(mutants))), key=lambda m: (m.module, m.index)
        )
    if args.list:
        for m in mutants:
            print(f"{m.id:20} {m.module}:{m.line:<4} {m.description:32} {m.source_line[:90]}")
        print(f"{len(mutants)} of {total_points} mutants")
        return 0

    extra = [f"--ignore-glob={p}" for p in NEW_TESTS] if args.without_new_tests else []
    if not _shadowing_works():
        print("a package on PYTHONPATH does not shadow the installed ome_selector; cannot run", file=sys.stderr)
        return 2
    if not args.skip_baseline:
        baseline = run_mutant(None, extra, args.timeout)
        if baseline["caught"]:
            print(
                f"the unmutated (re-generated) modules fail the fast layer ({baseline['status']}); fix that first",
                file=sys.stderr,
            )
            return 2
        print(f"baseline passes ({baseline['seconds']}s)")
    print(f"running {len(mutants)} of {total_points} mutants with {args.jobs} jobs", flush=True)

    results: list[dict[str, object]] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = {pool.submit(run_mutant, m, extra, args.timeout): m for m in mutants}
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            r = future.result()
            results.append(r)
            verdict = "caught  " if r["caught"] else "SURVIVED"
            print(
                f"[{done:3}/{len(mutants)}] {verdict} {r['id']:18} line {r['line']:<4} {r['description']:30} {str(r['source_line'])[:70]} ({r['stage']}, {r['seconds']}s)",
                flush=True,
            )
    results.sort(key=lambda r: (str(r["module"]), int(r["index"])))  # type: ignore[call-overload]
    caught = sum(1 for r in results if r["caught"])
    share = 100.0 * caught / len(results) if results else 100.0
    survivors = [r for r in results if not r["caught"]]
    if survivors:
        print("survivors:")
        for r in survivors:
            print(f"  {r['id']:18} {r['module']}:{r['line']:<4} {r['description']:30} {r['source_line']}")
    print(f"caught {caught}/{len(results)} ({share:.1f}%)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "caught": caught,
                "total": len(results),
                "points": total_points,
                "seed": args.seed,
                "without_new_tests": args.without_new_tests,
                "results": results,
            },
            indent=1,
        )
        + "\n"
    )
    return 0 if share >= args.target else 1


if __name__ == "__main__":
    sys.exit(main())
