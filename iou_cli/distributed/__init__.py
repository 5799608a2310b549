"""Evaluation on a cluster: :mod:`iou_cli.distributed.ray` and :mod:`iou_cli.distributed.spark`.

Both run the same plan (docs/scale.md): the predictions (COCO result rows) are grouped by
image into buckets; each bucket is matched on a worker against the ground truth (loaded
there once per process) and emits per-class partial rows; a second shuffle groups those rows
by class on the cluster and concatenates them; the driver combines the per-class parts into
the mergeable state and reduces it to the same :class:`~iou_cli.result.Result` as
:func:`iou_cli.evaluate`, bit for bit. Nothing here imports Ray or Spark until called.
"""
