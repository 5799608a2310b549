"""Evaluation on a Spark cluster (``pip install iou-eval[spark]``).

::

    import iou_cli.distributed.spark as iou_spark

    preds = spark.read.parquet("s3://bucket/preds/")            # COCO result rows
    result = iou_spark.evaluate(preds, "/shared/instances_val.json")

The ground truth is a path every executor can read (loaded once per Python worker) or a
COCO dict (broadcast). Rows need ``image_id``, ``category_id``, ``score`` and ``bbox`` (or
``segmentation``, or ``obb``); ``order`` names a column giving each row's position in the
predictions' file (ties are ranked by it, as the one-shot run ranks them by file order);
without it ``monotonically_increasing_id()`` numbers the rows in the frame's partition
order.
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

_SCHEMA = "category long, payload binary"


def _spark() -> Any:
    try:
        from pyspark.sql import SparkSession, functions
    except ImportError as exc:  # pragma: no cover - depends on the install
        from ..errors import UsageError

        raise UsageError(
            "iou_cli.distributed.spark needs PySpark: pip install 'iou-eval[spark]'"
        ) from exc
    return SparkSession, functions


def evaluate(
    predictions: Any,
    ground_truth: Any,
    *,
    protocol: str = "coco",
    order: str | None = None,
    buckets: int | None = None,
    spark: Any = None,
    **options: Any,
) -> Result:
    """Evaluate a Spark DataFrame of COCO result rows (or Parquet paths) against
    ``ground_truth`` on the cluster (see the module docstring); ``buckets``: image groups
    (default: twice the default parallelism); ``spark``: the session (default: the active
    one); ``options``: those of :func:`iou_cli.evaluate`'s protocols."""
    session_cls, F = _spark()
    check_protocol(protocol)
    source = "<predictions>"  # as the library names in-memory predictions
    if isinstance(predictions, (str, Sequence)) and not hasattr(predictions, "schema"):
        paths = [predictions] if isinstance(predictions, str) else list(predictions)
        source = ",".join(str(p) for p in paths)
        session = spark or session_cls.builder.getOrCreate()
        predictions = session.read.parquet(*paths)
    session = spark or predictions.sparkSession
    sc = session.sparkContext
    n_buckets = int(buckets or max(2, 2 * sc.defaultParallelism))
    bc = None
    token = ""
    gt = ground_truth
    if isinstance(ground_truth, dict):
        bc, token, gt = sc.broadcast(ground_truth), uuid.uuid4().hex, None
    opts = {"iou_type": "bbox", **options}
    job = Job(gt=gt, protocol=protocol, options=opts, source=source, token=token)
    combine_job = Job(gt=ground_truth, protocol=protocol, options=opts, source=source)

    check_columns(predictions.columns, source, order)
    df = predictions
    if order is None:
        df = df.withColumn(ORDER, F.monotonically_increasing_id())
    else:
        df = df.withColumnRenamed(order, ORDER)
    df = df.withColumn(BUCKET, F.pmod(F.hash(F.col("image_id").cast("string")), F.lit(n_buckets)))

    def map_fn(frame: Any) -> Any:
        import pandas as pd

        out = map_bucket(job, frame, bc.value if bc is not None else None)
        return pd.DataFrame({"category": [c for c, _ in out], "payload": [p for _, p in out]})

    def reduce_fn(frame: Any) -> Any:
        import pandas as pd

        cat = int(frame["category"].iloc[0])
        g = bc.value if bc is not None and cat >= 0 else None
        payload = reduce_rows(job, cat, [bytes(p) for p in frame["payload"]], g)
        return pd.DataFrame({"category": [cat], "payload": [payload]})

    mapped = df.groupBy(BUCKET).applyInPandas(map_fn, schema=_SCHEMA)
    reduced = mapped.groupBy("category").applyInPandas(reduce_fn, schema=_SCHEMA)
    rows = ((int(r["category"]), bytes(r["payload"])) for r in reduced.toLocalIterator())
    try:
        return combine(combine_job, rows)
    finally:
        if bc is not None:
            bc.unpersist()
