"""Matching protocols: COCO (pycocotools semantics) and VOC (devkit semantics)."""
