"""The panoptic scorer's run finder (iou_cli/tasks/panoptic_match.py: pixel_runs) against
the plain definition: a run starts at pixel 0 and wherever the (gt id, pred id) pair differs
from the previous pixel's in row-major order, the ids being R + 256 G + 65536 B.

The finder works on the RGB bytes (byte marks found 8 at a time, mapped to pixels by
byte // 3), so the cases aim at its edges: images whose byte count is not a multiple of 8,
a change in only the G or only the B byte, every pixel a run, one map constant, runs across
row ends, 1 x 1 and single-row/column images, and a second, larger image after a smaller one
(the scratch buffers are reused and grow).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_cli.loaders.panoptic import PanopticImage, rgb_to_ids
from iou_cli.tasks.panoptic_match import Job, Lookup, pixel_runs, score_image


def _reference(gt: np.ndarray, pred: np.ndarray) -> tuple[np.ndarray, ...]:
    g, p = rgb_to_ids(gt).ravel(), rgb_to_ids(pred).ravel()
    change = np.ones(g.size, dtype=bool)
    for i in range(1, g.size):  # written out, one pixel at a time
        change[i] = g[i] != g[i - 1] or p[i] != p[i - 1]
    starts = np.flatnonzero(change)
    lengths = np.diff(np.append(starts, g.size))
    return starts, lengths, g[starts], p[starts]


def _check(gt: np.ndarray, pred: np.ndarray, lookup: Lookup | None = None) -> None:
    got = pixel_runs(gt, pred, lookup or Lookup())
    want = _reference(gt, pred)
    for k in range(4):
        assert np.array_equal(got[k], want[k])
    assert got[2].dtype == np.uint32 and got[3].dtype == np.uint32
    assert int(got[1].sum()) == gt.shape[0] * gt.shape[1]


def _rgb(ids: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(
        np.stack([ids & 255, (ids >> 8) & 255, ids >> 16], axis=-1).astype(np.uint8)
    )


@pytest.mark.parametrize("shape", [(1, 1), (1, 2), (2, 1), (1, 7), (3, 5), (8, 8), (5, 13)])
def test_every_pixel_a_run(shape: tuple[int, int]) -> None:
    """Random ids: (nearly) every pixel starts a run; byte counts 3, 6, 21, 45, 192, 195."""
    rng = np.random.default_rng(sum(shape))
    gt = _rgb(rng.integers(0, 1 << 24, shape))
    pred = _rgb(rng.integers(0, 1 << 24, shape))
    _check(gt, pred)


@pytest.mark.parametrize("channel", [0, 1, 2])
def test_a_change_in_one_byte_only(channel: int) -> None:
    """Neighbouring ids that differ in R only, G only or B only (one marked byte of 3)."""
    ids = np.full((3, 7), 0x102030, dtype=np.int64)
    ids[1, 3:] += 1 << (8 * channel)
    ids[2, 6] += 5 << (8 * channel)
    _check(_rgb(ids), _rgb(np.zeros_like(ids)))  # the prediction all VOID: one map constant
    _check(_rgb(np.zeros_like(ids)), _rgb(ids))


def test_runs_cross_row_ends_and_ids_are_24_bit() -> None:
    """A run that goes on past a row's end stays one run; ids up to 2^24 - 1."""
    gt = np.zeros((4, 5), dtype=np.int64)
    gt[1, 2:] = (1 << 24) - 1
    gt[2, :3] = (1 << 24) - 1  # continues the run of row 1
    pred = np.full_like(gt, 0xABCDEF)
    got = pixel_runs(_rgb(gt), _rgb(pred), Lookup())
    assert got[0].tolist() == [0, 7, 13]
    assert got[1].tolist() == [7, 6, 7]
    assert got[2].tolist() == [0, (1 << 24) - 1, 0]
    assert got[3].tolist() == [0xABCDEF] * 3
    _check(_rgb(gt), _rgb(pred))


_SHARED = Lookup()


@settings(max_examples=40, deadline=None)
@given(
    h=st.integers(1, 9),
    w=st.integers(1, 17),
    seed=st.integers(0, 1 << 16),
    n_ids=st.integers(1, 4),
)
def test_blocky_maps_as_the_definition(h: int, w: int, seed: int, n_ids: int) -> None:
    """Few ids, long runs (panoptic-like), sizes of every residue mod 8; the same Lookup
    (its scratch buffers) reused across examples of every size."""
    rng = np.random.default_rng(seed)
    palette = rng.integers(0, 1 << 24, n_ids)
    gt = palette[np.repeat(rng.integers(0, n_ids, (h, 1)), w, axis=1)]
    gt[rng.random((h, w)) < 0.1] = palette[0]
    pred = palette[rng.integers(0, n_ids, (h, w))]
    pred[rng.random((h, w)) < 0.7] = 0
    _check(_rgb(gt), _rgb(pred), _SHARED)


def test_score_image_refuses_id_maps() -> None:
    """score_image takes the decoder's (H, W, 3) bytes; a (H, W) id map (its input before)
    would be read as bytes and give wrong counts, so it is refused."""
    seg = PanopticImage(
        1,
        "a.png",
        "annotations[0]",
        np.array([5]),
        np.array([1]),
        np.array([False]),
        np.array([np.nan]),
    )
    job = Job(seg, seg, np.array([0]), np.array([0]), "g.png", "p.png", "g.json", "p.json", None)
    ids = np.full((2, 3), 5, dtype=np.uint32)
    rgb = _rgb(ids.astype(np.int64))
    assert score_image(rgb, rgb, job, _SHARED).tp.tolist() == [1]
    for gt, pred in ((ids, ids), (rgb, rgb[:1]), (rgb, rgb.astype(np.uint16))):
        with pytest.raises(ValueError, match="RGB maps"):
            score_image(gt, pred, job, _SHARED)  # type: ignore[arg-type]
