"""iou-eval: score detection and segmentation predictions against ground truth by IoU.

Public API (imported lazily so that ``import iou_cli`` stays cheap)::

    from iou_cli import iou, paired_iou, convert, evaluate, load
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "iou": ("geometry.iou", "iou"),
    "paired_iou": ("geometry.iou", "paired_iou"),
    "convert": ("geometry.boxes", "convert"),
    "xywh_to_xyxy": ("geometry.boxes", "xywh_to_xyxy"),
    "xyxy_to_xywh": ("geometry.boxes", "xyxy_to_xywh"),
    "cxcywh_to_xyxy": ("geometry.boxes", "cxcywh_to_xyxy"),
    "xyxy_to_cxcywh": ("geometry.boxes", "xyxy_to_cxcywh"),
    "xywh_to_cxcywh": ("geometry.boxes", "xywh_to_cxcywh"),
    "cxcywh_to_xywh": ("geometry.boxes", "cxcywh_to_xywh"),
    "mask_iou": ("geometry.masks", "mask_iou"),
    "obb_iou": ("geometry.obb", "obb_iou"),
    "xywhr_to_corners": ("geometry.obb", "xywhr_to_corners"),
    "corners_to_xywhr": ("geometry.obb", "corners_to_xywhr"),
    "label_iou": ("tasks.labels", "label_iou"),
    "evaluate_panoptic": ("tasks.panoptic", "evaluate_panoptic"),
    "evaluate": ("api", "evaluate"),
    "load": ("api", "load"),
    "Evaluator": ("streaming", "Evaluator"),
    "IouEvalError": ("errors", "IouEvalError"),
    "InputError": ("errors", "InputError"),
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(f".{module}", __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'iou_cli' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
