"""Every rule of panopticapi's pq_compute, one hand-computed case each (and hotcoco agrees).

Images are 4 x 10 pixels; a segment is a set of columns (4 pixels per column). The
hand calculation is written beside each case; panopticapi's formulas are
PQ_c = IoU_sum / (TP + FP/2 + FN/2), SQ_c = IoU_sum / TP (0 without TP), RQ_c = TP / (TP +
FP/2 + FN/2), averaged over the ground truth's categories with TP + FP + FN > 0.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iou_cli.tasks.panoptic import evaluate_panoptic

from .gen import write_set

PERSON, CAR, DOG, SKY, ROAD = 1, 2, 3, 7, 9
TOL = 1e-12


def cols(spec: dict[int, tuple[int, int]]) -> np.ndarray:
    """A 4 x 10 id map: id -> [first column, last column] (inclusive); 0 elsewhere (VOID)."""
    ids = np.zeros((4, 10), dtype=np.uint32)
    for sid, (a, b) in spec.items():
        ids[:, a : b + 1] = sid
    return ids


def seg(sid: int, cat: int, ids: np.ndarray, crowd: int = 0, area: int | None = None) -> dict:
    n = int((ids == sid).sum())
    return {"id": sid, "category_id": cat, "area": n if area is None else area, "iscrowd": crowd}


def run(tmp_path: Path, gt: list, pred: list) -> tuple[dict, dict, object]:
    """gt/pred: per image (ids, [(sid, cat, crowd[, area])...]); returns (summary, per class)."""
    g_imgs, p_imgs = [], []
    for i, ((gi, gs), (pi, ps)) in enumerate(zip(gt, pred, strict=True), start=1):
        g_imgs.append((i, gi, [seg(s[0], s[1], gi, *s[2:]) for s in gs]))
        p_imgs.append((i, pi, [seg(s[0], s[1], pi) for s in ps]))
    g = write_set(tmp_path, "gt", g_imgs)
    p = write_set(tmp_path, "pred", p_imgs)
    res = evaluate_panoptic(str(p), str(g))
    per = {r["category_id"]: r for r in res.per_class}
    return res.summary, per, (p, g, res)


def hotcoco_results(p: Path, g: Path) -> dict:
    panoptic = pytest.importorskip("hotcoco.panoptic", reason="hotcoco (test extra) missing")
    ev = panoptic.PanopticEval(str(g), str(p))
    ev.evaluate()
    return ev.results()


def check(summary: dict, expect: dict) -> None:
    for k, v in expect.items():
        if v is None or isinstance(v, int) and k.startswith("N"):
            assert summary[k] == v, k
        else:
            assert abs(summary[k] - v) <= TOL, (k, summary[k], v)


def agrees_with_hotcoco(p: Path, g: Path, summary: dict, per: dict) -> None:
    ref = hotcoco_results(p, g)
    for name, suffix in (("All", ""), ("Things", "_th"), ("Stuff", "_st")):
        assert ref[name]["n"] == summary[f"N{suffix}"]
        if ref[name]["n"]:
            for m in ("pq", "sq", "rq"):
                assert abs(ref[name][m] - summary[f"{m.upper()}{suffix}"]) <= TOL
    for cid, r in ref["per_class"].items():
        if per[int(cid)]["PQ"] is None:
            continue
        for m in ("tp", "fp", "fn"):
            assert r[m] == per[int(cid)][m]


def test_void_overlap_leaves_the_union(tmp_path: Path) -> None:
    # GT person cols 0-5 (24 px), VOID cols 6-9; pred person cols 2-9 (32 px).
    # I = cols 2-5 = 16; VOID overlap = cols 6-9 = 16; union = 32 + 24 - 16 - 16 = 24;
    # IoU = 16/24 = 2/3 > 0.5: TP (without the rule 16/40 = 0.4 would be FP + FN).
    g = cols({5: (0, 5)})
    p = cols({77: (2, 9)})
    s, per, (pp, gp, _) = run(tmp_path, [(g, [(5, PERSON)])], [(p, [(77, PERSON)])])
    check(s, {"PQ": 2 / 3, "SQ": 2 / 3, "RQ": 1.0, "N": 1, "N_th": 1, "N_st": 0, "PQ_st": None})
    assert (per[PERSON]["tp"], per[PERSON]["fp"], per[PERSON]["fn"]) == (1, 0, 0)
    agrees_with_hotcoco(pp, gp, s, per)


def test_predicted_void_stays_in_the_union(tmp_path: Path) -> None:
    # GT person cols 0-9 (40 px); pred person cols 0-5 (24 px), pred VOID cols 6-9.
    # IoU = 24 / (24 + 40 - 24 - 0) = 0.6: TP; PQ = SQ = 0.6.
    g = cols({5: (0, 9)})
    p = cols({77: (0, 5)})
    s, per, (pp, gp, _) = run(tmp_path, [(g, [(5, PERSON)])], [(p, [(77, PERSON)])])
    check(s, {"PQ": 0.6, "SQ": 0.6, "RQ": 1.0, "N": 1})
    agrees_with_hotcoco(pp, gp, s, per)


def test_crowd_absorbs_predictions_of_its_category_only(tmp_path: Path) -> None:
    # GT crowd person cols 0-5, sky cols 6-9. Pred: person cols 0-3 (all in the crowd:
    # 16/16 > 0.5, not an FP; the crowd is never matched nor missed), dog cols 4-5 (in the
    # person crowd, another category: FP), sky cols 6-9 (IoU 1, TP).
    # person: no TP/FP/FN -> not averaged; dog: FP -> PQ = SQ = RQ = 0; sky: 1.
    # All: (0 + 1) / 2; Things: dog only (0); Stuff: sky (1).
    g = cols({5: (0, 5), 6: (6, 9)})
    p = cols({77: (0, 3), 78: (4, 5), 79: (6, 9)})
    s, per, (pp, gp, _) = run(
        tmp_path,
        [(g, [(5, PERSON, 1), (6, SKY)])],
        [(p, [(77, PERSON), (78, DOG), (79, SKY)])],
    )
    check(s, {"PQ": 0.5, "SQ": 0.5, "RQ": 0.5, "N": 2, "PQ_th": 0.0, "N_th": 1, "PQ_st": 1.0})
    assert per[PERSON]["PQ"] is None and per[PERSON]["tp"] + per[PERSON]["fp"] == 0
    assert (per[DOG]["fp"], per[DOG]["PQ"], per[DOG]["SQ"]) == (1, 0.0, 0.0)
    agrees_with_hotcoco(pp, gp, s, per)


def test_crowd_segment_is_never_matched(tmp_path: Path) -> None:
    # GT crowd person cols 0-9; pred person cols 0-9 (IoU 1 with the crowd): no TP, and the
    # prediction lies wholly in the crowd: no FP either. Nothing occurs: PQ undefined.
    g = cols({5: (0, 9)})
    p = cols({77: (0, 9)})
    s, per, _ = run(tmp_path, [(g, [(5, PERSON, 1)])], [(p, [(77, PERSON)])])
    check(s, {"PQ": None, "SQ": None, "RQ": None, "N": 0, "tp": 0, "fp": 0, "fn": 0})


def test_void_and_crowd_together_over_half(tmp_path: Path) -> None:
    # GT crowd person cols 0-3, VOID cols 4-5, sky cols 6-9. Pred person cols 2-7 (24 px):
    # crowd 8 + VOID 8 = 16/24 > 0.5 (either alone 1/3): not an FP. Sky missed: FN.
    # person: nothing; sky: FN -> PQ 0. N = 1.
    g = cols({5: (0, 3), 6: (6, 9)})
    p = cols({77: (2, 7)})
    s, per, (pp, gp, _) = run(tmp_path, [(g, [(5, PERSON, 1), (6, SKY)])], [(p, [(77, PERSON)])])
    check(s, {"PQ": 0.0, "SQ": 0.0, "RQ": 0.0, "N": 1, "N_th": 0, "fp": 0, "fn": 1})
    agrees_with_hotcoco(pp, gp, s, per)


def test_half_in_void_and_crowd_is_still_a_false_positive(tmp_path: Path) -> None:
    # GT crowd person cols 0-5, sky cols 6-9. Pred person cols 4-7: crowd 8/16 = 0.5, not
    # > 0.5: FP. Pred sky cols 8-9: IoU 8/16 = 0.5, not > 0.5: FP and the sky GT is an FN.
    # person: FP -> 0; sky: FP + FN -> 0. All: N = 2, PQ = SQ = RQ = 0.
    g = cols({5: (0, 5), 6: (6, 9)})
    p = cols({77: (4, 7), 78: (8, 9)})
    s, per, (pp, gp, _) = run(
        tmp_path, [(g, [(5, PERSON, 1), (6, SKY)])], [(p, [(77, PERSON), (78, SKY)])]
    )
    check(s, {"PQ": 0.0, "SQ": 0.0, "RQ": 0.0, "N": 2, "fp": 2, "fn": 1})
    assert (per[SKY]["fp"], per[SKY]["fn"], per[PERSON]["fp"]) == (1, 1, 1)
    agrees_with_hotcoco(pp, gp, s, per)


@pytest.mark.parametrize(
    ("last", "tp"),
    [(4, 0), (5, 1)],  # pred sky on cols 0-4 (IoU 0.5: no match) / 0-5 (6/10 > 0.5: match)
)
def test_iou_exactly_one_half_is_not_a_match(tmp_path: Path, last: int, tp: int) -> None:
    # GT sky cols 0-9 (40 px); pred sky cols 0-last, VOID elsewhere in the prediction.
    # IoU = 4 (last + 1) / 40: 0.5 is not > 0.5 (FP + FN, PQ 0); 0.6 is a TP (PQ 0.6).
    g = cols({6: (0, 9)})
    p = cols({78: (0, last)})
    s, per, (pp, gp, _) = run(tmp_path, [(g, [(6, SKY)])], [(p, [(78, SKY)])])
    assert per[SKY]["tp"] == tp
    iou = (last + 1) / 10
    check(s, {"PQ": iou * tp, "SQ": iou * tp, "RQ": float(tp), "N": 1})
    agrees_with_hotcoco(pp, gp, s, per)


def test_category_only_in_predictions(tmp_path: Path) -> None:
    # GT sky cols 0-9. Pred sky cols 0-7 (IoU 0.8, TP) and a car cols 8-9 (FP: car occurs
    # only in the prediction, yet it counts: PQ_car = SQ_car = RQ_car = 0).
    # All: PQ (0.8 + 0) / 2 = 0.4, SQ 0.4, RQ 0.5; Things (car) 0; Stuff (sky) 0.8.
    # person, dog, road, grass: no TP/FP/FN: not averaged, per-class null.
    g = cols({6: (0, 9)})
    p = cols({78: (0, 7), 79: (8, 9)})
    s, per, (pp, gp, _) = run(tmp_path, [(g, [(6, SKY)])], [(p, [(78, SKY), (79, CAR)])])
    check(s, {"PQ": 0.4, "SQ": 0.4, "RQ": 0.5, "N": 2, "PQ_th": 0.0, "PQ_st": 0.8, "N_st": 1})
    assert per[DOG]["PQ"] is None and per[ROAD]["PQ"] is None
    agrees_with_hotcoco(pp, gp, s, per)


def test_image_without_predictions(tmp_path: Path) -> None:
    # Image 1: GT person cols 0-4 and sky 5-9, predicted exactly (IoU 1 each).
    # Image 2: GT person cols 0-4 and road 5-9; the prediction is empty (all VOID, no
    # segments): two FNs. person: TP 1, FN 1 -> PQ 1/1.5, SQ 1, RQ 2/3; sky: PQ 1;
    # road: FN -> 0. All: PQ (2/3 + 1 + 0)/3 = 5/9, SQ (1 + 1 + 0)/3, RQ (2/3 + 1 + 0)/3.
    g1 = cols({5: (0, 4), 6: (5, 9)})
    g2 = cols({5: (0, 4), 9: (5, 9)})
    p1 = cols({70: (0, 4), 71: (5, 9)})
    p2 = cols({})
    s, per, (pp, gp, _) = run(
        tmp_path,
        [(g1, [(5, PERSON), (6, SKY)]), (g2, [(5, PERSON), (9, ROAD)])],
        [(p1, [(70, PERSON), (71, SKY)]), (p2, [])],
    )
    check(
        s,
        {"PQ": (2 / 3 + 1 + 0) / 3, "SQ": 2 / 3, "RQ": (2 / 3 + 1 + 0) / 3, "N": 3, "images": 2},
    )
    assert (per[PERSON]["tp"], per[PERSON]["fn"], per[ROAD]["fn"]) == (1, 1, 1)
    agrees_with_hotcoco(pp, gp, s, per)


def test_ground_truth_area_comes_from_the_json(tmp_path: Path) -> None:
    # GT person cols 0-5 (24 px) whose JSON area says 30 (panopticapi uses the JSON area of
    # the ground truth, the pixel count of the prediction); pred person cols 0-5 (24 px).
    # IoU = 24 / (24 + 30 - 24) = 0.8. The disagreement is warned about.
    g = cols({5: (0, 5)})
    p = cols({77: (0, 5)})
    s, per, (pp, gp, res) = run(tmp_path, [(g, [(5, PERSON, 0, 30)])], [(p, [(77, PERSON)])])
    check(s, {"PQ": 0.8, "SQ": 0.8, "RQ": 1.0})
    agrees_with_hotcoco(pp, gp, s, per)
    assert any("JSON area" in w for w in res.warnings)


def test_the_last_crowd_segment_of_a_category_is_its_crowd_region(tmp_path: Path) -> None:
    # panopticapi keeps one crowd segment per category (a dict keyed by category: the last
    # in segments_info). GT crowd persons A cols 0-3 and B cols 6-9, sky cols 4-5. A pred
    # person inside A (cols 0-3) is measured against B only: 0/16, so it is an FP.
    # With the crowds listed B, A, the same prediction lies in the crowd region: ignored.
    g = cols({5: (0, 3), 8: (6, 9), 6: (4, 5)})
    p = cols({77: (0, 3), 78: (4, 5)})
    pred = [(p, [(77, PERSON), (78, SKY)])]
    s, per, (pp, gp, _) = run(
        tmp_path / "ab", [(g, [(5, PERSON, 1), (8, PERSON, 1), (6, SKY)])], pred
    )
    assert per[PERSON]["fp"] == 1
    check(s, {"PQ": 0.5, "N": 2})
    agrees_with_hotcoco(pp, gp, s, per)
    s, per, (pp, gp, _) = run(
        tmp_path / "ba", [(g, [(8, PERSON, 1), (5, PERSON, 1), (6, SKY)])], pred
    )
    assert per[PERSON]["fp"] == 0
    check(s, {"PQ": 1.0, "N": 1})
    agrees_with_hotcoco(pp, gp, s, per)


def test_state_is_summed_in_image_order(tmp_path: Path) -> None:
    # Three images with the same person match (IoU 2/3 each): IoU_sum = 2/3 + 2/3 + 2/3 added
    # one pair at a time, TP 3: PQ = SQ = IoU_sum / 3.
    g = cols({5: (0, 5)})
    p = cols({77: (2, 9)})
    s, per, _ = run(tmp_path, [(g, [(5, PERSON)])] * 3, [(p, [(77, PERSON)])] * 3)
    iou_sum = 0.0
    for _ in range(3):
        iou_sum += 16 / 24
    assert per[PERSON]["iou_sum"] == iou_sum
    check(s, {"PQ": iou_sum / 3, "SQ": iou_sum / 3, "RQ": 1.0})
