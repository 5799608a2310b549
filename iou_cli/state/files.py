"""Partial files on disk: write one, merge many (the ``--partial`` and ``merge`` verbs'
library calls)."""

from __future__ import annotations

import os
from collections.abc import Sequence

from ..errors import InputError, UsageError
from ..result import Result
from .partial import PartialState, merge_states


def read_partial(path: str) -> PartialState:
    """One partial file (errors located at ``path``)."""
    from .codec import from_bytes

    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except IsADirectoryError:
        raise InputError(path, None, "is a folder, not a partial file") from None
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None
    return from_bytes(data, path)


def merge_partials(paths: Sequence[str], *, allow_overlap: bool = False) -> PartialState:
    """The merged state of partial files (same ground truth and parameters; every image in
    one file only, unless ``allow_overlap``)."""
    if not paths:
        raise UsageError("merge: give at least one partial file")
    seen: dict[str, str] = {}
    for p in paths:
        real = os.path.realpath(p)
        if real in seen:
            raise UsageError(f"merge: {p} is given twice (also as {seen[real]})")
        seen[real] = p
    return merge_states([read_partial(p) for p in paths], allow_overlap=allow_overlap)


def merge_result(paths: Sequence[str], *, allow_overlap: bool = False) -> Result:
    """The Result of the union of partial files (what ``iou-eval PRED GT`` gives for it)."""
    from .reduce import result

    state = merge_partials(paths, allow_overlap=allow_overlap)
    n_all = int(state.header["n_images"])
    res = result(state)
    res.warnings.extend(state.header.get("warnings") or [])  # the inputs' (from the parts)
    covered = int(state.images.shape[0])
    res.info.append(
        f"merged {len(paths)} partial file(s): {len(state):,} evaluated predictions, "
        f"{covered:,} of {n_all:,} images"
    )
    if covered < n_all:
        res.warnings.append(
            f"the parts cover {covered:,} of the ground truth's {n_all:,} images: the other "
            "images' ground truths are not counted (is a shard missing?)"
        )
    res.meta = {"inputs": state.header.get("inputs")}
    return res
