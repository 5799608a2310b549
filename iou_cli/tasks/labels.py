"""IoU of sets of labels (multi-label classification): the Jaccard index per class and averaged.

For class ``c`` over samples: ``IoU_c = TP / (TP + FP + FN)``. Averages as scikit-learn's
``jaccard_score``: ``macro`` (mean of the classes), ``micro`` (pooled counts), ``weighted``
(by each class's number of true labels), ``samples`` (the IoU of each sample's two label
sets, averaged over samples).

Two layers: :func:`label_iou` (indicator matrices in, numbers out; the public API) and
:func:`evaluate_labels` (two CSV files in, a :class:`~iou_cli.result.Result` out; the
``labels`` verb).
"""

from __future__ import annotations

import csv
import io
import math
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import InputError, UsageError
from ..metrics import prf
from ..result import Result

FloatArray = npt.NDArray[np.float64]
AVERAGES = (None, "macro", "micro", "weighted", "samples")
# summary keys, in order (gates are checked against them before the work)
SUMMARY_KEYS = ("IoU", *(f"IoU_{a}" for a in AVERAGES[1:]), "samples", "classes")
_LIST_HEADERS = {"labels", "label", "tags", "tag", "classes", "class", "categories"}


def _as_indicator(y: npt.ArrayLike, name: str) -> npt.NDArray[np.bool_]:
    arr = np.asarray(y)
    if arr.ndim != 2:
        raise UsageError(
            f"{name}: expected a binary indicator matrix (n_samples, n_classes), "
            f"got shape {arr.shape}"
        )
    if arr.dtype == bool:
        return arr
    if arr.dtype.kind not in "iuf" or (arr.size and not np.isin(arr, (0, 1)).all()):
        raise UsageError(f"{name}: expected 0/1 (or bool) values")
    return arr.astype(bool)


def _counts(t: npt.NDArray[np.bool_], p: npt.NDArray[np.bool_], axis: int) -> tuple[Any, Any, Any]:
    tp = np.count_nonzero(t & p, axis=axis)
    fp = np.count_nonzero(~t & p, axis=axis)
    fn = np.count_nonzero(t & ~p, axis=axis)
    return tp, fp, fn


def _divide(num: Any, den: Any, zero_division: float) -> FloatArray:
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, zero_division, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _mean(values: FloatArray, weights: FloatArray | None = None) -> float:
    """Mean of the defined (non-NaN) values; NaN when none is defined."""
    keep = ~np.isnan(values)
    if weights is not None:
        keep &= weights > 0
    if not keep.any():
        return math.nan
    if weights is None:
        return float(np.mean(values[keep]))
    return float(np.average(values[keep], weights=weights[keep]))


def label_iou(
    y_true: npt.ArrayLike,
    y_pred: npt.ArrayLike,
    *,
    average: str | None = None,
    zero_division: float = 0.0,
) -> FloatArray | float:
    """Jaccard index of multi-label indicator matrices (n_samples, n_classes).

    ``average=None`` gives the per-class IoU (n_classes,); ``"macro"``, ``"micro"``,
    ``"weighted"`` or ``"samples"`` give one float, as ``sklearn.metrics.jaccard_score``.
    A 0/0 (a class, or a sample for ``"samples"``, with no true and no predicted label) is
    ``zero_division``: 0.0 (scikit-learn's default) or 1.0 count in the averages like
    scikit-learn; ``math.nan`` marks it undefined and leaves it out of the averages.

    >>> A = [[1, 1, 1], [1, 0, 0], [0, 1, 1]]   # truth: Airplane, Boat, Car
    >>> B = [[0, 1, 0], [1, 0, 0], [1, 1, 0]]   # prediction
    >>> label_iou(A, B).round(4).tolist()
    [0.3333, 1.0, 0.0]
    >>> round(label_iou(A, B, average="macro"), 3)
    0.444
    """
    if average not in AVERAGES:
        raise UsageError(
            f"average: expected None, macro, micro, weighted or samples, got {average!r}"
        )
    t = _as_indicator(y_true, "y_true")
    p = _as_indicator(y_pred, "y_pred")
    if t.shape != p.shape:
        raise UsageError(f"y_true has shape {t.shape} but y_pred has shape {p.shape}")
    zd = float(zero_division)
    if average == "samples":
        tp, fp, fn = _counts(t, p, axis=1)
        return _mean(_divide(tp, tp + fp + fn, zd))
    tp, fp, fn = _counts(t, p, axis=0)
    if average == "micro":
        total = int(tp.sum() + fp.sum() + fn.sum())
        return float(tp.sum() / total) if total else zd
    per_class = _divide(tp, tp + fp + fn, zd)
    if average is None:
        return per_class
    if average == "weighted":
        support = (tp + fn).astype(np.float64)
        if support.any():
            return _mean(per_class, support)
    return _mean(per_class)


# ------------------------------------------------------------------------------- CSV files


@dataclass
class _Table:
    path: str
    ids: list[str]
    lines: list[int]  # line number of each sample, for messages
    classes: list[str]
    matrix: npt.NDArray[np.bool_]  # (n_samples, n_classes)
    layout: str  # "indicator" or "list"


def _read_rows(path: str) -> list[tuple[int, list[str]]]:
    from ..loaders.files import read_input

    if os.path.isdir(path):
        raise InputError(path, None, "is a folder, expected a CSV file")
    data = read_input(path, expected="a CSV file")  # regular file or pipe, bounded
    try:
        with io.StringIO(data.decode("utf-8-sig"), newline="") as fh:
            sample = fh.read(4096)
            fh.seek(0)
            delimiter = ","
            if sample:
                first = sample.splitlines()[0] if sample.splitlines() else ""
                if "," not in first and "\t" in first:
                    delimiter = "\t"
            rows = []
            reader = csv.reader(fh, delimiter=delimiter)
            for row in reader:
                if any(c.strip() for c in row):
                    rows.append((reader.line_num, [c.strip() for c in row]))
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except UnicodeDecodeError:
        raise InputError(path, None, "not UTF-8 text (expected a CSV file)") from None
    except csv.Error as exc:
        raise InputError(path, None, f"not a readable CSV file: {exc}") from None
    return rows


def _read_table(path: str, id_column: str | None, sep: str) -> _Table:
    rows = _read_rows(path)
    if not rows:
        raise InputError(path, None, "empty file, expected a header row and one row per sample")
    header_line, header = rows[0]
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise InputError(path, header_line, f"duplicate column {dup!r} in the header")
    if id_column is None:
        id_at = 0
    elif id_column in header:
        id_at = header.index(id_column)
    else:
        raise InputError(
            path, header_line, f"no id column {id_column!r}; columns: {', '.join(header)}"
        )
    others = [j for j in range(len(header)) if j != id_at]
    if not others:
        raise InputError(
            path, header_line, "expected an id column and label columns, got one column"
        )
    body = rows[1:]
    for line, row in body:
        if len(row) > len(header) and any(row[len(header) :]):
            raise InputError(
                path, line, f"{len(row)} cells, but the header has {len(header)} columns"
            )
    cells = [[row[j] if j < len(row) else "" for j in others] for _, row in body]
    single = len(others) == 1
    values = {c for r in cells for c in r}
    is_list = single and (
        header[others[0]].lower() in _LIST_HEADERS or not values <= {"0", "1", ""}
    )
    ids: list[str] = []
    seen: dict[str, int] = {}
    for line, row in body:
        sid = row[id_at] if id_at < len(row) else ""
        if not sid:
            raise InputError(path, line, f"empty sample id (column {header[id_at]!r})")
        if sid in seen:
            raise InputError(path, line, f"duplicate sample id {sid!r} (also line {seen[sid]})")
        seen[sid] = line
        ids.append(sid)
    lines = [line for line, _ in body]
    if is_list:
        sets = [[s.strip() for s in r[0].split(sep) if s.strip()] for r in cells]
        classes = sorted({c for s in sets for c in s})
        index = {c: k for k, c in enumerate(classes)}
        matrix = np.zeros((len(body), len(classes)), dtype=bool)
        for i, s in enumerate(sets):
            matrix[i, [index[c] for c in s]] = True
        return _Table(path, ids, lines, classes, matrix, "list")
    matrix = np.zeros((len(body), len(others)), dtype=bool)
    for i, r in enumerate(cells):
        for k, v in enumerate(r):
            if v in ("1", "1.0", "true", "True"):
                matrix[i, k] = True
            elif v not in ("0", "0.0", "false", "False"):
                raise InputError(
                    path,
                    lines[i],
                    f"column {header[others[k]]!r}: expected 0 or 1, got {v!r}"
                    + (" (an empty cell)" if v == "" else ""),
                )
    return _Table(path, ids, lines, [header[j] for j in others], matrix, "indicator")


def _align(pred: _Table, gt: _Table, unknown: str) -> tuple[list[str], Any, Any, dict[str, int]]:
    """(classes, y_true, y_pred, skipped) with rows in the ground truth's order."""
    if gt.layout == "indicator":
        classes = list(gt.classes)
        extra = [c for c in pred.classes if c not in set(classes)]
        if extra:
            raise InputError(
                pred.path,
                None,
                f"{len(extra)} label(s) not in the ground truth's columns: "
                f"{', '.join(extra[:5])}{' ...' if len(extra) > 5 else ''}",
            )
        if pred.layout == "indicator" and set(pred.classes) != set(classes):
            missing = [c for c in classes if c not in set(pred.classes)]
            raise InputError(
                pred.path,
                None,
                f"missing class column(s) of the ground truth: {', '.join(missing[:5])}",
            )
    else:
        classes = sorted(set(gt.classes) | set(pred.classes))
    col = {c: k for k, c in enumerate(classes)}

    def widen(t: _Table) -> npt.NDArray[np.bool_]:
        out = np.zeros((len(t.ids), len(classes)), dtype=bool)
        if t.classes:
            out[:, [col[c] for c in t.classes]] = t.matrix
        return out

    yt, yp = widen(gt), widen(pred)
    pred_at = {s: i for i, s in enumerate(pred.ids)}
    gt_ids = set(gt.ids)
    stray = [i for i, s in enumerate(pred.ids) if s not in gt_ids]
    absent = [i for i, s in enumerate(gt.ids) if s not in pred_at]
    skipped: dict[str, int] = {}
    if unknown != "skip":
        if stray:
            i = stray[0]
            raise InputError(
                pred.path,
                pred.lines[i],
                f"sample {pred.ids[i]!r} is not in the ground truth "
                f"({len(stray)} such sample(s); use --unknown skip to drop them)",
            )
        if absent:
            i = absent[0]
            raise InputError(
                pred.path,
                None,
                f"no row for sample {gt.ids[i]!r} of the ground truth ({gt.path}:{gt.lines[i]}; "
                f"{len(absent)} missing; an empty label set is a row with no labels; "
                "use --unknown skip to leave them out)",
            )
    else:
        skipped = {"unknown_sample": len(stray), "missing_prediction": len(absent)}
    keep = [i for i, s in enumerate(gt.ids) if s in pred_at]
    order = [pred_at[gt.ids[i]] for i in keep]
    return classes, yt[keep], yp[order], skipped


def evaluate_labels(
    pred_csv: str,
    gt_csv: str,
    *,
    average: str = "macro",
    id_column: str | None = None,
    separator: str = ";",
    unknown: str = "error",
) -> Result:
    """Multi-label IoU from two CSV files, one row per sample keyed by an id column.

    A file has either one 0/1 column per class or one column of ``separator``-separated
    label names (recognised when it is the only label column and its header is ``labels``
    (or label/tags/classes...) or its values are not all 0/1). The id column is
    ``id_column`` or the first column. Samples are matched by id; a sample missing on either
    side is an error (``unknown="skip"`` leaves it out and counts it).

    ``summary``: ``IoU`` (the ``average`` chosen), ``IoU_macro``, ``IoU_micro``,
    ``IoU_weighted``, ``IoU_samples``, ``samples``, ``classes``. ``per_class``: ``IoU``,
    precision, recall, f1, ``n_gt`` (true labels), ``n_det`` (predicted labels), tp, fp, fn.
    A class with no true and no predicted label has IoU ``None`` and is left out of the
    averages (scikit-learn counts it as 0; ``label_iou(..., zero_division=0)`` does too);
    a sample with two empty sets likewise for ``IoU_samples``.
    """
    if average not in AVERAGES[1:]:
        raise UsageError(f"--average: expected macro, micro, weighted or samples, got {average!r}")
    if unknown not in ("error", "skip"):
        raise UsageError(f"--unknown: expected error or skip, got {unknown!r}")
    if not separator:
        raise UsageError("--separator: expected a non-empty string")
    gt = _read_table(gt_csv, id_column, separator)
    pred = _read_table(pred_csv, id_column, separator)
    classes, yt, yp, skipped = _align(pred, gt, unknown)
    nan = math.nan
    values = {a: label_iou(yt, yp, average=a, zero_division=nan) for a in AVERAGES[1:]}

    def opt(v: Any) -> float | None:
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    summary: dict[str, Any] = {"IoU": opt(values[average])}
    for avg in AVERAGES[1:]:
        summary[f"IoU_{avg}"] = opt(values[avg])
    summary["samples"] = int(yt.shape[0])
    summary["classes"] = len(classes)
    tp, fp, fn = _counts(yt, yp, axis=0)
    per_class: list[dict[str, Any]] = []
    for k, name in enumerate(classes):
        a, b, c = int(tp[k]), int(fp[k]), int(fn[k])
        precision, recall, f1 = prf(a, b, c)
        per_class.append(
            {
                "category_id": k,
                "name": name,
                "IoU": a / (a + b + c) if a + b + c else None,
                "precision": precision,
                "recall": recall,
                "f1": f1,
                "n_gt": a + c,
                "n_det": a + b,
                "tp": a,
                "fp": b,
                "fn": c,
            }
        )
    params: dict[str, Any] = {
        "task": "labels",
        "average": average,
        "predictions": pred_csv,
        "ground_truth": gt_csv,
        "pred_layout": pred.layout,
        "gt_layout": gt.layout,
        "unknown": unknown,
    }
    result = Result(summary=summary, per_class=per_class, params=params)
    if skipped:
        params["skipped"] = skipped
        if skipped["unknown_sample"]:
            result.warnings.append(
                f"skipped {skipped['unknown_sample']} predicted sample(s) not in the ground truth"
            )
        if skipped["missing_prediction"]:
            result.warnings.append(
                f"skipped {skipped['missing_prediction']} ground-truth sample(s) without a "
                "prediction row"
            )
    result.info.append(
        f"read {len(gt.ids):,} ground-truth and {len(pred.ids):,} predicted samples, "
        f"{len(classes):,} classes"
    )
    return result


__all__ = ["AVERAGES", "evaluate_labels", "label_iou"]
