"""Evaluation on a Ray cluster (``pip install iou-eval[ray]``).

::

    import ray, iou_cli.distributed.ray as iou_ray

    ray.init()
    preds = ray.data.read_parquet("s3://bucket/preds/")     # COCO result rows
    result = iou_ray.evaluate(preds, "instances_val.json")  # the same Result as evaluate

The ground truth is a path every worker can read (loaded once per worker process) or a COCO
dict (put in the object store). Rows need ``image_id``, ``category_id``, ``score`` and
``bbox`` (or ``segmentation``, or ``obb``); ``order`` names a column giving each row's
position in the predictions' file (ties are ranked by it, as the one-shot run ranks them by
file order); without it the rows are numbered in the dataset's order.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from ..result import Result
from .core import (
    BUCKET,
    ORDER,
    Job,
    check_columns,
    check_protocol,
    combine,
    map_bucket,
    reduce_rows,
)


def _ray() -> Any:
    try:
        import ray
        import ray.data
    except ImportError as exc:  # pragma: no cover - depends on the install
        from ..errors import UsageError

        raise UsageError("iou_cli.distributed.ray needs Ray: pip install 'iou-eval[ray]'") from exc
    return ray


def evaluate(
    predictions: Any,
    ground_truth: Any,
    *,
    protocol: str = "coco",
    order: str | None = None,
    buckets: int | None = None,
    **options: Any,
) -> Result:
    """Evaluate a Ray Dataset of COCO result rows (or Parquet paths) against
    ``ground_truth`` on the cluster (see the module docstring); ``buckets``: image groups
    matched per task (default: twice the cluster's CPUs); ``options``: those of
    :func:`iou_cli.evaluate`'s protocols (``iou_type``, ``max_dets``, ``iou_thrs``, ...)."""
    ray = _ray()
    check_protocol(protocol)
    source = "<predictions>"  # as the library names in-memory predictions
    if isinstance(predictions, (str, Sequence)) and not hasattr(predictions, "schema"):
        paths = [predictions] if isinstance(predictions, str) else list(predictions)
        source = ",".join(str(p) for p in paths)
        predictions = ray.data.read_parquet(paths)
    gt_ref = None
    token = ""
    gt = ground_truth
    if isinstance(ground_truth, dict):
        gt_ref, token, gt = ray.put(ground_truth), uuid.uuid4().hex, None
    opts = {"iou_type": "bbox", **options}
    job = Job(gt=gt, protocol=protocol, options=opts, source=source, token=token)
    combine_job = Job(gt=ground_truth, protocol=protocol, options=opts, source=source)
    n_buckets = int(buckets or max(2, 2 * int(ray.cluster_resources().get("CPU", 1))))

    check_columns(predictions.schema().names, source, order)
    ds = predictions if order is None else predictions.rename_columns({order: ORDER})
    ctx = ray.data.DataContext.get_current()
    keep = ctx.execution_options.preserve_order
    ctx.execution_options.preserve_order = True  # the rows numbered in the dataset's order
    try:
        if order is None:
            ds = _numbered(ray, ds)
        return _run(ray, ds, job, combine_job, gt_ref, n_buckets)
    finally:
        ctx.execution_options.preserve_order = keep


def _numbered(ray: Any, ds: Any) -> Any:
    """The rows with their position in the dataset (``Dataset.zip`` with a range, under
    order-preserving execution); give ``order=`` where the dataset's order is not the
    predictions' file order, or where this Ray has no ``zip``."""
    import warnings

    if not hasattr(ds, "zip"):
        from ..errors import UsageError

        raise UsageError("this Ray cannot number the rows: give order='<column>'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return ds.zip(ray.data.range(ds.count()).rename_columns({"id": ORDER}))


def _run(ray: Any, ds: Any, job: Job, combine_job: Job, gt_ref: Any, n_buckets: int) -> Result:

    def add_bucket(batch: Any) -> Any:
        import pandas as pd

        key = pd.util.hash_pandas_object(batch["image_id"].astype(str), index=False)
        batch[BUCKET] = (key % n_buckets).astype("int64")
        return batch

    def map_fn(frame: Any) -> Any:
        import pandas as pd

        g = ray.get(gt_ref) if gt_ref is not None else None
        out = map_bucket(job, frame, g)
        return pd.DataFrame({"category": [c for c, _ in out], "payload": [p for _, p in out]})

    def reduce_fn(frame: Any) -> Any:
        import pandas as pd

        cat = int(frame["category"].iloc[0])
        g = ray.get(gt_ref) if gt_ref is not None and cat >= 0 else None
        payload = reduce_rows(job, cat, [bytes(p) for p in frame["payload"]], g)
        return pd.DataFrame({"category": [cat], "payload": [payload]})

    mapped = (
        ds.map_batches(add_bucket, batch_format="pandas")
        .groupby(BUCKET)
        .map_groups(map_fn, batch_format="pandas")
    )
    reduced = mapped.groupby("category").map_groups(reduce_fn, batch_format="pandas")
    rows = ((int(r["category"]), bytes(r["payload"])) for r in reduced.iter_rows())
    return combine(combine_job, rows)
