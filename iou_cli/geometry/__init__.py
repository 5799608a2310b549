"""Geometry kernels (NumPy; pycocotools only for masks): box formats (``boxes``), the box IoU
engine and crowd rule (``iou``), mask IoU (``masks``), RLE checks (``rle``) and rotated boxes
(``obb``: the corner convention and exact quadrilateral IoU)."""
