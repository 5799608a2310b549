"""``convex_geometry`` works a block of quads at a time on large inputs: the quads, flags,
areas and hulls are bit for bit those of one whole-array call, for convex, clockwise,
dented and crossed quads, on read-only (the DOTA loader's) and writable inputs."""

from __future__ import annotations

import numpy as np
import pytest

from iou_cli.geometry import obb


def _quads(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    b = np.column_stack(
        [
            rng.uniform(0, 1e4, n),
            rng.uniform(0, 1e4, n),
            rng.uniform(1, 90, n),
            rng.uniform(1, 90, n),
            rng.uniform(-4, 4, n),
        ]
    )
    q = obb.xywhr_to_corners(b).reshape(n, 4, 2)
    cw = rng.random(n) < 0.3
    q[cw] = q[cw][:, ::-1]  # clockwise: turned round
    dent = np.flatnonzero(rng.random(n) < 0.02)
    q[dent, 0] = q[dent].mean(axis=1)  # a dent (the first corner at the centre)
    cross = np.flatnonzero(rng.random(n) < 0.02)
    q[cross] = q[cross][:, [0, 2, 1, 3]]  # a bow tie
    q[5] = 0.0  # zero area
    return q


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("block", [7, 64, 1 << 14])
def test_blocks_give_the_whole_array_bits(
    frozen: bool, block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    q = _quads(1000, block)
    if frozen:
        q.setflags(write=False)
    whole_q, whole_bad, whole_area, whole_xy = obb._convex(q, not frozen)
    whole_box = obb.aabb(whole_q, whole_xy)
    assert whole_bad.any() and (obb.signed_area(q) < 0).any()  # the cases are there
    monkeypatch.setattr(obb, "_GEO_BLOCK", block)
    got_q, bad, area, box = obb._convex_blocks(q, copy=not frozen)
    assert got_q.tobytes() == whole_q.tobytes()
    assert bad.tobytes() == whole_bad.tobytes()
    assert area.tobytes() == whole_area.tobytes()
    assert box.tobytes() == whole_box.tobytes()
    if not frozen:
        assert not np.shares_memory(got_q, q)  # a copy: the caller may change its input


def test_convex_quads_clean_input_comes_back_as_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(1)
    b = np.column_stack([rng.uniform(0, 500, (300, 2)), rng.uniform(1, 9, (300, 2)), np.zeros(300)])
    q = obb.xywhr_to_corners(b).reshape(300, 4, 2)
    # counter-clockwise in x-right, y-up axes as built: nothing to change
    assert (obb.signed_area(q) > 0).all()
    q.setflags(write=False)
    monkeypatch.setattr(obb, "_GEO_BLOCK", 50)
    got_q, bad, _, _ = obb._convex_blocks(q, copy=False)
    assert got_q is q and not bad.any()
