"""The images table of a COCO dataset is read in whole-column steps when its records are
plain; the result is the record-by-record reader's, exactly, and any other table goes to
that reader, whose located error is the one the user sees."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from iou_cli.errors import InputError
from iou_cli.loaders.coco_images import images_table, read_images

SIZES: list[Any] = [640, 480.0, 0, -3, None, 1e-300, 2**70, 1.5, 7]


def _table(seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out: list[dict[str, Any]] = []
    for i in range(rng.randint(0, 40)):
        im: dict[str, Any] = {"id": rng.choice([i + 1, str(i + 1), f"img-{i}", f" {i + 1}"])}
        if rng.random() < 0.8:
            im["file_name"] = rng.choice([f"a/b\\{i}.jpg", f"{i}.png", f".{i}", f"x{i}.tar.gz", ""])
        elif rng.random() < 0.5:
            im["coco_url"] = f"http://h/val2017/{i:012d}.jpg"
        for key in ("width", "height"):
            if rng.random() < 0.9:
                im[key] = rng.choice(SIZES)
        out.append(im)
    return out


def _same(a: Any, b: Any) -> None:
    keys, index, stems, w, h = a
    keys2, index2, stems2, w2, h2 = b
    assert keys == keys2 and [type(k) for k in keys] == [type(k) for k in keys2]
    assert index == index2 and stems == stems2
    assert np.array_equal(w, w2, equal_nan=True) and np.array_equal(h, h2, equal_nan=True)


@pytest.mark.parametrize("seed", range(30))
def test_column_reading_equals_record_reading(seed: int) -> None:
    table = _table(seed)
    try:
        slow = read_images("gt.json", table)
    except InputError as exc:  # duplicate ids after normalising ("1" and 1): both refuse
        with pytest.raises(InputError) as got:
            images_table("gt.json", table)
        assert got.value.message() == exc.message()
        return
    _same(images_table("gt.json", table), slow)


@pytest.mark.parametrize(
    "bad, where",
    [
        ({"id": True}, "images[1].id"),
        ({"id": ""}, "images[1].id"),
        ({"file_name": "x.jpg"}, "images[1].id"),
        ({"id": 1}, "images[1].id"),  # a duplicate of images[0]
        ({"id": "1"}, "images[1].id"),  # the same image id, as text
        ([1, 2], "images[1]"),
    ],
)
def test_tables_that_are_not_plain_get_the_located_error(bad: Any, where: str) -> None:
    table = [{"id": 1, "file_name": "a.jpg"}, bad]
    with pytest.raises(InputError) as exc:
        images_table("gt.json", table)
    assert exc.value.where == where


@pytest.mark.parametrize("size", [True, "640", 10**400, [640]])
def test_sizes_that_are_not_plain_numbers_are_read_record_by_record(size: Any) -> None:
    table = [{"id": 1, "file_name": "a.jpg", "width": size, "height": 480}, {"id": 2}]
    keys, _, _, w, h = images_table("gt.json", table)
    assert keys == [1, 2] and np.isnan(w).all() and h[0] == 480.0 and np.isnan(h[1])


def _os_stem(name: str) -> str:
    """The reference: the os.path spelling :func:`stem` replaced."""
    import os.path

    return os.path.splitext(os.path.basename(name.replace("\\", "/")))[0]


STEM_NAMES = [
    "000000000001.jpg",
    "a/b/c.png",
    "a\\b\\c.tar.gz",
    ".hidden",
    "..x",
    "...",
    "a/.x",
    "a/..x.jpg",
    "x.",
    "x..",
    ".",
    "..",
    "a/",
    "a\\",
    "/",
    "noext",
    "a.b/c",
    "dir.d/file",
    " spaced name .jpg",
    "é/ü.jpeg",
    "a/b/.",
    "a/b/..",
    "..a.b",
]


@pytest.mark.parametrize("name", STEM_NAMES)
def test_stem_equals_os_path_spelling(name: str) -> None:
    from iou_cli.loaders.coco_images import stem

    assert stem(name) == _os_stem(name)


def test_stem_equals_os_path_spelling_on_random_names() -> None:
    from iou_cli.loaders.coco_images import stem

    rng = random.Random(5)
    for _ in range(3000):
        name = "".join(rng.choice("ab./\\x") for _ in range(rng.randint(1, 9)))
        assert stem(name) == _os_stem(name), name
    assert stem("") is None and stem(None) is None and stem(3) is None
