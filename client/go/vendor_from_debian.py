#!/usr/bin/env python3
"""Fill client/go/vendor/ (and the require block of client/go/go.mod) from Debian's Go packages.

The Go module proxy is not reachable from CI, so `go mod vendor` cannot run. Debian's
golang-*-dev packages install the sources of grpc-go, protobuf-go and their dependencies under
/usr/share/gocode/src, which is enough to build this module in vendor mode:

    python3 client/go/vendor_from_debian.py          # write vendor/ and the requires in go.mod
    python3 client/go/vendor_from_debian.py --check  # also fail if go.mod had to change
    cd client/go && GOFLAGS=-mod=vendor GOPROXY=off go build ./...

How it works:
  1. `go list -deps` runs in GOPATH mode over a throw-away copy of this module, with
     /usr/share/gocode as the second GOPATH entry, to find every non-standard package the
     module's packages import.
  2. Each package belongs to the module of the nearest go.mod above it. The module's version is
     its Debian package version when that is valid semver for the module path; otherwise the
     highest version another vendored module's go.mod requires (Debian's genproto is a git
     snapshot without a version); otherwise a placeholder pseudo-version.
  3. Each package's non-test files go to vendor/<import path>/, and vendor/modules.txt gets
     `# module version`, `## explicit; go X.Y` and the package list, which is what the go
     command checks against go.mod in -mod=vendor mode.

vendor/ is not committed: this script recreates it offline, byte for byte, from the same packages.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

GOCODE = Path("/usr/share/gocode/src")
HERE = Path(__file__).resolve().parent
PLACEHOLDER = "v0.0.0-00010101000000-000000000000"
SEMVER = re.compile(r"^v(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?$")
SKIP_DIRS = {"vendor", "bin", ".git", "testdata"}


@dataclass
class Module:
    path: str
    root: Path
    go_version: str | None = None
    requires: dict[str, str] = field(default_factory=dict)
    packages: list[tuple[str, Path]] = field(default_factory=list)
    version: str = PLACEHOLDER


def read_go_mod(path: Path) -> tuple[str | None, str | None, dict[str, str]]:
    """(module path, go directive, requires) of a go.mod; enough of the grammar for Debian's files."""
    module = go = None
    requires: dict[str, str] = {}
    in_block = False
    for raw in path.read_text().splitlines():
        line = raw.split("//", 1)[0].strip()
        if not line:
            continue
        if in_block:
            if line == ")":
                in_block = False
            elif len(line.split()) >= 2:
                name, ver = line.split()[:2]
                requires[name] = ver
            continue
        words = line.split()
        if words[0] == "module" and len(words) > 1:
            module = words[1].strip('"')
        elif words[0] == "go" and len(words) > 1:
            go = words[1]
        elif words[0] == "require":
            if words[1:2] == ["("]:
                in_block = True
            elif len(words) >= 3:
                requires[words[1]] = words[2]
    return module, go, requires


def list_deps(main_module: str) -> list[tuple[str, Path]]:
    """Import path and directory of every non-standard package the module depends on."""
    with tempfile.TemporaryDirectory(prefix="vendor-from-debian-") as tmp:
        copy = Path(tmp, "src", main_module)
        shutil.copytree(HERE, copy, ignore=lambda d, names: [n for n in names if n in SKIP_DIRS or n in ("go.mod", "go.sum")])
        env = dict(os.environ, GO111MODULE="off", GOFLAGS="", GOPROXY="off", GOPATH=f"{tmp}{os.pathsep}{GOCODE.parent}")
        fmt = "{{if not .Standard}}{{.ImportPath}}\t{{.Dir}}\t{{if .Error}}{{.Error.Err}}{{end}}{{range .DepsErrors}}{{.Err}} {{end}}{{end}}"
        proc = subprocess.run(["go", "list", "-e", "-deps", "-f", fmt, main_module + "/..."],
                              cwd=copy, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"vendor_from_debian: go list failed:\n{proc.stderr}")
    deps, errors = [], []
    for line in proc.stdout.splitlines():
        if not line.strip():
            continue
        imp, directory, err = (line.split("\t") + ["", ""])[:3]
        if err.strip():
            errors.append(f"{imp}: {err.strip()}")
        elif imp != main_module and not imp.startswith(main_module + "/"):
            if "/vendor/" in imp or not Path(directory).is_relative_to(GOCODE):
                errors.append(f"{imp}: resolved to {directory}, outside {GOCODE}")
            deps.append((imp, Path(directory)))
    if errors:
        sys.exit("vendor_from_debian: unresolved imports (install the matching golang-*-dev package):\n  "
                 + "\n  ".join(errors))
    return deps


def find_module(directory: Path, modules: dict[Path, Module]) -> Module:
    for root in (directory, *directory.parents):
        if root == GOCODE or not root.is_relative_to(GOCODE):
            break
        if root in modules:
            return modules[root]
        gomod = root / "go.mod"
        if gomod.is_file():
            path, go, reqs = read_go_mod(gomod)
            modules[root] = Module(path or root.relative_to(GOCODE).as_posix(), root, go, reqs)
            return modules[root]
    sys.exit(f"vendor_from_debian: no go.mod above {directory}; vendoring a GOPATH-only package is not supported")


def debian_version(root: Path) -> tuple[str | None, str]:
    """(semver candidate, raw Debian version) of the package that installed root."""
    owner = subprocess.run(["dpkg-query", "-S", str(root)], capture_output=True, text=True)
    if owner.returncode != 0:
        return None, "(not from a Debian package)"
    package = owner.stdout.split(":", 1)[0].split(",")[0].strip()
    ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True).stdout
    upstream = re.sub(r"^\d+:", "", ver.strip()).rsplit("-", 1)[0]  # drop epoch and Debian revision
    upstream = re.split(r"[+~]", upstream)[0]                        # drop +dfsg, ~git...
    return "v" + upstream, ver.strip()


def valid_for(module_path: str, version: str | None) -> bool:
    m = SEMVER.match(version or "")
    if not m:
        return False
    suffix = re.search(r"/v(\d+)$", module_path)
    major = int(m.group(1))
    return major == int(suffix.group(1)) if suffix else major <= 1


def semver_key(version: str) -> tuple:
    m = re.match(r"^v(\d+)\.(\d+)\.(\d+)(?:-(.*))?$", version)
    if not m:
        return (-1,)
    pre = m.group(4)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)), pre is None, pre or "")


def copy_package(src: Path, dst: Path) -> None:
    dst.mkdir(parents=True, exist_ok=True)
    for entry in sorted(src.iterdir()):
        if entry.is_file() and not entry.name.endswith("_test.go"):
            shutil.copy2(entry, dst / entry.name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="fail if go.mod's requires do not match the installed packages")
    args = ap.parse_args()

    go_mod = HERE / "go.mod"
    main_module, main_go, _ = read_go_mod(go_mod)
    if not main_module:
        sys.exit(f"vendor_from_debian: no module line in {go_mod}")
    if not GOCODE.is_dir():
        sys.exit(f"vendor_from_debian: {GOCODE} missing; apt-get install golang-google-grpc-dev golang-google-protobuf-dev")

    modules: dict[Path, Module] = {}
    for imp, directory in list_deps(main_module):
        find_module(directory, modules).packages.append((imp, directory))
    by_path = {m.path: m for m in modules.values()}

    for mod in by_path.values():
        deb, raw = debian_version(mod.root)
        if valid_for(mod.path, deb):
            mod.version = deb
        else:
            wanted = [o.requires[mod.path] for o in by_path.values() if mod.path in o.requires]
            wanted = [v for v in wanted if valid_for(mod.path, v)]
            if wanted:
                mod.version = max(wanted, key=semver_key)
            print(f"vendor_from_debian: {mod.path}: Debian version {raw} is not semver, using {mod.version}", file=sys.stderr)

    vendor = HERE / "vendor"
    shutil.rmtree(vendor, ignore_errors=True)
    vendor.mkdir()
    lines = []
    for path in sorted(by_path):
        mod = by_path[path]
        lines.append(f"# {path} {mod.version}")
        lines.append("## explicit" + (f"; go {mod.go_version}" if mod.go_version else ""))
        for imp, directory in sorted(mod.packages):
            copy_package(directory, vendor / imp)
            lines.append(imp)
    (vendor / "modules.txt").write_text("\n".join(lines) + "\n")

    require = "".join(f"\t{p} {by_path[p].version}\n" for p in sorted(by_path))
    new_go_mod = (f"module {main_module}\n\ngo {main_go or '1.19'}\n\n"
                  f"// Versions of the Debian bookworm packages that client/go/vendor_from_debian.py vendors.\n"
                  f"require (\n{require})\n")
    old_go_mod = go_mod.read_text()
    if new_go_mod != old_go_mod:
        if args.check:
            sys.exit("vendor_from_debian: go.mod does not match the installed Debian packages; "
                     "run client/go/vendor_from_debian.py and commit go.mod")
        go_mod.write_text(new_go_mod)
        print("vendor_from_debian: updated go.mod", file=sys.stderr)
    npkg = sum(len(m.packages) for m in by_path.values())
    print(f"vendor_from_debian: vendored {npkg} packages from {len(by_path)} modules into {vendor}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
