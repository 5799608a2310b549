"""The fast results reader gives exactly what json.loads gives, or declines (None)."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_cli.loaders import coco as coco_loader
from iou_cli.loaders.fastcoco import read_results

DATA = Path(__file__).resolve().parents[1] / "data" / "coco"
REAL = DATA / "instances_val2014_fakebbox100_results.json"
KEYS = ("image_id", "category_id", "bbox", "score")


def slow_columns(data: bytes) -> dict[str, np.ndarray]:
    recs = json.loads(data)
    return {
        "image_id": np.array([r["image_id"] for r in recs], dtype=np.int64),
        "category_id": np.array([r["category_id"] for r in recs], dtype=np.int64),
        "bbox": np.array([[float(v) for v in r["bbox"]] for r in recs], dtype=np.float64).reshape(
            -1, 4
        ),
        "score": np.array([float(r["score"]) for r in recs], dtype=np.float64),
    }


def assert_bit_identical(fast: dict[str, np.ndarray] | None, data: bytes) -> None:
    assert fast is not None
    slow = slow_columns(data)
    for key in KEYS:
        assert fast[key].dtype == slow[key].dtype, key
        assert fast[key].shape == slow[key].shape, key
        # tobytes: -0.0 vs 0.0 and every last bit count
        assert fast[key].tobytes() == slow[key].tobytes(), key


def test_real_results_file_bit_identical() -> None:
    data = REAL.read_bytes()
    fast = read_results(data)
    assert_bit_identical(fast, data)
    assert fast is not None and len(fast["score"]) == 734


def test_real_file_reformatted_compact_and_indented() -> None:
    recs = json.loads(REAL.read_bytes())
    for text in (
        json.dumps(recs, separators=(",", ":")),
        json.dumps(recs, indent=2),
        json.dumps(recs, indent="\t"),
        "\ufeff" + json.dumps(recs),
    ):
        data = text.encode("utf-8")
        fast = read_results(data)
        assert_bit_identical(fast, data.removeprefix(b"\xef\xbb\xbf"))


# --- number spellings -------------------------------------------------------------------


def _digits(draw: st.DrawFn, lo: int, hi: int) -> str:
    return draw(st.text(alphabet="0123456789", min_size=lo, max_size=hi))


@st.composite
def number_token(draw: st.DrawFn, *, nonneg: bool = False) -> str:
    kind = draw(st.sampled_from(["int", "frac", "exp", "repr", "zero"]))
    sign = "" if nonneg else draw(st.sampled_from(["", "-"]))
    if kind == "zero":
        return (
            draw(st.sampled_from(["0", "0.0", "0e0", "0.000", "0E-5"]))
            if nonneg
            else sign + draw(st.sampled_from(["0", "0.0", "0e0", "0.000", "0E+3"]))
        )
    if kind == "repr":
        x = draw(st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False))
        return sign + repr(x) if x != 0 or not sign else "-0.0"
    head = draw(st.sampled_from(["0", "1", "9"])) if draw(st.booleans()) else "1"
    intpart = "0" if head == "0" else head + _digits(draw, 0, 18)
    if kind == "int":
        return sign + intpart[:17]
    frac = "." + _digits(draw, 1, 20)
    if kind == "frac":
        return sign + intpart + frac
    exp = draw(st.sampled_from(["e", "E"])) + draw(st.sampled_from(["", "+", "-"]))
    exp += _digits(draw, 1, 3)
    return sign + intpart + (frac if draw(st.booleans()) else "") + exp


@st.composite
def results_text(draw: st.DrawFn) -> str:
    n = draw(st.integers(1, 8))
    order = draw(st.permutations(KEYS))
    ws = draw(st.sampled_from(["", " ", "\n  ", "\t", "\r\n"]))
    recs = []
    for _ in range(n):
        fields = {
            "image_id": str(draw(st.integers(-(2**40), 2**40))),
            "category_id": str(draw(st.integers(0, 100))),
            "bbox": "["
            + f",{ws}".join(
                [draw(number_token()), draw(number_token())]
                + [draw(number_token(nonneg=True)) for _ in range(2)]
            )
            + "]",
            "score": draw(number_token()),
        }
        recs.append("{" + f",{ws}".join(f'"{k}"{ws}:{ws}{fields[k]}' for k in order) + "}")
    return f"[{ws}" + f",{ws}".join(recs) + f"{ws}]"


@pytest.mark.slow
@settings(max_examples=int(os.environ.get("IOU_EVAL_FUZZ_EXAMPLES", "300")), deadline=None)
@given(results_text())
def test_number_spellings_bit_identical(text: str) -> None:
    data = text.encode()
    recs = json.loads(data)
    finite = all(math.isfinite(float(v)) for r in recs for v in [*r["bbox"], r["score"]])
    fast = read_results(data)
    if not finite:
        assert fast is None
        return
    if any(float(r["bbox"][2]) < 0 or float(r["bbox"][3]) < 0 for r in recs):
        assert fast is None  # "-0.0" widths are fine; negatives are not
        return
    assert_bit_identical(fast, data)


@pytest.mark.parametrize(
    "token",
    ["-0", "-0.0", "0", "1e22", "1e23", "9007199254740993", "12345678901234567",
     "0.1", "2.2250738585072011e-308", "4.9e-324", "1.7976931348623157e308",
     "123456789012345678901234567890e-20", "0.30000000000000004", "1E+2", "1e-05",
     "100000000000000000000000", "0.000000000000000000000000001"],
)  # fmt: skip
def test_hard_tokens(token: str) -> None:
    text = f'[{{"image_id": 1, "category_id": 2, "bbox": [{token}, 0, 1, 1], "score": {token}}}]'
    data = text.encode()
    fast = read_results(data)
    if fast is None:
        # allowed only where the validating loader has to judge (huge integers)
        assert token.isdigit() and len(token) > 18
        return
    assert_bit_identical(fast, data)


GOOD = '{"image_id": 1, "category_id": 2, "bbox": [1.5, 2, 3, 4], "score": 0.5}'


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "{}",
        GOOD,  # not a list
        f"[{GOOD}",
        f"[{GOOD},]",
        f"[{GOOD}] x",
        '[{"image_id": "1", "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1.0, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": "0.5"}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": NaN}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": Infinity}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": null}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": true}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 1e400}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, -3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4, 5], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [[1], 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4]}]',
        '[{"image_id": 1, "image_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"ima ge_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id ": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1 2, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 01, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1., 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [.1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [+1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1e, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1e5.3, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1.2.3, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [-, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1-2, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [00.5, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5\x00}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}, 3]',
        "[{I1,C2,B[1,2,3,4],S0.5}]",
        '[{"image_id": 99999999999999999999, "category_id": 2, "bbox": [1, 2, 3, 4], '
        '"score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]\u00e9',
    ],
)
def test_declines_anything_else(text: str) -> None:
    assert read_results(text.encode("utf-8")) is None


# --- the Side from both paths -----------------------------------------------------------


def _side_fields(side: object) -> dict[str, object]:
    b = side.boxes  # type: ignore[attr-defined]
    out: dict[str, object] = {
        name: getattr(b, name).tobytes()
        for name in ("xyxy", "box_area", "area", "image", "category", "score", "iscrowd",
                     "ignore", "difficult", "ids", "origin")
    }  # fmt: skip
    out["dtypes"] = [getattr(b, name).dtype.str for name in ("xyxy", "image", "score")]
    out["masks"] = b.masks
    out["images"] = (side.images.keys, side.images.stems)  # type: ignore[attr-defined]
    out["categories"] = (side.categories.ids, side.categories.names)  # type: ignore[attr-defined]
    out["format"] = side.format  # type: ignore[attr-defined]
    out["has_scores"] = side.has_scores  # type: ignore[attr-defined]
    return out


@pytest.mark.parametrize("shuffle", [False, True])
def test_side_identical_to_validating_path(tmp_path: Path, shuffle: bool) -> None:
    recs = json.loads(REAL.read_bytes())
    if shuffle:  # ids out of order, so the factorisation is exercised
        rng = np.random.default_rng(1)
        recs = [recs[i] for i in rng.permutation(len(recs))]
    path = tmp_path / "preds.json"
    path.write_text(json.dumps(recs))
    assert read_results(path.read_bytes()) is not None
    fast = coco_loader.load_coco(str(path), role="pred", iou_type="bbox")
    slow = coco_loader._load_results(str(path), recs, "bbox")
    assert _side_fields(fast) == _side_fields(slow)
    assert fast.path == slow.path


def test_declined_file_still_gives_located_error(tmp_path: Path) -> None:
    from iou_cli.errors import InputError

    path = tmp_path / "preds.json"
    path.write_text('[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3], "score": 0.5}]')
    with pytest.raises(InputError) as err:
        coco_loader.load_coco(str(path), role="pred", iou_type="bbox")
    assert "[0].bbox" in str(err.value)


@pytest.mark.parametrize(
    "text",
    [
        # json.loads semantics: unknown keys ignored (the validating loader ignores them too),
        # escapes in keys decoded, any key order, a later duplicate key wins
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5, "id": 3}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5, '
        '"segmentation": [[1, 2, 3, 4, 5, 6]]}]',
        '[{"image\\u005fid": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5}, '
        '{"category_id": 2, "image_id": 1, "bbox": [1, 2, 3, 4], "score": 0.5}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5, "score": 0.25}]',
        '[{"image_id": 1, "category_id": 2, "bbox": [-0, 2, 3, 4], "score": -0.0}]',
    ],
)
def test_accepts_what_json_loads_reads_the_same(text: str) -> None:
    data = text.encode()
    assert_bit_identical(read_results(data), data)


@pytest.mark.parametrize("chunk", [1, 150, 1000])
def test_big_files_are_decoded_in_slices(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    from iou_cli.loaders import fastcoco

    monkeypatch.setattr(fastcoco, "_CHUNK", chunk)
    data = REAL.read_bytes()
    assert_bit_identical(read_results(data), data)
    compact = json.dumps(json.loads(data), separators=(",", ":")).encode()
    assert_bit_identical(read_results(compact), compact)
    # a slice boundary that falls inside a nested value declines the file (json path then)
    nested = b'[{"image_id": 1, "category_id": 2, "bbox": [1, 2, 3, 4], "score": 0.5, '
    nested += b'"x": [{"a": 1},{"b": 2}]}]'
    assert read_results(nested) in (None,) or chunk > len(nested)


# ---------------------------------------------------------------- segm results (compressed RLE)

_RLE = {"size": [4, 5], "counts": "3;5"}


def _segm(**extra: object) -> dict[str, object]:
    return {"image_id": 1, "category_id": 2, "segmentation": dict(_RLE), "score": 0.5, **extra}


def test_segm_results_columns() -> None:
    from iou_cli.loaders.fastcoco import read_results

    recs = [_segm(), _segm(image_id=7, score=0.25)]
    cols = read_results(json.dumps(recs).encode(), field="segm")
    assert cols is not None
    assert cols["image_id"].tolist() == [1, 7] and cols["score"].tolist() == [0.5, 0.25]
    assert np.isnan(cols["bbox"]).all()
    assert cols["segm"] == [{"size": (4, 5), "counts": b"3;5"}] * 2
    boxed = [_segm(bbox=[1, 2, 3, 4]), _segm(bbox=[0, 0, 1.5, 2])]
    cols = read_results(json.dumps(boxed).encode(), field="segm")
    assert cols is not None and cols["bbox"].tolist() == [[1, 2, 3, 4], [0, 0, 1.5, 2]]


@pytest.mark.parametrize(
    "recs",
    [
        [_segm(segmentation=[[0, 0, 1, 0, 1, 1]])],  # polygons: the validating loader
        [_segm(segmentation={"size": [4, 5], "counts": [20]})],  # uncompressed RLE
        [_segm(bbox=[0, 0, 1, 1]), _segm()],  # bbox on some rows only
        [_segm(bbox=[0, 0, -1, 1])],
        [_segm(segmentation={"size": [-4, 5], "counts": "3;5"})],
        [_segm(segmentation={"size": [4], "counts": "3;5"})],
        [_segm(segmentation={"size": [4, 5.0], "counts": "3;5"})],
        [_segm(segmentation={"size": [4, 5], "counts": "3;5", "extra": 1}, score=None)],
        [_segm(image_id="a")],
        [],
    ],
)
def test_segm_results_decline_to_the_validating_loader(recs: list[object]) -> None:
    from iou_cli.loaders.fastcoco import read_results

    assert read_results(json.dumps(recs).encode(), field="segm") is None
