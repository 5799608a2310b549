"""Keypoint columns of COCO records: ``keypoints`` ``[x, y, v] * K`` and ``num_keypoints``,
and the skeleton the categories describe (``keypoints`` names, ``skeleton`` edges, and the
OKS ``sigmas`` a category may carry: iou-eval's key, one number per keypoint).

One pass of NumPy conversion; only when it fails does a walk over the records locate the
first bad one (``gt.json: annotations[4].keypoints[7]: visibility flag 3, expected 0, 1
or 2``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from ..data import Skeleton
from ..errors import InputError, kind_of

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

SIGMA_KEY = "sigmas"  # per category: OKS sigmas, one per keypoint


def _num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def keypoint_columns(
    recs: list[Any], path: str, prefix: str, *, gt: bool
) -> tuple[FloatArray, IntArray | None]:
    """``(keypoints (n, K, 3), num_keypoints (n,) or None)`` of COCO records.

    Ground truth: flags must be 0, 1 or 2; ``num_keypoints`` is the record's own field
    (pycocotools ignores a ground truth whose ``num_keypoints`` is 0), counted from the
    flags where a record has none. Predictions: the third value of each triple (a
    confidence) is kept but never used.
    """
    n = len(recs)
    if n == 0:
        return np.zeros((0, 0, 3)), (np.zeros(0, dtype=np.int64) if gt else None)
    arr: Any = None
    try:
        raw = [r["keypoints"] for r in recs]
        arr = np.array(raw)
        ok = arr.ndim == 2 and arr.dtype.kind in "iuf" and arr.shape[1] % 3 == 0 and arr.shape[1]
        if ok:
            arr = arr.astype(np.float64)
            ok = bool(np.isfinite(arr).all())
    except (KeyError, TypeError, ValueError, OverflowError):
        ok = False
    if not ok:
        _locate(recs, path, prefix, gt=gt)
        raise InputError(path, prefix, "malformed keypoints")  # pragma: no cover
    kpts = arr.reshape(n, -1, 3)
    if not gt:
        return kpts, None
    v = kpts[:, :, 2]
    bad = ~np.isin(v, (0.0, 1.0, 2.0))
    if bad.any():
        i, k = (int(x) for x in np.argwhere(bad)[0])
        raise InputError(
            path,
            f"{prefix}[{i}].keypoints[{3 * k + 2}]",
            f"visibility flag {recs[i]['keypoints'][3 * k + 2]!r} of keypoint {k + 1}: "
            "expected 0 (not labelled), 1 (labelled, hidden) or 2 (visible)",
        )
    counted = (v > 0).sum(axis=1).astype(np.int64)
    num = counted.copy()
    for i, r in enumerate(recs):
        if "num_keypoints" in r:
            val = r["num_keypoints"]
            if not (isinstance(val, int) and not isinstance(val, bool)) or val < 0:
                raise InputError(
                    path,
                    f"{prefix}[{i}].num_keypoints",
                    f"expected a count >= 0, got {kind_of(val)}",
                )
            num[i] = val
    return kpts, num


def _locate(recs: list[Any], path: str, prefix: str, *, gt: bool) -> None:
    want: int | None = None
    first = 0
    for i, r in enumerate(recs):
        where = f"{prefix}[{i}]"
        if not isinstance(r, dict):
            raise InputError(path, where, f"expected an object, got {kind_of(r)}")
        if "keypoints" not in r:
            hint = "" if gt else " (keypoint results need [x, y, score] * K per row)"
            raise InputError(path, where, f"missing key 'keypoints'{hint}")
        kp = r["keypoints"]
        if not isinstance(kp, list):
            raise InputError(
                path, f"{where}.keypoints", f"expected [x, y, v] * K numbers, got {kind_of(kp)}"
            )
        if not kp or len(kp) % 3:
            raise InputError(
                path,
                f"{where}.keypoints",
                f"expected [x, y, v] * K numbers (a multiple of 3), got {len(kp)}",
            )
        if want is None:
            want, first = len(kp), i
        elif len(kp) != want:
            raise InputError(
                path,
                f"{where}.keypoints",
                f"{len(kp) // 3} keypoints ({len(kp)} numbers), but {prefix}[{first}] has "
                f"{want // 3}: every row needs the same K",
            )
        for j, x in enumerate(kp):
            if not _num(x):
                raise InputError(
                    path, f"{where}.keypoints[{j}]", f"expected a number, got {kind_of(x)}"
                )
            if not math.isfinite(x):
                raise InputError(
                    path, f"{where}.keypoints[{j}]", f"expected a finite number, got {x}"
                )


def keypoint_record_columns(
    recs: list[Any], path: str, prefix: str, iou_type: str, *, gt: bool
) -> dict[str, Any]:
    """``kpts`` and ``num_kpts`` of COCO records, and for results without a ``bbox`` the box
    their keypoints span (pycocotools' ``loadRes``: its ``w * h`` is then their area)."""
    if iou_type != "keypoints":
        return {}
    from ..geometry.oks import extent

    kpts, num = keypoint_columns(recs, path, prefix, gt=gt)
    out: dict[str, Any] = {"kpts": kpts, "num_kpts": num}
    if not gt and not (recs and isinstance(recs[0], dict) and "bbox" in recs[0]):
        out["bbox"] = extent(kpts)[0]
    return out


def fast_keypoint_columns(cols: dict[str, Any]) -> dict[str, Any]:
    """The keypoint part of :func:`fastcoco.read_results`' columns (``field="keypoints"``)."""
    if "keypoints" not in cols:
        return {}
    from ..geometry.oks import extent

    out: dict[str, Any] = {"kpts": cols["keypoints"], "kpt_box": cols.get("kpt_box")}
    if np.isnan(cols["bbox"]).all():  # no bbox on the rows: the keypoints' extent
        out["bbox"] = extent(cols["keypoints"], out["kpt_box"])[0]
    return out


def kpt_box_columns(cols: dict[str, Any], role: str) -> dict[str, Any]:
    """The keypoint columns of :class:`Boxes` from a COCO reader's columns (none without
    keypoints): the keypoints, each ground truth's ``num_keypoints``, the source's own box."""
    if "kpts" not in cols:
        return {}
    out = {"keypoints": cols["kpts"], "xywh": cols["bbox"]}
    if role == "gt":
        out["num_keypoints"] = cols.get("num_kpts")
    else:
        out["kpt_box"] = cols.get("kpt_box")
    return out


def kpt_side_notes(
    iou_type: str,
    cols: dict[str, Any],
    cats_l: list[Any],
    order: list[int],
    path: str,
    areas: list[Any],
    notes: dict[str, Any],
    role: str,
) -> Skeleton | None:
    """A COCO keypoint file's skeleton (categories in table order); ground truths without
    an ``area`` are said in ``notes["info"]`` (OKS scales by it: their box's w*h is used).
    Ground truths need their box (the enlarged-box rule); results may give one. None for
    another IoU type."""
    if iou_type != "keypoints":
        return None
    kpts = cols["kpts"]
    cats = [cats_l[j] for j in order]  # the side's category table order
    skeleton = skeleton_from_categories(cats, path, int(kpts.shape[1]) if len(kpts) else 0)
    if role == "gt" and (miss := sum(v is None for v in areas)):
        notes["info"] = [f"{path}: {miss} annotations without 'area': OKS uses the box's w*h"]
    return skeleton


def skeleton_from_categories(cats: list[Any], path: str, k: int) -> Skeleton:
    """The skeleton of a COCO keypoint file's categories (in the order given, which is the
    side's category table order), checked against the annotations' K."""
    names: list[str] | None = None
    edges: list[tuple[int, int]] = []
    rows: list[FloatArray | None] = []
    if not k:  # no annotations: the categories' keypoint names say K
        k = next((len(c["keypoints"]) for c in cats if _names(c)), 0)
    for c, cat in enumerate(cats):
        where = f"categories[{c}]"
        kn = cat.get("keypoints") if isinstance(cat, dict) else None
        if isinstance(kn, list) and kn:
            if k and len(kn) != k:
                raise InputError(
                    path,
                    f"{where}.keypoints",
                    f"{len(kn)} keypoint names, but the annotations have {k} keypoints",
                )
            if names is None:
                names = [str(x) for x in kn]
        sk = cat.get("skeleton") if isinstance(cat, dict) else None
        if isinstance(sk, list) and not edges:
            for j, e in enumerate(sk):
                if (
                    not isinstance(e, list)
                    or len(e) != 2
                    or not all(isinstance(x, int) and 1 <= x <= max(k, 1) for x in e)
                ):
                    raise InputError(
                        path,
                        f"{where}.skeleton[{j}]",
                        f"expected a pair of 1-based keypoint numbers, got {kind_of(e)}",
                    )
                edges.append((e[0] - 1, e[1] - 1))
        sg = cat.get(SIGMA_KEY) if isinstance(cat, dict) else None
        rows.append(None if sg is None else parse_sigmas(sg, k, path, f"{where}.{SIGMA_KEY}"))
    sigmas = None
    source = ""
    if any(r is not None for r in rows):
        sigmas = np.stack([np.full(k, np.nan) if r is None else r for r in rows])
        source = f"{path}: categories' '{SIGMA_KEY}'"
    return Skeleton(k=k, names=names, edges=edges, sigmas=sigmas, source=source)


def _names(cat: Any) -> bool:
    return (
        isinstance(cat, dict) and isinstance(cat.get("keypoints"), list) and bool(cat["keypoints"])
    )


def parse_sigmas(value: object, k: int | None, path: str | None, where: str | None) -> FloatArray:
    """A checked sigma list: positive finite numbers, ``k`` of them when ``k`` is known."""
    if not isinstance(value, (list, tuple)) or not value:
        raise InputError(path, where, f"expected a list of sigmas, got {kind_of(value)}")
    for j, x in enumerate(value):
        if not _num(x) or not math.isfinite(x) or x <= 0:
            raise InputError(path, where, f"sigma {j + 1}: expected a number > 0, got {x!r}")
    if k is not None and k and len(value) != k:
        raise InputError(
            path, where, f"{len(value)} sigmas, but the keypoints have K = {k}: one per keypoint"
        )
    return np.asarray(value, dtype=np.float64)


def read_sigmas(spec: str) -> tuple[list[float], str]:
    """``--sigmas``: ``v1,v2,...`` or a file (a data.yaml's ``kpt_oks_sigmas``, a JSON list
    or ``{"sigmas": [...]}``, or numbers separated by commas or white space). Returns the
    values and how to name them in messages."""
    import os

    from ..errors import UsageError

    if os.path.isfile(spec):
        from .files import read_text

        text = read_text(spec)
        value: object
        where: str | None
        if spec.endswith((".yaml", ".yml")):
            from .layout import read_yaml

            data = read_yaml(spec)
            key = next((k for k in ("kpt_oks_sigmas", SIGMA_KEY) if k in data), None)
            if key is None:
                raise InputError(spec, None, "no 'kpt_oks_sigmas:' (or 'sigmas:') entry")
            value, where = data[key], key
        elif spec.endswith(".json"):
            from .jsonio import load_json

            data = load_json(spec)
            value = data.get(SIGMA_KEY) if isinstance(data, dict) else data
            where = SIGMA_KEY if isinstance(data, dict) else None
        else:
            parts = text.replace(",", " ").split()
            try:
                value = [float(p) for p in parts]
            except ValueError:
                bad = next(p for p in parts if not _float_ok(p))
                raise InputError(spec, None, f"expected numbers, got {bad[:20]!r}") from None
            where = None
        return parse_sigmas(value, None, spec, where).tolist(), f"--sigmas {spec}"
    try:
        vals = [float(p) for p in spec.split(",") if p.strip()]
    except ValueError:
        raise UsageError(
            f"--sigmas: expected v1,v2,... or a file, got {spec[:40]!r} (no such file)"
        ) from None
    if not vals or not all(math.isfinite(v) and v > 0 for v in vals):
        raise UsageError(f"--sigmas: expected numbers > 0, got {spec[:40]!r}")
    return vals, "--sigmas"


def _float_ok(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True
