"""Similarity kernels of the geometry types (box IoU, mask IoU, keypoint OKS)."""
