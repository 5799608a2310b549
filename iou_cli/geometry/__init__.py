"""Geometry kernels: one module per shape (rotated boxes in :mod:`.obb`)."""
