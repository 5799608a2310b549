"""Multi-label IoU (iou_cli.tasks.labels): the seed's example, scikit-learn agreement, CSV reading."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import jaccard_score

from iou_cli import label_iou
from iou_cli.errors import InputError, UsageError
from iou_cli.tasks.labels import evaluate_labels

# Seed 001 ("Set of Labels"): classes Airplane, Boat, Car
A = [[1, 1, 1], [1, 0, 0], [0, 1, 1]]  # ground truth
B = [[0, 1, 0], [1, 0, 0], [1, 1, 0]]  # prediction


def test_seed_example() -> None:
    # Airplane: TP 1 (sample 2), FN 1 (sample 1), FP 1 (sample 3) -> 1/3
    # Boat: TP 2, nothing else -> 2/2; Car: TP 0, FN 2 -> 0/2
    assert label_iou(A, B).tolist() == [1 / 3, 1.0, 0.0]
    macro = label_iou(A, B, average="macro")
    assert macro == pytest.approx((1 / 3 + 1 + 0) / 3, abs=1e-15)
    assert round(macro, 3) == 0.444  # the seed's printed value
    # micro: TP 3 / (TP 3 + FP 1 + FN 3) = 3/7 (hand count over all cells)
    assert label_iou(A, B, average="micro") == 3 / 7


AVERAGES = [None, "macro", "micro", "weighted", "samples"]


def _sk(t: Any, p: Any, average: str | None, zd: float) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return jaccard_score(t, p, average=average, zero_division=zd)


@pytest.mark.parametrize("average", AVERAGES)
@pytest.mark.parametrize("zd", [0.0, 1.0])
@pytest.mark.parametrize(
    "t, p",
    [
        (A, B),
        ([[1, 0, 0], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]]),  # empty class columns, empty sample
        ([[0, 0, 0], [0, 0, 0]], [[0, 0, 0], [0, 0, 0]]),  # everything empty
        ([[0, 0, 0], [0, 0, 0]], [[1, 0, 0], [0, 0, 0]]),  # no true labels at all (weighted)
        ([[1, 1], [1, 1]], [[0, 0], [0, 0]]),  # nothing predicted
    ],
)
def test_equals_sklearn_including_zero_division(
    t: Any, p: Any, average: str | None, zd: float
) -> None:
    got = label_iou(t, p, average=average, zero_division=zd)
    want = _sk(np.asarray(t), np.asarray(p), average, zd)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)


@settings(max_examples=120, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        # >= 2 columns: scikit-learn reads a single column as a binary (not multilabel) target
        lambda n: st.integers(2, 5).flatmap(
            lambda k: st.tuples(
                st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=n, max_size=n),
                st.lists(st.lists(st.booleans(), min_size=k, max_size=k), min_size=n, max_size=n),
            )
        )
    ),
    st.sampled_from(AVERAGES),
    st.sampled_from([0.0, 1.0]),
)
def test_random_matrices_equal_sklearn(case: Any, average: str | None, zd: float) -> None:
    t, p = (np.asarray(x, dtype=int) for x in case)
    np.testing.assert_allclose(
        label_iou(t, p, average=average, zero_division=zd),
        _sk(t, p, average, zd),
        rtol=0,
        atol=1e-12,
    )


def test_nan_zero_division_leaves_undefined_out() -> None:
    t = [[1, 0, 0], [0, 0, 0]]
    p = [[1, 0, 0], [0, 0, 0]]
    per = label_iou(t, p, zero_division=math.nan)
    assert per[0] == 1.0 and math.isnan(per[1]) and math.isnan(per[2])
    assert label_iou(t, p, average="macro", zero_division=math.nan) == 1.0  # sklearn: 1/3
    assert label_iou(t, p, average="samples", zero_division=math.nan) == 1.0  # sklearn: 0.5
    assert math.isnan(label_iou([[0]], [[0]], average="micro", zero_division=math.nan))


@pytest.mark.parametrize(
    "t, p, kwargs, message",
    [
        ([1, 0], [1, 0], {}, "n_samples, n_classes"),
        ([[1, 0]], [[1, 0, 0]], {}, "shape"),
        ([[2, 0]], [[1, 0]], {}, "0/1"),
        ([[1, 0]], [[1, 0]], {"average": "binary"}, "average"),
    ],
)
def test_usage_errors(t: Any, p: Any, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        label_iou(t, p, **kwargs)


# ------------------------------------------------------------------------------ CSV files


def _csv(tmp: Path, name: str, text: str) -> str:
    p = tmp / name
    p.write_text(text, encoding="utf-8")
    return str(p)


SEED_GT_IND = "id,Airplane,Boat,Car\ns1,1,1,1\ns2,1,0,0\ns3,0,1,1\n"
SEED_PRED_LIST = "id,labels\ns3,Airplane;Boat\ns1,Boat\ns2,Airplane\n"


def test_seed_example_from_csv_mixed_layouts(tmp_path: Path) -> None:
    gt = _csv(tmp_path, "gt.csv", SEED_GT_IND)
    pred = _csv(tmp_path, "pred.csv", SEED_PRED_LIST)  # rows in another order: matched by id
    r = evaluate_labels(pred, gt)
    assert r.summary["IoU"] == r.summary["IoU_macro"]
    assert r.summary["IoU_macro"] == pytest.approx(4 / 9, abs=1e-15)
    assert r.summary["IoU_micro"] == 3 / 7
    assert r.summary["samples"] == 3 and r.summary["classes"] == 3
    assert [c["name"] for c in r.per_class] == ["Airplane", "Boat", "Car"]
    assert [c["IoU"] for c in r.per_class] == [1 / 3, 1.0, 0.0]
    assert r.per_class[0]["tp"] == 1 and r.per_class[0]["fp"] == 1 and r.per_class[0]["fn"] == 1
    assert r.params["gt_layout"] == "indicator" and r.params["pred_layout"] == "list"
    # the same with both sides as label lists, and the average switch
    gt2 = _csv(tmp_path, "gt2.csv", "id,labels\ns1,Airplane;Boat;Car\ns2,Airplane\ns3,Boat;Car\n")
    r2 = evaluate_labels(pred, gt2, average="samples")
    want = _sk(np.asarray(A), np.asarray(B), "samples", 0.0)
    assert r2.summary["IoU"] == pytest.approx(want, abs=1e-15)


def test_empty_label_sets_and_undefined_class(tmp_path: Path) -> None:
    gt = _csv(tmp_path, "gt.csv", "id,a,b\n1,1,0\n2,0,0\n")
    pred = _csv(tmp_path, "pred.csv", "id,labels\n1,a\n2,\n")
    r = evaluate_labels(pred, gt)
    assert r.per_class[1]["IoU"] is None  # class b: no true, no predicted label
    assert r.summary["IoU_macro"] == 1.0  # left out, not counted as 0
    assert r.summary["IoU_samples"] == 1.0  # sample 2: two empty sets, left out


@pytest.mark.parametrize(
    "gt_text, pred_text, file, where, message",
    [
        (
            "id,a,b\n1,1,0\n",
            "id,a,b\n1,1,2\n",
            "pred.csv",
            "2",
            "column 'b': expected 0 or 1, got '2'",
        ),
        (
            "id,a,b\n1,1,0\n1,0,0\n",
            "id,a,b\n1,1,0\n",
            "gt.csv",
            "3",
            "duplicate sample id '1' (also line 2)",
        ),
        (
            "id,a,b\n1,1,0\n",
            "id,a,b\n1,1,0\n9,0,0\n",
            "pred.csv",
            "3",
            "sample '9' is not in the ground truth",
        ),
        ("id,a,b\n1,1,0\n2,0,1\n", "id,a,b\n1,1,0\n", "pred.csv", None, "no row for sample '2'"),
        (
            "id,a,b\n1,1,0\n",
            "id,labels\n1,a;zebra\n",
            "pred.csv",
            None,
            "not in the ground truth's columns: zebra",
        ),
        (
            "id,a,b\n1,1,0\n",
            "id,a\n1,1\n",
            "pred.csv",
            None,
            "missing class column(s) of the ground truth: b",
        ),
        ("id,a,b\n1,1,0\n", "id,a,b\n,1,0\n", "pred.csv", "2", "empty sample id"),
        ("id\n1\n", "id,a\n1,1\n", "gt.csv", "1", "got one column"),
        ("", "id,a\n1,1\n", "gt.csv", None, "empty file"),
        ("id,a,a\n1,1,0\n", "id,a\n1,1\n", "gt.csv", "1", "duplicate column 'a'"),
    ],
)
def test_csv_errors_are_located(
    tmp_path: Path, gt_text: str, pred_text: str, file: str, where: str | None, message: str
) -> None:
    gt = _csv(tmp_path, "gt.csv", gt_text)
    pred = _csv(tmp_path, "pred.csv", pred_text)
    with pytest.raises(InputError) as exc:
        evaluate_labels(pred, gt)
    assert Path(str(exc.value.path)).name == file
    assert exc.value.where == where
    assert message in exc.value.reason


def test_unknown_skip_counts(tmp_path: Path) -> None:
    gt = _csv(tmp_path, "gt.csv", "id,a,b\n1,1,0\n2,0,1\n")
    pred = _csv(tmp_path, "pred.csv", "id,a,b\n1,1,0\n9,0,0\n")
    r = evaluate_labels(pred, gt, unknown="skip")
    assert r.summary["samples"] == 1 and r.summary["IoU_macro"] == 1.0
    assert r.params["skipped"] == {"unknown_sample": 1, "missing_prediction": 1}
    assert len(r.warnings) == 2


def test_id_column_option(tmp_path: Path) -> None:
    gt = _csv(tmp_path, "gt.csv", "a,file,b\n1,x.jpg,0\n")
    pred = _csv(tmp_path, "pred.csv", "file,a,b\nx.jpg,1,1\n")
    r = evaluate_labels(pred, gt, id_column="file")
    assert [c["IoU"] for c in r.per_class] == [1.0, 0.0]
    with pytest.raises(InputError, match="no id column 'nope'"):
        evaluate_labels(pred, gt, id_column="nope")
