"""The Python API (paths, os.PathLike, in-memory COCO objects, to_pandas), the protocol
registry (options a protocol does not use are errors), and candidate pairs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from iou_cli import evaluate
from iou_cli.api import summary_keys
from iou_cli.errors import UsageError
from iou_cli.geometry.iou import iou
from iou_cli.matching import candidate_pairs
from iou_cli.options import LoadOptions
from iou_cli.protocols import get_protocol, protocol_names
from tests.cli.helpers import run

ROOT = Path(__file__).resolve().parents[2]
GT = ROOT / "sample_data" / "coco" / "gt.json"
PRED = ROOT / "sample_data" / "coco" / "preds.json"


def test_pathlike_str_and_objects_give_the_same_numbers() -> None:
    by_str = evaluate(str(PRED), str(GT))
    by_path = evaluate(PRED, GT)
    by_obj = evaluate(json.loads(PRED.read_text()), json.loads(GT.read_text()))
    assert by_path.summary == by_str.summary
    assert by_obj.summary == by_str.summary
    assert by_obj.per_class == by_str.per_class


def test_bad_source_type_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="expected a path"):
        evaluate(42, GT)  # type: ignore[arg-type]


def test_to_pandas_one_row_per_class() -> None:
    r = evaluate(PRED, GT)
    df = r.to_pandas()
    assert list(df["name"]) == [row["name"] for row in r.per_class]
    assert df.loc[0, "AP"] == r.per_class[0]["AP"]
    assert {"category_id", "name", "n_gt", "AP", "AP50", "precision"} <= set(df.columns)


def test_result_exposes_evaluation_and_table() -> None:
    r = evaluate(PRED, GT)
    assert r.evaluation is not None and r.evaluation.protocol == "coco"
    assert r.table is r.evaluation.table
    assert r.table.area == "all"
    assert r.evaluation.summary()["AP"] == r.summary["AP"]


def test_voc_evaluation_has_a_one_threshold_table() -> None:
    r = evaluate(PRED, GT, protocol="voc", matches=True)
    t = r.table
    assert t.n_thresholds == 1 and float(t.iou_thrs[0]) == 0.5
    # the table's true positives are the protocol's true positives
    assert int(t.tp(0).sum()) == int(r.evaluation.match.tp.sum())
    assert int(t.n_pos.sum()) == r.summary["tp"] + r.summary["fn"]


@pytest.mark.parametrize(
    ("protocol", "kw", "flag"),
    [
        ("coco", {"plus_one": True}, "--plus-one"),
        ("voc", {"max_dets": [1, 10]}, "--max-dets"),
        ("voc07", {"iou_thrs": [0.5]}, "--iou-thrs"),
        ("voc", {"honor_ignore": True}, "--honor-ignore"),
    ],
)
def test_option_the_protocol_does_not_use_is_an_error(
    protocol: str, kw: dict[str, object], flag: str
) -> None:
    with pytest.raises(UsageError, match=f"{flag} does not apply to --protocol {protocol}"):
        evaluate(PRED, GT, protocol=protocol, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "args",
    [
        ["--protocol", "coco", "--plus-one"],
        ["--protocol", "voc", "--max-dets", "1,10,100"],
        ["--protocol", "voc", "--iou-thrs", "0.5"],
        ["--protocol", "voc07", "--honor-ignore"],
    ],
)
def test_cli_option_the_protocol_does_not_use_exits_2(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([str(PRED), str(GT), "-o", "json", *args], capsys)
    assert code == 2 and out == ""
    assert err.startswith("iou-eval: error: --") and "does not apply to --protocol" in err
    assert err.count("\n") == 1


def test_gate_keys_come_from_the_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    assert summary_keys("coco", max_dets=[1, 5])[:8] == [
        "AP",
        "AP50",
        "AP75",
        "APs",
        "APm",
        "APl",
        "AR1",
        "AR5",
    ]
    assert summary_keys("voc")[0] == "mAP"
    code, _, err = run([str(PRED), str(GT), "--protocol", "voc", "--fail-under", "AP=0.1"], capsys)
    assert code == 2 and "unknown summary key 'AP'" in err and "mAP" in err


def test_registry_lists_the_builtins() -> None:
    assert {"coco", "voc", "voc07", "dota"} <= set(protocol_names())
    assert get_protocol("voc07").iou_types == ("bbox", "obb")
    assert get_protocol("dota").iou_types == ("obb",)
    with pytest.raises(UsageError, match="--protocol: expected one of"):
        get_protocol("nope")


def _scene() -> object:
    from iou_cli.api import load_pair

    return load_pair(str(PRED), str(GT), LoadOptions())


@pytest.mark.parametrize("by_class", [True, False])
def test_candidate_pairs_equal_brute_force(by_class: bool) -> None:
    ds = _scene()
    pairs = candidate_pairs(ds, by_class=by_class, min_iou=0.1)  # type: ignore[arg-type]
    pred, gt = ds.pred, ds.gt  # type: ignore[attr-defined]
    expect = set()
    for i in range(len(pred)):
        same = gt.image == pred.image[i]
        if by_class:
            same &= gt.category == pred.category[i]
        rows = np.flatnonzero(same)
        if rows.size == 0:
            continue
        m = iou(pred.xyxy[i : i + 1], gt.xyxy[rows], iscrowd=gt.iscrowd[rows])[0]
        for r, v in zip(rows, m, strict=True):
            if v >= 0.1:
                expect.add((i, int(r), float(v)))
    got = set(zip(pairs.det.tolist(), pairs.gt.tolist(), pairs.iou.tolist(), strict=True))
    assert {(a, b) for a, b, _ in got} == {(a, b) for a, b, _ in expect}
    for a, b, v in got:
        w = next(x for p, q, x in expect if p == a and q == b)
        assert v == pytest.approx(w, abs=1e-12)
    assert np.all(np.diff(pairs.det) >= 0)


def test_voc_matcher_in_small_blocks_gives_the_same_outcome(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the VOC matcher computes one group's IoU block in slices of predictions (bounded
    # memory when 200k predictions meet 2,000 ground truths); slicing must not change a bit
    import iou_cli.protocols.voc as voc

    whole = evaluate(PRED, GT, protocol="voc", matches=True)
    monkeypatch.setattr(voc, "_BLOCK", 3)
    sliced = evaluate(PRED, GT, protocol="voc", matches=True)
    assert sliced.summary == whole.summary and sliced.per_class == whole.per_class
    assert sliced.matches is not None and whole.matches is not None
    assert list(sliced.matches.columns["outcome"]) == list(whole.matches.columns["outcome"])


def test_extra_sections_reach_the_json_report() -> None:
    from iou_cli.report.result import to_json

    r = evaluate(PRED, GT)
    r.extra["example"] = {"values": np.array([1.5, np.nan])}
    doc = json.loads(to_json(r))
    assert list(doc)[-1] == "example" and doc["example"] == {"values": [1.5, None]}
