"""Pascal VOC XML loader: edge cases (datumaro fixtures and hand-written files)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from iou_cli.errors import InputError
from iou_cli.loaders.detect import detect_format
from iou_cli.loaders.join import load_dataset
from iou_cli.loaders.voc import load_voc
from iou_cli.options import LoadOptions

DATUMARO = Path(__file__).parents[1] / "data" / "peers_voc" / "datumaro" / "voc"


def test_datumaro_no_difficult_tag_and_float_coords() -> None:
    s = load_voc(str(DATUMARO / "voc_dataset1"), role="gt")
    assert s.images.keys == ["2007_000001"]
    assert s.categories.names == ["cat", "person"]
    assert s.boxes.difficult.tolist() == [False, False]  # one object has no <difficult> tag
    assert (s.images.width[0], s.images.height[0]) == (20.0, 10.0)


def test_datumaro_objects_without_size() -> None:
    s = load_voc(str(DATUMARO / "voc_dataset2"), role="gt")
    assert s.images.keys == ["@", "a", "b", "c", "d"]  # name order
    assert math.isnan(s.images.width[0])  # @.xml has no <size>
    assert s.boxes.xyxy[0].tolist() == [1.0, 2.0, 4.0, 6.0]  # a.xml, float coordinates
    assert s.format == "voc" and detect_format(str(DATUMARO / "voc_dataset2")) == "voc"


def _xml(tmp: Path, name: str, body: str) -> Path:
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / name).write_text(body)
    return tmp


OBJ = "<object><name>cat</name>{extra}<bndbox><xmin>1</xmin><ymin>2</ymin><xmax>{x2}</xmax><ymax>5</ymax></bndbox></object>"


@pytest.mark.parametrize(
    "body, role, where, error",
    [
        ("<annotation>\n<object>\n<bndbox/></object></annotation>", "gt", "2", "without a <name>"),
        ("<annotation>\n" + OBJ.format(extra="", x2=0), "gt", None, "not well-formed"),
        ("<annotation>\n" + OBJ.format(extra="", x2=0) + "</annotation>", "gt", "2", "inverted"),
        (
            "<annotation>\n" + OBJ.format(extra="", x2="x") + "</annotation>",
            "gt",
            "2",
            "expected a number",
        ),
        (
            "<annotation>\n" + OBJ.format(extra="", x2=9) + "</annotation>",
            "pred",
            "2",
            "no <score>",
        ),
        (
            "<annotation>\n"
            + OBJ.format(extra="<difficult>maybe</difficult>", x2=9)
            + "</annotation>",
            "gt",
            "2",
            "expected 0 or 1",
        ),
        ("<root/>", "gt", "1", "expected <annotation>"),
    ],
)
def test_located_errors(
    tmp_path: Path, body: str, role: str, where: str | None, error: str
) -> None:
    d = _xml(tmp_path / "a", "img.xml", body)
    with pytest.raises(InputError) as e:
        load_voc(str(d), role=role)
    assert error in e.value.reason
    assert e.value.path == str(d / "img.xml")
    if where is not None:
        assert e.value.where == where


def test_entities_are_refused(tmp_path: Path) -> None:
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x "xxxxxxxxxx">'
        '<!ENTITY y "&x;&x;&x;&x;">]><annotation><filename>&y;</filename></annotation>'
    )
    d = _xml(tmp_path / "a", "img.xml", bomb)
    with pytest.raises(InputError, match="refused"):
        load_voc(str(d), role="gt")


def test_predictions_with_score_or_confidence_and_annotations_subfolder(tmp_path: Path) -> None:
    gt = _xml(
        tmp_path / "gt" / "Annotations",
        "i1.xml",
        "<annotation>" + OBJ.format(extra="<difficult>1</difficult>", x2=9) + "</annotation>",
    )
    _xml(
        tmp_path / "pr",
        "i1.xml",
        "<annotation>"
        + OBJ.format(extra="<score>0.5</score>", x2=9)
        + OBJ.format(extra="<confidence>0.25</confidence>", x2=8)
        + "</annotation>",
    )
    assert gt.name == "Annotations"
    ds = load_dataset(str(tmp_path / "pr"), str(tmp_path / "gt"), LoadOptions())
    assert ds.pred.score.tolist() == [0.5, 0.25]
    assert ds.gt.difficult.tolist() == [True]


def test_unknown_image_error_names_file_and_line(tmp_path: Path) -> None:
    _xml(tmp_path / "gt", "i1.xml", "<annotation>" + OBJ.format(extra="", x2=9) + "</annotation>")
    _xml(
        tmp_path / "pr",
        "i1.xml",
        "<annotation>" + OBJ.format(extra="<score>1</score>", x2=9) + "</annotation>",
    )
    _xml(
        tmp_path / "pr",
        "i2.xml",
        "<annotation>\n" + OBJ.format(extra="<score>1</score>", x2=9) + "</annotation>",
    )
    with pytest.raises(InputError) as e:
        load_dataset(str(tmp_path / "pr"), str(tmp_path / "gt"), LoadOptions())
    assert e.value.where == "i2.xml:2" and "i2" in e.value.reason
    ds = load_dataset(
        str(tmp_path / "pr"), str(tmp_path / "gt"), LoadOptions(unknown="skip-images")
    )
    assert len(ds.pred) == 1 and ds.skipped["unknown_image"] == 1


def test_class_never_seen_in_voc_gt_is_a_class_without_ground_truth(tmp_path: Path) -> None:
    # a VOC ground truth has no class list (issue 17): "dog" is a class without ground
    # truth (AP undefined, a warning), not an unknown class
    _xml(tmp_path / "gt", "i1.xml", "<annotation>" + OBJ.format(extra="", x2=9) + "</annotation>")
    _xml(
        tmp_path / "pr",
        "i1.xml",
        "<annotation>\n"
        + OBJ.format(extra="<score>1</score>", x2=9).replace("cat", "dog")
        + "</annotation>",
    )
    ds = load_dataset(str(tmp_path / "pr"), str(tmp_path / "gt"), LoadOptions())
    assert ds.categories.names == ["cat", "dog"]
    assert ds.gt.category.tolist() == [0] and ds.pred.category.tolist() == [1]
    from iou_cli.checks import warnings_for

    assert any("dog" in w and "no ground truth" in w for w in warnings_for(ds, max_dets=None))
