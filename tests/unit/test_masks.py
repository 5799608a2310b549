"""Mask IoU (iou_cli.geometry.masks): the seed's example, pycocotools agreement, located errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pycocotools import mask as mask_utils

from iou_cli import mask_iou
from iou_cli.errors import InputError, UsageError
from iou_cli.geometry.masks import group_iou, mask_areas
from iou_cli.geometry.rle import explain_string, strings_ok


def _seed_masks() -> tuple[np.ndarray, np.ndarray]:
    """Seed 001 ("Segmentation Mask"): TP 100, FP 25, FN 50 -> IoU = 100 / 175 = 0.571."""
    gt = np.zeros((1, 10, 20), dtype=bool)
    gt[0, :, :15] = True  # 150 ground-truth pixels
    pred = np.zeros((1, 10, 20), dtype=bool)
    pred[0, :, 5:15] = True  # 100 of them predicted: TP 100, FN 50
    pred[0, :5, 15:20] = True  # 25 predicted outside: FP 25
    return pred, gt


def test_seed_example_dense() -> None:
    pred, gt = _seed_masks()
    assert (pred & gt).sum() == 100 and (pred & ~gt).sum() == 25 and (~pred & gt).sum() == 50
    m = mask_iou(pred, gt)
    assert m.shape == (1, 1)
    assert m[0, 0] == 100 / 175  # exact: one division of two exact integers
    assert round(float(m[0, 0]), 3) == 0.571  # the seed's printed value


def test_seed_example_rle_inputs_and_mixed() -> None:
    pred, gt = _seed_masks()
    enc = lambda m: mask_utils.encode(np.asfortranarray(m[0].astype(np.uint8)))  # noqa: E731
    rp, rg = enc(pred), enc(gt)
    assert mask_iou(rp, rg)[0, 0] == 100 / 175
    assert mask_iou([rp], gt)[0, 0] == 100 / 175
    # counts as str (as JSON gives it) and as bytes are the same
    rs = {"size": rp["size"], "counts": rp["counts"].decode()}
    assert mask_iou(rs, rg)[0, 0] == 100 / 175
    # uncompressed RLE (column-major run lengths, as COCO crowd annotations)
    flat = gt[0].flatten(order="F").astype(np.int8)
    change = np.flatnonzero(np.diff(np.concatenate(([0], flat, [1 - flat[-1]]))))
    runs = np.diff(np.concatenate(([0], change)))
    ucounts = [int(r) for r in runs if True]
    assert sum(ucounts) == 200
    assert mask_iou(pred, {"size": [10, 20], "counts": ucounts})[0, 0] == 100 / 175


def test_seed_example_crowd_is_intersection_over_prediction() -> None:
    pred, gt = _seed_masks()
    # crowd: union = |pred| = 125 -> 100 / 125
    assert mask_iou(pred, gt, iscrowd=[True])[0, 0] == 100 / 125


def test_shapes_and_empty() -> None:
    a = np.zeros((3, 4, 5), dtype=np.uint8)
    assert mask_iou(a, np.zeros((0, 4, 5), bool)).shape == (3, 0)
    assert mask_iou(np.zeros((0, 4, 5)), a).shape == (0, 3)
    # two empty masks: 0.0, as pycocotools (no overlap of their empty boxes)
    assert mask_iou(a, a).tolist() == [[0.0] * 3] * 3
    one = np.ones((4, 5), dtype=bool)  # (H, W) is one mask
    assert mask_iou(one, one).tolist() == [[1.0]]


@pytest.mark.parametrize(
    "a, b, message",
    [
        (np.zeros((1, 4, 5)), np.zeros((1, 5, 4)), "different sizes"),
        (np.full((1, 2, 2), 2), np.zeros((1, 2, 2)), "binary"),
        (np.zeros((2, 2, 2, 2)), np.zeros((1, 2, 2)), "shape"),
        ({"size": [2, 2], "counts": "0"}, np.zeros((1, 2, 2)), "cover 0 pixels, expected 2 x 2"),
        ({"size": [2], "counts": "04"}, np.zeros((1, 2, 2)), "size"),
        ({"size": [2, 2], "counts": [1, 2]}, np.zeros((1, 2, 2)), "cover 3 pixels"),
        ({"size": [2, 2], "counts": 5}, np.zeros((1, 2, 2)), "counts"),
    ],
)
def test_mask_iou_usage_errors(a: Any, b: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        mask_iou(a, b)


masks_strategy = st.integers(1, 6).flatmap(
    lambda h: st.integers(1, 6).flatmap(
        lambda w: st.tuples(
            st.lists(
                st.lists(st.booleans(), min_size=h * w, max_size=h * w), min_size=0, max_size=4
            ),
            st.lists(
                st.lists(st.booleans(), min_size=h * w, max_size=h * w), min_size=0, max_size=4
            ),
            st.just((h, w)),
        )
    )
)


@settings(max_examples=150, deadline=None)
@given(masks_strategy)
def test_mask_iou_matches_pixel_counting(
    case: tuple[list[list[bool]], list[list[bool]], tuple[int, int]],
) -> None:
    """Property: IoU = TP / (TP + FP + FN) counted pixel by pixel with NumPy (0 for two
    empty masks), and crowd IoU = TP / |a|."""
    la, lb, (h, w) = case
    a = np.asarray(la, dtype=bool).reshape(-1, h, w)
    b = np.asarray(lb, dtype=bool).reshape(-1, h, w)
    got = mask_iou(a, b)
    crowd = mask_iou(a, b, iscrowd=np.ones(len(b), bool))
    assert got.shape == (len(a), len(b))
    for i in range(len(a)):
        for j in range(len(b)):
            tp = int((a[i] & b[j]).sum())
            union = int((a[i] | b[j]).sum())
            assert got[i, j] == (tp / union if tp else 0.0)
            assert crowd[i, j] == (tp / int(a[i].sum()) if tp else 0.0)


def test_group_iou_empty_and_crowd_flags() -> None:
    pred, gt = _seed_masks()
    rp = mask_utils.encode(np.asfortranarray(pred[0].astype(np.uint8)))
    rg = mask_utils.encode(np.asfortranarray(gt[0].astype(np.uint8)))
    assert group_iou([], [rg], np.array([False])).shape == (0, 1)
    assert group_iou([rp], [], np.zeros(0, bool)).shape == (1, 0)
    m = group_iou([rp, rg], [rg, rg], np.array([False, True]))
    assert m.tolist() == [[100 / 175, 100 / 125], [1.0, 1.0]]


def test_mask_areas_many() -> None:
    # more than 255 masks in one call (pycocotools' area() overflows its count there)
    r = mask_utils.encode(np.asfortranarray(np.ones((3, 4, 300), dtype=np.uint8)))
    assert mask_areas(r).tolist() == [12.0] * 300
    assert mask_areas([]).shape == (0,)


# ---------------------------------------------------------------- compressed RLE validation


def test_rle_validator_accepts_pycocotools_strings_and_rejects_mutations() -> None:
    rng = np.random.default_rng(7)
    strings, pixels = [], []
    for _ in range(200):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        m = (rng.random((h, w)) < rng.random()).astype(np.uint8)
        strings.append(mask_utils.encode(np.asfortranarray(m))["counts"])
        pixels.append(h * w)
    assert strings_ok(strings, pixels).all()
    # a mutated string is judged the same by the batch check and the explaining decoder,
    # and valid exactly when its runs are >= 0 and cover h * w pixels
    for _ in range(500):
        k = int(rng.integers(len(strings)))
        s = bytearray(strings[k])
        pos = int(rng.integers(len(s)))
        s[pos] = int(rng.integers(40, 115))
        fast = bool(strings_ok([bytes(s)], [pixels[k]])[0])
        reason = explain_string(bytes(s), pixels[k], 1)
        assert fast == (reason == "malformed RLE counts"), (bytes(s), reason)
    bad = strings_ok(
        [strings[0], b"", strings[1][:-1] + b"o", strings[2]], pixels[:3] + [pixels[2]]
    )
    assert bad.tolist() == [True, False, False, True]


# ---------------------------------------------------------------- prepare_masks (via the API)

IMAGES = [{"id": 1, "width": 4, "height": 3, "file_name": "a.jpg"}]
CATS = [{"id": 1, "name": "thing"}]
SQUARE = [[0.0, 0.0, 2.0, 0.0, 2.0, 2.0, 0.0, 2.0]]


def _rle(h: int, w: int, on: int = 5) -> dict[str, Any]:
    m = np.zeros((h, w), dtype=np.uint8, order="F")
    m.flat[:on] = 1
    r = mask_utils.encode(np.asfortranarray(m))
    return {"size": r["size"], "counts": r["counts"].decode()}


def _write(
    tmp: Path, gt_anns: list[dict[str, Any]], preds: Any, images: Any = None
) -> tuple[str, str]:
    gt = {"images": images or IMAGES, "categories": CATS, "annotations": gt_anns}
    gp, pp = tmp / "gt.json", tmp / "preds.json"
    gp.write_text(json.dumps(gt))
    pp.write_text(json.dumps(preds))
    return str(pp), str(gp)


def _gt(segm: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": 1,
        "image_id": 1,
        "category_id": 1,
        "area": 4.0,
        "iscrowd": 0,
        "segmentation": segm,
        **extra,
    }


def _pred(segm: Any) -> dict[str, Any]:
    return {"image_id": 1, "category_id": 1, "score": 0.9, "segmentation": segm}


BAD_CASES = [
    # (gt segmentation, pred segmentation, file, where, message)
    (
        SQUARE,
        [[0, 0, 1, 1]],
        "preds.json",
        "[1].segmentation[0]",
        "polygon with 2 points, expected >= 3",
    ),
    (SQUARE, [[0, 0, 1, 1, 2]], "preds.json", "[1].segmentation[0]", "odd number of coordinates"),
    (
        SQUARE,
        [[0, 0, 1, "x", 2, 2]],
        "preds.json",
        "[1].segmentation[0][3]",
        "expected a finite number",
    ),
    (
        SQUARE,
        _rle(4, 3),
        "preds.json",
        "[1].segmentation.size",
        "mask size 4 x 3 (height x width) does not match image 1: 3 x 4",
    ),
    (
        SQUARE,
        {"size": [3, 4], "counts": "0:"},
        "preds.json",
        "[1].segmentation.counts",
        "the runs cover 10 pixels, expected 3 x 4 = 12",
    ),
    (
        SQUARE,
        {"size": [3, 4], "counts": "0~"},
        "preds.json",
        "[1].segmentation.counts",
        "character '~'",
    ),
    (
        SQUARE,
        {"size": [3, 4], "counts": "0P"},
        "preds.json",
        "[1].segmentation.counts",
        "ends inside a run length",
    ),
    (
        SQUARE,
        {"size": [3, 4], "counts": 12},
        "preds.json",
        "[1].segmentation.counts",
        "expected RLE counts",
    ),
    (
        SQUARE,
        None,
        "preds.json",
        "[1].segmentation",
        "expected a list of polygons or an RLE object, got null",
    ),
    (
        {"size": [3, 4], "counts": [5, 6]},
        SQUARE,
        "gt.json",
        "annotations[0].segmentation.counts",
        "cover 11 pixels, expected 3 x 4 = 12",
    ),
    (
        {"size": [3, 4], "counts": [5, -1, 8]},
        SQUARE,
        "gt.json",
        "annotations[0].segmentation.counts",
        "negative run length",
    ),
    (
        {"size": [3, 4, 1], "counts": [12]},
        SQUARE,
        "gt.json",
        "annotations[0].segmentation.size",
        "RLE 'size' must be [height, width]",
    ),
]


@pytest.mark.parametrize("gt_segm, pred_segm, file, where, message", BAD_CASES)
def test_bad_masks_are_located_errors(
    tmp_path: Path, gt_segm: Any, pred_segm: Any, file: str, where: str, message: str
) -> None:
    from iou_cli.api import evaluate

    preds = [_pred(SQUARE), _pred(pred_segm)]
    pp, gp = _write(tmp_path, [_gt(gt_segm)], preds)
    with pytest.raises(InputError) as exc:
        evaluate(pp, gp, iou_type="segm")
    err = exc.value
    assert Path(str(err.path)).name == file
    assert err.where == where
    assert message in err.reason


def test_polygons_need_image_size(tmp_path: Path) -> None:
    from iou_cli.api import evaluate

    images = [{"id": 1, "file_name": "a.jpg"}]
    pp, gp = _write(tmp_path, [_gt(SQUARE)], [_pred(SQUARE)], images=images)
    with pytest.raises(InputError, match="no width/height") as exc:
        evaluate(pp, gp, iou_type="segm")
    assert exc.value.where == "annotations[0].segmentation"


def test_dataset_predictions_are_located_in_annotations(tmp_path: Path) -> None:
    from iou_cli.api import evaluate

    preds = {
        "images": IMAGES,
        "categories": CATS,
        "annotations": [dict(_pred([[0, 0, 1, 1]]), id=1)],
    }
    pp, gp = _write(tmp_path, [_gt(SQUARE)], preds)
    with pytest.raises(InputError) as exc:
        evaluate(pp, gp, iou_type="segm")
    assert exc.value.where == "annotations[0].segmentation[0]"


def test_prepare_masks_as_pycocotools_ann_to_rle(tmp_path: Path) -> None:
    """Polygons, uncompressed and compressed RLE (str and bytes counts) become the RLE
    pycocotools' COCO.annToRLE gives; prediction area is the mask area without a bbox."""
    from pycocotools.coco import COCO

    from iou_cli.api import load_pair
    from iou_cli.options import LoadOptions

    two_polys = [[0, 0, 2, 0, 2, 2, 0, 2], [3, 1, 4, 1, 4, 3, 3, 3]]
    gt_anns = [
        _gt(SQUARE),
        _gt(two_polys, id=2),
        _gt({"size": [3, 4], "counts": [2, 3, 7]}, id=3, iscrowd=1),
        _gt(_rle(3, 4, 7), id=4),
    ]
    preds = [_pred(_rle(3, 4, 6)), _pred(two_polys), _pred([])]
    pp, gp = _write(tmp_path, gt_anns, preds)
    ds = load_pair(pp, gp, LoadOptions(iou_type="segm"))
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(gp)
    for k, ann in enumerate(coco.dataset["annotations"]):
        want = coco.annToRLE(ann)
        got = ds.gt.masks[k]  # type: ignore[index]
        assert got["size"] == list(want["size"])
        wc = want["counts"]
        assert got["counts"] == (wc.encode() if isinstance(wc, str) else wc)
    assert ds.gt.area.tolist() == [4.0] * 4  # the annotations' own area field
    # predictions: mask areas (6 pixels; 4 + 2 of the two polygons as rasterised; empty)
    want_poly = mask_utils.area(mask_utils.merge(mask_utils.frPyObjects(two_polys, 3, 4)))
    assert ds.pred.area.tolist() == [6.0, float(want_poly), 0.0]
    # corners from the masks where the records had none (maskUtils.toBbox)
    assert ds.pred.xyxy[0].tolist() == [0.0, 0.0, 4.0, 2.0]  # row 0 and half of row 1


def test_prediction_area_is_bbox_area_when_records_have_bbox(tmp_path: Path) -> None:
    """COCO.loadRes takes its bbox branch when the first result has a bbox: area = w * h."""
    from iou_cli.api import load_pair
    from iou_cli.options import LoadOptions

    preds = [dict(_pred(_rle(3, 4, 6)), bbox=[0, 0, 1.5, 2])]
    pp, gp = _write(tmp_path, [_gt(SQUARE)], preds)
    ds = load_pair(pp, gp, LoadOptions(iou_type="segm"))
    assert ds.pred.area.tolist() == [3.0]


def test_bytes_counts_through_prepare_masks() -> None:
    from iou_cli.data import Boxes, Categories, Dataset, Images
    from iou_cli.geometry.masks import prepare_masks

    r = mask_utils.encode(np.asfortranarray(np.ones((3, 4), dtype=np.uint8)))
    images = Images([1], ["a"], np.array([4.0]), np.array([3.0]))
    cats = Categories([1], ["thing"])
    gt = Boxes.build(np.full((1, 4), np.nan), image=[0], category=[0], area=[12.0], masks=[r])
    pred = Boxes.build(
        np.full((1, 4), np.nan), image=[0], category=[0], score=[1.0], masks=[dict(r)]
    )
    ds = prepare_masks(
        Dataset(images, cats, gt, pred, "gt.json", "preds.json", "coco", "coco-results")
    )
    assert ds.pred.area.tolist() == [12.0]
    assert group_iou(ds.pred.masks, ds.gt.masks, np.array([False])).tolist() == [[1.0]]  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("preds_doc", "where"),
    [
        # a results list locates at [i], a dataset-shaped predictions file at annotations[i]
        (lambda p: [p], "[0].segmentation[0]"),
        (
            lambda p: {"images": IMAGES, "categories": CATS, "annotations": [dict(p, id=7)]},
            "annotations[0].segmentation[0]",
        ),
    ],
)
def test_prepare_masks_locates_by_the_loaded_format_without_rereading(
    tmp_path: Path, preds_doc: Any, where: str
) -> None:
    """The Dataset keeps each side's format: prepare_masks locates a bad prediction mask
    from it, with the predictions file gone (it used to re-read the file's first byte)."""
    from iou_cli.errors import InputError
    from iou_cli.geometry.masks import prepare_masks
    from iou_cli.loaders.join import load_dataset
    from iou_cli.options import LoadOptions

    pp, gp = _write(tmp_path, [_gt(SQUARE)], preds_doc(_pred([[0, 0, 1, 1]])))
    ds = load_dataset(pp, gp, LoadOptions(iou_type="segm"))
    assert (ds.gt_format, ds.pred_path) == ("coco", pp)
    Path(pp).unlink()
    with pytest.raises(InputError) as exc:
        prepare_masks(ds)
    assert exc.value.message() == f"{pp}:{where}: polygon with 2 points, expected >= 3"


def test_in_memory_predictions_locate_masks_by_their_format() -> None:
    """In-memory objects have no file to re-read: the loaded format locates the record."""
    from iou_cli import evaluate
    from iou_cli.errors import InputError

    gt = {"images": IMAGES, "categories": CATS, "annotations": [_gt(SQUARE)]}
    preds = [_pred(SQUARE), _pred([[0, 0, 1, 1]])]
    with pytest.raises(InputError) as exc:
        evaluate(preds, gt, iou_type="segm")
    assert exc.value.message() == (
        "<predictions>:[1].segmentation[0]: polygon with 2 points, expected >= 3"
    )


def test_strings_ok_in_batches_across_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many mutated strings (bad characters, truncations, empty ones, wrong sizes) judged in
    one call, with chunks so small that strings and tokens meet at every boundary: each
    verdict equals the explaining decoder's on that string alone."""
    from iou_cli.geometry import rle

    rng = np.random.default_rng(7)
    strings: list[bytes] = []
    pixels: list[int] = []
    for _ in range(300):
        h, w = int(rng.integers(1, 30)), int(rng.integers(1, 30))
        m = (rng.random((h, w)) < rng.random()).astype(np.uint8)
        s = bytearray(mask_utils.encode(np.asfortranarray(m))["counts"])
        r = rng.random()
        if r < 0.2:
            s[int(rng.integers(len(s)))] = int(rng.integers(30, 130))
        elif r < 0.3:
            del s[int(rng.integers(len(s))) :]
        elif r < 0.35:
            s.extend(b"ooo")
        strings.append(bytes(s))
        pixels.append(h * w + (int(rng.integers(-1, 2)) if rng.random() < 0.1 else 0))
    want = [
        explain_string(s, p, 1) == "malformed RLE counts"
        for s, p in zip(strings, pixels, strict=True)
    ]
    for chunk in (7, 50, 1 << 16):
        monkeypatch.setattr(rle, "_CHUNK_CHARS", chunk)
        assert strings_ok(strings, pixels).tolist() == want
    assert 30 < sum(want) < 300  # both verdicts occur


def test_check_strings_areas_equal_pycocotools_and_long_runs_are_refused() -> None:
    """The vectorised decoder's areas are ``pycocotools.mask.area``'s; a run that does not
    fit pycocotools' 32-bit counts is malformed for both the batch check and the explaining
    decoder (which names it)."""
    from iou_cli.geometry.rle import check_strings

    rng = np.random.default_rng(11)
    rles = []
    for _ in range(400):
        h, w = (int(v) for v in rng.integers(1, 60, 2))
        m = (rng.random((h, w)) < rng.random()).astype(np.uint8)
        if rng.random() < 0.1:
            m[:] = 0
        rles.append(mask_utils.encode(np.asfortranarray(m)))
    strings = [r["counts"] for r in rles]
    pixels = [r["size"][0] * r["size"][1] for r in rles]
    ok, area = check_strings(strings, pixels)
    assert ok.all()
    assert area.tolist() == [int(mask_utils.area(r)) for r in rles]
    # [2**32 + 4 background, 4 foreground] in a (2**31 + 4) x 2 image: the runs cover h * w
    # exactly, but the first does not fit 32 bits (pycocotools would truncate it)
    full = mask_utils.encode(np.asfortranarray(np.ones((2, 2), np.uint8)))["counts"]
    enc = _encode_runs([2**32 + 4, 4])
    assert explain_string(enc, 2**31 + 4, 2).endswith("of 4294967300 pixels (at most 2**32 - 1)")
    assert check_strings([enc, full], [2**32 + 8, 4])[0].tolist() == [False, True]
    fits = _encode_runs([2**32 - 5, 4, 1])  # the largest run pycocotools keeps
    assert check_strings([fits], [2**32])[0].tolist() == [True]


def _encode_runs(runs: list[int]) -> bytes:
    """COCO's compressed RLE string of uncompressed runs (maskApi.c rleToString)."""
    out = bytearray()
    for i, r in enumerate(runs):
        x = r - runs[i - 2] if i > 2 else r
        more = True
        while more:
            c = x & 0x1F
            x >>= 5
            more = x != -1 if c & 0x10 else x != 0
            if more:
                c |= 0x20
            out.append(c + 48)
    return bytes(out)


def test_encode_runs_is_pycocotools_encoding() -> None:
    m = np.zeros((7, 5), np.uint8)
    m[2:5, 1:4] = 1
    r = mask_utils.encode(np.asfortranarray(m))
    flat = m.flatten(order="F")
    change = np.flatnonzero(np.diff(np.concatenate(([0], flat, [1 - flat[-1]]))))
    runs = [int(v) for v in np.diff(np.concatenate(([0], change)))]
    assert _encode_runs(runs) == r["counts"]


def test_polygon_side_check_agrees_with_the_per_mask_check() -> None:
    """The all-at-once polygon check (``_polygons_ok``) passes a side exactly when every mask
    passes the per-mask check that locates problems."""
    from iou_cli.geometry.masks import _check_polygons, _polygons_ok

    rng = np.random.default_rng(5)
    good: list[list[float]] = [[0.0, 0.0, 5.0, 0.0, 5.0, 4.0], [1, 1, 3, 1, 3, 3, 1, 3]]
    bad_values: list[Any] = [float("nan"), float("inf"), 10**400, 1e9, -1e9, True, "1", None]
    hs = np.array([10, -1], dtype=np.int64)
    ws = np.array([20, -1], dtype=np.int64)
    for _ in range(300):
        raw: list[Any] = [[list(p) for p in good[: int(rng.integers(1, 3))]] for _ in range(4)]
        image = np.zeros(4, dtype=np.int64)
        r = rng.random()
        k = int(rng.integers(0, 4))
        if r < 0.3:
            raw[k][0][int(rng.integers(0, 6))] = bad_values[int(rng.integers(0, len(bad_values)))]
        elif r < 0.4:
            raw[k][0] = raw[k][0][:4]  # 2 points
        elif r < 0.5:
            raw[k][0] = raw[k][0][:5]  # odd
        elif r < 0.55:
            raw[k] = []
        elif r < 0.6:
            raw[k][0] = (1, 2, 3, 4, 5, 6)  # not a list
        elif r < 0.65:
            image[k] = 1  # an image of unknown size
        want = all(
            raw[i]
            and isinstance(raw[i], list)
            and hs[image[i]] >= 0
            and all(isinstance(p, list) for p in raw[i])
            and _check_polygons(raw[i], int(hs[image[i]]), int(ws[image[i]])) is None
            for i in range(4)
        )
        assert _polygons_ok(raw, [0, 1, 2, 3], image, hs, ws) == want
