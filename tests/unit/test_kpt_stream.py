"""Keypoint results decoded straight from the file, a piece at a time in one small buffer
(:func:`iou_cli.loaders.fastkpt.kpt_file_columns`): the same columns as from the whole text
in memory, whatever the pieces' size and the file's white space, records longer than the
buffer included; a file that changed or cannot be read is declined (the validating loader
then reads it), never read wrong."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pytest

from iou_cli.loaders import fastcoco, fastkpt, kptparts
from tests.unit.test_fastkpt import KEYS, _kpt_file, _rec, assert_same, slow_columns


def _span(path: str) -> tuple[int, int]:
    with open(path, "rb") as fh:
        span = kptparts.list_span(fh.fileno(), os.path.getsize(path))
    assert span is not None
    return span


def _same(got: dict[str, Any] | None, want: dict[str, Any] | None) -> None:
    assert got is not None and want is not None
    for key in KEYS:
        assert got[key].shape == want[key].shape, key
        assert got[key].tobytes() == want[key].tobytes(), key


@pytest.mark.parametrize("piece", [40, 64, 300, 1000, None])
@pytest.mark.parametrize("ws", ["", " ", "\n  ", "\r\n\t"])
def test_pieces_of_any_size_give_the_columns_of_the_whole_text(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, piece: int | None, ws: str
) -> None:
    """Pieces smaller than one record (the buffer doubles), of a few records, and the
    default; records separated by every white space JSON allows."""
    if piece is not None:
        monkeypatch.setattr(fastkpt, "PIECE", piece)
    rows = [_rec(i, [repr(0.25 * i + j) for j in range(9)], ws=ws) for i in range(60)]
    data = f"{ws}[{ws}{f',{ws}'.join(rows)}{ws}]{ws}".encode()
    path = tmp_path / "p.json"
    path.write_bytes(data)
    got = fastkpt.kpt_file_columns(str(path), *_span(str(path)))
    assert_same(got, data)


@pytest.mark.parametrize("piece", [50, 200, 4096])
def test_each_piece_is_a_list_of_whole_records_in_file_order(tmp_path: Any, piece: int) -> None:
    data = _kpt_file(80, seed=4)
    path = tmp_path / "p.json"
    path.write_bytes(data)
    pieces = [bytes(p) for p in fastkpt.file_pieces(str(path), *_span(str(path)), piece)]
    assert len(pieces) > 1
    assert [r for p in pieces for r in json.loads(p)] == json.loads(data)


def test_a_range_in_the_middle_of_the_file(tmp_path: Any) -> None:
    """A worker's part: from a record's ``{`` to just after another's ``}``."""
    data = _kpt_file(50, seed=5)
    path = tmp_path / "p.json"
    path.write_bytes(data)
    slices = fastcoco._split(data, len(data) // 3)
    assert len(slices) >= 3
    a, b = slices[1]
    got = fastkpt.kpt_file_columns(str(path), a, b)
    _same(got, fastcoco.read_results(b"[" + data[a:b] + b"]", 1, field="keypoints"))


def test_a_file_shorter_than_planned_or_gone_is_declined(tmp_path: Any) -> None:
    data = _kpt_file(50, seed=6)
    path = tmp_path / "p.json"
    path.write_bytes(data)
    start, end = _span(str(path))
    path.write_bytes(data[: len(data) // 2])  # truncated after the plan
    assert fastkpt.kpt_file_columns(str(path), start, end) is None
    os.remove(path)
    assert fastkpt.kpt_file_columns(str(path), start, end) is None


def test_a_separator_inside_a_string_never_reads_wrong(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cut may fall on a ``},{`` inside a string: that piece does not decode and the list
    is declined (the validating loader reads it), or the cut is elsewhere and every value
    is right."""
    monkeypatch.setattr(fastkpt, "PIECE", 300)
    rows = [
        _rec(i, [str(i + j / 4) for j in range(6)]).replace(
            '"score"', '"note": "a},{b},  {c", "score"'
        )
        for i in range(40)
    ]
    data = ("[" + ",".join(rows) + "]").encode()
    path = tmp_path / "p.json"
    path.write_bytes(data)
    got = fastkpt.kpt_file_columns(str(path), *_span(str(path)))
    assert got is None or all(
        got[k].tobytes() == v.tobytes() for k, v in slow_columns(data).items()
    )


def test_one_process_never_holds_the_whole_text(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--jobs 1`` on a big keypoint file: its text is never read whole (no buffer of its
    size, no bytes of it returned), the columns are those of the whole text."""
    from iou_cli.loaders import filesource

    monkeypatch.setattr(fastcoco, "_PARALLEL_MIN", 0)
    sizes: list[int] = []
    real = filesource.big_buffer

    def spy(n: int) -> Any:
        sizes.append(n)
        return real(n)

    monkeypatch.setattr(filesource, "big_buffer", spy)
    data = _kpt_file(400, seed=7)
    path = tmp_path / "p.json"
    path.write_bytes(data)
    raw, cols = fastcoco.read_path(str(path), 1, "keypoints")
    assert raw == b""
    _same(cols, fastcoco.read_results(data, 1, field="keypoints"))
    # (the only big buffer is the keypoint numbers': 8 bytes a number, bounded by the text)
    assert all(n != len(data) for n in sizes)
    assert np.prod(cols["keypoints"].shape) * 8 <= max(sizes, default=0)  # type: ignore[index]
