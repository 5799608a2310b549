"""Run Ultralytics' own validation metrics on scenes given as JSON on stdin.

Runs in its own process (tests/oracle/ultralytics_oracle.py starts it) with ``PYTHONPATH``
pointing at the fixture install that ``make ultralytics-oracle`` makes (the CPU torch wheel
and ``ultralytics`` without their dependencies). Per image, exactly what
``DetectionValidator.update_metrics`` does with one image's labels and NMS output:
``box_iou(labels, predictions)`` on float32 tensors, ``match_predictions`` (the validator's
own method, called on a stand-in that carries only its ``iouv``), ``DetMetrics.update_stats``;
then ``DetMetrics.process``. Nothing of Ultralytics is copied.

Input: ``[{"nc": K, "images": [{"gt": [[cls, x1, y1, x2, y2], ...], "pred": [[cls, conf,
x1, y1, x2, y2], ...]}, ...]}, ...]`` (predictions of an image by descending confidence).
A scene with ``"obb": true`` holds rotated boxes ``cx, cy, w, h, angle`` instead and is run
as ``OBBValidator._process_batch`` runs it: ``batch_probiou(labels, predictions)``, then the
same matching, with ``OBBMetrics``.
Output per scene: ``{"results": results_dict, "classes": ap_class_index, "ap": all_ap,
"p": p, "r": r, "correct": [per image [[bool x 10], ...]], "iouv": [...]}``, and for rotated
scenes ``"iou"``: per image the (G, D) probiou matrices, float32 and float64.

Pose scenes (``"kpt_shape": [K, 3]``, optional ``"kpt_oks_sigmas"``) append ``x, y, v`` * K
to each row and run ``PoseValidator`` instead: its ``init_metrics`` picks the sigmas (the
detection part of it stubbed out), its ``_process_batch`` gives box and pose match bits,
``PoseMetrics`` the numbers; the output adds ``"correct_p"``, ``"ap_p"``, ``"p_p"``,
``"r_p"``, ``"oks"`` (per image, the (G, D) OKS matrix) and ``"sigma"``.
"""

from __future__ import annotations

import importlib.metadata as _md
import json
import os
import sys
import tempfile
import types
from typing import Any

# Ultralytics logs to stdout; the answer goes to the real one
_STDOUT = sys.stdout
sys.stdout = sys.stderr
os.environ.setdefault("YOLO_CONFIG_DIR", tempfile.mkdtemp(prefix="ul-oracle-"))
os.environ.setdefault("YOLO_OFFLINE", "1")

_version = _md.version


def _version_or_stub(name: str) -> str:
    """Ultralytics reads torchvision's version from package metadata at import; the metrics
    never use torchvision, so the fixture does not install it."""
    try:
        return _version(name)
    except _md.PackageNotFoundError:
        if name == "torchvision":
            return "0.28.0"
        raise


_md.version = _version_or_stub  # type: ignore[assignment]

import numpy as np  # noqa: E402
import torch  # noqa: E402
import ultralytics  # noqa: E402
from ultralytics.engine.validator import BaseValidator  # noqa: E402
from ultralytics.utils.metrics import DetMetrics, OBBMetrics, batch_probiou, box_iou  # noqa: E402


def run_scene(scene: dict) -> dict:
    nc = int(scene["nc"])
    obb = bool(scene.get("obb"))
    nb = 5 if obb else 4
    stand_in = types.SimpleNamespace(iouv=torch.linspace(0.5, 0.95, 10))
    names = {i: f"c{i}" for i in range(nc)}
    metrics = OBBMetrics(names=names) if obb else DetMetrics(names=names)
    correct_out: list[Any] = []
    iou_out: list[Any] = []
    for n, im in enumerate(scene["images"]):
        gt = np.asarray(im["gt"], dtype=np.float64).reshape(-1, 1 + nb)
        pr = np.asarray(im["pred"], dtype=np.float64).reshape(-1, 2 + nb)
        cls = torch.tensor(gt[:, 0], dtype=torch.float32)
        gboxes = torch.tensor(gt[:, 1:], dtype=torch.float32)
        pcls = torch.tensor(pr[:, 0], dtype=torch.float32)
        conf = torch.tensor(pr[:, 1], dtype=torch.float32)
        pboxes = torch.tensor(pr[:, 2:], dtype=torch.float32)
        if cls.shape[0] == 0 or pcls.shape[0] == 0:
            tp = np.zeros((pcls.shape[0], 10), dtype=bool)
            iou_out.append([])
        else:
            iou = batch_probiou(gboxes, pboxes) if obb else box_iou(gboxes, pboxes)
            if obb:  # the float32 values the validator uses, and the formula in float64
                iou64 = batch_probiou(
                    torch.tensor(gt[:, 1:], dtype=torch.float64),
                    torch.tensor(pr[:, 2:], dtype=torch.float64),
                )
                iou_out.append([iou.numpy().astype(float).tolist(), iou64.numpy().tolist()])
            tp = BaseValidator.match_predictions(stand_in, pcls, cls, iou).cpu().numpy()
        correct_out.append(tp.tolist())
        no_pred = pcls.shape[0] == 0
        metrics.update_stats(
            {
                "tp": tp,
                "target_cls": cls.numpy(),
                "target_img": np.unique(cls.numpy()),
                "conf": np.zeros(0) if no_pred else conf.numpy(),
                "pred_cls": np.zeros(0) if no_pred else pcls.numpy(),
                "im_name": f"{n}.jpg",
            }
        )
    metrics.process()
    box = metrics.box
    return {
        "results": {k: float(v) for k, v in metrics.results_dict.items()},
        "classes": [int(c) for c in box.ap_class_index],
        "ap": np.asarray(box.all_ap).tolist(),
        "p": np.asarray(box.p).tolist(),
        "r": np.asarray(box.r).tolist(),
        "correct": correct_out,
        "iou": iou_out if obb else None,
        "iouv": stand_in.iouv.numpy().astype(float).tolist(),
        "version": ultralytics.__version__,
    }


def run_pose_scene(scene: dict) -> dict:
    from ultralytics.models.yolo.detect import DetectionValidator
    from ultralytics.models.yolo.pose import PoseValidator
    from ultralytics.utils.metrics import PoseMetrics, kpt_iou
    from ultralytics.utils.ops import xyxy2xywh

    nc = int(scene["nc"])
    k = int(scene["kpt_shape"][0])
    v = PoseValidator.__new__(PoseValidator)  # no dataloader or model: only what is used
    v.iouv = torch.linspace(0.5, 0.95, 10)
    v.niou = 10
    v.data = {"kpt_shape": scene["kpt_shape"]}
    if scene.get("kpt_oks_sigmas"):
        v.data["kpt_oks_sigmas"] = scene["kpt_oks_sigmas"]
    detection_init = DetectionValidator.init_metrics
    DetectionValidator.init_metrics = lambda self, model: None
    try:
        PoseValidator.init_metrics(v, None)
    finally:
        DetectionValidator.init_metrics = detection_init
    metrics = PoseMetrics(names={i: f"c{i}" for i in range(nc)})
    correct, correct_p, oks_out = [], [], []
    for n, im in enumerate(scene["images"]):
        gt = np.asarray(im["gt"], dtype=np.float64).reshape(-1, 5 + 3 * k)
        pr = np.asarray(im["pred"], dtype=np.float64).reshape(-1, 6 + 3 * k)
        batch = {
            "cls": torch.tensor(gt[:, 0], dtype=torch.float32),
            "bboxes": torch.tensor(gt[:, 1:5], dtype=torch.float32),
            "keypoints": torch.tensor(gt[:, 5:], dtype=torch.float32).reshape(-1, k, 3),
        }
        preds = {
            "cls": torch.tensor(pr[:, 0], dtype=torch.float32),
            "conf": torch.tensor(pr[:, 1], dtype=torch.float32),
            "bboxes": torch.tensor(pr[:, 2:6], dtype=torch.float32),
            "keypoints": torch.tensor(pr[:, 6:], dtype=torch.float32).reshape(-1, k, 3),
        }
        tp = v._process_batch(preds, batch)
        correct.append(tp["tp"].tolist())
        correct_p.append(tp["tp_p"].tolist())
        if gt.shape[0] and pr.shape[0]:
            area = xyxy2xywh(batch["bboxes"])[:, 2:].prod(1) * 0.53
            oks = kpt_iou(batch["keypoints"], preds["keypoints"], sigma=v.sigma, area=area)
            oks_out.append(oks.numpy().astype(float).tolist())
        else:
            oks_out.append([])
        no_pred = pr.shape[0] == 0
        metrics.update_stats(
            {
                "tp": tp["tp"],
                "tp_p": tp["tp_p"],
                "target_cls": batch["cls"].numpy(),
                "target_img": np.unique(batch["cls"].numpy()),
                "conf": np.zeros(0) if no_pred else preds["conf"].numpy(),
                "pred_cls": np.zeros(0) if no_pred else preds["cls"].numpy(),
                "im_name": f"{n}.jpg",
            }
        )
    metrics.process()
    return {
        "results": {k2: float(x) for k2, x in metrics.results_dict.items()},
        "classes": [int(c) for c in metrics.box.ap_class_index],
        "ap": np.asarray(metrics.box.all_ap).tolist(),
        "ap_p": np.asarray(metrics.pose.all_ap).tolist(),
        "p_p": np.asarray(metrics.pose.p).tolist(),
        "r_p": np.asarray(metrics.pose.r).tolist(),
        "correct": correct,
        "correct_p": correct_p,
        "oks": oks_out,
        "sigma": np.asarray(v.sigma, dtype=np.float32).astype(float).tolist(),
        "version": ultralytics.__version__,
    }


def main() -> None:
    scenes = json.load(sys.stdin)
    json.dump([run_pose_scene(s) if "kpt_shape" in s else run_scene(s) for s in scenes], _STDOUT)


if __name__ == "__main__":
    main()
