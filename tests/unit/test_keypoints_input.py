"""Keypoint inputs: YOLO-pose folders (against pycocotools on the same scene in COCO form)
and bad input as one located error (exit-code contract: InputError / UsageError)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.api import evaluate
from iou_cli.errors import InputError, UsageError
from tests.oracle.kptgen import random_kpt_scene
from tests.oracle.pycoco import stats_of

W, H = 640.0, 480.0
KEYS = ["AP", "AP50", "AP75", "APm", "APl", "AR", "AR50", "AR75", "ARm", "ARl"]


def _yolo_scene(tmp: Path, seed: int, sigmas: list[float]) -> tuple[dict[str, Any], list[Any]]:
    """A random keypoint scene written as YOLO-pose folders, and the COCO form pycocotools
    reads: pixel values as the loader computes them, GT area 0.53 x box (Ultralytics)."""
    gt, dets = random_kpt_scene(seed, k=len(sigmas), n_cats=2, with_bbox=True)
    (tmp / "gt").mkdir()
    (tmp / "pred").mkdir()
    (tmp / "gt" / "data.yaml").write_text(
        f"names: [c1, c2]\nkpt_shape: [{len(sigmas)}, 3]\nkpt_oks_sigmas: {sigmas}\n"
    )
    cgt = copy.deepcopy(gt)
    cgt["categories"] = [{"id": i, "name": f"c{i + 1}"} for i in range(2)]
    cgt["annotations"] = []
    cdets: list[Any] = []
    for img in gt["images"]:
        stem = f"im{img['id']}"
        lines, plines = [], []
        for a in (a for a in gt["annotations"] if a["image_id"] == img["id"]):
            if a["iscrowd"]:
                continue
            x, y, w, h = a["bbox"]
            nb = [(x + w / 2) / W, (y + h / 2) / H, w / W, h / H]
            kp = np.asarray(a["keypoints"], dtype=float).reshape(-1, 3)
            nk = np.stack([kp[:, 0] / W, kp[:, 1] / H, kp[:, 2]], 1)
            lines.append(" ".join(repr(float(v)) for v in [a["category_id"] - 1, *nb, *nk.ravel()]))
            ann = _pixels(nb, nk)
            ann.update(
                id=len(cgt["annotations"]) + 1,
                image_id=img["id"],
                category_id=a["category_id"] - 1,
                iscrowd=0,
                num_keypoints=int((kp[:, 2] > 0).sum()),
            )
            ann["area"] = ann["bbox"][2] * ann["bbox"][3] * 0.53
            cgt["annotations"].append(ann)
        for d in (d for d in dets if d["image_id"] == img["id"]):
            x, y, w, h = d["bbox"]
            nb = [(x + w / 2) / W, (y + h / 2) / H, w / W, h / H]
            kp = np.asarray(d["keypoints"], dtype=float).reshape(-1, 3)
            nk = np.stack([kp[:, 0] / W, kp[:, 1] / H, kp[:, 2]], 1)
            vals = [d["category_id"] - 1, *nb, *nk.ravel(), d["score"]]
            plines.append(" ".join(repr(float(v)) for v in vals))
            det = _pixels(nb, nk)
            det.update(image_id=img["id"], category_id=d["category_id"] - 1, score=d["score"])
            cdets.append(det)
        (tmp / "gt" / f"{stem}.txt").write_text("\n".join(lines) + "\n")
        (tmp / "pred" / f"{stem}.txt").write_text("\n".join(plines) + "\n")
        img["file_name"] = f"{stem}.jpg"
    return cgt, cdets


def _pixels(nb: list[float], nk: Any) -> dict[str, Any]:
    cx, cy, w, h = (np.float64(v) for v in nb)
    x1, y1, x2, y2 = (cx - w / 2) * W, (cy - h / 2) * H, (cx + w / 2) * W, (cy + h / 2) * H
    kp = np.stack([nk[:, 0] * W, nk[:, 1] * H, nk[:, 2]], 1)
    return {
        "bbox": [float(x1), float(y1), float(x2 - x1), float(y2 - y1)],
        "keypoints": [float(v) for v in kp.ravel()],
    }


@pytest.mark.parametrize("seed", range(3))
def test_yolo_pose_folders_match_pycocotools(tmp_path: Path, seed: int) -> None:
    sigmas = [0.05, 0.08, 0.1, 0.03, 0.12]
    cgt, cdets = _yolo_scene(tmp_path, seed, sigmas)
    r = evaluate(
        str(tmp_path / "pred"), str(tmp_path / "gt"), iou_type="keypoints", image_size=(W, H)
    )
    import contextlib  # noqa: E401
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        g = COCO()
        g.dataset = cgt
        g.createIndex()
        ev = COCOeval(g, g.loadRes(cdets), "keypoints")
        ev.params.kpt_oks_sigmas = np.array(sigmas)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    ours = [r.summary[k] for k in KEYS]
    ref = stats_of(ev)
    for a, b in zip(ours, ref, strict=True):
        assert (a is None) == (b is None)
        assert a is None or b is None or abs(a - b) <= 1e-12
    assert any("kpt_oks_sigmas" in line for line in r.info)
    assert any("0.53" in line for line in r.info)


def _coco(k: int = 3) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    gt = {
        "images": [{"id": 1, "file_name": "a.jpg", "width": 100, "height": 100}],
        "categories": [{"id": 1, "name": "p", "keypoints": [f"k{i}" for i in range(k)]}],
        "annotations": [
            {
                "id": 1,
                "image_id": 1,
                "category_id": 1,
                "bbox": [10, 10, 50, 50],
                "area": 2000,
                "iscrowd": 0,
                "num_keypoints": k,
                "keypoints": [20, 20, 2] * k,
            }
        ],
    }
    dets = [{"image_id": 1, "category_id": 1, "score": 0.9, "keypoints": [21, 20, 1] * k}]
    return gt, dets


def _err(tmp: Path, gt: Any, dets: Any, **kw: Any) -> str:
    g, d = tmp / "gt.json", tmp / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    with pytest.raises((InputError, UsageError)) as e:
        evaluate(str(d), str(g), iou_type="keypoints", **kw)
    return e.value.message()


def test_coco_bad_inputs_are_located(tmp_path: Path) -> None:
    gt, dets = _coco()
    bad = copy.deepcopy(gt)
    bad["annotations"][0]["keypoints"][5] = 3
    assert _err(tmp_path, bad, dets).endswith(
        "gt.json:annotations[0].keypoints[5]: visibility flag 3 of keypoint 2: expected 0 "
        "(not labelled), 1 (labelled, hidden) or 2 (visible)"
    )
    two = dets + [dict(dets[0], keypoints=[1, 2, 1] * 4)]
    msg = _err(tmp_path, gt, two)
    assert msg.endswith(
        "dt.json:[1].keypoints: 4 keypoints (12 numbers), but [0] has 3: every row needs the same K"
    )
    nok = dets + [{"image_id": 1, "category_id": 1, "score": 0.5, "bbox": [1, 2, 3, 4]}]
    assert _err(tmp_path, gt, nok).endswith(
        "dt.json:[1]: missing key 'keypoints' (keypoint results need [x, y, score] * K per row)"
    )
    nan = [dict(dets[0], keypoints=[float("nan"), 1, 1] * 3)]
    assert "dt.json:[0].keypoints[0]" in _err(tmp_path, gt, nan) or "NaN" in _err(tmp_path, gt, nan)
    four = [dict(dets[0], keypoints=[1, 2, 1] * 4)]
    assert "predictions have 4 keypoints per object, the ground truth" in _err(tmp_path, gt, four)


def test_sigmas_are_never_a_silent_default(tmp_path: Path) -> None:
    gt, dets = _coco(3)
    msg = _err(tmp_path, gt, dets)
    assert (
        "K = 3" in msg and "--sigmas" in msg and "COCO's 17 apply to 17-keypoint data only" in msg
    )
    assert "2 sigmas, but the keypoints have K = 3" in _err(tmp_path, gt, dets, sigmas=[0.1, 0.1])
    bad = copy.deepcopy(gt)
    bad["categories"][0]["sigmas"] = [0.1, 0.1]
    assert _err(tmp_path, bad, dets).endswith(
        "gt.json:categories[0].sigmas: 2 sigmas, but the keypoints have K = 3: one per keypoint"
    )
    # a hand check: one keypoint off by 1 px, sigma 0.1, area 2000:
    # e = 1 / (0.2^2) / (2000 + eps) / 2 = 0.00625; OKS = exp(-0.00625)
    gt1, dets1 = _coco(1)
    (tmp_path / "g1.json").write_text(json.dumps(gt1))
    r = evaluate(dets1, str(tmp_path / "g1.json"), iou_type="keypoints", sigmas=[0.1], matches=True)
    assert r.summary["mean_iou"] == pytest.approx(np.exp(-1 / 0.04 / 2000 / 2), abs=1e-15)


@pytest.mark.parametrize(
    ("gt_line", "pred_line", "yaml", "where", "what"),
    [
        (
            "0 .5 .5 .2 .2 .5 .5 2 .5 .5 2",
            "0 .5 .5 .2 .2 .5 .5 1 .5 .5 1 .5 .5 1 .9",
            "kpt_shape: [2, 3]",
            "pred/a.txt:1",
            "expected 12 columns",
        ),
        (
            "0 .5 .5 .2 .2 .5 .5 3 .5 .5 2",
            "0 .5 .5 .2 .2 .5 .5 1 .5 .5 1 .9",
            "kpt_shape: [2, 3]",
            "gt/a.txt:1",
            "keypoint 1: visibility flag '3'",
        ),
        (
            "0 .5 .5 .2 .2 nan .5 2 .5 .5 2",
            "0 .5 .5 .2 .2 .5 .5 1 .5 .5 1 .9",
            "kpt_shape: [2, 3]",
            "gt/a.txt:1",
            "keypoint 1: expected a finite number, got 'nan'",
        ),
        (
            "0 .5 .5 .2 .2 .5 .5 2 .5 .5 2 .5 .5 2\n0 .5 .5 .2 .2 .5 .5 2 .5 .5 2",
            "0 .5 .5 .2 .2 .9",
            "",
            "gt/a.txt:2",
            "K = 3, 3 values each, as",
        ),
    ],
)
def test_yolo_pose_bad_rows(
    tmp_path: Path, gt_line: str, pred_line: str, yaml: str, where: str, what: str
) -> None:
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    (tmp_path / "gt" / "data.yaml").write_text(f"names: [p]\n{yaml}\nkpt_oks_sigmas: [.1, .1]\n")
    (tmp_path / "gt" / "a.txt").write_text(gt_line + "\n")
    (tmp_path / "pred" / "a.txt").write_text(pred_line + "\n")
    with pytest.raises(InputError) as e:
        evaluate(
            str(tmp_path / "pred"),
            str(tmp_path / "gt"),
            iou_type="keypoints",
            image_size=(100, 100),
            pred_names=str(tmp_path / "gt" / "data.yaml"),
        )
    msg = e.value.message()
    assert where in msg and what in msg, msg


def test_pose_rows_under_bbox_are_their_boxes(tmp_path: Path) -> None:
    # YOLO-pose labels (data.yaml with kpt_shape) evaluated as boxes: the keypoint columns
    # are skipped, never read as a YOLO-seg polygon; same AP as the rows cut to their boxes
    src = Path(__file__).resolve().parents[2] / "sample_data" / "keypoints" / "yolo"
    for sub, keep in (("labels", 5), ("preds", None)):
        (tmp_path / sub).mkdir()
        for f in (src / sub).glob("*.txt"):
            rows = [ln.split() for ln in f.read_text().splitlines() if ln.strip()]
            cut = [r[:5] if keep else r[:5] + r[-1:] for r in rows]
            (tmp_path / sub / f.name).write_text("".join(" ".join(r) + "\n" for r in cut))
    (tmp_path / "names.txt").write_text("robot\n")
    pose = evaluate(str(src / "preds"), str(src / "labels"), image_size=(W, H))
    boxes = evaluate(
        str(tmp_path / "preds"),
        str(tmp_path / "labels"),
        image_size=(W, H),
        names=str(tmp_path / "names.txt"),
    )
    assert pose.summary["AP"] == boxes.summary["AP"] and pose.summary["tp"] == boxes.summary["tp"]
    assert any("kpt_shape: YOLO-pose rows, their boxes evaluated" in s for s in pose.info)


def test_empty_sides_are_normal_shapes() -> None:
    # no ground-truth annotations (K from the categories' names) or no predictions: AP 0 or
    # undefined, never a crash, analyses included
    root = Path(__file__).resolve().parents[2] / "sample_data" / "keypoints" / "coco"
    gt = json.loads((root / "gt.json").read_text())
    dets = json.loads((root / "preds.json").read_text())
    empty_gt = dict(gt, annotations=[])
    r = evaluate(dets, empty_gt, iou_type="keypoints", per_keypoint=True, tide=True, matches=True)
    assert r.summary["AP"] is None and r.summary["fp"] > 0
    assert r.extra["per_keypoint"]["n_pairs"] == 0
    r2 = evaluate([], gt, iou_type="keypoints", per_keypoint=True, confusion=True)
    assert r2.summary["AP"] == 0.0 and r2.summary["fn"] == 51


def test_missing_area_is_said() -> None:
    # OKS scales by the ground truth's area: one taken from the box is said on stderr
    root = Path(__file__).resolve().parents[2] / "sample_data" / "keypoints" / "coco"
    gt = json.loads((root / "gt.json").read_text())
    dets = json.loads((root / "preds.json").read_text())
    gt["annotations"][0]["area"] = None  # null, or no key at all
    del gt["annotations"][1]["area"]
    r = evaluate(dets, gt, iou_type="keypoints")
    assert any("2 annotations without 'area': OKS uses the box's w*h" in s for s in r.info)
