"""Geometry kernels (NumPy; pycocotools only for masks): box formats (``boxes``), the box IoU
engine and crowd rule (``iou``), mask IoU (``masks``) and RLE checks (``rle``)."""
