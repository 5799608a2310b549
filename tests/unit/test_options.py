"""Typed options (iou_cli.options): built once by field name, checked once, with errors that
name the option; the protocol registry's capabilities; one ground-truth read for many
prediction sets."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from iou_cli import api
from iou_cli.errors import UsageError
from iou_cli.options import AnalysisOptions, LoadOptions, RunOptions
from iou_cli.protocols import get_protocol, option_owners, protocol_names

ROOT = Path(__file__).resolve().parents[2]
GT = ROOT / "sample_data" / "coco" / "gt.json"
PRED = ROOT / "sample_data" / "coco" / "preds.json"


def test_build_routes_each_keyword_to_its_class_by_field_name() -> None:
    opts = RunOptions.build(
        {
            "protocol": "voc",
            "iou_thr": 0.6,
            "plus_one": True,
            "names": "n.txt",
            "voc_origin": 1,
            "confusion": True,
            "max_dets": None,  # another protocol's option, not given: ignored
            "honor_ignore": False,
        }
    )
    assert (opts.protocol, opts.iou_thr) == ("voc", 0.6)
    assert opts.params == get_protocol("voc").params(plus_one=True)
    assert (opts.load.names, opts.load.voc_origin, opts.load.protocol) == ("n.txt", 1, "voc")
    assert opts.analyses == AnalysisOptions(confusion=True)
    assert opts.loader_options().unscaled_boxes  # the VOC protocols' capability
    assert not RunOptions().loader_options().unscaled_boxes


def test_build_refuses_unknown_names_unless_told_to_ignore_them() -> None:
    with pytest.raises(TypeError, match="unexpected option 'colour'"):
        RunOptions.build({"colour": "red"})
    assert RunOptions.build({"colour": "red"}, ignore=frozenset({"colour"})) == RunOptions()


@pytest.mark.parametrize(
    ("values", "option", "message"),
    [
        ({"iou_thr": 0.0}, "iou_thr", "--tp-iou: expected an IoU in (0, 1], got 0"),
        ({"score_thr": 2.0}, "score_thr", "--score-thr: expected a confidence in [0, 1], got 2"),
        ({"max_dets": [10, 1]}, "max_dets", "--max-dets: expected increasing positive"),
        ({"iou_thrs": [0.7, 0.5]}, "iou_thrs", "--iou-thrs: expected increasing thresholds"),
        ({"iou_type": "poly"}, "iou_type", "--iou-type: expected one of bbox, segm"),
        ({"unknown": "drop"}, "unknown", "--unknown: expected one of error, skip"),
        ({"voc_origin": 2}, "voc_origin", "--voc-origin: expected 0 or 1, got 2"),
        ({"tide_pos_thr": 1.5}, "tide_pos_thr", "--tide-pos-thr: expected a number in (0, 1]"),
        ({"protocol": "voc", "max_dets": [1]}, "max_dets", "--max-dets does not apply to"),
        ({"protocol": "yolo"}, "protocol", "--protocol: expected one of coco, voc, voc07"),
    ],
)
def test_validate_names_the_option(values: dict[str, object], option: str, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        RunOptions.build(values).validate()
    assert caught.value.option == option
    assert caught.value.message().startswith(message)


def test_a_valid_default_passes_and_keys_come_from_the_protocol() -> None:
    RunOptions().validate()
    assert RunOptions.build({"max_dets": [1, 5]}).summary_keys()[6:8] == ["AR1", "AR5"]
    assert RunOptions(protocol="voc07").summary_keys()[0] == "mAP"
    LoadOptions().validate()


def test_registry_declares_params_and_capabilities() -> None:
    for name in protocol_names():
        p = get_protocol(name)
        assert dataclasses.is_dataclass(p.params) and p.name == name
        assert p.curves in ("coco", "voc", "ultralytics")
        keys = p.gate_keys(RunOptions(protocol=name).protocol_options())
        assert keys["fp"] == "lower" and keys["f1"] == "higher" and keys["iou_thr"] == "setting"
    assert get_protocol("coco").tide and not get_protocol("voc").tide
    assert get_protocol("voc07").bootstrap == "voc" and get_protocol("lvis").bootstrap == "coco"
    assert option_owners()["plus_one"] == ["voc", "voc07"]
    assert option_owners()["keep_tables"] == ["coco", "lvis"]


def test_options_object_and_keywords_give_the_same_result() -> None:
    by_keywords = api.evaluate(PRED, GT, protocol="voc", iou_thr=0.6)
    by_options = api.evaluate(PRED, GT, RunOptions(protocol="voc", iou_thr=0.6))
    assert by_options.summary == by_keywords.summary
    with pytest.raises(UsageError, match="not both"):
        api.evaluate(PRED, GT, RunOptions(), protocol="voc")


def test_one_ground_truth_read_serves_many_evaluations(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import iou_cli.loaders.coco as coco_loader

    other = tmp_path / "other.json"
    preds = json.loads(PRED.read_text())
    other.write_text(json.dumps(preds[::2]))
    fresh = [api.evaluate(PRED, GT), api.evaluate(other, GT)]

    reads: list[str] = []
    real = coco_loader.load_coco

    def counting(path: str, **kw: object) -> object:
        reads.append(str(path))
        return real(path, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(coco_loader, "load_coco", counting)
    gt = api.load_ground_truth(GT)
    assert reads == [str(GT)]
    first = api.evaluate(PRED, gt)
    second = api.evaluate(other, gt)
    assert reads == [str(GT), str(PRED), str(other)]  # the ground truth was read once
    assert first.summary == fresh[0].summary and second.summary == fresh[1].summary
    assert first.per_class == fresh[0].per_class and second.per_class == fresh[1].per_class
    with pytest.raises(UsageError, match="read for --iou-type bbox"):
        api.evaluate(PRED, gt, iou_type="segm")


@pytest.mark.parametrize(
    ("verb", "not_flags"),
    [
        ("evaluate", set()),
        # compare scores whole prediction sets: no subsets, analyses or match rows; rotated
        # boxes' options are the evaluate verb's only (so far)
        (
            "compare",
            {
                "angle_unit",
                "all_point",
                "matches",
                "classes",
                "image_ids",
                "class_agnostic",
                "tide",
                "confusion",
                "per_image",
                "calibration",
                "per_keypoint",
                "tide_pos_thr",
                "tide_bg_thr",
            },
        ),
    ],
)
def test_every_option_field_is_a_flag_of_the_verb(verb: str, not_flags: set[str]) -> None:
    """The CLI builds RunOptions by field name: each field must be one of the verb's
    parameters (or deliberately not offered), and each parameter a field or CLI_ONLY."""
    import importlib
    import inspect

    module = importlib.import_module(f"iou_cli.cli.{verb}")
    params = set(inspect.signature(getattr(module, f"{verb}_cmd")).parameters)
    internal = {"params", "load", "analyses", "aside", "protocol_params"}
    fields = {
        f.name
        for cls in (RunOptions, LoadOptions, AnalysisOptions)
        for f in dataclasses.fields(cls)
        if f.name not in internal
    } - {"progress", "unscaled_boxes"}  # set by the verb and by the protocol
    protocol_fields = set(option_owners())
    assert (fields | protocol_fields) - {"keep_tables"} - not_flags <= params
    assert params - fields - protocol_fields <= module.CLI_ONLY
    # build(checked=True) skips the CLI's own names before looking at protocol options
    assert not module.CLI_ONLY & (fields | protocol_fields)


def test_checked_build_routes_as_the_api_does_without_importing_other_protocols() -> None:
    """The CLI's build (``checked``: its names are known) gives the options the API's
    build gives, and looks at other protocols only for an option that is given."""
    import subprocess
    import sys

    values = {"protocol": "coco", "iou_type": "bbox", "plus_one": False, "max_dets": None}
    assert RunOptions.build(values, checked=True) == RunOptions.build(values)
    given = dict(values, plus_one=True)
    opts = RunOptions.build(given, checked=True)
    assert opts == RunOptions.build(given) and opts.aside == {"plus_one": True}
    with pytest.raises(UsageError, match="--plus-one does not apply to --protocol coco"):
        opts.validate()
    with pytest.raises(TypeError, match="unexpected option 'colour'"):
        RunOptions.build({"colour": "red"}, checked=True)
    code = (
        "import sys; from iou_cli.options import RunOptions\n"
        "RunOptions.build({'protocol': 'coco', 'plus_one': False, 'sigmas': None}, checked=True)\n"
        "print(sorted(m for m in sys.modules if m.startswith('iou_cli.protocols.')))"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {m.strip("[]',").rsplit(".", 1)[-1] for m in p.stdout.split()}
    assert "coco" in loaded and not loaded & {"voc", "lvis", "dota", "ultralytics"}
