"""The files a load reads, the way ``kubectl apply -f`` finds them: regular files only, folders
walked in a fixed order, sizes bounded."""

from __future__ import annotations

import os
import stat
import sys
from typing import Iterator, Sequence

from ome_selector import validation as bounds
from ome_selector.cache.manifest_documents import _parse_text
from ome_selector.cache.manifest_types import _MANIFEST_SUFFIXES, LoadResult, ManifestError, _FileResult
from ome_selector.domain import errors

# --- files -------------------------------------------------------------------------------------


def _manifest_files(paths: Sequence[str], result: LoadResult) -> Iterator[str]:
    for path in paths:
        if os.path.isdir(path):
            found = sorted(_walk(path, result), key=os.fsencode)
            if not found and not result.unreadable_folders:
                result.warnings.append(f"{errors.printable(path)}: no .yaml or .yml files found")
            for rel in found:
                yield os.path.join(path, rel)
        elif os.path.lexists(path):
            yield path
        else:
            result.errors.append(f"{errors.printable(path)}: no such file or directory")
            result.path_errors.append(result.errors[-1])
            result.missing.append(result.errors[-1])


def _walk(root: str, result: LoadResult) -> Iterator[str]:
    def unreadable(exc: OSError) -> None:
        where = exc.filename if isinstance(exc.filename, str) else root
        line = f"{errors.printable(where)}: cannot read folder: {exc.strerror or exc}; its files are not loaded"
        result.warnings.append(line)
        result.unreadable_folders.append(line)

    for dirpath, _dirnames, filenames in os.walk(root, onerror=unreadable):
        for filename in filenames:
            if filename.endswith(_MANIFEST_SUFFIXES):
                yield os.path.relpath(os.path.join(dirpath, filename), root)


class _NotRegular(ManifestError):
    """The path is a FIFO, device or socket: skipped, never opened."""


def _load_file(file: str, budget: int, limit: int) -> _FileResult:
    try:
        name, text = _read_one(file, "a manifest")
    except _NotRegular as exc:
        return _FileResult(warnings=[str(exc)])
    except ManifestError as exc:
        return _FileResult(errors=[str(exc)])
    return _parse_text(name, text, budget=budget, limit=limit)


_FILE_TYPES = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _file_type(mode: int) -> str:
    for test, what in _FILE_TYPES:
        if test(mode):
            return what
    return "not a regular file"


def _decode(path: str, data: bytes) -> str:
    if len(data) > bounds.MAX_FILE_BYTES:
        raise ManifestError(
            f"{errors.printable(path)}: {errors.too_long_bytes(bounds.MAX_FILE_BYTES)} (a manifest file)"
        )
    # Bytes that are not UTF-8 become lone surrogates (U+DC80..U+DCFF); only the documents that
    # hold one are lost (``manifest_documents._documents``).
    return data.decode("utf-8", "surrogateescape")


def _read_one(path: str | os.PathLike[str], expected: str) -> tuple[str, str]:
    """(display name, text) of ``path`` (``-`` reads standard input, at most
    ``bounds.MAX_FILE_BYTES``). Raises ``ManifestError`` when it is a directory, not a regular
    file (``_NotRegular``: never opened), larger than the cap, not UTF-8, or unreadable."""
    path = os.fspath(path)
    if path == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream (tests, embedding)
            return "<stdin>", _decode(
                "<stdin>", sys.stdin.read(bounds.MAX_FILE_BYTES + 1).encode("utf-8", "surrogateescape")
            )
        return "<stdin>", _decode("<stdin>", stream.read(bounds.MAX_FILE_BYTES + 1))
    shown = errors.printable(path)
    try:
        info = os.stat(path)  # follows symlinks: a link to /dev/zero is a character device
        if stat.S_ISDIR(info.st_mode):
            raise ManifestError(f"{shown}: is a directory, expected {expected} file")
        if not stat.S_ISREG(info.st_mode):
            raise _NotRegular(f"{shown}: skipped: {_file_type(info.st_mode)}, not a regular file")
        if info.st_size > bounds.MAX_FILE_BYTES:
            raise ManifestError(
                f"{shown}: {errors.too_long_bytes(bounds.MAX_FILE_BYTES)} "
                f"(a manifest file; this one has {info.st_size})"
            )
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # replaced since the stat
                raise _NotRegular(f"{shown}: skipped: not a regular file")
            data = handle.read(bounds.MAX_FILE_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ManifestError(f"{shown}: cannot read: {reason}") from None
    return path, _decode(path, data)
