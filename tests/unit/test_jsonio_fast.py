"""The JSON rule's fast path (iou_cli/loaders/jsonio.py) on files whose strings hold brackets
(COCO compressed RLE counts use the characters '0' to 'o', among them '[', ']', ':' and '\\'):
the same document as json.loads, without the slow re-parse; what the rule refuses is still
refused wherever it hides."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from iou_cli.errors import InputError
from iou_cli.loaders import jsonio
from iou_cli.loaders.jsonio import parse_json


def _rle_string(rng: np.random.Generator, n: int) -> str:
    return bytes(rng.integers(48, 112, size=n).astype(np.uint8)).decode()


def _no_slow(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(path: str, text: str) -> Any:
        raise AssertionError("slow path taken")

    monkeypatch.setattr(jsonio, "_slow", refuse)


def test_rle_strings_keep_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    recs = [
        {
            "image_id": i,
            "category_id": 1,
            "segmentation": {"size": [20, 30], "counts": _rle_string(rng, 40)},
            "score": 0.5,
        }
        for i in range(300)
    ]
    recs.append({"image_id": 1, "note": 'quote " backslash \\ {[:]}', "list": ["[", "{"]})
    text = json.dumps(recs).encode()
    assert text.count(b"[") > 301 and b"\\\\" in text  # brackets and escapes in strings
    _no_slow(monkeypatch)
    assert parse_json("f.json", text) == json.loads(text)


@pytest.mark.parametrize(
    "text, where",
    [
        # a duplicate key after strings full of brackets (the plain counts disagree)
        (b'{"a": "[[{", "b": {"c": 1, "c": 2}}', "b"),
        (b'[{"counts": "]]:["}, {"x": "\\"[", "x": 1}]', "[1]"),
        # a container hidden after a scalar, behind brackets in strings
        (b'[{"k": "[{"}, [1, {"d": 1, "d": 2}]]', "[1][1]"),
    ],
)
def test_refusals_behind_brackets_in_strings(text: bytes, where: str) -> None:
    with pytest.raises(InputError, match="duplicate") as exc:
        parse_json("f.json", text)
    assert exc.value.where == where


@pytest.mark.parametrize(
    "text, message",
    [
        (b"[12345678901234567]", "beyond 2\\*\\*53"),
        (b'{"a": [1, -98765432109876543210]}', "beyond 2\\*\\*53"),
        (b'{"a":\n 12345678901234567}', "beyond 2\\*\\*53"),
        (b"[1e400]", "infinite"),
        (b'{"s": 1.8e308}', "infinite"),
        (b"-1e999", "infinite"),
    ],
)
def test_numbers_the_rule_refuses(text: bytes, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_json("f.json", text)


def test_long_digit_runs_in_strings_and_floats_are_fine() -> None:
    for text in (
        b'{"counts": ":1234567890123456789"}',
        b'{"counts": "[00000000000000000000]"}',
        b"[12345678901234567.5, 1e300, 0.12345678901234567890]",
    ):
        assert parse_json("f.json", text) == json.loads(text)


def test_outside_strings_counts_are_exact() -> None:
    text = b'{"a\\"[": ["{", "\\\\", {"b" : "x\\\\\\"{"}], "c":1}'
    assert jsonio._outside_strings(text) == (3, 3, False)


def test_digit_runs_inside_strings_keep_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    text = (
        b'{"c": "[:00000000000000000000]", "e": "1e999", "d": [1, 2], "f": "-1234567890123456789"}'
    )
    _no_slow(monkeypatch)
    assert parse_json("f.json", text) == json.loads(text)


def test_an_integer_after_digit_runs_in_strings_is_still_refused() -> None:
    text = b'{"c": "[:00000000000000000000]", "n": [1, 12345678901234567]}'
    with pytest.raises(InputError, match="beyond 2\\*\\*53") as exc:
        parse_json("f.json", text)
    assert exc.value.where == "n[1]"
