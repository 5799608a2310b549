"""The typed read of COCO keypoint ground truths (iou_cli/loaders/coco_typed.py): where it
gives values, the side is the generic reader's (every column bit for bit, dtype, ids, images,
categories, skeleton, notes), and anything the generic rules refuse or that it cannot vouch
for (a key written twice at any depth, an integer beyond 2**53, an unknown field, a value
the dataset reader words an error for...) leaves it (None) or ends in the generic reader's
own located error."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from iou_cli.data import Side
from iou_cli.errors import InputError
from iou_cli.loaders import coco
from iou_cli.loaders import coco_typed as ct
from tests.oracle.kptgen import random_kpt_scene
from tests.unit.same import same


def _doc(seed: int = 0) -> dict[str, Any]:
    gt, _ = random_kpt_scene(seed, n_cats=2)
    anns = gt["annotations"]
    assert len(anns) >= 4
    # what COCO's person_keypoints files carry besides: polygons, an RLE, no num_keypoints
    anns[0]["segmentation"] = [[1.5, 2, 30, 2, 30, 40.25]]
    anns[1]["segmentation"] = {"counts": "a1b2", "size": [480, 640]}
    anns[2]["segmentation"] = {"counts": [0, 5, 7], "size": [480, 640]}
    anns[3].pop("num_keypoints", None)
    anns[3].pop("iscrowd", None)
    # a record's own num_keypoints wins over the labelled count (pycocotools reads the field)
    anns[0]["num_keypoints"] = sum(v > 0 for v in anns[0]["keypoints"][2::3]) + 1
    gt["info"] = {"description": 'q":uote', "nested": [{"a": 1}, [2, 3]]}
    gt["licenses"] = []
    return gt


def _read(path: Path) -> Side:
    return coco.load_coco(str(path), role="gt", iou_type="keypoints")


def _generic(monkeypatch: pytest.MonkeyPatch, path: Path) -> Side:
    with monkeypatch.context() as m:
        m.setattr(coco, "read_keypoint_gt", lambda p, d: None)
        return _read(path)


def _write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "gt.json"
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


SPELLINGS = [
    lambda d: json.dumps(d),
    lambda d: json.dumps(d, indent=2),  # "key": value, new lines
    lambda d: json.dumps(d, separators=(",", ":")),
    lambda d: json.dumps(d, separators=(" , ", " : ")),  # white space before colons
    lambda d: "\ufeff" + json.dumps(d),  # a BOM
]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("spelling", range(len(SPELLINGS)))
def test_typed_read_equals_the_generic_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, spelling: int
) -> None:
    path = _write(tmp_path, SPELLINGS[spelling](_doc(seed)))
    assert ct.read_keypoint_gt(str(path), path.read_bytes()) is not None
    got, want = _read(path), _generic(monkeypatch, path)
    assert same(got, want)
    assert got.boxes.keypoints is not None and len(got.boxes) == len(_doc(seed)["annotations"])


def _outcome(read: Any) -> Any:
    try:
        return read()
    except InputError as exc:
        return (exc.path, exc.where, exc.reason)


def _equal_outcome(monkeypatch: pytest.MonkeyPatch, path: Path) -> Any:
    """load_coco gives what the generic reader gives: the same side or the same error."""
    want = _outcome(lambda: _generic(monkeypatch, path))
    got = _outcome(lambda: _read(path))
    assert type(got) is type(want)
    assert got == want if isinstance(want, tuple) else same(got, want)
    return got


def _ann(d: dict[str, Any], i: int = 0) -> dict[str, Any]:
    ann: dict[str, Any] = d["annotations"][i]
    return ann


EDITS: list[tuple[str, Any]] = [
    ("unknown field", lambda d: _ann(d).update(attributes={"occluded": False})),
    ("score on a ground truth", lambda d: _ann(d).update(score=0.5)),
    ("ignore flag", lambda d: _ann(d).update(ignore=1)),
    ("unknown top-level key", lambda d: d.update(extra=1)),
    ("string image id", lambda d: _ann(d).update(image_id="1")),
    ("float id", lambda d: _ann(d).update(id=3.0)),
    ("bool iscrowd", lambda d: _ann(d).update(iscrowd=True)),
    ("huge id", lambda d: _ann(d).update(id=2**60)),
    ("no bbox", lambda d: _ann(d).pop("bbox")),
    ("no area", lambda d: _ann(d).pop("area")),
    ("no id", lambda d: _ann(d).pop("id")),
    ("no keypoints", lambda d: _ann(d).pop("keypoints")),
    ("3 numbers of bbox", lambda d: _ann(d).update(bbox=[1, 2, 3])),
    ("negative width", lambda d: _ann(d).update(bbox=[1, 2, -3, 4])),
    ("iscrowd 2", lambda d: _ann(d).update(iscrowd=2)),
    ("flag 3", lambda d: _ann(d)["keypoints"].__setitem__(2, 3)),
    ("K differs", lambda d: _ann(d)["keypoints"].extend([1, 2, 2])),
    ("K not whole", lambda d: _ann(d)["keypoints"].append(1)),
    ("num_keypoints -1", lambda d: _ann(d).update(num_keypoints=-1)),
    ("image id unknown", lambda d: _ann(d).update(image_id=999)),
    ("category id unknown", lambda d: _ann(d).update(category_id=999)),
    ("id twice", lambda d: _ann(d, 1).update(id=_ann(d)["id"])),
    ("RLE with a third key", lambda d: _ann(d, 1)["segmentation"].update(x=1)),
    ("no annotations", lambda d: d.update(annotations=[])),
    ("annotations not a list", lambda d: d.update(annotations={})),
    ("no images", lambda d: d.pop("images")),
    ("a list at the top", lambda d: d.clear()),
]


@pytest.mark.parametrize(("what", "edit"), EDITS, ids=[e[0] for e in EDITS])
def test_anything_off_gives_the_generic_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, what: str, edit: Any
) -> None:
    doc = _doc()
    edit(doc)
    path = _write(tmp_path, json.dumps(doc if doc else []))
    typed = ct.read_keypoint_gt(str(path), path.read_bytes())
    _equal_outcome(monkeypatch, path)
    # the typed read takes only what it can vouch for; the dataset reader's own checks
    # (ids against the tables, ids unique) word the rest, the same for both
    assert (typed is not None) == (what in ACCEPTED), what


ACCEPTED = ("image id unknown", "category id unknown", "id twice", "no images")


DUPLICATES = [
    # a key written twice: msgspec's structs keep the last, the key count must refuse it
    ('"id": 1, "image_id": ', '"id": 1, "image_id": 5, "image_id": '),
    ('"annotations": [', '"images": [], "annotations": ['),  # images twice at the top
    ('"description": "q', '"description": "x", "description": "q'),  # inside info
    ('"size": [480, 640]', '"size": [480, 640], "size": [1, 1]'),  # inside an RLE
    ('"id": 1, "image_id": ', '"id": 1, "image_id" : 5, "image_id" :'),  # spaced keys
]


BAD_NUMBERS = [
    ('"area": ', '"area": 1e400, "x": '),  # overflows a float (and an unknown key)
    ('"iscrowd": 0', '"iscrowd": NaN'),
    ('"id": 1,', '"id": 90071992547409930,'),  # an integer beyond 2**53
    ('"width": 640', '"width": 90071992547409930'),  # ... in a part read generically
    ('"num_keypoints": ', '"num_keypoints": 1.5, "y": '),
]


@pytest.mark.parametrize(
    ("old", "new", "match"),
    [(o, n, "duplicate") for o, n in DUPLICATES] + [(o, n, "") for o, n in BAD_NUMBERS],
)
def test_refused_text_gives_the_generic_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, match: str
) -> None:
    # a key written twice (msgspec's structs keep the last: the key count refuses it) or
    # a number the generic rules refuse: the typed read leaves it, the error is the same
    text = json.dumps(_doc())
    assert old in text
    path = _write(tmp_path, text.replace(old, new, 1))
    assert ct.read_keypoint_gt(str(path), path.read_bytes()) is None
    with pytest.raises(InputError, match=match or None):
        _read(path)
    _equal_outcome(monkeypatch, path)
