"""The typed reader of keypoint results (loaders/fastkpt.py) gives exactly what json.loads +
``float()`` give, or declines (None); ``--jobs`` splits a keypoint list between this
process (the last part, after the ground truth) and forked workers (the rest, decoded
into shared memory), and the columns are the one-process ones bit for bit."""

from __future__ import annotations

import json
import math
import os
import threading
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from iou_cli.loaders import fastcoco, fastkpt, kptparts, sharedcols
from iou_cli.loaders.sharedcols import send_raw
from tests.unit.test_fastcoco import number_token

KEYS = ("image_id", "category_id", "bbox", "score", "keypoints", "kpt_box")


def slow_columns(data: bytes) -> dict[str, np.ndarray]:
    """The columns by json.loads and float(), value by value."""
    recs = json.loads(data)
    n = len(recs)
    boxed = "bbox" in recs[0]
    return {
        "image_id": np.array([r["image_id"] for r in recs], dtype=np.int64),
        "category_id": np.array([r["category_id"] for r in recs], dtype=np.int64),
        "bbox": (
            np.array([[float(v) for v in r["bbox"]] for r in recs]).reshape(n, 4)
            if boxed
            else np.full((n, 4), np.nan)
        ),
        "score": np.array([float(r["score"]) for r in recs], dtype=np.float64),
        "keypoints": np.array([[float(v) for v in r["keypoints"]] for r in recs]).reshape(n, -1, 3),
        # each row's keypoint extent by Python's min and max over its x and y values
        "kpt_box": np.array(
            [
                [
                    f(map(float, r["keypoints"][j::3]))
                    for f, j in ((min, 0), (min, 1), (max, 0), (max, 1))
                ]
                for r in recs
            ]
        ).reshape(n, 4),
    }


def assert_same(fast: dict[str, Any] | None, data: bytes) -> None:
    assert fast is not None
    slow = slow_columns(data)
    assert set(fast) == set(KEYS)
    for key in KEYS:
        assert fast[key].dtype == slow[key].dtype, key
        assert fast[key].shape == slow[key].shape, key
        if key == "kpt_box":  # an extent: 0.0 and -0.0 tie (either may be the min)
            assert np.array_equal(fast[key], slow[key]), key
            continue
        assert fast[key].tobytes() == slow[key].tobytes(), key  # -0.0 and every last bit


def _rec(i: int, kp: list[str], *, bbox: bool = True, ws: str = " ") -> str:
    box = f',{ws}"bbox":{ws}[1,{ws}2,{ws}30,{ws}40]' if bbox else ""
    return (
        f'{{"image_id":{ws}{i % 5 + 1},{ws}"category_id":{ws}1,{ws}"keypoints":{ws}['
        + f",{ws}".join(kp)
        + f"]{box},{ws}"
        + f'"score":{ws}0.{i % 9 + 1}}}'
    )


HARD = ["-0", "-0.0", "0", "0.0", "1e22", "1e23", "9007199254740993", "12345678901234567",
        "0.1", "2.2250738585072011e-308", "4.9e-324", "1.7976931348623157e308",
        "123456789012345678901234567890e-20", "0.30000000000000004", "1E+2", "1e-05",
        "405.98712158203125", "0.000000000000000000000000001", "-1.5E-3", "7"]  # fmt: skip


@pytest.mark.parametrize("ws", ["", " ", "\n  ", "\t", "\r\n"])
def test_hard_numbers_equal_float(ws: str) -> None:
    """Exponents, -0, 17 significant digits, integers, subnormals, every white space JSON
    allows: each value is float()'s of its text (json.loads keeps ``-0`` an integer 0)."""
    rows = [_rec(i, [HARD[(i + j) % len(HARD)] for j in range(6)], ws=ws) for i in range(40)]
    data = f"[{ws}{f',{ws}'.join(rows)}{ws}]".encode()
    assert_same(fastcoco.read_results(data, 1, field="keypoints"), data)


@settings(max_examples=40, deadline=None)
@given(st.data(), st.integers(1, 4), st.integers(1, 12), st.booleans())
def test_random_spellings_equal_float(data: st.DataObject, k: int, n: int, bbox: bool) -> None:
    rows = [_rec(i, [data.draw(number_token()) for _ in range(3 * k)], bbox=bbox) for i in range(n)]
    text = ("[" + ",".join(rows) + "]").encode()
    recs = json.loads(text)
    fast = fastcoco.read_results(text, 1, field="keypoints")
    if not all(math.isfinite(float(v)) for r in recs for v in r["keypoints"]):
        assert fast is None  # 1e400: the validating loader says where
        return
    assert_same(fast, text)


def test_many_rows_and_huge_counts() -> None:
    """Rows over many decoded pieces (``fastkpt.PIECE``), K = 120 keypoints a row; a row of
    another K in a later slice, or a nested value, declines the file."""
    rng = np.random.default_rng(3)
    k = 120
    rows = [
        _rec(i, [repr(float(v)) for v in rng.random(3 * k) * 1000], bbox=False) for i in range(300)
    ]
    data = ("[" + ",".join(rows) + "]").encode()
    spans = fastkpt.pieces(data)
    assert spans is not None and len(spans) > 3
    assert_same(fastcoco.read_results(data, 1, field="keypoints"), data)
    for bad in (_rec(0, ["1"] * (3 * k - 3), bbox=False), _rec(0, ["[1]"] * (3 * k), bbox=False)):
        other = ("[" + ",".join([*rows[:-1], bad]) + "]").encode()
        assert fastcoco.read_results(other, 1, field="keypoints") is None


@pytest.mark.parametrize(
    "kp",
    [[], ["1", "2"], ["1", "2", '"3"'], ["1", "2", "null"], ["1", "2", "true"], ["1", "2", "NaN"]],
)
def test_declines_what_is_not_a_flat_list_of_triples(kp: list[str]) -> None:
    data = ("[" + _rec(0, ["1", "2", "3"]) + "," + _rec(1, kp) + "]").encode()
    assert fastcoco.read_results(data, 1, field="keypoints") is None


# --- the --jobs split ----------------------------------------------------------------------


def _kpt_file(n: int, k: int = 5, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    rows = [_rec(i, [repr(round(float(v), 2)) for v in rng.random(3 * k) * 500]) for i in range(n)]
    return ("[" + ",\n".join(rows) + "]").encode()


@pytest.mark.parametrize("jobs", [2, 3, 4])
@pytest.mark.parametrize("gt_bytes", [0, 2_000, 10**9])
def test_shares_cover_the_list_in_order(jobs: int, gt_bytes: int) -> None:
    """Every record is in exactly one slice, in file order; this process's part is the
    last one, smaller the bigger the ground truth it reads first (none for a big one)."""
    data = _kpt_file(300)
    slices, assign, own = kptparts.shares(data, jobs, gt_bytes, fastcoco._CHUNK)
    body = b"".join(data[a:b] + b"," for a, b in slices)
    assert json.loads(b"[" + body[:-1] + b"]") == json.loads(data)
    assert sorted(k for part in [*assign, own] for k in part) == list(range(len(slices)))
    assert len(assign) == jobs - 1
    total = len(data)
    mine = sum(slices[k][1] - slices[k][0] for k in own)
    if gt_bytes == 10**9:
        assert own == []
    else:
        assert own and own[-1] == len(slices) - 1
        want = (total - (jobs - 1) * kptparts.GT_COST * gt_bytes) / jobs
        assert abs(mine - want) < 500  # up to a record's length


def _parallel(data: bytes, jobs: int, gt_bytes: int) -> tuple[dict[str, Any] | None, bool]:
    old = fastcoco._PARALLEL_MIN
    fastcoco._PARALLEL_MIN = 0
    try:
        pending = fastcoco.Pending(data, jobs, "keypoints", gt_bytes)
        ran = pending.pool is not None
        cols = pending.get()
        assert pending.procs == []  # no worker outlives get()
    finally:
        fastcoco._PARALLEL_MIN = old
    return cols, ran


@pytest.mark.parametrize("jobs", [2, 3])
@pytest.mark.parametrize("gt_bytes", [0, 3_000, 10**9])
def test_split_decode_equals_one_process(jobs: int, gt_bytes: int) -> None:
    data = _kpt_file(250, seed=jobs)
    serial = fastcoco.read_results(data, 1, field="keypoints")
    cols, ran = _parallel(data, jobs, gt_bytes)
    assert ran and cols is not None and serial is not None
    for key in KEYS:
        assert cols[key].tobytes() == serial[key].tobytes(), key
        assert cols[key].shape == serial[key].shape, key


@pytest.mark.parametrize("where", ["first", "last"])
def test_a_bad_row_in_either_part_declines_the_file(where: str) -> None:
    """A bad row in a worker's part or in this process's part: None (the validating
    loader then says which row), and the workers are ended."""
    rows = json.loads(_kpt_file(120))
    at = 3 if where == "first" else len(rows) - 3
    text = ",".join(json.dumps(r) for r in rows)
    bad = json.dumps(rows[at]).replace('"keypoints": [', '"keypoints": ["x", ')
    text = text.replace(json.dumps(rows[at]), bad)
    cols, ran = _parallel(f"[{text}]".encode(), 2, 0)
    assert ran and cols is None


def test_shared_keypoints_through_the_pipe_or_pickled() -> None:
    """A worker's ids, boxes and scores go to the mapping and its keypoint numbers through
    the pipe, read back equal; a pipe that ends early (the worker died) gives None; more
    rows than the room reserved for the slice: the columns are sent as they are."""
    data = _kpt_file(20)
    slices = fastcoco._split(data, len(data) // 2)
    shared = fastcoco._Shared(slices, "keypoints", fastcoco._MIN_RECORD)
    a, b = slices[0]
    cols = fastcoco.read_results(b"[" + data[a:b] + b"]", 1, field="keypoints")
    assert cols is not None
    got = shared.put(0, cols)
    assert got == (len(cols["score"]), cols["keypoints"].shape[1])
    r, w = os.pipe()
    try:  # the keypoint numbers go through the pipe (more than its buffer: a writer thread)
        writer = threading.Thread(target=send_raw, args=(w, cols["keypoints"]))
        writer.start()
        view = shared.view(0, got, r)
        writer.join()
    finally:
        os.close(w)
    assert view is not None
    for key in KEYS:
        assert np.array_equal(view[key], cols[key]), key
    assert not np.shares_memory(view["keypoints"], cols["keypoints"])
    assert shared.view(0, got, r) is None  # the writer is gone before all of it came
    os.close(r)
    too_many = fastcoco._Shared([(0, 100)], "keypoints", fastcoco._MIN_RECORD)
    assert too_many.put(0, cols) is cols  # more rows than the room: sent as they are


@pytest.mark.parametrize("broken", ["fork", "mapping"])
def test_no_process_or_no_mapping_to_be_had(monkeypatch: pytest.MonkeyPatch, broken: str) -> None:
    """A fork that fails (EAGAIN, ENOMEM): the list is decoded in this process; a shared
    mapping that cannot be made: the workers send their columns through the pipe. The same
    columns either way, never a traceback."""
    import mmap

    def refuse(*args: Any, **kw: Any) -> Any:
        raise OSError(12, "Cannot allocate memory")

    if broken == "fork":
        monkeypatch.setattr(fastcoco, "fork_workers", refuse)
    else:
        monkeypatch.setattr(mmap, "mmap", refuse)
    data = _kpt_file(120, seed=9)
    serial = fastcoco.read_results(data, 1, field="keypoints")
    cols, ran = _parallel(data, 2, 0)
    assert ran == (broken == "mapping")
    assert cols is not None and serial is not None
    for key in KEYS:
        assert cols[key].tobytes() == serial[key].tobytes(), key


# --- the parts read from the file by each process ------------------------------------------


def _prefetched(
    path: str, jobs: int, gt_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[bool, bytes, dict[str, Any] | None]:
    """(whether the processes read their own parts, read_path's bytes, its columns)."""
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    fastcoco.prefetch(path, jobs, "keypoints", gt_bytes)
    in_parts = fastcoco._PREFETCHED[(path, "keypoints")][0] is None
    raw, cols = fastcoco.read_path(path, jobs, "keypoints")
    assert not fastcoco._PREFETCHED
    return in_parts, raw, cols


@pytest.mark.parametrize("layout", ["{}", "\ufeff{}", "  \n{}\n\n", "\r\n{}\t"])
@pytest.mark.parametrize("jobs", [2, 3])
@pytest.mark.parametrize("gt_bytes", [0, 4_000, 10**9])
def test_parts_read_from_the_file_equal_one_process(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, layout: str, jobs: int, gt_bytes: int
) -> None:
    """Each process reads its own part (the plan from the head, the tail and a window at
    each cut); the columns are one process's; the bytes are not read again (``b""``)."""
    data = layout.format(_kpt_file(300, seed=jobs).decode()).encode()
    path = tmp_path / "pred.json"
    path.write_bytes(data)
    serial = fastcoco.read_results(data, 1, field="keypoints")
    source = kptparts.plan_file(str(path), len(data), jobs, gt_bytes, fastcoco._CHUNK)
    body = data.removeprefix(b"\xef\xbb\xbf")
    assert source is not None
    if not data.startswith(b"\xef\xbb\xbf"):  # the same plan as from the bytes
        assert source.plan == kptparts.shares(body, jobs, gt_bytes, fastcoco._CHUNK)
    in_parts, raw, cols = _prefetched(str(path), jobs, gt_bytes, monkeypatch)
    assert in_parts and raw == b""
    assert cols is not None and serial is not None
    for key in KEYS:
        assert cols[key].tobytes() == serial[key].tobytes(), key


def test_file_name_rows_and_bad_rows_read_the_whole_file(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows with a ``file_name`` (Ultralytics' predictions.json) and a declined file need
    the whole text after all (the file names; the validating loader's located error)."""
    rows = json.loads(_kpt_file(200))
    named = [dict(r, file_name=f"{r['image_id']}.jpg") if i == 7 else r for i, r in enumerate(rows)]
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(named))
    in_parts, raw, cols = _prefetched(str(path), 2, 0, monkeypatch)
    assert in_parts and raw == path.read_bytes() and cols is not None
    bad = [
        dict(r, keypoints=["x", *r["keypoints"][1:]]) if i == 150 else r for i, r in enumerate(rows)
    ]
    path.write_text(json.dumps(bad))
    in_parts, raw, cols = _prefetched(str(path), 2, 0, monkeypatch)
    assert in_parts and raw == path.read_bytes() and cols is None


def test_unusual_files_are_read_whole(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """gzip, not a list, a part bigger than ``_CHUNK``, no record boundary near a cut: no
    plan (the whole file is read and split as before); a file that changed after the plan
    was made is declined, then read afresh."""
    import gzip

    data = _kpt_file(200)
    (tmp_path / "a.json.gz").write_bytes(gzip.compress(data))
    (tmp_path / "b.json").write_bytes(b'{"a": ' + data + b"}")
    (tmp_path / "c.json").write_bytes(data)
    big = 1 << 26
    for name in ("a.json.gz", "b.json"):
        assert kptparts.plan_file(str(tmp_path / name), 10**6, 2, 0, big) is None
    c = str(tmp_path / "c.json")
    assert kptparts.plan_file(c, len(data), 2, 0, 1000) is None
    monkeypatch.setattr(kptparts, "BOUNDARY", __import__("re").compile(rb"\}\s*,\s*\{NEVER"))
    assert kptparts.plan_file(c, len(data), 2, 0, big) is None
    monkeypatch.undo()
    source = kptparts.plan_file(c, len(data), 2, 0, big)
    assert source is not None
    (tmp_path / "c.json").write_bytes(data[: len(data) // 3])  # truncated after the plan
    assert fastcoco.Pending(source, 2, "keypoints").get() is None


def test_pieces_cut_only_between_records_or_decline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pieces of a few hundred bytes: every layout decodes to the same columns; a record
    whose string holds a ``},{`` may be cut there, and then the list is declined (the
    validating loader reads it), never read wrong."""
    monkeypatch.setattr(fastkpt, "PIECE", 300)
    rows = [_rec(i, [str(i + j / 4) for j in range(6)]) for i in range(40)]
    for sep, ws in ((",", ""), (",\n  ", "\n"), (" , ", "  ")):
        data = f"{ws}[{ws}{sep.join(rows)}{ws}]{ws}".encode()
        spans = fastkpt.pieces(data)
        assert spans is not None and len(spans) > 5
        assert_same(fastcoco.read_results(data, 1, field="keypoints"), data)
    odd = [r.replace('"score"', '"note": "a},{b", "score"') for r in rows]
    data = ("[" + ",".join(odd) + "]").encode()
    got = fastcoco.read_results(data, 1, field="keypoints")
    assert got is None or all(
        got[k].tobytes() == v.tobytes() for k, v in slow_columns(data).items()
    )
    assert fastkpt.pieces(b'{"a": 1}') is None and fastkpt.pieces(b"[1, 2") is None


def test_one_process_reads_a_big_file_a_piece_at_a_time(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--jobs 1``: a big keypoint file is decoded straight from the file, a piece at a
    time, the same columns as from its bytes; the bytes are returned only where still
    needed (a BOM is fine; rows with ``file_name``, a declined file: the whole text; gzip:
    read as before)."""
    import gzip

    from iou_cli.loaders.filesource import big_buffer

    assert isinstance(big_buffer(10), bytearray) and len(big_buffer(5 << 20)) == 5 << 20
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    monkeypatch.setattr("iou_cli.loaders.filesource._HUGE", 0)  # the mapping for any size
    data = _kpt_file(150)
    path = tmp_path / "p.json"
    for text, whole in (
        (data, False),
        (b"\xef\xbb\xbf" + data, False),
        (data.replace(b'"score"', b'"file_name": "a.jpg", "score"', 1), True),
        (data.replace(b'"keypoints": [', b'"keypoints": [true, ', 1), True),
    ):
        path.write_bytes(text)
        raw, cols = fastcoco.read_path(str(path), 1, "keypoints")
        assert raw == (text if whole else b"")
        want = fastcoco.read_results(text, 1, field="keypoints")
        assert (cols is None) == (want is None)
        if want is not None and cols is not None:
            for key in KEYS:
                assert cols[key].tobytes() == want[key].tobytes(), key
    path.write_bytes(gzip.compress(data))
    assert fastcoco._read_keypoint_file(str(path)) is None


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_bytearray_with_a_bom_reads_as_bytes(monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    """What the reader returns for a pipe or a gzip input is a ``bytearray`` (no copy):
    its BOM is dropped and it is decoded like the same bytes."""
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    data = _kpt_file(80)
    cols = fastcoco.Pending(bytearray(b"\xef\xbb\xbf" + data), jobs, "keypoints").get()  # type: ignore[arg-type]
    want = fastcoco.read_results(data, 1, field="keypoints")
    assert cols is not None and want is not None
    for key in KEYS:
        assert cols[key].tobytes() == want[key].tobytes(), key


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_files_read_in_parts_or_pages_are_inputs_no_output_overwrites(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    """The results file read by parts (``--jobs``) or into huge pages is recorded as read:
    ``--matches`` over it is refused, the file untouched."""
    from tests.helpers import assert_one_error_line, run
    from tests.oracle.kptgen import random_kpt_scene

    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    gt, dets = random_kpt_scene(3)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(dets))
    before = pred.read_bytes()
    args = [str(pred), str(tmp_path / "gt.json"), "--iou-type", "keypoints", "-q", "--jobs", jobs]
    line = assert_one_error_line(*run([*args, "--matches", str(pred)], capsys))
    assert "refusing to overwrite" in line and pred.read_bytes() == before


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_file_read_in_parts_or_pages_is_in_the_read_set(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    from iou_cli.loaders.files import reading

    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    path = tmp_path / "p.json"
    path.write_bytes(_kpt_file(60))
    with reading() as rs:
        if jobs > 1:
            fastcoco.prefetch(str(path), jobs, "keypoints")
        raw, cols = fastcoco.read_path(str(path), jobs, "keypoints")
        assert raw == b"" and cols is not None
        assert rs.paths() == [str(path)]


def test_no_room_for_the_bound_joins_the_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The flat array is sized by a bound (half the bytes); where that much virtual memory
    cannot be had, each piece's numbers are kept apart and joined once: the same columns."""
    monkeypatch.setattr(fastkpt, "PIECE", 2000)
    data = _kpt_file(120, seed=4)
    want = fastcoco.read_results(data, 1, field="keypoints")

    def no_room(size: int) -> Any:
        raise MemoryError

    got = fastkpt.kpt_columns(data, no_room)
    assert got is not None and want is not None
    for key in KEYS:
        assert got[key].tobytes() == want[key].tobytes(), key


def test_workers_not_collected_are_killed_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A prefetch cancelled before its parts were read (the ground truth failed): a worker
    may be blocked writing keypoint numbers that nobody reads (its own copy of the
    receiving end keeps the pipe open), so it is killed without the exit wait; after a
    full collection the workers get their moment to exit."""
    waits: list[bool] = []
    real = fastcoco.end_workers

    def spy(procs: Any, collected: bool = True) -> None:
        waits.append(collected)
        real(procs, collected)

    monkeypatch.setattr(fastcoco, "end_workers", spy)
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    data = _kpt_file(3000, seed=5)  # more keypoint bytes than a pipe holds (~1.2 MB)
    pending = fastcoco.Pending(data, 2, "keypoints", 0)
    procs = [p for p, _ in pending.procs]
    assert procs
    pending.cancel()
    assert waits == [False] and all(p.exitcode is not None for p in procs)
    waits.clear()
    pending = fastcoco.Pending(data, 2, "keypoints", 0)
    assert pending.get() is not None
    assert waits == [True]


@pytest.mark.parametrize("jobs", [2, 3])
@pytest.mark.parametrize("how", ["pipe", "pickled", "no room", "not placed"])
def test_keypoints_land_in_one_array_in_file_order(
    monkeypatch: pytest.MonkeyPatch, jobs: int, how: str
) -> None:
    """Every slice's keypoint numbers go straight to their place in one array (this
    process's part decoded into it, the workers' parts read into it from their pipes, or
    copied in when pickled): nothing is concatenated, and the columns are one process's.
    Where the room cannot be had or the parts would not fit it, they are concatenated."""
    data = _kpt_file(260, seed=jobs + 7)
    serial = fastcoco.read_results(data, 1, field="keypoints")
    joined: list[list[str]] = []
    concat = fastcoco._concat

    def spy(parts: list[dict[str, Any]]) -> dict[str, Any]:
        joined.append(list(parts[0]))
        return concat(parts)

    monkeypatch.setattr(fastcoco, "_concat", spy)
    if how == "pickled":  # no room in the shared mapping: each worker pickles its columns
        monkeypatch.setattr(fastcoco, "_MIN_RECORD", 10**9)
    elif how == "no room":

        def refuse(n: int) -> Any:
            raise MemoryError

        monkeypatch.setattr(sharedcols, "big_floats", refuse)
    elif how == "not placed":
        monkeypatch.setattr(sharedcols.KeypointRoom, "place_workers", lambda self, s: False)
    cols, ran = _parallel(data, jobs, 3_000)
    assert ran and cols is not None and serial is not None
    for key in KEYS:
        assert cols[key].tobytes() == serial[key].tobytes(), key
        assert cols[key].shape == serial[key].shape, key
    in_place = how in ("pipe", "pickled")
    assert joined and ("keypoints" in joined[-1]) != in_place
    if in_place:
        assert cols["keypoints"].base is not None  # a view of the room


@pytest.mark.parametrize("jobs", [1, 2, 3])
@pytest.mark.parametrize(
    ("where", "whole"),
    [
        ("first row", True),
        ("last row", True),
        ("null", True),  # a key of any value: the whole text is parsed for the names
        ("in a string", False),  # no such key: nothing more is read
        ("none", False),
    ],
)
def test_rows_with_a_file_name_are_seen_by_the_decoder(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, jobs: int, where: str, whole: bool
) -> None:
    """Whether a row has a ``file_name`` (then read_path hands back the whole text, for
    the names) is what the decoder saw, in one process and in every process's part."""
    rows = json.loads(_kpt_file(200, seed=5))
    at = {"first row": 0, "last row": len(rows) - 1, "null": 90}.get(where)
    if at is not None:
        rows[at]["file_name"] = None if where == "null" else "a/b.jpg"
    if where == "in a string":
        rows[40]["note"] = '"file_name": "x.jpg"'
    path = tmp_path / "pred.json"
    path.write_text(json.dumps(rows))
    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    if jobs == 1:
        raw, cols = fastcoco.read_path(str(path), 1, "keypoints")
    else:
        in_parts, raw, cols = _prefetched(str(path), jobs, 0, monkeypatch)
        assert in_parts
    assert cols is not None and len(cols["score"]) == len(rows)
    assert raw == (path.read_bytes() if whole else b"")
