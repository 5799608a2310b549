"""A head start for ``--jobs`` on keypoint results, before the command line is parsed.

Importing typer and building the commands takes ~50 ms of the console script's start, in
which the other cores idle. When the arguments plainly ask for a keypoint evaluation with
``--jobs`` (:func:`guess`), the forked workers start decoding their parts of the results
file at once (:func:`iou_cli.loaders.fastcoco.prefetch`); the parsed command then adopts
them only if it asks for the same file, processes and ground truth (the file unchanged), and
ends them otherwise. A guess never changes a result: at worst its workers are ended unused.
"""

from __future__ import annotations

import os

# the evaluate command's options a guess reads past, as click parses them (a test checks
# them against the command): options that take a value, and flags. Any other option (one
# that changes how the files are read: formats, names, images, ids, a shard) or a bundle of
# short flags makes no guess.
VALUES = frozenset(
    {
        "-o",
        "--output",
        "--iou-type",
        "--jobs",
        "-j",
        "--protocol",
        "--tp-iou",
        "--iou-thr",
        "--score-thr",
        "--max-dets",
        "--iou-thrs",
        "--matches",
        "--fail-under",
        "--fail-over",
        "--sigmas",
        "--classes",
        "--image-ids",
        "--tide-pos-thr",
        "--tide-bg-thr",
        "--plots",
        "--report",
    }
)
FLAGS = frozenset(
    {
        "--per-class",
        "--per-keypoint",
        "--honor-ignore",
        "--class-agnostic",
        "--tide",
        "--confusion",
        "--per-image",
        "--calibration",
        "--curves",
        "-q",
        "--quiet",
        "-v",
        "--verbose",
    }
)


def guess(argv: list[str]) -> tuple[str, str, int] | None:
    """``(predictions, ground truth, --jobs)`` when ``argv`` (the console script's
    arguments) is ``[evaluate] PRED GT`` with ``--iou-type keypoints``, ``--jobs`` other
    than 1 and only :data:`VALUES` and :data:`FLAGS` besides, both files regular; else
    None."""
    args = argv[1:] if argv[:1] == ["evaluate"] else argv
    if not args or not (args[0].startswith("-") or os.path.exists(args[0])):
        return None  # another verb, or a usage error
    positional: list[str] = []
    given: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-") or arg == "-":
            positional.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in FLAGS and not eq:
            continue
        if name not in VALUES:
            return None
        if not eq:
            if i == len(args):
                return None
            value = args[i]
            i += 1
        given["--jobs" if name == "-j" else name] = value
    if len(positional) != 2 or given.get("--iou-type") != "keypoints":
        return None
    try:
        jobs = int(given.get("--jobs", "1"))
    except ValueError:
        return None
    pred, gt = positional
    if jobs == 1 or jobs < 0 or not (os.path.isfile(pred) and os.path.isfile(gt)):
        return None
    return pred, gt, jobs


def console_process() -> None:
    """The console script's process-wide settings (one command, then the process ends),
    before NumPy is imported; called again once more is imported, it freezes that too.

    NumPy's OpenBLAS starts a thread per core at import (~20 ms of CPU) for matrix products
    iou-eval hardly makes (small bootstrap ones; --jobs forks processes): one, unless the
    user set a value. What was imported stays, frozen out of the collector's scans, and a
    collection waits for 100k new containers instead of 700 (a results file is tens of
    thousands of records: the default spent ~10% of a segm run in the collector)."""
    import gc

    from ..workers import claim_process

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    claim_process()
    gc.freeze()
    gc.set_threshold(100_000, 50, 1000)


def start(argv: list[str]) -> None:
    """Start the workers of a :func:`guess` (the console script's process only, set up as
    its command sets it up: :func:`console_process`)."""
    found = guess(argv)
    if found is None:
        return
    pred, gt, jobs = found
    console_process()
    from ..loaders.fastcoco import prefetch
    from ..loaders.kptparts import EARLY_LEAD
    from ..workers import cores

    try:  # (this process parses its command line first: its part is smaller)
        prefetch(pred, cores(jobs), "keypoints", os.path.getsize(gt), EARLY_LEAD)
    except OSError:  # (the file went away meanwhile: the command says so)
        return
