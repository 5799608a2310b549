"""Keypoints through the mergeable state: ``--jobs``, ``--partial`` + ``merge`` and the
streaming :class:`Evaluator` give ``evaluate``'s keypoint result bit for bit (pycocotools'
OKS is pinned in tests/oracle/test_keypoints_oracle.py), with the user's sigmas; the ground
truth's fingerprint covers the keypoints and sigmas, so partial results of other keypoints
or other sigmas are never merged."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from iou_cli import Evaluator, evaluate
from iou_cli.errors import UsageError
from tests.helpers import run
from tests.oracle.kptgen import random_kpt_scene

from .test_merge_exact import same, split_run

SIG6 = [0.05, 0.1, 0.03, 0.07, 0.2, 0.09]


@settings(max_examples=6, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data(), seed=st.integers(0, 10_000), custom=st.booleans())
def test_evaluator_splits_equal_one_shot(data: st.DataObject, seed: int, custom: bool) -> None:
    k, sig = (6, SIG6) if custom else (17, None)
    gt, dets = random_kpt_scene(seed, k=k)
    if sig is not None:  # the categories carry the sigmas (no keyword to forget)
        for c in gt["categories"]:
            c["sigmas"] = sig
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), iou_type="keypoints")
    same(one, split_run(gt, dets, "coco", "keypoints", data))


def test_evaluator_takes_the_sigmas_keyword_and_arrays() -> None:
    gt, dets = random_kpt_scene(3, k=6)
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt), iou_type="keypoints", sigmas=SIG6)
    ev = Evaluator(copy.deepcopy(gt), iou_type="keypoints", sigmas=SIG6, box_format="xywh")
    by_img: dict[int, list[dict[str, Any]]] = {}
    for d in dets:
        by_img.setdefault(d["image_id"], []).append(d)
    for im in gt["images"]:  # per-image dicts of arrays, keypoints (N, K, 3)
        ds = by_img.get(im["id"], [])
        boxes = [d["bbox"] if "bbox" in d else _extent(d["keypoints"]) for d in ds]
        ev.update(
            [
                {
                    "image_id": im["id"],
                    "boxes": np.asarray(boxes, dtype=float).reshape(-1, 4),
                    "scores": np.asarray([d["score"] for d in ds], dtype=float),
                    "labels": np.asarray([d["category_id"] for d in ds], dtype=np.int64),
                    "keypoints": np.asarray([d["keypoints"] for d in ds], dtype=float).reshape(
                        len(ds), 6, 3
                    ),
                }
            ]
        )
    same(one, ev.compute())
    # without the keyword the categories have no sigmas for K = 6: refused, never defaulted
    with pytest.raises(UsageError, match="one sigma per keypoint"):
        Evaluator(copy.deepcopy(gt), iou_type="keypoints")


def _extent(kp: list[float]) -> list[float]:
    a = np.asarray(kp, dtype=float).reshape(-1, 3)
    x0, y0 = a[:, 0].min(), a[:, 1].min()
    return [x0, y0, a[:, 0].max() - x0, a[:, 1].max() - y0]


def _write(tmp: Path, name: str, obj: Any) -> str:
    import json

    p = tmp / name
    p.write_text(json.dumps(obj))
    return str(p)


@pytest.mark.parametrize("split_min", [0, None])  # the image split forced; the default
def test_jobs_and_partial_merge_equal_one_shot(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    split_min: int | None,
) -> None:
    """``--jobs 2`` matches in forked parts only where that pays: a small keypoint set of
    one class is matched in one process (``split_pays``); either way the report is the
    one-shot one."""
    import json

    from iou_cli.state import jobs as state_jobs

    if split_min is not None:
        monkeypatch.setattr(state_jobs, "KPT_SPLIT_MIN", split_min)
    split: list[int] = []
    parallel_result = state_jobs.parallel_result

    def spy(*args: Any, **kw: Any) -> Any:
        split.append(1)
        return parallel_result(*args, **kw)

    monkeypatch.setattr(state_jobs, "parallel_result", spy)
    gt, dets = random_kpt_scene(5, k=6, n_cats=1)
    g = _write(tmp_path, "gt.json", gt)
    p = _write(tmp_path, "dt.json", dets)
    base = [p, g, "--iou-type", "keypoints", "--sigmas", ",".join(map(str, SIG6)), "-q"]
    code, one, err = run([*base, "-o", "json"], capsys)
    assert code == 0, err
    code, jobs, err = run([*base, "-o", "json", "--jobs", "2"], capsys)
    assert code == 0, err
    assert split == ([1] if split_min == 0 else [])
    parts = []
    for s in (1, 2, 3):
        part = str(tmp_path / f"p{s}.part")
        code, _, err = run([*base, "--partial", part, "--shard", f"{s}/3"], capsys)
        assert code == 0, err
        parts.append(part)
    code, merged, err = run(["merge", *parts, "-q", "-o", "json"], capsys)
    assert code == 0, err
    a, b, c = json.loads(one), json.loads(jobs), json.loads(merged)
    assert a["summary"] == b["summary"] == c["summary"]
    assert a["per_class"] == b["per_class"] == c["per_class"]
    # another sigma list: other parameters (and another fingerprint); merge refuses to mix them,
    # naming the sigmas
    other = str(tmp_path / "other.part")
    code, _, err = run(
        [p, g, "--iou-type", "keypoints", "--sigmas", ",".join(["0.1"] * 6), "-q"]
        + ["--partial", other, "--shard", "1/3"],
        capsys,
    )
    assert code == 0, err
    code, _, err = run(["merge", other, parts[1], parts[2], "-q", "-o", "json"], capsys)
    assert code == 2 and "oks_sigmas" in err and err.count("\n") == 1
