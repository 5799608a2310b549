"""YOLO-pose rows, as Ultralytics writes and reads them: ``class cx cy w h`` then K keypoints
``x y`` or ``x y v`` (normalised), and for predictions the confidence last
(``save_txt(save_conf=True)``: each keypoint's third value is then its confidence).

``kpt_shape: [K, 2|3]`` and ``kpt_oks_sigmas`` come from the data.yaml beside the labels;
without ``kpt_shape`` the first row decides when its length allows only one reading (say
so on stderr), else the user is asked for it. Bad rows are one located error: a K that
changes between rows or disagrees with ``kpt_shape``, a flag other than 0/1/2, a NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..data import Skeleton
from ..errors import InputError
from .keypoints import parse_sigmas

# Ultralytics' approximation of a person's area from its box (ultralytics/models/yolo/pose)
AREA_FROM_BOX = 0.53


class PoseRows:
    """Splits YOLO-pose rows into the box row the YOLO loader reads and the keypoints."""

    def __init__(self, yaml_path: str | None, *, pred: bool, boxes_only: bool = False) -> None:
        self.pred = pred
        self.yaml_path = yaml_path
        self.shape: tuple[int, int] | None = None
        self.sigmas: list[float] | None = None
        self.first: str = ""  # "file:line" of the row that fixed the shape
        self.info: list[str] = []
        data = _yaml(yaml_path)
        if boxes_only and "kpt_shape" in data and not pred:
            self.info.append(
                f"{yaml_path}: kpt_shape: YOLO-pose rows, their boxes evaluated "
                "(--iou-type keypoints evaluates the poses)"
            )
        elif not pred and not boxes_only:
            self.info.append(
                "YOLO-pose ground truth has no object area: OKS uses 0.53 x the box area "
                "(Ultralytics' approximation)"
            )
        ks = data.get("kpt_shape")
        if ks is not None:
            if (
                not isinstance(ks, list)
                or len(ks) != 2
                or not all(isinstance(x, int) and not isinstance(x, bool) for x in ks)
                or ks[0] < 1
                or ks[1] not in (2, 3)
            ):
                raise InputError(yaml_path, "kpt_shape", f"expected [K, 2 or 3], got {ks!r}")
            self.shape = (ks[0], ks[1])
            self.first = f"{yaml_path}: kpt_shape"
        kn = data.get("kpt_names")  # Ultralytics: a list, or {class: list}
        kn = next(iter(kn.values()), None) if isinstance(kn, dict) and kn else kn
        self.names = [str(x) for x in kn] if isinstance(kn, list) and kn else None
        sg = data.get("kpt_oks_sigmas")
        if sg is not None:
            k = self.shape[0] if self.shape else None
            self.sigmas = parse_sigmas(sg, k, yaml_path, "kpt_oks_sigmas").tolist()

    def split(self, parts: list[str], file: str, ln: int) -> tuple[list[str], list[float]]:
        """``(box row, keypoints [x, y, v] * K)`` of one row (where the file has no flags:
        v = 2, and 0 for a keypoint with a negative coordinate, as Ultralytics' loader)."""
        extra = len(parts) - 5 - (1 if self.pred else 0)
        layout = "class cx cy w h" + " + K x (x y [v])" + (" conf" if self.pred else "")
        if self.shape is None:
            fits = [d for d in (3, 2) if extra > 0 and extra % d == 0]
            if len(fits) != 1:
                why = "none fits" if not fits else f"{extra // 3} x (x y v) or {extra // 2} x (x y)"
                raise InputError(
                    file,
                    ln,
                    f"{len(parts)} columns ({layout}): {why}; give 'kpt_shape: [K, 2 or 3]' in "
                    "the data.yaml beside the labels",
                )
            self.shape = (extra // fits[0], fits[0])
            self.first = f"{file}:{ln}"
            self.info.append(
                f"{file}: {self.shape[0]} keypoints of {self.shape[1]} values per row "
                "(from the first row; 'kpt_shape' in data.yaml sets it)"
            )
        k, d = self.shape
        if extra != k * d:
            raise InputError(
                file,
                ln,
                f"expected {5 + k * d + self.pred} columns ({layout} with K = {k}, "
                f"{d} values each, as {self.first}), got {len(parts)}",
            )
        vals: list[float] = []
        for j, p in enumerate(parts[5 : 5 + k * d]):
            try:
                x = float(p)
            except ValueError:
                raise InputError(
                    file, ln, f"keypoint {j // d + 1}: expected a number, got {p[:20]!r}"
                ) from None
            if not math.isfinite(x):
                raise InputError(
                    file, ln, f"keypoint {j // d + 1}: expected a finite number, got {p[:20]!r}"
                )
            vals.append(x)
        kp: list[float] = []
        for j in range(k):
            x, y = vals[j * d], vals[j * d + 1]
            # two values a keypoint: Ultralytics reads a negative coordinate as not labelled
            v = vals[j * d + 2] if d == 3 else (0.0 if x < 0 or y < 0 else 2.0)
            if d == 3 and not self.pred and v not in (0.0, 1.0, 2.0):
                raise InputError(
                    file,
                    ln,
                    f"keypoint {j + 1}: visibility flag {parts[5 + j * d + 2]!r}, expected 0 "
                    "(not labelled), 1 (labelled, hidden) or 2 (visible)",
                )
            kp += [x, y, v]
        box = parts[:5] + (parts[-1:] if self.pred else [])
        return box, kp

    def skeleton(self) -> Skeleton | None:
        k = self.shape[0] if self.shape else 0
        if self.sigmas is not None and k and len(self.sigmas) != k:
            raise InputError(
                self.yaml_path,
                "kpt_oks_sigmas",
                f"{len(self.sigmas)} sigmas, but the rows have K = {k} keypoints",
            )
        sig = None if self.sigmas is None else np.asarray([self.sigmas], dtype=np.float64)
        src = f"{self.yaml_path}: kpt_oks_sigmas" if sig is not None else ""
        names = self.names if self.names and len(self.names) == k else None
        dims = self.shape[1] if self.shape else 3
        return Skeleton(k=k, names=names, sigmas=sig, source=src, dims=dims)


def _yaml(path: str | None) -> dict[str, Any]:
    if path is None or not path.endswith((".yaml", ".yml")):
        return {}
    from .layout import read_yaml

    data = read_yaml(path)
    return data if isinstance(data, dict) else {}


def pose_columns(
    kpts: list[list[float]], pose: PoseRows, w: Any, h: Any, pred: bool
) -> dict[str, Any]:
    """The keypoint columns of :class:`iou_cli.data.Boxes` (normalised, like the boxes)."""
    k = pose.shape[0] if pose.shape else 0
    arr = np.asarray(kpts, dtype=np.float64).reshape(len(kpts), k, 3)
    out: dict[str, Any] = {"keypoints": arr}
    if not pred:
        out["num_keypoints"] = (arr[:, :, 2] > 0).sum(axis=1).astype(np.int64)
    return out


def scale_keypoints(b: Any, xyxy: Any, wi: Any, hi: Any) -> dict[str, Any]:
    """Pixel keypoints, box ``x, y, w, h`` and (ground truth) Ultralytics' area ``0.53 * w * h``
    of a normalised side being scaled to pixels."""
    if b.keypoints is None:
        return {}
    kp = b.keypoints.copy()
    kp[:, :, 0] *= wi[:, None]
    kp[:, :, 1] *= hi[:, None]
    xywh = np.stack([xyxy[:, 0], xyxy[:, 1], xyxy[:, 2] - xyxy[:, 0], xyxy[:, 3] - xyxy[:, 1]], 1)
    out: dict[str, Any] = {"keypoints": kp, "xywh": xywh, "kpt_box": None}
    if b.num_keypoints is not None:  # ground truth: YOLO has no object area
        out["area"] = xywh[:, 2] * xywh[:, 3] * AREA_FROM_BOX
    return out
