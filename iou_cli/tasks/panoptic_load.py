"""The two panoptic JSONs read at once: with ``--jobs`` above 1, a forked process reads the
predictions while this one reads the ground truth and starts numba (~0.25, ~0.2 and ~0.3 s
of a COCO-val-sized run before any image pair is scored: the serial part of ``--jobs``).
That part went from ~0.78 to ~0.6 s; two children (one per side, this process only
starting numba) were no faster on 2 cores and pickled both sides.

The child sends the loaded predictions back pickled (~3 MB for 5,000 images, ~0.1 s in
all), with what it read, which joins this run's read-set (no output goes over it). A file
refused there, or a child that fails or dies: this process reads the predictions itself,
after the ground truth as always: the same errors, in the same order, as one process.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

from ..loaders.files import STDIN, ReadSet, note_folder, note_read, reading
from ..loaders.panoptic import PanopticSet, load_panoptic

MIN_BYTES = 4 << 20  # predictions JSON below 4 MiB: the fork and the pickle cost more


def forkable(pred_json: str, gt_json: str, jobs: int) -> bool:
    """Whether the predictions are read in a forked process: ``jobs`` above 1, fork
    available, both JSONs regular files (not standard input) and the predictions big."""
    if jobs <= 1 or not hasattr(os, "fork") or STDIN in (pred_json, gt_json):
        return False
    try:
        return os.path.isfile(gt_json) and os.path.getsize(pred_json) >= MIN_BYTES
    except OSError:
        return False


def load_sides(
    pred_json: str, gt_json: str, pred_folder: str | None, gt_folder: str | None
) -> tuple[PanopticSet, PanopticSet]:
    """``(pred, gt)``: a forked process reads the predictions while this one reads the
    ground truth, then starts numba (the compiled counter's ~0.3 s start, which the
    workers forked later inherit; nothing when numba is not installed). :func:`forkable`
    says when this pays."""
    from ..workers import end_workers, fork_workers
    from .panoptic_match import JIT_MIN_PAIRS, jit_for

    procs = fork_workers(_read_predictions, [(pred_json, pred_folder)])
    try:
        gt = _load(gt_json, gt_folder, True)  # its error is the run's first, as always
        jit_for(JIT_MIN_PAIRS)  # meanwhile: numba's start (the run's counter, or none)
        got = _received(procs[0][1])
    except BaseException:  # the child is not waited for
        for proc, _ in procs:
            proc.kill()
        raise
    finally:
        end_workers(procs)
    if got is None:  # refused or failed there: read here, for the one-process error
        return _load(pred_json, pred_folder, False), gt
    pred, files, folders = got
    for f in files:
        note_read(f)
    for f in folders:
        note_folder(f)
    return pred, gt


def _load(path: str, folder: str | None, ground_truth: bool) -> PanopticSet:
    role = "ground truth" if ground_truth else "predictions"
    return load_panoptic(path, folder=folder, ground_truth=ground_truth, role=role)


def _received(recv: Any) -> tuple[PanopticSet, list[str], list[str]] | None:
    try:
        got = recv.recv()
    except (EOFError, OSError, pickle.UnpicklingError):  # the child died
        return None
    return got if isinstance(got, tuple) and len(got) == 3 else None


def _read_predictions(path: str, folder: str | None, send: Any) -> None:
    """The forked reader: the predictions and what it read; None on any failure (this
    process then reads them itself and words the error)."""
    from ..workers import init_worker

    init_worker()
    out: Any = None
    try:
        with reading(ReadSet()) as rs:
            side = _load(path, folder, False)
        out = (side, list(rs.files), list(rs.folders))
    except BaseException:  # noqa: BLE001 - any failure: the parent reads them itself
        out = None
    try:
        send.send(out)
    finally:
        send.close()


__all__ = ["MIN_BYTES", "forkable", "load_sides"]
