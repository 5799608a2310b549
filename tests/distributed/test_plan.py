"""The cluster plan without a cluster (fast): map per image bucket in any row order, the
per-class rows shuffled and reduced per class, combined on the driver, equals the one-shot
``evaluate`` bit for bit; a failing map is reported located, as an InputError."""

from __future__ import annotations

import pytest

from iou_cli import evaluate
from iou_cli.distributed import core, rows
from iou_cli.errors import InputError, UsageError
from tests.distributed.scenes import CASES, plan, same, scene


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("n_buckets", [1, 3])
def test_plan_equals_one_shot(case: str, n_buckets: int) -> None:
    protocol, iou_type = CASES[case]
    for seed in (1, 2):
        gt, dets = scene(case, seed)
        one = evaluate(dets, gt, protocol=protocol, iou_type=iou_type)
        got = plan(gt, dets, protocol, n_buckets, seed, iou_type=iou_type)
        same(one, got)


def test_images_without_predictions_count_their_ground_truth() -> None:
    gt, dets = scene("coco-bbox", 5)
    first = dets[0]["image_id"]
    dets = [d for d in dets if d["image_id"] == first]
    same(evaluate(dets, gt), plan(gt, dets, "coco", 2, 0))


def test_payload_round_trip() -> None:
    import numpy as np

    arrays: dict[str, np.ndarray] = {
        "a": np.arange(5, dtype=np.int64),
        "b": np.ones((2, 3), dtype=np.uint8),
    }
    out, info = rows.unpack(rows.pack(arrays, {"x": 1}))
    assert info == {"x": 1}
    assert all(np.array_equal(out[k], arrays[k]) for k in arrays)


def test_worker_error_is_reported_located() -> None:
    gt, dets = scene("coco-bbox", 3)
    dets[4]["bbox"] = [1, 2, "wide", 4]
    with pytest.raises(InputError) as err:
        plan(gt, dets, "coco", 2, 0)
    e = err.value
    assert e.path == "<predictions>"
    assert (e.where or "").startswith("[4]"), e.where
    assert "bbox" in e.message()


def test_worker_crash_names_the_place() -> None:
    job = core.Job(gt={"images": []}, protocol="coco", options={"iou_type": "bbox"})
    try:
        raise ZeroDivisionError("boom")
    except ZeroDivisionError as exc:
        cat, payload = core.error_row(job, exc, None)
    assert cat == rows.ERROR
    with pytest.raises(
        InputError, match=r"<predictions>:worker, in test_worker_crash.*ZeroDivisionError: boom"
    ):
        core.raise_error(payload)


def test_missing_columns_are_refused_on_the_driver() -> None:
    with pytest.raises(InputError, match=r"preds.parquet:columns: .*missing column\(s\) score, "):
        core.check_columns(["image_id", "category_id", "bbox"], "preds.parquet", "row")
    core.check_columns(["image_id", "category_id", "score", "segmentation"], "p", None)


@pytest.mark.parametrize("case", ["coco-bbox", "lvis-bbox"])
@pytest.mark.parametrize("ties", [1, 2])
def test_classes_are_reduced_on_the_cluster_with_ties_across_classes(case: str, ties: int) -> None:
    """Every class's accumulation runs in its group: the driver gets per-class results (no
    match records) and its operating point, swept over every class's scores tied at one or
    two values, equals the one-shot run's (best F1, TP/FP/FN, mean IoU summed in the
    one-shot's order)."""
    from iou_cli.state.classes import LeanCocoEvaluation, LeanLvisEvaluation

    protocol = case.split("-")[0]
    for seed in (3, 4):
        gt, dets = scene(case, seed, ties=ties)
        one = evaluate(dets, gt, protocol=protocol)
        got = plan(gt, dets, protocol, 3, seed)
        assert isinstance(got.evaluation, (LeanCocoEvaluation, LeanLvisEvaluation))
        assert len(got.evaluation.table) == 0  # no record reached the driver
        assert one.summary["mean_iou"] is not None
        same(one, got)


@pytest.mark.parametrize("case", ["voc", "voc07", "dota", "voc-obb"])
@pytest.mark.parametrize("ties", [1, 2])
def test_voc_classes_are_reduced_on_the_cluster(case: str, ties: int) -> None:
    """VOC's (and DOTA's) per-class AP runs in the class's group too: the driver receives
    per class its AP, counts and the TP / FP columns of the operating point (no match
    records), and the Result equals the one-shot run's (mAP, best F1 over every class's tied
    scores, mean IoU summed in file order, per-class rows), on scenes with crowd / ignored
    (difficult) ground truths. DOTA decides in the class's group which hit takes a ground
    truth (the devkit's visiting order)."""
    from iou_cli.state.classes_voc import LeanDotaEvaluation, LeanVocEvaluation

    protocol, iou_type = CASES[case]
    for seed in (3, 4, 5):
        gt, dets = scene(case, seed, ties=ties)
        one = evaluate(dets, gt, protocol=protocol, iou_type=iou_type)
        got = plan(gt, dets, protocol, 3, seed, iou_type=iou_type)
        lean = LeanDotaEvaluation if protocol == "dota" else LeanVocEvaluation
        assert isinstance(got.evaluation, lean)
        assert got.params == one.params
        assert len(got.evaluation.table) == 0 and got.evaluation.match.tp.size == 0
        assert one.summary["mean_iou"] is not None and one.summary["mAP"] is not None
        same(one, got)


@pytest.mark.parametrize("case", ["voc", "voc07", "dota"])
def test_voc_options_reach_the_class_groups(case: str) -> None:
    """A given score threshold and IoU threshold (and VOC's plus_one, DOTA's all_point) are
    the class groups' and the driver's, as the one-shot run's."""
    protocol, iou_type = CASES[case]
    extra = {"all_point": True} if case == "dota" else {"plus_one": True}
    opts = {"iou_type": iou_type, "score_thr": 0.5, "iou_thr": 0.6, **extra}
    gt, dets = scene(case, 8, ties=3)
    one = evaluate(dets, gt, protocol=protocol, **opts)
    got = plan(gt, dets, protocol, 2, 1, **opts)
    assert got.params == one.params and got.summary["score_thr"] == 0.5
    same(one, got)


def test_voc_class_without_predictions_or_ground_truth() -> None:
    """Classes no bucket emitted are reduced on the driver from the unmatched images'
    counts: AP 0 with ground truth, None (null) without, as the one-shot run."""
    gt, dets = scene("voc", 6)
    cats = sorted({d["category_id"] for d in dets})
    dets = [d for d in dets if d["category_id"] == cats[0]]
    gt["categories"].append({"id": 999, "name": "never"})
    one = evaluate(dets, gt, protocol="voc")
    got = plan(gt, dets, "voc", 2, 0)
    assert [r["AP"] for r in got.per_class][-1] is None
    assert 0.0 in [r["AP"] for r in got.per_class]
    same(one, got)


def test_lean_best_f1_equals_the_sweep() -> None:
    """The driver's lean best-F1 sweep (every row a TP or an FP) picks the threshold
    metrics.best_f1_threshold picks, with ties at every score and FPs-only runs."""
    import numpy as np

    from iou_cli.metrics import best_f1_threshold
    from iou_cli.state.classes_voc import lean_best_f1

    rng = np.random.default_rng(0)
    for trial in range(300):
        n = int(rng.integers(0, 40))
        score = rng.choice(np.linspace(0.05, 0.95, int(rng.integers(1, 6))), size=n)
        tp = rng.random(n) < rng.random()
        n_gt = int(rng.integers(0, 30))
        assert lean_best_f1(score, tp, n_gt) == best_f1_threshold(score, tp, ~tp, n_gt), trial


def test_voc_lean_result_has_no_curves() -> None:
    """The combined VOC evaluation keeps no PR arrays (as long as the predictions): curves
    are not offered for it, rather than drawn empty."""
    from iou_cli.analysis.curves import for_result

    gt, dets = scene("voc", 2)
    assert for_result(evaluate(dets, gt, protocol="voc")) is not None
    assert for_result(plan(gt, dets, "voc", 2, 0)) is None


def test_unreduced_class_rows_are_refused() -> None:
    """The driver combines per-class results only: a class's raw records (a cluster that
    skipped the per-class step) are refused, not reduced on the driver."""
    gt, dets = scene("coco-bbox", 2)
    job = core.Job(gt=gt, protocol="coco", options={"iou_type": "bbox"})
    emitted = core.map_bucket(job, _framed(dets))
    with pytest.raises(UsageError, match="was not reduced on the cluster"):
        core.combine(job, emitted)


@pytest.mark.parametrize("protocol", ["coco", "voc"])
def test_ground_truth_counts_that_disagree_are_refused(protocol: str) -> None:
    """A class's group counted its ground truths over a different ground truth than the
    driver's (the buckets' and the unmatched images' counts do not add up)."""
    import numpy as np

    gt, dets = scene("coco-bbox", 2)
    job = core.Job(gt=gt, protocol=protocol, options={"iou_type": "bbox"})
    out = []
    for c, p in core.map_bucket(job, _framed(dets)):
        if c >= 0:
            arrs, info = rows.unpack(core.reduce_rows(job, c, [p]))
            arrs = dict(arrs)
            arrs["mapped"] = np.asarray(arrs["mapped"]) + 1
            p = rows.pack(arrs, info)
        out.append((c, p))
    with pytest.raises(UsageError, match="ground-truth counts differ"):
        core.combine(job, out)


def _framed(dets: list[dict]) -> object:
    import numpy as np

    from tests.distributed.scenes import frame

    df = frame(dets)
    df[core.ORDER] = np.arange(len(df))
    return df


def test_class_group_error_reaches_the_driver_located() -> None:
    """A class's group that fails (here: a corrupt row) reports its error as a row; the
    driver raises it as the library's InputError naming where it was raised."""
    gt, dets = scene("coco-bbox", 2)
    job = core.Job(gt=gt, protocol="coco", options={"iou_type": "bbox"})
    emitted = [(c, p) for c, p in core.map_bucket(job, _framed(dets)) if c < 0]
    emitted.append((0, core.reduce_rows(job, 0, [b"\x05\x00\x00\x00{]"])))
    with pytest.raises(InputError, match=r"<predictions>:worker, in .*JSONDecodeError"):
        core.combine(job, emitted)
