"""The two panoptic JSONs read at once: with ``--jobs`` above 1, a forked process reads the
predictions while this one reads the ground truth (each ~0.3 s of a COCO-val-sized run,
before any image pair is scored: the serial part of ``--jobs``).

The child sends the loaded predictions back pickled (~3 MB for 5,000 images, ~0.1 s in
all), with what it read, which joins this run's read-set (no output goes over it). Anything
else (a refused file, a child that fails or dies) and this process reads the predictions
itself, after the ground truth as always: the same errors, in the same order, as one
process.
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
    """``(pred, gt)``: the ground truth read here while a forked process reads the
    predictions (:func:`forkable` says when this pays)."""
    from ..workers import end_workers, fork_workers

    procs = fork_workers(_read_predictions, [(pred_json, pred_folder)])
    try:
        gt = load_panoptic(gt_json, folder=gt_folder, ground_truth=True, role="ground truth")
    except BaseException:  # the ground truth's error is the run's: the child is not waited for
        for proc, _ in procs:
            proc.kill()
        end_workers(procs)
        raise
    try:
        got = _received(procs[0][1])
    finally:
        end_workers(procs)
    if got is None:  # refused or failed there: read here, for the one-process error
        pred = load_panoptic(pred_json, folder=pred_folder, ground_truth=False, role="predictions")
        return pred, gt
    pred, files, folders = got
    for path in files:
        note_read(path)
    for path in folders:
        note_folder(path)
    return pred, gt


def _received(recv: Any) -> tuple[PanopticSet, list[str], list[str]] | None:
    try:
        got = pickle.loads(recv.recv_bytes())
    except (EOFError, OSError, pickle.UnpicklingError):  # the child died
        return None
    return got if isinstance(got, tuple) and len(got) == 3 else None


def _read_predictions(pred_json: str, pred_folder: str | None, send: Any) -> None:
    """The forked reader: the predictions and what it read, pickled; None on any failure
    (this process then reads them itself and words the error)."""
    from ..workers import init_worker

    init_worker()
    out: Any = None
    try:
        with reading(ReadSet()) as rs:
            pred = load_panoptic(
                pred_json, folder=pred_folder, ground_truth=False, role="predictions"
            )
        out = (pred, list(rs.files), list(rs.folders))
    except BaseException:  # noqa: BLE001 - any failure: the parent reads them itself
        out = None
    try:
        send.send_bytes(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        send.close()


__all__ = ["MIN_BYTES", "forkable", "load_sides"]
