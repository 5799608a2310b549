"""The one output guard: every file iou-eval writes is checked here first.

A target is refused (``OutputError``, exit 2, before any work when the caller checks up
front, and again just before writing with everything the loaders read) when it is, or
resolves to (symlinks, hard links by device and inode, ``/dev/fd/N``), anything the run
read or will read, or lies inside an input folder. Two outputs of one run at one path are
refused; so is a second output to stdout, or stdout when it already carries the report.
What the run read comes from ONE place: the read-set of :mod:`iou_cli.loaders.files`.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence

from .errors import OutputError

STDOUT = "-"
_STDOUT_NAMES = ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1")


def identity(path: str) -> tuple[int, int] | None:
    """(device, inode) of what ``path`` resolves to, or None when nothing is there."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def is_stdout(path: str) -> bool:
    """``-``, ``/dev/stdout`` and its aliases, or the very file stdout writes to."""
    if path == STDOUT or path in _STDOUT_NAMES:
        return True
    try:
        a, b = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _inside(target: str, folder: str) -> bool:
    return target == folder or target.startswith(folder.rstrip(os.sep) + os.sep)


class _Inputs:
    """What the run read, resolved once: identities of files, real paths of folders."""

    def __init__(self, paths: Iterable[str], found: Iterable[str] = ()) -> None:
        self.ids: dict[tuple[int, int], str] = {}
        self.folders: dict[str, str] = {}
        self.files: dict[str, str] = {}
        self.given = set(paths)
        for p in dict.fromkeys([*self.given, *found]):
            if not p or p == STDOUT:
                continue
            try:
                st = os.stat(p)
            except (OSError, ValueError):
                self.files.setdefault(os.path.realpath(p), p)  # will be read: a name only
                continue
            if stat.S_ISDIR(st.st_mode):
                self.folders.setdefault(os.path.realpath(p), p)
            else:
                self.ids.setdefault((st.st_dev, st.st_ino), p)
                self.files.setdefault(os.path.realpath(p), p)

    def clash(self, path: str) -> str | None:
        """Why writing ``path`` would touch an input, or None."""
        real = os.path.realpath(path)
        ident = identity(path)
        hit = self.ids.get(ident) if ident is not None else None
        hit = hit or self.files.get(real)
        if hit is not None:
            if hit in self.given:
                return f"refusing to overwrite the input file {hit}"
            return f"refusing to overwrite {hit}, which this run read"
        for folder, shown in self.folders.items():
            if _inside(real, folder):
                return f"refusing to write into the input folder {shown}"
        return None


def check_target(
    path: str, inputs: Iterable[str] = (), read: Iterable[str] = (), *, folder: bool = False
) -> None:
    """Refuse ``path`` (a file, or a folder of figures when ``folder``) if writing it would
    touch any of ``inputs`` (the arguments) or ``read`` (the read-set)."""
    ins = _Inputs(inputs, read)
    why = ins.clash(path)
    if why:
        raise OutputError(f"{path}: {why}")
    if folder:
        if os.path.exists(path) and not os.path.isdir(path):
            raise OutputError(f"{path}: exists and is not a folder")
        if os.path.isdir(path):
            for entry in sorted(os.listdir(path)):  # a figure name that links to an input
                why = ins.clash(os.path.join(path, entry))
                if why and not os.path.isdir(os.path.join(path, entry)):
                    raise OutputError(f"{os.path.join(path, entry)}: {why}")
            return
    elif os.path.isdir(path):
        raise OutputError(f"{path}: is a folder")
    parent = os.path.dirname(os.path.realpath(path)) or "."
    if not os.path.isdir(parent):
        raise OutputError(f"{path}: folder {os.path.dirname(path) or '.'} does not exist")


def check_outputs(
    outputs: Sequence[tuple[str, str | None]],
    inputs: Iterable[str] = (),
    read: Iterable[str] = (),
    *,
    stdout_busy: bool = False,
    folders: Sequence[str] = ("--plots",),
) -> None:
    """All outputs of one run, ``(option, path)``: each checked by :func:`check_target`,
    no two at one path, at most one on stdout and none when stdout already carries
    machine-readable output (``stdout_busy``)."""
    ins, found = list(inputs), list(read)
    seen: dict[object, str] = {}
    on_stdout: str | None = None
    for option, path in outputs:
        if path is None:
            continue
        if is_stdout(path):
            if option in folders:
                raise OutputError(f"{path}: {option} needs a folder, not stdout")
            if on_stdout is not None:
                raise OutputError(f"{path}: {option} and {on_stdout} both write to stdout")
            if stdout_busy:
                raise OutputError(
                    f"{path}: {option} to stdout would mix with the report already written "
                    "there (add -q, or write it to a file)"
                )
            on_stdout = option
            continue
        keys: list[object] = [os.path.realpath(path)]
        ident = identity(path)
        if ident is not None:
            keys.append(ident)
        for k in keys:
            if k in seen:
                raise OutputError(f"{path}: {option} and {seen[k]} would write the same file")
        for k in keys:
            seen[k] = option
        check_target(path, ins, found, folder=option in folders)
