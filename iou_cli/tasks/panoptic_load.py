"""The two panoptic JSONs read beside numba's start: with ``--jobs`` above 1, a forked
process reads the ground truth, then the predictions, while this one starts numba (~0.4 s
of a COCO-val-sized run before any image pair is scored, the biggest part of the serial
start of ``--jobs``; each JSON takes ~0.1 s, :mod:`~iou_cli.loaders.panoptic_json`).

The child sends both sides back pickled (as flat columns, ~5 MB and ~0.02 s to load for
5,000 images), with what it read, which joins this run's read-set (no output goes over it).
A side refused there, or a child that fails or dies: this process reads that side itself,
the ground truth first as always: the same errors, in the same order, as one process.
"""

from __future__ import annotations

import os
import pickle
from typing import Any

from ..loaders.files import STDIN, ReadSet, note_folder, note_read, reading
from ..loaders.panoptic import PanopticSet, load_panoptic

MIN_BYTES = 4 << 20  # predictions JSON below 4 MiB: the fork and the pickle cost more


def forkable(pred_json: str, gt_json: str, jobs: int) -> bool:
    """Whether the JSONs are read in a forked process: ``jobs`` above 1, fork available,
    both JSONs regular files (not standard input) and the predictions big."""
    if jobs <= 1 or not hasattr(os, "fork") or STDIN in (pred_json, gt_json):
        return False
    try:
        return os.path.isfile(gt_json) and os.path.getsize(pred_json) >= MIN_BYTES
    except OSError:
        return False


def load_sides(
    pred_json: str, gt_json: str, pred_folder: str | None, gt_folder: str | None
) -> tuple[PanopticSet, PanopticSet]:
    """``(pred, gt)``: a forked process reads both while this one starts numba (the
    compiled counter's ~0.4 s start, which the workers forked later inherit; nothing when
    numba is not installed). :func:`forkable` says when this pays."""
    from ..workers import end_workers, fork_workers
    from .panoptic_match import JIT_MIN_PAIRS, jit_for

    procs = fork_workers(_read_sides, [(pred_json, pred_folder, gt_json, gt_folder)])
    collected = False
    try:
        jit_for(JIT_MIN_PAIRS)  # meanwhile: numba's start (the run's counter, or none)
        got = _received(procs[0][1])
        collected = True
    finally:
        end_workers(procs, collected)  # (on an exception the child is not waited for)
    gt, pred, files, folders = got
    for f in files:
        note_read(f)
    for f in folders:
        note_folder(f)
    if gt is None:  # refused or failed there: read here, for the one-process error
        gt = _load(gt_json, gt_folder, True)
    if pred is None:
        pred = _load(pred_json, pred_folder, False)
    return pred, gt


def _load(path: str, folder: str | None, ground_truth: bool) -> PanopticSet:
    role = "ground truth" if ground_truth else "predictions"
    return load_panoptic(path, folder=folder, ground_truth=ground_truth, role=role)


Received = tuple[PanopticSet | None, PanopticSet | None, list[str], list[str]]


def _received(recv: Any) -> Received:
    try:
        got = recv.recv()
    except (EOFError, OSError, pickle.UnpicklingError):  # the child died
        return None, None, [], []
    ok = isinstance(got, tuple) and len(got) == 4
    return got if ok else (None, None, [], [])


def _read_sides(
    pred_path: str, pred_folder: str | None, gt_path: str, gt_folder: str | None, send: Any
) -> None:
    """The forked reader: the ground truth, the predictions (None for a side it could not
    read: this process then reads it itself and words the error) and what it read."""
    from ..workers import init_worker

    init_worker()
    sides: list[PanopticSet | None] = [None, None]
    rs = ReadSet()
    try:
        with reading(rs):
            sides[0] = _load(gt_path, gt_folder, True)
            sides[1] = _load(pred_path, pred_folder, False)
    except BaseException:  # noqa: BLE001 - any failure: the parent reads that side itself
        pass
    try:
        send.send((sides[0], sides[1], list(rs.files), list(rs.folders)))
    except BaseException:  # noqa: BLE001 - unpicklable or a closed pipe: the parent reads
        pass
    finally:
        send.close()


__all__ = ["MIN_BYTES", "forkable", "load_sides"]
