"""All cores of one machine: the map over worker processes, one reduce.

The joined dataset is shared with the workers by ``fork`` (copy-on-write: no worker copies
the predictions); the images are split into parts (part ``s`` of ``P``: the images whose
ordinal is ``s`` modulo ``P``; ``P`` at least ``n``, more for big sets, see
:func:`n_parts`), which this process and ``n - 1`` workers match and encode as state bytes;
this process merges them and reduces once, so the result is the one-process result bit for
bit. Where ``fork`` is not available (Windows,
macOS' default), the map runs in this process.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..data import Dataset
from ..errors import UsageError
from .partial import PartialState, merge_states

_JOB: dict[str, Any] = {}  # what forked workers read (set just before the fork)


def resolve_jobs(jobs: int) -> int:
    """``--jobs``: 0 means every core this process may use; negative is a usage error."""
    if jobs < 0:
        raise UsageError(f"--jobs: expected 0 (all cores) or a positive number, got {jobs}")
    from ..workers import cores

    return cores(jobs)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def shard_mask(n_images: int, k: int, n: int) -> np.ndarray:
    """Images of shard ``k`` of ``n`` (0-based): every ``n``-th image from the ``k``-th."""
    mask = np.zeros(n_images, dtype=bool)
    mask[k::n] = True
    return mask


def _work(s: int) -> bytes:
    """The state bytes of part ``s`` (of ``_JOB["parts"]``): every ``parts``-th image."""
    from .build import build_state
    from .codec import to_bytes

    job = _JOB
    ds: Dataset = job["ds"]
    mask = shard_mask(len(ds.images), s, job["parts"])
    if job["mask"] is not None:
        mask &= job["mask"]
    state = build_state(ds, job["protocol"], job["options"], image_mask=mask, fp=job["fp"])
    return to_bytes(state)


PART_PREDICTIONS = 300_000  # predictions matched at once by one process (its peak memory)


def n_parts(n_images: int, n_predictions: int, n: int) -> int:
    """Parts of the images for ``n`` processes: at least ``n``, more for big sets so that
    each process matches about ``PART_PREDICTIONS`` at a time (at most 8 each)."""
    want = max(n, -(-n_predictions // PART_PREDICTIONS))
    return max(1, min(want, 8 * n, n_images))


def parallel_state(
    ds: Dataset,
    protocol: str,
    options: Mapping[str, Any],
    jobs: int,
    image_mask: np.ndarray | None = None,
) -> PartialState:
    """The state of ``ds`` (of the images ``image_mask`` marks; default all), matched by
    ``jobs`` worker processes (see the module docstring); ``jobs`` 1 (or no ``fork``)
    matches here."""
    from .build import build_state, fingerprint

    n = min(resolve_jobs(jobs), max(len(ds.images), 1))
    fp = fingerprint(ds)
    if n <= 1 or not can_fork():
        return build_state(ds, protocol, options, image_mask=image_mask, fp=fp)
    from .codec import from_bytes

    parts = n_parts(len(ds.images), len(ds.pred), n)
    _JOB.update(
        ds=ds, protocol=protocol, options=dict(options), parts=parts, fp=fp, mask=image_mask
    )
    try:
        from ..workers import init_worker

        # n - 1 workers and this process (it would only wait): one fork and one process less;
        # a big set in more parts than processes: each matches a part at a time (memory)
        mine = list(range(0, parts, n))
        theirs = [s for s in range(parts) if s % n]
        with multiprocessing.get_context("fork").Pool(n - 1, init_worker) as pool:
            pending = pool.map_async(_work, theirs, chunksize=1)
            done = [_work(s) for s in mine]  # through its bytes too: every part alike
            done += pending.get()
    finally:
        _JOB.clear()
    order = [*mine, *theirs]
    return merge_states([from_bytes(b, f"part {s + 1}") for s, b in zip(order, done, strict=True)])


def parse_shard(text: str) -> tuple[int, int]:
    """``--shard K/N`` (1 <= K <= N)."""
    k, sep, n = text.partition("/")
    try:
        kk, nn = int(k), int(n)
    except ValueError:
        kk = nn = 0
    if not sep or not (1 <= kk <= nn):
        raise UsageError(f"--shard: expected K/N with 1 <= K <= N (such as 2/8), got {text!r}")
    return kk, nn


def shard_state(
    ds: Dataset,
    protocol: str,
    options: Mapping[str, Any],
    shard: tuple[int, int] | None,
    jobs: int = 1,
) -> PartialState:
    """The state of shard ``(k, n)`` of ``ds`` (every ``n``-th image from the ``k``-th,
    1-based, in the ground truth's image order; None: every image)."""
    mask = None
    if shard is not None:
        k, n = shard
        if not (1 <= k <= n):
            raise UsageError(f"--shard: expected K/N with 1 <= K <= N, got {k}/{n}")
        mask = shard_mask(len(ds.images), k - 1, n)
    state = parallel_state(ds, protocol, options, jobs, image_mask=mask)
    state.header["shard"] = None if shard is None else f"{shard[0]}/{shard[1]}"
    return state


CLASS_SPLIT = ("coco",)  # protocols whose --jobs splits the classes (:mod:`.classjobs`)


KPT_SPLIT_MIN = PART_PREDICTIONS  # keypoint predictions below which the image split loses


def split_pays(ds: Dataset, protocol: str) -> bool:
    """Whether :func:`parallel_result` beats one process on ``ds``. Not for keypoints of one
    class (the image split; COCO's class split needs two classes) under
    ``KPT_SPLIT_MIN`` predictions: at COCO val's size (100k) this process's half, the
    parts' copies and the reduce took 0.17 s of CPU where one process takes 0.155 s, and
    the wall time doubled (forks, a pool)."""
    return not (
        ds.gt.keypoints is not None
        and len(ds.pred) < KPT_SPLIT_MIN
        and not (protocol in CLASS_SPLIT and len(ds.categories) > 1)
    )


def parallel_result(ds: Dataset, protocol: str, options: Mapping[str, Any], jobs: int) -> Any:
    """The Result of ``ds`` matched by ``jobs`` workers and reduced here (COCO: each
    process evaluates a group of the classes, :mod:`.classjobs`)."""
    from .reduce import result

    n = min(resolve_jobs(jobs), max(len(ds.categories), 1))
    if protocol in CLASS_SPLIT and n > 1 and can_fork():
        from .classjobs import class_parallel_result

        return class_parallel_result(ds, dict(options), n)
    return result(parallel_state(ds, protocol, options, jobs), resolve_jobs(jobs))
