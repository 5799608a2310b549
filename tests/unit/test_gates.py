"""Gate directions and aliases (iou_cli/gates.py), as a table of hand cases."""

from __future__ import annotations

import pytest

from iou_cli.errors import UsageError
from iou_cli.gates import COUNT, HIGHER, LOWER, SETTING, direction, failures, parse_gates, resolve

COCO_KEYS = ["AP", "AP50", "AP75", "APs", "APm", "APl", "AR1", "AR10", "AR100", "ARs", "ARm",
             "ARl", "iou_thr", "score_thr", "tp", "fp", "fn", "precision", "recall", "f1",
             "mean_iou"]  # fmt: skip
UL_KEYS = ["metrics/precision(B)", "metrics/recall(B)", "metrics/mAP50(B)", "metrics/mAP50-95(B)",
           "iou_thr", "score_thr", "tp", "fp", "fn", "precision", "recall", "f1",
           "mean_iou"]  # fmt: skip
VOC_KEYS = [
    "mAP",
    "iou_thr",
    "score_thr",
    "tp",
    "fp",
    "fn",
    "precision",
    "recall",
    "f1",
    "mean_iou",
]


@pytest.mark.parametrize(
    ("key", "want"),
    [
        ("AP", HIGHER), ("AP50", HIGHER), ("APr", HIGHER), ("AR300", HIGHER), ("mAP", HIGHER),
        ("precision", HIGHER), ("recall", HIGHER), ("f1", HIGHER), ("mean_iou", HIGHER),
        ("tp", HIGHER), ("IoU_macro", HIGHER), ("mIoU", HIGHER), ("fwIoU", HIGHER),
        ("mAcc", HIGHER), ("aAcc", HIGHER), ("mDice", HIGHER),
        ("fp", LOWER), ("fn", LOWER), ("loc_errors", LOWER), ("dupe_errors", LOWER),
        ("iou_thr", SETTING), ("score_thr", SETTING),
        ("images", COUNT), ("pixels", COUNT), ("samples", COUNT), ("classes", COUNT),
    ],
)  # fmt: skip
def test_direction(key: str, want: str) -> None:
    assert direction(key) == want


@pytest.mark.parametrize(
    ("keys", "given", "iou", "want"),
    [
        (COCO_KEYS, "mAP", 0.5, "AP"),
        (UL_KEYS, "mAP50-95", 0.5, "metrics/mAP50-95(B)"),
        (UL_KEYS, "mAP50", 0.5, "metrics/mAP50(B)"),
        (UL_KEYS, "map50", 0.5, "metrics/mAP50(B)"),
        (UL_KEYS, "mp", 0.5, "metrics/precision(B)"),
        (UL_KEYS, "recall(B)", 0.5, "metrics/recall(B)"),
        (COCO_KEYS, "map_75", 0.5, "AP75"),
        (COCO_KEYS, "mar_100", 0.5, "AR100"),
        (VOC_KEYS, "AP50", 0.5, "mAP"),
        (VOC_KEYS, "AP75", 0.75, "mAP"),
    ],
)
def test_aliases(keys: list[str], given: str, iou: float, want: str) -> None:
    (g,) = resolve(parse_gates([f"{given}=0.5"]), keys, protocol="x", iou_thr=iou)
    assert g.key == want


@pytest.mark.parametrize(
    ("keys", "under", "over", "message"),
    [
        (COCO_KEYS, ["fp=700"], [], "use --fail-over fp=700"),
        (COCO_KEYS, [], ["AP=0.5"], "use --fail-under AP=0.5"),
        (COCO_KEYS, ["score_thr=0.5"], [], "score_thr is a setting"),
        (COCO_KEYS, [], ["iou_thr=0.5"], "iou_thr is a setting"),
        (COCO_KEYS, ["Ap=0.5"], [], "did you mean AP?"),
        (VOC_KEYS, ["AP=0.5"], [], "use mAP"),
        (VOC_KEYS, ["AP50=0.5"], [], "run with --tp-iou 0.50"),  # at --tp-iou 0.75
        (COCO_KEYS, ["AP"], [], "expected KEY=VALUE such as AP=0.5"),
        (COCO_KEYS, ["mAP50-95=0.5"], [], "run with --protocol ultralytics"),
        (
            COCO_KEYS,
            ["AP=50"],
            [],
            "AP is a fraction from 0 to 1, not a percentage (did you mean 0.50?)",
        ),
        (COCO_KEYS, ["f1=75"], [], "(did you mean 0.75?)"),
        (COCO_KEYS, ["recall=-0.1"], [], "recall is a fraction from 0 to 1"),
        (UL_KEYS, ["mAP50=50"], [], "metrics/mAP50(B) is a fraction from 0 to 1"),
        (COCO_KEYS, ["mAP50=0.5"], [], "Ultralytics' metrics/mAP50(B)"),
        (VOC_KEYS, ["mAP50=0.5"], [], "run with --protocol ultralytics"),
        (COCO_KEYS, [], ["fp=nan"], "expected KEY=VALUE such as fp=100"),
    ],
)
def test_usage_errors(keys: list[str], under: list[str], over: list[str], message: str) -> None:
    with pytest.raises(UsageError) as exc:
        resolve(parse_gates(under, over), keys, protocol="voc", iou_thr=0.75)
    assert message in str(exc.value)


def test_failures_by_hand() -> None:
    gates = resolve(parse_gates(["AP=0.5", "f1=0.9"], ["fp=10", "fn=3"]), COCO_KEYS)
    summary = {"AP": 0.5, "f1": None, "fp": 11, "fn": 3}
    assert failures(gates, summary) == [
        "fail-under: f1 is undefined (null), required >= 0.9",
        "fail-over: fp = 11 > 10",
    ]  # AP = 0.5 is not below 0.5; fn = 3 is not above 3
