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


def main() -> None:
    scenes = json.load(sys.stdin)
    json.dump([run_scene(s) for s in scenes], _STDOUT)


if __name__ == "__main__":
    main()
