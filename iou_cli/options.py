"""Typed options: what a run needs to know besides its inputs.

``LoadOptions``: everything the loaders need to know besides the two paths.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class LoadOptions:
    """Everything the loaders need to know besides the two paths."""

    pred_format: str | None = None  # None: detect; else one of FORMATS
    gt_format: str | None = None
    iou_type: str = "bbox"  # "bbox", "segm" or "obb" (rotated boxes)
    angle_unit: str = "rad"  # COCO obb angles: "rad" (hotcoco) or "deg"
    names: str | None = None  # class-names file for both sides (YOLO)
    gt_names: str | None = None
    pred_names: str | None = None
    images: str | None = None  # folder of images: sizes read from their headers
    image_size: tuple[float, float] | None = None  # W, H for every image
    # "error"; "skip" (both), "skip-images" or "skip-classes": predictions for images or
    # classes the ground truth does not know
    unknown: str = "error"
    # --- issue 17: layouts as tools write them
    split: str | None = None  # data.yaml / obj.data / ImageSets split (default: val)
    image_map: str | None = None  # COCO dataset: image id <-> file_name for results lists
    voc_origin: int = 0  # 0: VOC corners are continuous pixels; 1: 1-based (devkit)
    protocol: str | None = None  # the evaluation's protocol: which sizes are needed
    # a results list's category ids against class indices: "auto", "index", "index+1"
    pred_ids: str = "auto"
    # progress(side, done, total): called while reading many files (CLI draws a bar)
    progress: Callable[[str, int, int], None] | None = None
    jobs: int = 1  # processes decoding a big COCO results list (--jobs, issue 24)

    def names_for(self, role: str) -> str | None:
        """The class-names file of one side: its own (``--pred-names``/``--gt-names``),
        else ``--names``."""
        own = self.pred_names if role == "pred" else self.gt_names
        return own or self.names
