"""End to end on a local Ray (``ray.init(num_cpus=2)``) and a local Spark (``local[2]``):
the cluster evaluation equals the one-shot ``evaluate`` bit for bit (summary, per-class rows,
precision / recall / scores arrays) on random scenes with score ties, from a Dataset /
DataFrame and from Parquet files; a worker's error reaches the driver as the located
InputError. One test per engine (one cluster start, on one xdist worker)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

from iou_cli import evaluate
from iou_cli.errors import InputError
from tests.distributed.scenes import frame, same, scene

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

MISSING = r"<predictions>:columns: .*missing column\(s\) score"
# (case, seed, score levels): ties everywhere; the last ties every score across classes
ENGINE_CASES = [
    ("coco-bbox", 1, 4),
    ("lvis-bbox", 3, 4),
    ("voc", 4, 4),
    ("lvis-bbox", 5, 1),
    ("voc07", 6, 1),
    ("dota", 2, 2),
]


def _reduced_on_cluster(res: Any, protocol: str) -> Any:
    """The Result was combined from per-class results (no record reached the driver)."""
    from iou_cli.state.classes import LeanCocoEvaluation, LeanLvisEvaluation
    from iou_cli.state.classes_voc import LeanVocEvaluation

    lean = LeanVocEvaluation if protocol in ("voc", "voc07", "dota") else LeanCocoEvaluation
    assert isinstance(res.evaluation, (lean, LeanLvisEvaluation))
    assert len(res.evaluation.table) == 0
    return res


def _parquet(dets: list[dict[str, Any]], path: Path) -> str:
    """The predictions as a Parquet file, their file order in a column ``row`` (shuffled
    rows: the evaluation ranks ties by ``order="row"``, not by the rows' storage order)."""
    df = frame(dets)
    df["row"] = range(len(df))
    df.sample(frac=1.0, random_state=3).to_parquet(path)
    return str(path)


def _bad(dets: list[dict[str, Any]]) -> list[dict[str, Any]]:
    dets = [dict(d) for d in dets]
    dets[5]["bbox"] = [1.0, 2.0, -3.0, 4.0]  # a negative width: the loader refuses it
    return dets


def _check_error(run: Any, gt: Any, dets: list[dict[str, Any]]) -> None:
    with pytest.raises(InputError) as err:
        run(_bad(dets), gt)
    expected = None
    try:
        evaluate(_bad(dets), gt)
    except InputError as e:
        expected = e
    assert expected is not None
    got = err.value
    # the one-shot run's message, at the same row of the predictions
    assert got.path == expected.path == "<predictions>"
    assert got.where == expected.where, (got.where, expected.where)
    assert got.reason == expected.reason


def test_ray_end_to_end(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray does not install here (make test-slow tries)")
    pytest.importorskip("ray.data", reason="ray[data] does not install here")
    from iou_cli.distributed import ray as iou_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        for case, seed, ties in ENGINE_CASES:
            gt, dets = scene(case, seed, ties=ties)
            protocol = case.split("-")[0]
            one = evaluate(dets, gt, protocol=protocol)
            ds = ray.data.from_pandas(frame(dets))
            got = iou_ray.evaluate(ds, gt, protocol=protocol, buckets=3)
            same(one, _reduced_on_cluster(got, protocol))
        gt, dets = scene("coco-bbox", 7)
        path = _parquet(dets, tmp_path / "preds.parquet")
        gt_path = tmp_path / "gt.json"
        import json

        gt_path.write_text(json.dumps(gt))
        same(evaluate(dets, gt), iou_ray.evaluate(path, str(gt_path), order="row", buckets=2))
        _check_error(lambda d, g: iou_ray.evaluate(ray.data.from_pandas(frame(d)), g), gt, dets)
        no_score = ray.data.from_pandas(frame(dets).drop(columns=["score"]))
        with pytest.raises(InputError, match=MISSING):
            iou_ray.evaluate(no_score, gt)
    finally:
        ray.shutdown()


@pytest.fixture
def spark() -> Any:
    pytest.importorskip("pyspark", reason="PySpark does not install here (make test-slow tries)")
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    try:
        session = (
            SparkSession.builder.master("local[2]")
            .appName("iou-eval-tests")
            .config("spark.ui.enabled", "false")
            .config("spark.sql.shuffle.partitions", "4")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .getOrCreate()
        )
    except Exception as exc:  # pragma: no cover - no Java
        pytest.skip(f"Spark does not start here: {exc}")
    yield session
    session.stop()


def test_spark_end_to_end(spark: Any, tmp_path: Path) -> None:
    from iou_cli.distributed import spark as iou_spark

    for case, seed, ties in ENGINE_CASES:
        gt, dets = scene(case, seed, ties=ties)
        protocol = case.split("-")[0]
        one = evaluate(dets, gt, protocol=protocol)
        df = spark.createDataFrame(frame(dets))
        got = iou_spark.evaluate(df, gt, protocol=protocol, buckets=3)
        same(one, _reduced_on_cluster(got, protocol))
    gt, dets = scene("coco-bbox", 7)
    path = _parquet(dets, tmp_path / "preds.parquet")
    gt_path = tmp_path / "gt.json"
    import json

    gt_path.write_text(json.dumps(gt))
    same(
        evaluate(dets, gt),
        iou_spark.evaluate(path, str(gt_path), order="row", spark=spark, buckets=2),
    )
    _check_error(lambda d, g: iou_spark.evaluate(spark.createDataFrame(frame(d)), g), gt, dets)
    no_score = spark.createDataFrame(frame(dets).drop(columns=["score"]))
    with pytest.raises(InputError, match=MISSING):
        iou_spark.evaluate(no_score, gt)
