"""The compiled panoptic pixel-pair counter (iou_cli/tasks/panoptic_jit.py, numba) against the
NumPy path and a direct count.

The counter undoes the PNG row filters itself (Paeth by an Up guess checked byte by byte) and
counts pairs as changes from the row above, so every filter type (0-4, chosen per row by the
writer of tests/unit/test_png_fast.py), noise (where no Paeth guess holds), shapes (where
most do), odd widths (rows not a multiple of 8 bytes) and one-row images are checked against
``np.unique`` over the true pixels; whole evaluations and every bad-input error must not
depend on the path.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from iou_cli.loaders.panoptic import PanopticImage
from iou_cli.loaders.png import inflated_rgb8
from iou_cli.tasks import panoptic_match as pm
from iou_cli.tasks.panoptic import (
    evaluate_panoptic,
    load_pair,
    make_jobs,
    pair_images,
    run_evaluation,
)
from tests.oracle.panoptic_gen import random_sets, to_rgb
from tests.robust.panoptic_bad_cases import CASES
from tests.robust.test_panoptic_bad_input import assert_one_located_error
from tests.unit.test_png_fast import write_png

jit = pytest.importorskip("iou_cli.tasks.panoptic_jit", reason="numba (the jit extra)")


def _direct(gt: np.ndarray, pred: np.ndarray) -> dict[tuple[int, int], int]:
    pairs = np.stack([gt.reshape(-1), pred.reshape(-1)], axis=1).astype(np.int64)
    keys, n = np.unique(pairs, axis=0, return_counts=True)
    return {(int(g), int(p)): int(c) for (g, p), c in zip(keys, n, strict=True)}


def _kernel(gt_png: bytes, pred_png: bytes, gt: np.ndarray, pred: np.ndarray) -> tuple[int, dict]:
    g, p = inflated_rgb8(gt_png, None), inflated_rgb8(pred_png, None)
    assert g is not None and p is not None
    gids = np.unique(gt[gt > 0])
    pids = np.unique(pred[pred > 0])
    tg = np.full(1 << 24, jit.UNKNOWN, dtype=np.uint16)
    tp = tg.copy()
    tg[0] = tp[0] = 0
    tg[gids] = np.arange(1, len(gids) + 1)
    tp[pids] = np.arange(1, len(pids) + 1)
    counts = np.zeros((len(gids) + 1) * (len(pids) + 1), dtype=np.int64)
    code = jit.pair_counts(
        np.frombuffer(g[2], dtype=np.uint8),
        np.frombuffer(p[2], dtype=np.uint8),
        g[1],
        g[0],
        tg,
        tp,
        counts,
        len(pids) + 1,
        jit.scratch_for(g[0]),
    )
    gv, pv = np.concatenate([[0], gids]), np.concatenate([[0], pids])
    c = counts.reshape(len(gv), len(pv))
    return code, {
        (int(gv[i]), int(pv[j])): int(c[i, j]) for i, j in zip(*np.nonzero(c), strict=True)
    }


def _shapes(rng: np.random.Generator, h: int, w: int, ids: list[int]) -> np.ndarray:
    out = np.full((h, w), ids[0], dtype=np.uint32)
    for v in ids[1:]:
        y0, x0 = rng.integers(0, h), rng.integers(0, w)
        out[y0 : y0 + rng.integers(1, h + 1), x0 : x0 + rng.integers(1, w + 1)] = v
    return out


@pytest.mark.parametrize(("h", "w"), [(1, 1), (1, 5), (6, 1), (9, 7), (17, 13), (12, 64), (5, 91)])
@pytest.mark.parametrize("kind", ["shapes", "noise"])
def test_counts_equal_a_direct_count_under_every_filter(h: int, w: int, kind: str) -> None:
    rng = np.random.default_rng(h * 1000 + w)
    for trial in range(4):
        maps = []
        for side in range(2):
            ids = [0, 5, 70_000, 16_777_215, 1 + 256 * side, 65_793 + side]
            if kind == "noise":  # every byte changes: no Paeth guess survives
                m = rng.choice(np.array(ids, dtype=np.uint32), size=(h, w))
            else:
                m = _shapes(rng, h, w, ids)
            maps.append(m)
        # each trial another mix: one filter type on every row, then random per row
        filters = [[trial % 5] * h, [4] * h, list(rng.integers(0, 5, size=h))]
        for fs in filters:
            pngs = [write_png(to_rgb(m), filters=[int(f) for f in fs]) for m in maps]
            code, got = _kernel(pngs[0], pngs[1], maps[0], maps[1])
            assert code == 0
            assert got == _direct(maps[0], maps[1]), (kind, fs)


def test_an_unknown_id_or_a_bad_filter_type_is_reported_not_counted() -> None:
    gt = np.array([[5, 5, 0], [5, 6, 6]], dtype=np.uint32)
    pred = np.array([[7, 7, 7], [0, 0, 7]], dtype=np.uint32)
    g, p = write_png(to_rgb(gt)), write_png(to_rgb(pred))
    assert _kernel(g, p, gt, pred)[0] == 0
    ig, ip = inflated_rgb8(g, None), inflated_rgb8(p, None)
    assert ig is not None and ip is not None
    scratch = jit.scratch_for(3)
    counts = np.zeros(9, dtype=np.int64)
    for unknown_row in (0, 1):  # an id of row 0 and an id that appears below it
        tg = np.full(1 << 24, jit.UNKNOWN, dtype=np.uint16)
        tp = tg.copy()
        tg[[0, 5, 6]] = [0, 1, 2]
        tp[[0, 7]] = [0, 1]
        tg[[5, 6][unknown_row]] = jit.UNKNOWN
        args = (np.frombuffer(ig[2], np.uint8), np.frombuffer(ip[2], np.uint8), 2, 3, tg, tp)
        assert jit.pair_counts(*args, counts, 3, scratch) == 1
    raw = bytearray(ig[2])
    raw[10] = 5  # row 1's filter type
    tg[6] = 2
    args = (np.frombuffer(bytes(raw), np.uint8), np.frombuffer(ip[2], np.uint8), 2, 3, tg, tp)
    assert jit.pair_counts(*args, counts, 3, scratch) == 2


@pytest.fixture
def jit_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled counter for every run, however small."""
    monkeypatch.setattr(pm, "JIT_MIN_PAIRS", 0)


def test_jit_for_needs_enough_pairs_and_numba(monkeypatch: pytest.MonkeyPatch) -> None:
    assert pm.jit_for(pm.JIT_MIN_PAIRS - 1) is None
    assert pm.jit_for(pm.JIT_MIN_PAIRS) is jit
    import iou_cli.tasks

    monkeypatch.setitem(sys.modules, "iou_cli.tasks.panoptic_jit", None)  # numba missing
    monkeypatch.delattr(iou_cli.tasks, "panoptic_jit")
    assert pm.jit_for(pm.JIT_MIN_PAIRS) is None


@pytest.mark.parametrize("jobs", [1, 2])
def test_evaluations_do_not_depend_on_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    pred, gt = random_sets(tmp_path, 11, n_images=40)
    numpy_path = evaluate_panoptic(str(pred), str(gt), per_image=True)
    calls = []
    real = pm._jit_counts

    def spy(*args: object) -> object:
        out = real(*args)  # type: ignore[arg-type]
        calls.append(out is not None)
        return out

    monkeypatch.setattr(pm, "JIT_MIN_PAIRS", 0)
    monkeypatch.setattr(pm, "_jit_counts", spy)
    compiled = evaluate_panoptic(str(pred), str(gt), per_image=True, jobs=jobs)
    assert compiled.summary == numpy_path.summary
    assert compiled.per_class == numpy_path.per_class
    assert compiled.extra == numpy_path.extra
    if jobs == 1:  # (workers' calls are not seen here)
        assert calls and all(calls)


def test_every_image_score_is_the_numpy_paths(tmp_path: Path, jit_on: None) -> None:
    pred, gt = random_sets(tmp_path, 12, n_images=25)
    loaded = load_pair(str(pred), str(gt))
    seen: list[pm.ImageScore] = []
    run_evaluation(*loaded, on_score=lambda i, job, s: seen.append(s))
    pairs, _ = pair_images(loaded[0], loaded[1], "error")
    lookup = pm.Lookup()
    for job, score in zip(make_jobs(*loaded, pairs), seen, strict=True):
        ref = pm.score_job(job, lookup, None)
        for field in ("cats", "tp", "fp", "fn", "iou", "match_cat", "match_iou"):
            assert np.array_equal(getattr(score, field), getattr(ref, field)), field
        assert score.area_mismatch == ref.area_mismatch


@pytest.mark.parametrize(
    ("case", "named", "where", "words"), CASES, ids=[c[0].__name__ for c in CASES]
)
def test_bad_input_errors_do_not_depend_on_the_path(
    tmp_path: Path, jit_on: None, case: object, named: str, where: str | None, words: str
) -> None:
    assert_one_located_error(tmp_path, case, named, where, words)


_START = """
import sys
from iou_cli import workers
if {own}:
    workers.claim_process()
from iou_cli.tasks import panoptic_match as pm
assert pm.jit_for(pm.JIT_MIN_PAIRS) is not None
import numba.np.arraymath as am
print("scipy.linalg" in sys.modules, "scipy" in sys.modules, am._HAVE_BLAS)
import scipy.linalg  # SciPy imports as usual afterwards
print(scipy.linalg.__name__)
"""


@pytest.mark.parametrize("own", [True, False])
def test_numba_starts_without_scipy_only_in_iou_evals_own_process(own: bool) -> None:
    """The console script's process starts numba with SciPy hidden (numba's scipy.linalg
    import is most of its start, for BLAS inner products the counter never makes); a
    library caller's process keeps its numba as numba sets itself up (BLAS found)."""
    import subprocess

    pytest.importorskip("scipy.linalg")
    out = subprocess.run(
        [sys.executable, "-c", _START.format(own=own)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split("\n")
    assert out[0] == ("False False False" if own else "True True True")
    assert out[1] == "scipy.linalg"


def test_the_console_script_claims_its_process() -> None:
    import subprocess

    code = (
        "import atexit, sys\n"
        "from iou_cli import workers\n"
        "atexit.register(lambda: print('own', workers.own_process()))\n"
        "from iou_cli.cli.app import main\n"
        "sys.argv = ['iou-eval', '--version']\n"
        "main()\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    ).stdout
    assert "own True" in out
    lib = subprocess.run(
        [sys.executable, "-c", code.replace("main()", "main(['--version'])")],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "own False" in lib


def _random_job(rng: np.random.Generator) -> tuple[pm.Job, np.ndarray]:
    """A random image's pixel-pair counts and segments: few categories (many candidate
    pairs), crowd segments, JSON areas absent, exact, off (a ground truth matched twice)
    or 0 (a zero denominator), VOID rows and columns, empty segments now and then."""
    kg, kp = int(rng.integers(0, 7)), int(rng.integers(0, 7))
    counts = rng.integers(0, 40, size=(kg + 1, kp + 1)) * (rng.random((kg + 1, kp + 1)) < 0.6)
    if rng.random() < 0.7:
        counts[1:, 1:] += np.eye(kg, kp, dtype=np.int64) * rng.integers(20, 200)
    pixels = counts[1:].sum(axis=1).astype(np.float64)
    area = np.where(rng.random(kg) < 0.5, pixels, np.nan)
    area = np.where(rng.random(kg) < 0.2, np.floor(pixels * rng.random(kg)), area)
    cats = np.arange(3) * 7

    def image(k: int, ground_truth: bool) -> PanopticImage:
        ids = rng.choice(np.arange(1, 1000), size=k, replace=False).astype(np.int64)
        crowd = (rng.random(k) < 0.25) if ground_truth else np.zeros(k, dtype=bool)
        a = area if ground_truth else np.full(k, np.nan)
        return PanopticImage(1, "x.png", "annotations[0]", ids, rng.choice(cats, k), crowd, a)

    g, p = image(kg, True), image(kp, False)
    job = pm.Job(g, p, g.category // 7, p.category // 7, "g.png", "p.png", "g.json", "p.json", None)
    return job, counts.astype(np.int64)


def test_the_compiled_rules_give_the_numpy_rules_bits() -> None:
    rng = np.random.default_rng(27)
    checked = errors = doubles = 0
    for _ in range(3000):
        job, counts = _random_job(rng)
        try:
            want: object = pm.score_counts(counts, job)
        except pm.InputError as exc:
            want = exc.where
        got = pm.jit_rules(counts, job, jit)
        if isinstance(want, str):
            errors += 1
            assert got is None  # the NumPy path words the error
            continue
        assert isinstance(want, pm.ImageScore) and got is not None
        for f in ("cats", "tp", "fp", "fn", "iou", "match_cat", "match_iou"):
            a, b = getattr(got, f), getattr(want, f)
            assert a.dtype == b.dtype and a.tobytes() == b.tobytes(), f
        assert got.area_mismatch == want.area_mismatch
        checked += 1
        doubles += len(set(want.match_cat.tolist())) < len(want.match_cat)
    assert checked > 1000 and errors > 100 and doubles > 0
