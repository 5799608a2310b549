"""The input formats the loaders read: name -> the module holding its ``read_side`` and what it
can hold. ``loaders.load_side`` dispatches through it; ``options`` checks forced formats
against it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    """One input format: the module under ``loaders/`` holding its ``read_side``, and what
    it can hold (instance masks for ``--iou-type segm``; rotated boxes for ``--iou-type obb``;
    keypoints for ``--iou-type keypoints``; a stream: stdin or a pipe)."""

    name: str
    module: str
    segm: bool = False
    stream: bool = False
    obb: bool = False
    keypoints: bool = False


REGISTRY: dict[str, Format] = {
    f.name: f
    for f in (
        Format("coco", "coco", segm=True, stream=True, obb=True, keypoints=True),
        Format("voc", "voc"),
        Format("yolo", "yolo", segm=True, obb=True, keypoints=True),
        Format("yolo-obb", "yolo_obb", obb=True),
        Format("dota", "dota", obb=True),
        Format("yolo-darknet", "yolo"),
        Format("cvat", "cvat"),
        Format("labelme", "labelme"),
        Format("openimages", "openimages"),
    )
}
FORMATS = tuple(REGISTRY)
