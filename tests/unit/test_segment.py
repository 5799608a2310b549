"""Semantic segmentation (iou_cli.tasks.segment): a hand-counted case, scikit-learn agreement, errors.

tests/data/segment/ (written for this project): K = 3, ignore 255.

    gt/a.png        pred/a.png (palette PNG)     gt/b.png   pred/b.png
    0 0 1 1         0 1 1 1                      1 1        1 0
    0 0 1 1         0 0 1 1                      1 1        1 1
    2 2 . .         2 0 1 .          (. = 255)
    2 2 2 2         2 2 2 .

Counting (ground truth, prediction) over labelled pixels (ground truth != 255):
    class 0: gt 4 px -> (0,0) x3, (0,1) x1          TP 3, FN 1
    class 1: gt 8 px -> (1,1) x7, (1,0) x1 (b.png)  TP 7, FN 1
    class 2: gt 6 px -> (2,2) x4, (2,0) x1, (2,255) x1   TP 4, FN 2
    predicted 0 on 5 labelled px -> FP 2; predicted 1 on 8 -> FP 1; predicted 2 on 4 -> FP 0
IoU = 3/6, 7/9, 4/6; mIoU = 35/54; recall (Acc) = 3/4, 7/8, 4/6 -> mAcc = 55/72;
aAcc = 14/18; fwIoU = 4/18*1/2 + 8/18*7/9 + 6/18*2/3 = 55/81;
Dice = 6/9, 14/16, 8/10 -> mDice = 281/360.
"""

from __future__ import annotations

import shutil
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from iou_cli.errors import InputError, UsageError
from iou_cli.tasks.segment import accumulate, evaluate_segment, summarize

DATA = Path(__file__).resolve().parents[1] / "data" / "segment"


def _run(**kw: Any) -> Any:
    kw.setdefault("num_classes", 3)
    kw.setdefault("ignore_index", 255)
    return evaluate_segment(str(DATA / "pred"), str(DATA / "gt"), **kw)


def test_hand_counted_case() -> None:
    r = _run(names=str(DATA / "names.txt"))
    s = r.summary
    assert s["mIoU"] == pytest.approx(35 / 54, abs=1e-15)
    assert s["mAcc"] == pytest.approx(55 / 72, abs=1e-15)
    assert s["aAcc"] == 14 / 18
    assert s["fwIoU"] == pytest.approx(55 / 81, abs=1e-15)
    assert s["mDice"] == pytest.approx(281 / 360, abs=1e-15)
    assert s["images"] == 2 and s["pixels"] == 18
    assert [c["name"] for c in r.per_class] == ["background", "road", "car"]
    assert [c["IoU"] for c in r.per_class] == [3 / 6, 7 / 9, 4 / 6]
    assert [(c["tp"], c["fp"], c["fn"]) for c in r.per_class] == [(3, 2, 1), (7, 1, 1), (4, 0, 2)]
    assert [c["n_gt"] for c in r.per_class] == [4, 8, 6]
    assert r.params["num_classes"] == 3 and r.params["ignore_index"] == 255


def test_absent_class_is_undefined_and_left_out_of_means() -> None:
    r = _run(num_classes=4)
    assert r.per_class[3]["IoU"] is None and r.per_class[3]["recall"] is None
    assert r.summary["mIoU"] == pytest.approx(35 / 54, abs=1e-15)
    assert r.summary["mAcc"] == pytest.approx(55 / 72, abs=1e-15)


def test_progress_is_called_per_image() -> None:
    calls: list[tuple[str, int, int]] = []
    _run(progress=lambda *a: calls.append(a))
    assert calls == [("images", 1, 2), ("images", 2, 2)]


def test_two_files_are_one_pair() -> None:
    r = evaluate_segment(str(DATA / "pred" / "b.png"), str(DATA / "gt" / "b.png"), num_classes=2)
    # class 0: TP 0, FP 1 -> IoU 0; class 1: TP 3, FN 1 -> 3/4
    assert [c["IoU"] for c in r.per_class] == [0.0, 0.75]


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 5),
    st.integers(1, 9),
    st.integers(1, 9),
    st.integers(0, 2**32 - 1),
    st.booleans(),
)
def test_confusion_metrics_equal_sklearn(
    k: int, h: int, w: int, seed: int, use_ignore: bool
) -> None:
    """Per-class IoU = sklearn jaccard_score(labels=0..K-1) on the labelled pixels; per-class
    recall = recall_score; aAcc = accuracy_score (predicted ignore counts as a miss)."""
    from sklearn.metrics import accuracy_score, jaccard_score, recall_score

    rng = np.random.default_rng(seed)
    ignore = 255 if use_ignore else None
    conf = np.zeros((k, k + 1), dtype=np.int64)
    gts, preds = [], []
    for _ in range(2):
        values = list(range(k)) + ([255] if use_ignore else [])
        g = rng.choice(values, size=(h, w)).astype(np.uint8)
        p = rng.choice(values, size=(h, w)).astype(np.uint8)
        accumulate(conf, g, p, k, ignore)
        gts.append(g.ravel())
        preds.append(p.ravel())
    g_all, p_all = np.concatenate(gts), np.concatenate(preds)
    keep = g_all != 255
    g_all, p_all = g_all[keep].astype(int), p_all[keep].astype(int)
    summary, rows = summarize(conf)
    if g_all.size == 0:
        assert summary["aAcc"] is None and summary["mIoU"] is None
        return
    labels = list(range(k))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jac = jaccard_score(g_all, p_all, labels=labels, average=None, zero_division=0)
        rec = recall_score(g_all, p_all, labels=labels, average=None, zero_division=0)
    for c in range(k):
        present = (g_all == c).any() or (p_all == c).any()
        assert (rows[c]["IoU"] is None) == (not present)
        if present:
            assert rows[c]["IoU"] == pytest.approx(jac[c], abs=1e-15)
        if (g_all == c).any():
            assert rows[c]["recall"] == pytest.approx(rec[c], abs=1e-15)
    assert summary["aAcc"] == pytest.approx(accuracy_score(g_all, p_all), abs=1e-15)
    defined = [r["IoU"] for r in rows if r["IoU"] is not None]
    assert summary["mIoU"] == pytest.approx(float(np.mean(defined)), abs=1e-15)


# --------------------------------------------------------------------------------- errors


def _pair(tmp: Path, gt: Any, pred: Any, mode: str = "L") -> tuple[str, str]:
    (tmp / "gt").mkdir(exist_ok=True)
    (tmp / "pred").mkdir(exist_ok=True)
    Image.fromarray(np.asarray(gt, dtype=np.uint8), "L").save(tmp / "gt" / "x.png")
    if mode == "RGB":
        Image.fromarray(np.zeros((*np.asarray(pred).shape, 3), np.uint8), "RGB").save(
            tmp / "pred" / "x.png"
        )
    else:
        Image.fromarray(np.asarray(pred, dtype=np.uint8), mode).save(tmp / "pred" / "x.png")
    return str(tmp / "pred"), str(tmp / "gt")


@pytest.mark.parametrize(
    "gt, pred, mode, file, where, message",
    [
        (
            [[0, 1]],
            [[0, 1, 1]],
            "L",
            "pred/x.png",
            None,
            "size 3 x 1 differs from the ground truth's 2 x 1",
        ),
        (
            [[0, 1], [1, 7]],
            [[0, 1], [1, 1]],
            "L",
            "gt/x.png",
            "pixel (x=1, y=1)",
            "ground-truth class 7 is outside 0..2",
        ),
        (
            [[0, 1]],
            [[0, 9]],
            "L",
            "pred/x.png",
            "pixel (x=1, y=0)",
            "predicted class 9 is outside 0..2 (--num-classes 3) and is not the --ignore-index 255",
        ),
        ([[0, 1]], [[0, 1]], "RGB", "pred/x.png", None, "got mode RGB"),
    ],
)
def test_bad_images_are_located(
    tmp_path: Path, gt: Any, pred: Any, mode: str, file: str, where: str | None, message: str
) -> None:
    pd, gd = _pair(tmp_path, gt, pred, mode)
    with pytest.raises(InputError) as exc:
        evaluate_segment(pd, gd, num_classes=3, ignore_index=255)
    assert str(exc.value.path).endswith(file)
    assert exc.value.where == where
    assert message in exc.value.reason


def test_missing_counterparts(tmp_path: Path) -> None:
    shutil.copytree(DATA / "gt", tmp_path / "gt")
    shutil.copytree(DATA / "pred", tmp_path / "pred")
    (tmp_path / "pred" / "b.png").rename(tmp_path / "pred" / "c.png")
    with pytest.raises(InputError, match="no ground-truth label map with this stem") as exc:
        evaluate_segment(
            str(tmp_path / "pred"), str(tmp_path / "gt"), num_classes=3, ignore_index=255
        )
    assert str(exc.value.path).endswith("c.png")
    (tmp_path / "pred" / "c.png").unlink()
    with pytest.raises(InputError, match="no prediction with this stem") as exc:
        evaluate_segment(
            str(tmp_path / "pred"), str(tmp_path / "gt"), num_classes=3, ignore_index=255
        )
    assert str(exc.value.path).endswith("b.png")
    r = evaluate_segment(
        str(tmp_path / "pred"),
        str(tmp_path / "gt"),
        num_classes=3,
        ignore_index=255,
        unknown="skip",
    )
    assert r.summary["images"] == 1 and r.params["skipped"]["missing_prediction"] == 1
    assert any("without a prediction" in w for w in r.warnings)


def test_not_a_png_and_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    with pytest.raises(InputError, match="no .png label maps"):
        evaluate_segment(str(tmp_path / "pred"), str(tmp_path / "gt"), num_classes=2)
    (tmp_path / "gt" / "x.png").write_bytes(b"not a png")
    (tmp_path / "pred" / "x.png").write_bytes(b"not a png")
    with pytest.raises(InputError, match="not a readable PNG"):
        evaluate_segment(str(tmp_path / "pred"), str(tmp_path / "gt"), num_classes=2)


def test_sixteen_bit_label_maps(tmp_path: Path) -> None:
    (tmp_path / "gt").mkdir()
    (tmp_path / "pred").mkdir()
    g = np.array([[300, 1], [0, 299]], dtype=np.uint16)
    Image.fromarray(g).save(tmp_path / "gt" / "x.png")
    Image.fromarray(g).save(tmp_path / "pred" / "x.png")
    r = evaluate_segment(str(tmp_path / "pred"), str(tmp_path / "gt"), num_classes=301)
    assert r.summary["mIoU"] == 1.0 and r.summary["pixels"] == 4


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"num_classes": 0}, "--num-classes"),
        ({"num_classes": 3, "ignore_index": 1}, "is a class index"),
        ({"num_classes": 3, "unknown": "maybe"}, "--unknown"),
        ({"num_classes": 2, "names": ["a", "b", "c"]}, "expected 2 names"),
    ],
)
def test_usage_errors(kw: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        evaluate_segment(str(DATA / "pred"), str(DATA / "gt"), **kw)


def test_names_file_must_match_num_classes() -> None:
    with pytest.raises(InputError, match="expected 4 names"):
        _run(num_classes=4, names=str(DATA / "names.txt"))
