"""The weighted accumulation against pycocotools: all multiplicities 1 is the single run,
integer multiplicities are a real re-evaluation of the duplicated image set."""

from __future__ import annotations

import numpy as np
import pytest

from iou_cli.analysis.bootstrap import WeightedCoco, multiplicities
from tests.analysis.pycoco_tables import duplicate_images, tables_from_pycoco
from tests.oracle.cocogen import random_scene
from tests.oracle.pycoco import pycoco_eval

AREAS = ["all", "small", "medium", "large"]


def _weighted(ev) -> WeightedCoco:  # type: ignore[no-untyped-def]
    p = ev.params
    return WeightedCoco(
        tables_from_pycoco(ev),
        n_classes=len(p.catIds),
        rec_thrs=p.recThrs,
        max_dets=tuple(p.maxDets),
    )


def _check_equal(ev, st, row: int) -> None:  # type: ignore[no-untyped-def]
    """Sample ``row`` of ``st`` equals pycocotools' precision/recall arrays bit for bit."""
    prec = ev.eval["precision"]  # (T, R, K, A, M)
    rec = ev.eval["recall"]  # (T, K, A, M)
    for a, name in enumerate(AREAS):
        valid = st.n_pos[name][row] > 0
        ref_valid = prec[0, 0, :, a, -1] > -1
        assert np.array_equal(valid, ref_valid), name
        got_q = st.q[name][row][:, valid, :]  # (T, Kv, R)
        want_q = prec[:, :, valid, a, -1].transpose(0, 2, 1)
        assert np.array_equal(got_q, want_q), name
        # the fast path's per-class sums agree with the precision array to rounding
        assert np.allclose(st.qsum[name][row], st.q[name][row].sum(axis=-1), rtol=0, atol=1e-9)
        # recall at every maxDets for "all" (AR1, AR10, ...), at the last for the others
        m = slice(None) if name == "all" else slice(-1, None)
        got_r = st.rc[name][row][:, valid, m]  # (T, Kv, M)
        assert np.array_equal(got_r, rec[:, valid, a, m]), name


@pytest.mark.parametrize("seed", range(6))
def test_unit_weights_are_the_single_run(seed: int) -> None:
    gt, dets = random_scene(seed, n_images=15, n_cats=5)
    ev = pycoco_eval(gt, dets)
    wc = _weighted(ev)
    st = wc.sample(np.ones((2, len(gt["images"])), dtype=np.int32), grid=True)
    _check_equal(ev, st, 0)
    _check_equal(ev, st, 1)


def _unique_scores(dets, seed: int):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    scores = rng.permutation(len(dets)) / len(dets) + 1e-4
    return [{**d, "score": float(s)} for d, s in zip(dets, scores, strict=True)]


@pytest.mark.parametrize("seed", range(6))
def test_integer_weights_are_the_duplicated_image_set(seed: int) -> None:
    """Unique scores: bit-for-bit equal to pycocotools on the image set with copies."""
    gt, dets = random_scene(100 + seed, n_images=12, n_cats=4)
    dets = _unique_scores(dets, seed)
    ev = pycoco_eval(gt, dets)
    wc = _weighted(ev)
    w = next(multiplicities(len(gt["images"]), 1, seed))
    assert w.sum() == len(gt["images"])
    gt2, dets2 = duplicate_images(gt, dets, w[0])
    ev2 = pycoco_eval(gt2, dets2)
    _check_equal(ev2, wc.sample(w, grid=True), 0)


@pytest.mark.parametrize("seed", range(4))
def test_tied_scores_differ_only_by_tie_order(seed: int) -> None:
    """With tied scores the duplicated set orders a tie by image id, so precision inside a
    tie block may differ; recall (and n_pos) never does, and AP stays close."""
    gt, dets = random_scene(200 + seed, n_images=12, n_cats=4)
    ev = pycoco_eval(gt, dets)
    wc = _weighted(ev)
    w = next(multiplicities(len(gt["images"]), 1, seed))
    gt2, dets2 = duplicate_images(gt, dets, w[0])
    ev2 = pycoco_eval(gt2, dets2)
    st = wc.sample(w, grid=True)
    prec = ev2.eval["precision"]
    for a, name in enumerate(AREAS):
        valid = st.n_pos[name][0] > 0
        assert np.array_equal(valid, prec[0, 0, :, a, -1] > -1)
        rc = ev2.eval["recall"][:, valid, a, -1]
        assert np.array_equal(st.rc[name][0][:, valid, -1], rc)
        got = st.q[name][0][:, valid, :].mean() if valid.any() else 0.0
        want = prec[:, :, valid, a, -1].mean() if valid.any() else 0.0
        assert abs(got - want) < 0.05


def test_multiplicities_are_seeded_and_sum_to_n() -> None:
    a = np.concatenate(list(multiplicities(37, 40, seed=5)))
    b = np.concatenate(list(multiplicities(37, 40, seed=5)))
    c = np.concatenate(list(multiplicities(37, 40, seed=6)))
    assert a.shape == (40, 37)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    assert (a.sum(axis=1) == 37).all() and a.min() >= 0
    # the first samples do not depend on how many are drawn
    assert np.array_equal(np.concatenate(list(multiplicities(37, 20, seed=5))), a[:20])


@pytest.mark.parametrize("seed", range(6))
def test_unit_weights_give_the_exact_summary_and_class_ap(seed: int) -> None:
    from iou_cli.analysis.bootstrap import CocoScorer
    from tests.oracle.pycoco import STAT_KEYS, per_class_ap, stats_of

    gt, dets = random_scene(300 + seed, n_images=15, n_cats=5)
    ev = pycoco_eval(gt, dets)
    p = ev.params
    sc = CocoScorer(
        tables_from_pycoco(ev),
        n_classes=len(p.catIds),
        iou_thrs=p.iouThrs,
        rec_thrs=p.recThrs,
        max_dets=tuple(p.maxDets),
    )
    ones = np.ones((3, len(gt["images"])), dtype=np.int32)
    stats, per = sc.score(ones, exact=True)
    fast, fast_per = sc.score(ones)
    want = stats_of(ev)
    for key, ref in zip(STAT_KEYS, want, strict=True):
        got = stats[key]
        if ref is None:
            assert np.isnan(got).all(), key
        else:
            assert (got == ref).all(), (key, got[0], ref)  # bit for bit
            assert np.allclose(fast[key], ref, rtol=0, atol=1e-12), key
    ref_cls = per_class_ap(ev)
    for k, ref in enumerate(ref_cls):
        if ref is None:
            assert np.isnan(per[:, k]).all()
        else:
            assert (per[:, k] == ref).all()
            assert np.allclose(fast_per[:, k], ref, rtol=0, atol=1e-12)


def test_recall_index_is_the_exact_float_comparison() -> None:
    from iou_cli.protocols.coco import REC_THRS

    wc = WeightedCoco({}, n_classes=1, rec_thrs=REC_THRS, max_dets=(100,))
    rc = np.concatenate([np.arange(n + 1) / n for n in range(1, 400)] + [np.array([0.0, 1.0])])
    want = np.searchsorted(REC_THRS, rc, side="right")
    assert np.array_equal(wc._recall_index(rc), want)


@pytest.mark.parametrize("protocol", ["voc", "voc07"])
def test_voc_unit_weights_are_the_single_run(protocol: str) -> None:
    """VOC: all multiplicities 1 give the single run's mAP, per-class AP and operating
    point (the single run is pinned to the devkit by the VOC oracle tests)."""
    from pathlib import Path

    from iou_cli.analysis.bootstrap import voc_scorer
    from iou_cli.api import evaluate_dataset, load_pair
    from iou_cli.options import LoadOptions

    root = Path(__file__).resolve().parents[2] / "sample_data"
    ds = load_pair(
        str(root / "yolo" / "preds"),
        str(root / "voc" / "annotations"),
        LoadOptions(),
    )
    res = evaluate_dataset(ds, protocol=protocol, plus_one=True)
    sc = voc_scorer(ds, res, iou_thr=0.5, use_07=protocol == "voc07", plus_one=True)
    stats, per = sc.score(np.ones((2, len(ds.images)), dtype=np.int32))
    assert stats["mAP"] == pytest.approx(res.summary["mAP"], abs=1e-12)
    for k, row in enumerate(res.per_class):
        if row["AP"] is None:
            assert np.isnan(per[:, k]).all()
        else:
            assert per[0, k] == pytest.approx(row["AP"], abs=1e-12)
    for key in ("tp", "fp", "fn", "precision", "recall", "f1", "mean_iou"):
        assert stats[key][0] == pytest.approx(res.summary[key], abs=1e-12), key


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("protocol", ["voc", "voc07"])
def test_voc_integer_weights_are_the_duplicated_image_set(
    tmp_path, protocol: str, seed: int
) -> None:  # type: ignore[no-untyped-def]
    """Unique scores: the weighted VOC curves equal our devkit-exact evaluation of the image
    set with copies (to float summation order)."""
    import json

    from iou_cli.analysis.bootstrap import voc_scorer
    from iou_cli.api import evaluate_dataset, load_pair
    from iou_cli.options import LoadOptions

    gt, dets = random_scene(400 + seed, n_images=10, n_cats=4)
    dets = _unique_scores(dets, seed)
    w = next(multiplicities(len(gt["images"]), 1, seed))
    gt2, dets2 = duplicate_images(gt, dets, w[0])

    def run(g, d, name):  # type: ignore[no-untyped-def]
        (tmp_path / f"{name}_gt.json").write_text(json.dumps(g))
        (tmp_path / f"{name}_dt.json").write_text(json.dumps(d))
        ds = load_pair(
            str(tmp_path / f"{name}_dt.json"), str(tmp_path / f"{name}_gt.json"), LoadOptions()
        )
        return ds, evaluate_dataset(ds, protocol=protocol, score_thr=0.3)

    ds, res = run(gt, dets, "one")
    _, res2 = run(gt2, dets2, "dup")
    sc = voc_scorer(ds, res, iou_thr=0.5, use_07=protocol == "voc07", plus_one=False)
    stats, per = sc.score(w)
    want = res2.summary["mAP"]
    assert (want is None and np.isnan(stats["mAP"][0])) or stats["mAP"][0] == pytest.approx(
        want, abs=1e-12
    )
    for k, row in enumerate(res2.per_class):
        if row["AP"] is not None:
            assert per[0, k] == pytest.approx(row["AP"], abs=1e-12)
    for key in ("tp", "fp", "fn", "precision", "recall"):
        if res2.summary[key] is not None:
            assert stats[key][0] == pytest.approx(res2.summary[key], abs=1e-12), key


def test_slicing_rows_to_bound_memory_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from iou_cli.analysis import bootstrap

    gt, dets = random_scene(77, n_images=15, n_cats=5)
    ev = pycoco_eval(gt, dets)
    w = np.concatenate(list(multiplicities(len(gt["images"]), 20, seed=1)))
    whole = _weighted(ev).sample(w)
    monkeypatch.setattr(bootstrap, "BUDGET", 50)
    sliced = _weighted(ev).sample(w)
    for name in AREAS:
        assert np.array_equal(whole.qsum[name], sliced.qsum[name])
        assert np.array_equal(whole.rc[name], sliced.rc[name])
        assert np.array_equal(whole.n_pos[name], sliced.n_pos[name])


@pytest.mark.parametrize("seed", range(5))
def test_unit_weights_on_our_match_tables_are_the_single_run(tmp_path, seed: int) -> None:  # type: ignore[no-untyped-def]
    """The scorer built from the evaluation's own match tables (what `compare` uses): all
    multiplicities 1 give the single run's 12 stats bit for bit (exact path) and to
    rounding (fast path), the operating point and the per-class AP."""
    import json

    from iou_cli.analysis.bootstrap import coco_scorer
    from iou_cli.api import evaluate_dataset, load_pair
    from iou_cli.options import LoadOptions

    gt, dets = random_scene(500 + seed, n_images=14, n_cats=5)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    ds = load_pair(str(tmp_path / "dt.json"), str(tmp_path / "gt.json"), LoadOptions())
    res = evaluate_dataset(ds, protocol="coco", keep_tables=True)
    sc = coco_scorer(ds, res)
    assert sc is not None
    ones = np.ones((2, len(ds.images)), dtype=np.int32)
    exact, exact_per = sc.score(ones, exact=True)
    fast, fast_per = sc.score(ones)
    for key, value in res.summary.items():
        if key in ("iou_thr", "score_thr"):
            assert key not in exact
            continue
        if value is None:
            assert np.isnan(fast[key]).all(), key
            continue
        assert fast[key] == pytest.approx(value, abs=1e-12), key
        if key[:2] in ("AP", "AR"):
            assert (exact[key] == value).all(), key  # bit for bit
    for k, row in enumerate(res.per_class):
        if row["AP"] is None:
            assert np.isnan(fast_per[:, k]).all()
        else:
            assert (exact_per[:, k] == row["AP"]).all()
            assert fast_per[0, k] == pytest.approx(row["AP"], abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_lvis_unit_weights_are_the_single_run(tmp_path, seed: int) -> None:  # type: ignore[no-untyped-def]
    """LVIS (federated selection, not-exhaustive classes ignored when unmatched, 300 per
    image, APr/APc/APf): unit weights give the single run's 13 values bit for bit."""
    import json

    from iou_cli.analysis.bootstrap import coco_scorer
    from iou_cli.api import evaluate_dataset, load_pair
    from iou_cli.options import LoadOptions
    from tests.oracle.lvisgen import random_lvis_scene

    gt, dets = random_lvis_scene(seed)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    ds = load_pair(
        str(tmp_path / "dt.json"), str(tmp_path / "gt.json"), LoadOptions(protocol="lvis")
    )
    res = evaluate_dataset(ds, protocol="lvis", keep_tables=True)
    sc = coco_scorer(ds, res)
    assert sc is not None
    ones = np.ones((2, len(ds.images)), dtype=np.int32)
    exact, _ = sc.score(ones, exact=True)
    fast, fast_per = sc.score(ones)
    for key, value in res.summary.items():
        if key in ("iou_thr", "score_thr"):
            continue
        if value is None:
            assert np.isnan(fast[key]).all(), key
            continue
        assert fast[key] == pytest.approx(value, abs=1e-12), key
        if key[:2] in ("AP", "AR"):
            assert (exact[key] == value).all(), key
    for k, row in enumerate(res.per_class):
        if row["AP"] is not None:
            assert fast_per[0, k] == pytest.approx(row["AP"], abs=1e-12)
