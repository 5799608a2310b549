"""``--jobs`` reads in parallel (issue 24 item 4): forked workers decode byte ranges of the
results list while the parent reads the ground truth. The output is ``--jobs 1``'s bit for bit
(JSON apart from the run's seconds) on random scenes with ties and files not grouped by image;
a split point that falls inside a string or a nested value declines the parallel decode (the
validating reader then reads the file); bad input gives ``--jobs 1``'s one located line.

The size thresholds are lowered (``_PARALLEL_MIN`` 0, slices of a few hundred bytes), so the
small files here take the path a 400 MiB file takes; each test checks that workers ran.
"""

from __future__ import annotations

import json
import os
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli.loaders import fastcoco, kptparts
from iou_cli.loaders.sharedcols import move_left
from tests.helpers import assert_one_error_line, run
from tests.oracle.cocogen import random_scene


@pytest.fixture
def small_slices(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Parallel decoding of any file, in slices of ~300 bytes; returns a list that gets one
    entry per decode, True where forked workers decoded."""
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    monkeypatch.setattr(fastcoco, "_CHUNK", 300)
    used: list[bool] = []
    init = fastcoco.Pending.__init__

    def spy(self: fastcoco.Pending, data: bytes, jobs: int, field: str, gt_bytes: int = 0) -> None:
        init(self, data, jobs, field, gt_bytes)
        used.append(self.pool is not None)

    monkeypatch.setattr(fastcoco.Pending, "__init__", spy)
    return used


def _json(out: str) -> dict[str, Any]:
    doc = json.loads(out)
    doc["meta"].pop("seconds", None)
    return doc


def _write(tmp: Path, gt: dict[str, Any], dets: list[dict[str, Any]], **dump: Any) -> list[str]:
    (tmp / "gt.json").write_text(json.dumps(gt))
    (tmp / "pred.json").write_text(json.dumps(dets, **dump))
    return [str(tmp / "pred.json"), str(tmp / "gt.json")]


def _same_as_one_process(
    args: list[str], capsys: pytest.CaptureFixture[str], used: list[bool]
) -> dict[str, Any]:
    code1, out1, err1 = run([*args, "--jobs", "1"], capsys)
    assert not any(used)
    code2, out2, err2 = run([*args, "--jobs", "2"], capsys)
    assert (code1, code2) == (0, 0), err1 + err2
    assert any(used), "the parallel decode did not run"
    one = _json(out1)
    assert _json(out2) == one
    code3, out3, err3 = run([*args, "--jobs", "3"], capsys)  # two workers and this process
    assert code3 == 0 and _json(out3) == one, err3
    return one


@pytest.mark.parametrize("seed", range(4))
def test_random_scenes_with_ties_not_grouped_by_image(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool], seed: int
) -> None:
    gt, dets = random_scene(seed, n_images=12, n_cats=4)
    rng = random.Random(seed)
    for d in dets:  # three score levels: ties across images and classes
        d["score"] = rng.choice([0.25, 0.5, 0.75])
    rng.shuffle(dets)  # records not grouped by image
    indent = None if seed % 2 else 1  # compact, and one value per line
    args = _write(tmp_path, gt, dets, indent=indent)
    one = _same_as_one_process([*args, "-o", "json", "--per-class", "-q"], capsys, small_slices)
    assert one["summary"]["AP"] >= 0


def test_many_parts_per_process(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    small_slices: list[bool],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A big set is matched in more parts than processes (a part at a time: memory); the
    image split (LVIS, VOC, DOTA, --partial) is forced here: COCO's --jobs splits classes."""
    from iou_cli.state import jobs

    monkeypatch.setattr(jobs, "CLASS_SPLIT", ())
    monkeypatch.setattr(jobs, "PART_PREDICTIONS", 7)
    seen: list[int] = []
    n_parts = jobs.n_parts

    def spy(*args: int) -> int:
        seen.append(n_parts(*args))
        return seen[-1]

    monkeypatch.setattr(jobs, "n_parts", spy)
    gt, dets = random_scene(21, n_images=14, n_cats=4)
    random.Random(2).shuffle(dets)
    args = _write(tmp_path, gt, dets)
    _same_as_one_process([*args, "-o", "json", "--per-class", "-q"], capsys, small_slices)
    assert seen and min(seen) > 3  # --jobs 2 and 3 in many parts each


def test_compare_jobs_equals_one_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool]
) -> None:
    gt, dets = random_scene(11, n_images=12, n_cats=4)
    args = _write(tmp_path, gt, dets)
    other = [dict(d, score=round(1 - d["score"], 3)) for d in dets[::-1]]
    (tmp_path / "b.json").write_text(json.dumps(other))
    pred_a, gt_path = args
    base = ["compare", pred_a, str(tmp_path / "b.json"), gt_path, "-o", "json", "--per-class"]
    for boot in ("0", "20"):
        small_slices.clear()
        code1, out1, err1 = run([*base, "--bootstrap", boot, "--jobs", "1"], capsys)
        code2, out2, err2 = run([*base, "--bootstrap", boot, "--jobs", "2"], capsys)
        assert (code1, code2) == (0, 0), err1 + err2
        assert any(small_slices), "the parallel decode did not run"
        assert json.loads(out2) == json.loads(out1)
        assert ("matched in one process" in err2) == (boot != "0")


def _record(i: int, image_id: int, extra: str = "") -> str:
    return (
        f'{{"image_id": {image_id}, "category_id": 1, "bbox": [{i % 7}, 2, 30, 40], '
        f'"score": {(i % 5) / 5 + 0.1:.1f}{extra}}}'
    )


# files whose text holds what a split point looks for, inside strings and nested values
MISSPLITS = {
    "strings with record separators": ', "note": "x},{\\"image_id\\": 1}, {\\"image_id\\""',
    "nested segmentation objects": ', "segmentation": {"size": [480, 640], "counts": "a},{b"}',
    "RLE counts strings": ', "segmentation": {"size": [480, 640], "counts": "PQ3}, {0O1N"}',
    "nested lists of objects": ', "parts": [{"a": 1},{"b": 2}, {"c": [{"d": 3}]}]',
}


@pytest.mark.parametrize("case", list(MISSPLITS))
def test_split_points_inside_values(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool], case: str
) -> None:
    gt, _ = random_scene(3, n_images=6, n_cats=2)
    ids = [im["id"] for im in gt["images"]]
    recs = [_record(i, ids[i % len(ids)], MISSPLITS[case]) for i in range(60)]
    text = "[" + ",".join(recs) + "]"
    (tmp_path / "pred.json").write_text(text)
    # a split point fell inside a value: the workers' decode declines the file
    assert fastcoco.Pending(text.encode(), 2, "bbox").get() is None
    small_slices.clear()
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    args = [str(tmp_path / "pred.json"), str(tmp_path / "gt.json"), "-o", "json", "-q"]
    _same_as_one_process(args, capsys, small_slices)


@pytest.mark.parametrize(
    "layout",
    [
        "[{}]",
        "[\n  {}\n]\n",
        "\ufeff[ {} ]",
        "[\r\n{}\r\n]",
        " [{}\n\n] ",
    ],
)
def test_white_space_layouts_and_few_records(tmp_path: Path, layout: str) -> None:
    """The columns of any layout, decoded in slices by workers, are the serial decode's."""
    recs = [_record(i, 1 + i % 3) for i in range(40)]
    for sep in (",", ",\n", " , ", "\n,\n  "):
        for body in (sep.join(recs), recs[0]):  # many records, and one
            data = layout.format(body).encode()
            serial = fastcoco.read_results(data, 1)
            assert serial is not None and len(serial["score"]) == body.count('"score"')
            for chunk in (40, 300):
                old = fastcoco._PARALLEL_MIN, fastcoco._CHUNK
                fastcoco._PARALLEL_MIN, fastcoco._CHUNK = 0, chunk
                try:
                    pending = fastcoco.Pending(data, 2, "bbox")
                    ran = pending.pool is not None
                    cols = pending.get()
                finally:
                    fastcoco._PARALLEL_MIN, fastcoco._CHUNK = old
                assert ran == (body != recs[0])  # one record: no slices, no workers
                assert cols is not None
                for key in serial:
                    assert np.array_equal(cols[key], serial[key]), key


def test_empty_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool]
) -> None:
    gt, _ = random_scene(5, n_images=4, n_cats=2)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "pred.json").write_text("[ ]")
    args = [str(tmp_path / "pred.json"), str(tmp_path / "gt.json"), "-o", "json", "-q"]
    one = run([*args, "--jobs", "1"], capsys)
    two = run([*args, "--jobs", "2"], capsys)
    assert one[0] == two[0] == 0
    assert _json(two[1]) == _json(one[1])


BAD = {
    "missing score": ("[{recs}, {bad}]", '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4]}'),
    "string score": (
        "[{recs}, {bad}]",
        '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": "high"}',
    ),
    "NaN": (
        "[{recs}, {bad}]",
        '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3, 4], "score": NaN}',
    ),
    "truncated": ("[{recs}, {bad}", '{"image_id": 1, "category_id": 1, "bbox": [1, 2'),
    "three numbers": (
        "[{recs}, {bad}]",
        '{"image_id": 1, "category_id": 1, "bbox": [1, 2, 3], "score": 0.5}',
    ),
    "trailing comma": ("[{recs}, {bad},]", _record(0, 1)),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_same_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool], case: str
) -> None:
    gt, _ = random_scene(7, n_images=3, n_cats=2)
    gt["images"][0]["id"] = 1
    gt["annotations"] = [dict(a, image_id=1) for a in gt["annotations"]]
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    shape, bad = BAD[case]
    recs = ",\n".join(_record(i, 1) for i in range(30))
    (tmp_path / "pred.json").write_text(shape.format(recs=recs, bad=bad))
    args = [str(tmp_path / "pred.json"), str(tmp_path / "gt.json"), "-q"]
    one = assert_one_error_line(*run([*args, "--jobs", "1"], capsys))
    two = assert_one_error_line(*run([*args, "--jobs", "2"], capsys))
    assert two == one
    assert str(tmp_path / "pred.json") in one
    # a list without its closing bracket is declined before any slicing
    assert any(small_slices) == (case != "truncated")


def test_ground_truth_error_first_and_workers_ended(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool]
) -> None:
    """A bad ground truth is reported as with --jobs 1 while the prediction workers run
    (they are ended, not collected)."""
    recs = ",".join(_record(i, 1) for i in range(50))
    (tmp_path / "pred.json").write_text(f"[{recs}]")
    (tmp_path / "gt.json").write_text('{"images": [], "annotations": [}')
    args = [str(tmp_path / "pred.json"), str(tmp_path / "gt.json"), "-q"]
    one = assert_one_error_line(*run([*args, "--jobs", "1"], capsys))
    two = assert_one_error_line(*run([*args, "--jobs", "2"], capsys))
    assert two == one and "gt.json" in one
    assert small_slices == [True]  # the prefetch started, then was cancelled
    assert not fastcoco._PREFETCHED


def test_a_worker_that_dies_declines_the_file_and_nothing_waits() -> None:
    """A decode worker killed before it sends its share: the file is declined (the
    validating reader then reads it) or, had it sent already, decoded in full; never a
    hang, never partial columns; no worker outlives get()."""
    recs = [
        json.dumps(
            {"image_id": i % 7, "category_id": 1 + i % 3, "bbox": [i, 2, 3, 4], "score": 0.5}
        )
        for i in range(200)
    ]
    data = ("[" + ",".join(recs) + "]").encode()
    serial = fastcoco.read_results(data, 1)
    assert serial is not None
    old = fastcoco._PARALLEL_MIN, fastcoco._CHUNK
    fastcoco._PARALLEL_MIN, fastcoco._CHUNK = 0, 500
    try:
        pending = fastcoco.Pending(data, 2, "bbox")
        procs = [proc for proc, _ in pending.procs]
        assert len(procs) == 2
        procs[1].kill()
        cols = pending.get()
    finally:
        fastcoco._PARALLEL_MIN, fastcoco._CHUNK = old
    assert all(proc.exitcode is not None for proc in procs)
    assert pending.procs == []
    if cols is not None:
        for key in serial:
            assert np.array_equal(cols[key], serial[key]), key


@pytest.mark.parametrize("min_record", [40, 400])  # rows fit their room; rows pickled
def test_rows_through_shared_memory_or_pickled(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    small_slices: list[bool],
    monkeypatch: pytest.MonkeyPatch,
    min_record: int,
) -> None:
    """Workers write a slice's rows to the shared mapping when they fit the room reserved
    for it (its bytes / ``_MIN_RECORD``), else pickle them: the same report either way."""
    monkeypatch.setattr(fastcoco, "_MIN_RECORD", min_record)
    gt, dets = random_scene(31, n_images=12, n_cats=4)
    args = _write(tmp_path, gt, dets)
    r, w = os.pipe()  # the workers' put() results: "s" (shared) or "p" (pickled)
    put = fastcoco._Shared.put

    def spy(self: Any, k: int, cols: dict[str, Any]) -> Any:
        got = put(self, k, cols)
        os.write(w, b"s" if isinstance(got, int) else b"p")
        return got

    monkeypatch.setattr(fastcoco._Shared, "put", spy)
    _same_as_one_process([*args, "-o", "json", "--per-class", "-q"], capsys, small_slices)
    os.close(w)
    seen = set(os.read(r, 1 << 16).decode())
    os.close(r)
    assert seen == {"s"} if min_record == 40 else "p" in seen


@pytest.mark.parametrize("shift", [0, 1, 3, 50, 999, 1000, 5000])
def test_move_left_in_pieces_equals_a_copy(shift: int) -> None:
    """The in-place compaction of the shared columns (rows moved left by ``shift``, in
    pieces that never overlap, or through a copy for tiny shifts) equals a plain copy."""
    rng = np.random.default_rng(shift)
    for shape in ((7000,), (7000, 4)):
        col = rng.random(shape)
        want = col.copy()
        want[100 : 100 + 1000] = col[100 + shift : 100 + shift + 1000].copy()
        move_left(col, 100 + shift, 100, 1000)
        assert np.array_equal(col, want)


@pytest.mark.parametrize("seed", range(3))
def test_keypoint_results_decoded_by_workers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool], seed: int
) -> None:
    """Keypoint results (with and without a bbox per row) are decoded in slices by forked
    workers while the ground truth is read: the same report as one process, bit for bit."""
    from tests.oracle.kptgen import random_kpt_scene

    gt, dets = random_kpt_scene(seed, with_bbox=seed % 2 == 0)
    random.Random(seed).shuffle(dets)
    args = _write(tmp_path, gt, dets, indent=None if seed else 1)
    one = _same_as_one_process(
        [*args, "--iou-type", "keypoints", "-o", "json", "--per-class", "-q"], capsys, small_slices
    )
    assert one["summary"]["AP"] >= 0


def _kpt_record(i: int, k: int = 3, bbox: bool = True) -> str:
    kp = ", ".join(f"{i % 9 + j}.5, {j + 1}.25, 0.{j % 9 + 1}" for j in range(k))
    box = ', "bbox": [1, 2, 30, 40]' if bbox else ""
    return f'{{"image_id": 1, "category_id": 1, "keypoints": [{kp}]{box}, "score": 0.{i % 9 + 1}}}'


@pytest.mark.parametrize("case", ["another K", "a bbox on some rows only"])
def test_keypoint_slices_that_disagree_are_declined(case: str) -> None:
    """Each slice is consistent in itself, but the slices differ from each other (K, or a
    bbox on the rows of one slice only): declined, so the validating loader says which row
    differs; the serial decode declines the same file."""
    recs = [_kpt_record(i) for i in range(30)]
    odd = _kpt_record(99, k=4) if case == "another K" else _kpt_record(99, bbox=False)
    recs += [odd] * 30
    data = ("[" + ",".join(recs) + "]").encode()
    assert fastcoco.read_results(data, 1, field="keypoints") is None
    old = fastcoco._PARALLEL_MIN, fastcoco._CHUNK
    fastcoco._PARALLEL_MIN, fastcoco._CHUNK = 0, len(data) // 2 + 1
    try:
        pending = fastcoco.Pending(data, 2, "keypoints")
        assert pending.pool is not None
        assert pending.get() is None
        same = ("[" + ",".join(recs[:30] * 2) + "]").encode()
        cols = fastcoco.Pending(same, 2, "keypoints").get()
    finally:
        fastcoco._PARALLEL_MIN, fastcoco._CHUNK = old
    serial = fastcoco.read_results(same, 1, field="keypoints")
    assert cols is not None and serial is not None
    for key in serial:
        assert np.array_equal(cols[key], serial[key], equal_nan=True), key


def test_keypoint_bad_row_same_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], small_slices: list[bool]
) -> None:
    from tests.oracle.kptgen import random_kpt_scene

    kgt, _ = random_kpt_scene(1, k=3, n_cats=1)
    kgt["images"] = [{"id": 1, "file_name": "a.jpg", "width": 640, "height": 480}]
    kgt["annotations"] = [dict(a, image_id=1) for a in kgt["annotations"]][:3]
    (tmp_path / "gt.json").write_text(json.dumps(kgt))
    recs = [_kpt_record(i) for i in range(40)]
    recs[33] = recs[33].replace('"keypoints": [', '"keypoints": ["x", ')
    (tmp_path / "pred.json").write_text("[" + ",\n".join(recs) + "]")
    args = [str(tmp_path / "pred.json"), str(tmp_path / "gt.json"), "-q", "--iou-type", "keypoints"]
    one = assert_one_error_line(*run([*args, "--jobs", "1"], capsys))
    two = assert_one_error_line(*run([*args, "--jobs", "2"], capsys))
    assert two == one and "[33]" in one
    assert any(small_slices)


@pytest.mark.parametrize("seed", range(2))
def test_keypoint_parts_read_by_each_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, seed: int
) -> None:
    """Keypoint results at the default slice size: each process reads its own part of the
    file (no whole read first); the report is one process's, a bad row gives one process's
    located line."""
    from tests.oracle.kptgen import random_kpt_scene

    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    planned: list[bool] = []
    plan = kptparts.plan_file

    def spy(*args: Any) -> Any:
        got = plan(*args)
        planned.append(got is not None)
        return got

    monkeypatch.setattr(kptparts, "plan_file", spy)
    gt, dets = random_kpt_scene(seed, with_bbox=seed == 0)
    random.Random(seed).shuffle(dets)
    args = [*_write(tmp_path, gt, dets), "--iou-type", "keypoints", "-q"]
    code1, out1, err1 = run([*args, "-o", "json", "--per-class", "--jobs", "1"], capsys)
    code2, out2, err2 = run([*args, "-o", "json", "--per-class", "--jobs", "2"], capsys)
    assert (code1, code2) == (0, 0), err1 + err2
    assert planned == [True] and _json(out2) == _json(out1)
    dets[len(dets) // 4]["keypoints"][4] = None  # in the worker's part
    _write(tmp_path, gt, dets)
    one = assert_one_error_line(*run([*args, "--jobs", "1"], capsys))
    two = assert_one_error_line(*run([*args, "--jobs", "2"], capsys))
    assert two == one and "keypoints[4]" in one
