"""The typed read of COCO panoptic JSONs (iou_cli/loaders/panoptic_json.py): where it gives
values they are the generic reader's (every column, dtype, image_id, file name, category and
size), and anything the generic rules refuse or that it cannot vouch for (a key written
twice at any depth, an integer beyond 2**53, an unknown field...) leaves it (None), so the
generic reader words the same located error as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.errors import InputError
from iou_cli.loaders import panoptic as lp
from iou_cli.loaders import panoptic_json as pj
from tests.unit.same import same


def _doc() -> dict[str, Any]:
    segs = [
        {"id": 3, "category_id": 1, "area": 10, "bbox": [0, 0, 2, 5], "iscrowd": 0},
        {"id": 70_000, "category_id": 7, "area": 2.5, "bbox": [1.5, 2, 3, 4], "iscrowd": 1},
        {"id": 16_777_215, "category_id": -4},  # no area, iscrowd, bbox
        {"id": 9, "category_id": 2, "area": None, "iscrowd": 0},
    ]
    return {
        "info": {"description": "x", "nested": [{"a": 1}, [2, 3]]},
        "licenses": [],
        "images": [
            {"id": 1, "file_name": "a.jpg", "width": 4, "height": 3},
            {"id": "b", "file_name": "b.jpg", "width": 2, "height": 2, "extra": [1]},
        ],
        "annotations": [
            {"image_id": 1, "file_name": "1.png", "segments_info": segs[:2]},
            {"image_id": "b", "file_name": "sub/b.png", "segments_info": segs[2:]},
            {"image_id": 2**53, "file_name": "c.png", "segments_info": []},
        ],
        "categories": [
            {"id": 1, "name": "a", "isthing": 1},
            {"id": 7, "name": 'q":uote', "isthing": 0},
        ],
    }


def _generic(monkeypatch: pytest.MonkeyPatch, path: Path) -> lp.PanopticSet:
    with monkeypatch.context() as m:
        m.setattr(pj, "read_typed", lambda p, d: None)
        m.setattr(lp, "_sizes_fast", lambda images: None)
        return lp.load_panoptic(str(path), ground_truth=True, role="ground truth")


def _write(tmp_path: Path, text: str | bytes) -> Path:
    (tmp_path / "gt").mkdir(exist_ok=True)
    path = tmp_path / "gt.json"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


@pytest.mark.parametrize(
    "spelling",
    [
        lambda d: json.dumps(d),
        lambda d: json.dumps(d, indent=2),  # "key": value, new lines
        lambda d: json.dumps(d, separators=(",", ":")),
        lambda d: json.dumps(d, separators=(" , ", " : ")),  # white space before colons
        lambda d: "\ufeff" + json.dumps(d),  # a BOM
    ],
)
def test_typed_read_equals_the_generic_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: Any
) -> None:
    path = _write(tmp_path, spelling(_doc()))
    typed = pj.read_typed(str(path), path.read_bytes())
    assert typed is not None
    got = lp.load_panoptic(str(path), ground_truth=True, role="ground truth")
    want = _generic(monkeypatch, path)
    assert same(got, want)
    assert got.sizes == {1: (4, 3), "b": (2, 2)} and got.categories[7] == ('q":uote', False)
    assert np.isnan(got.images[1].area).tolist() == [True, True]


def test_predictions_with_annotations_only_read_typed(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps({"annotations": _doc()["annotations"]}))
    typed = pj.read_typed(str(path), path.read_bytes())
    assert typed is not None and typed.rest == {} and typed.counts == [2, 2, 0]


def _edits() -> list[tuple[str, Any]]:
    def seg(d: dict[str, Any]) -> dict[str, Any]:
        return d["annotations"][0]["segments_info"][0]

    return [
        ("unknown segment field", lambda d: seg(d).update(score=0.5)),
        ("unknown top-level key", lambda d: d.update(extra=1)),
        ("string id", lambda d: seg(d).update(id="3")),
        ("float id", lambda d: seg(d).update(id=3.0)),
        ("bool iscrowd", lambda d: seg(d).update(iscrowd=True)),
        ("huge bbox number", lambda d: seg(d).update(bbox=[0, 0, 1, 2**60])),
        ("huge category", lambda d: seg(d).update(category_id=-(2**54))),
        ("annotations not a list", lambda d: d.update(annotations={})),
        ("no annotations", lambda d: d.pop("annotations")),
        ("a list at the top", lambda d: d.clear()),
    ]


@pytest.mark.parametrize(("what", "edit"), _edits(), ids=[e[0] for e in _edits()])
def test_anything_off_leaves_the_typed_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, edit: Any
) -> None:
    doc = _doc()
    edit(doc)
    text = json.dumps(doc if doc else [])
    path = _write(tmp_path, text)
    assert pj.read_typed(str(path), path.read_bytes()) is None, what
    _equal_outcome(tmp_path, monkeypatch, path)


def _equal_outcome(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """load_panoptic gives what the generic reader gives: the same sides or the same error."""
    try:
        want: Any = _generic(monkeypatch, path)
    except InputError as exc:
        want = (exc.path, exc.where, exc.reason)
    try:
        got: Any = lp.load_panoptic(str(path), ground_truth=True, role="ground truth")
    except InputError as exc:
        got = (exc.path, exc.where, exc.reason)
    assert type(got) is type(want)
    assert got == want if isinstance(want, tuple) else same(got, want)


DUPLICATES = [
    # a key written twice: msgspec's structs keep the last, the key count must refuse it
    ('"id": 3, "category_id": 1,', '"id": 3, "id": 4, "category_id": 1,'),
    ('"image_id": 1,', '"image_id": 1, "image_id": 5,'),
    ('"annotations": [', '"images": [], "annotations": ['),  # images twice at the top
    ('"description": "x"', '"description": "x", "description": "y"'),  # inside info
    ('"id": 3, "category_id": 1,', '"id": 3, "category_id" : 1, "id" :4,'),  # spaced keys
]


@pytest.mark.parametrize(("old", "new"), DUPLICATES)
def test_a_key_written_twice_gives_the_generic_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> None:
    text = json.dumps(_doc())
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    assert pj.read_typed(str(path), path.read_bytes()) is None
    with pytest.raises(InputError, match="duplicate"):
        lp.load_panoptic(str(path), ground_truth=True, role="ground truth")
    _equal_outcome(tmp_path, monkeypatch, path)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ('"area": 10', '"area": 1e400'),  # overflows a float
        ('"area": 10', '"area": NaN'),
        ('"area": 10', '"area": 90071992547409930'),  # an integer beyond 2**53
        ('"width": 4', '"width": 90071992547409930'),  # ... in a part read generically
        ('"id": 3,', '"id": 0,'),  # VOID: the record-by-record check words it
        ('"id": 70000', '"id": 3'),  # a segment id twice in one image
        ('"image_id": "b"', '"image_id": 1'),  # an image_id twice
        ('"file_name": "c.png"', '"file_name": "../c.png"'),
        ('"file_name": "c.png"', '"file_name": ""'),
        ('"iscrowd": 1', '"iscrowd": 2'),
        ('"area": 2.5', '"area": -1'),
    ],
)
def test_bad_values_give_the_generic_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str
) -> None:
    text = json.dumps(_doc())
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    with pytest.raises(InputError):
        lp.load_panoptic(str(path), ground_truth=True, role="ground truth")
    _equal_outcome(tmp_path, monkeypatch, path)


def test_sizes_fast_equals_the_loop() -> None:
    images: list[Any] = [
        {"id": 1, "width": 4, "height": 3},
        {"id": "x", "width": 1, "height": 1 << 31},
    ]
    assert lp._sizes_fast(images) == {1: (4, 3), "x": (1, 1 << 31)}
    for bad in (
        [{"id": 1, "width": 4}],  # no height: the loop words it
        [{"id": 1, "width": 0, "height": 3}],
        [{"id": 1, "width": 4.0, "height": 3}],
        [{"id": True, "width": 4, "height": 3}],
        [{"id": 1, "width": 4, "height": 3}, {"id": 1, "width": 4, "height": 3}],
        [{"id": 1 << 63, "width": 4, "height": 3}],
        ["x"],
    ):
        assert lp._sizes_fast(bad) is None, bad


def test_a_side_pickles_as_columns_and_back(tmp_path: Path) -> None:
    """The forked reader sends a side as flat columns (PanopticSet.__reduce__): the same
    images, arrays (NaN areas, an image without segments), ids of both kinds and dicts."""
    import pickle

    path = _write(tmp_path, json.dumps(_doc()))
    side = lp.load_panoptic(str(path), ground_truth=True, role="ground truth")
    back = pickle.loads(pickle.dumps(side))
    assert same(back, side) and back.by_id == {1: 0, "b": 1, 2**53: 2}
    empty = lp.PanopticSet("p.json", "p", [], {})
    assert same(pickle.loads(pickle.dumps(empty)), empty)
