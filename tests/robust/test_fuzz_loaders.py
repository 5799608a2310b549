"""Mutation fuzzing of every loader through the CLI: arbitrary mutations of valid files give
either a report (exit 0, stderr only warnings) or exit 2 with one ``iou-eval: error:`` line,
never another exception, never a traceback.

Marked slow: ``make test-slow`` (and CI) runs a short campaign (``IOU_EVAL_FUZZ_EXAMPLES``
unset: a few dozen examples per test); ``make fuzz`` sets it to thousands and selects these
tests with ``-m fuzz``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import DATA
from tests.helpers import assert_one_error_line, run_cli

GOOD = DATA / "bad" / "good"
EXAMPLES = int(os.environ.get("IOU_EVAL_FUZZ_EXAMPLES", "30"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=not os.environ.get("IOU_EVAL_FUZZ_EXAMPLES"),  # the suite is reproducible
)
pytestmark = [pytest.mark.fuzz, pytest.mark.slow]


def check(args: list[str]) -> None:
    code, out, err = run_cli([*args, "-o", "json", "-q"])
    if code == 2:
        assert_one_error_line(code, out, err)
        return
    assert code == 0, (code, err)
    assert all(line.startswith("iou-eval: warning: ") for line in err.splitlines()), err
    doc = json.loads(out)
    assert set(doc) >= {"summary", "per_class"}


# ------------------------------------------------------------------ mutations

SPECIAL = [
    b"",
    b"0",
    b"-1",
    b"1e999",
    b"NaN",
    b"null",
    b"[]",
    b"{}",
    b'"',
    b"\xff",
    b"\x00",
    b"\xef\xbb\xbf",
    b"\r\n",
    b"<",
    b"&lol;",
    b" ",
    b"9" * 30,
]


@st.composite
def byte_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """1-4 edits: overwrite, insert, delete, duplicate a slice, or truncate."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 4))):
        n = len(buf)
        i = draw(st.integers(0, max(n - 1, 0)))
        j = draw(st.integers(i, min(n, i + 16)))
        op = draw(st.sampled_from(["set", "insert", "delete", "dup", "truncate", "special"]))
        if op == "set" and n:
            buf[i] = draw(st.integers(0, 255))
        elif op == "insert":
            buf[i:i] = draw(st.binary(min_size=1, max_size=8))
        elif op == "delete":
            del buf[i:j]
        elif op == "dup":
            buf[i:i] = buf[i:j]
        elif op == "truncate":
            del buf[i:]
        else:
            buf[i:j] = draw(st.sampled_from(SPECIAL))
    return bytes(buf)


JSON_LEAF = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda kids: st.one_of(
        st.lists(kids, max_size=5), st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=10,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def json_mutation(draw: st.DrawFn, doc: Any) -> Any:
    """Replace or delete a random node, or swap two keys' values, 1-3 times."""
    doc = json.loads(json.dumps(doc))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            return draw(JSON_VALUE)
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        key = path[-1]
        op = draw(st.sampled_from(["replace", "delete", "numeric"]))
        if op == "delete":
            del parent[key]
        elif op == "numeric":
            parent[key] = draw(
                st.sampled_from(
                    [
                        0,
                        -1,
                        -0.0,
                        1.5,
                        2**53 + 1,
                        2**63,
                        10**20,
                        10**400,
                        1e308,
                        -1e-308,
                        True,
                        "1",
                        [1],
                        [],
                    ]
                )
            )
        else:
            parent[key] = draw(JSON_VALUE)
    return doc


def _with_dir(fn: Callable[[Path], None]) -> None:
    with tempfile.TemporaryDirectory() as d:
        fn(Path(d))


COCO_GT = json.loads((GOOD / "coco_gt.json").read_text())
COCO_PRED = json.loads((GOOD / "coco_pred.json").read_text())
SEGM_GT = {
    **COCO_GT,
    "annotations": [
        {**a, "segmentation": [[10, 10, 30, 10, 30, 30, 10, 30]]}
        if i == 0
        else {**a, "segmentation": {"size": [100, 100], "counts": [5050, 20, 80, 20, 4830]}}
        for i, a in enumerate(COCO_GT["annotations"])
    ],
}
SEGM_PRED = [{**p, "segmentation": [[10, 10, 30, 10, 30, 30, 10, 30]]} for p in COCO_PRED]


# ------------------------------------------------------------------ COCO


@FUZZ
@given(data=byte_mutation(json.dumps(COCO_PRED).encode()))
def test_coco_results_bytes(data: bytes) -> None:
    def go(d: Path) -> None:
        (d / "p.json").write_bytes(data)
        check([str(d / "p.json"), str(GOOD / "coco_gt.json")])

    _with_dir(go)


@FUZZ
@given(doc=json_mutation(COCO_PRED))
def test_coco_results_structure(doc: Any) -> None:
    def go(d: Path) -> None:
        (d / "p.json").write_text(json.dumps(doc))
        check([str(d / "p.json"), str(GOOD / "coco_gt.json")])

    _with_dir(go)


@FUZZ
@given(data=byte_mutation(json.dumps(COCO_GT).encode()))
def test_coco_dataset_bytes(data: bytes) -> None:
    def go(d: Path) -> None:
        (d / "g.json").write_bytes(data)
        check([str(GOOD / "coco_pred.json"), str(d / "g.json")])

    _with_dir(go)


@FUZZ
@given(doc=json_mutation(COCO_GT), unknown=st.sampled_from(["error", "skip"]))
def test_coco_dataset_structure(doc: Any, unknown: str) -> None:
    def go(d: Path) -> None:
        (d / "g.json").write_text(json.dumps(doc))
        check([str(GOOD / "coco_pred.json"), str(d / "g.json"), "--unknown", unknown])

    _with_dir(go)


@FUZZ
@given(
    gt=json_mutation(SEGM_GT),
    pred=json_mutation(SEGM_PRED),
    which=st.sampled_from(["gt", "pred", "both"]),
)
def test_coco_segm_structure(gt: Any, pred: Any, which: str) -> None:
    def go(d: Path) -> None:
        (d / "g.json").write_text(json.dumps(gt if which != "pred" else SEGM_GT))
        (d / "p.json").write_text(json.dumps(pred if which != "gt" else SEGM_PRED))
        check([str(d / "p.json"), str(d / "g.json"), "--iou-type", "segm"])

    _with_dir(go)


# ------------------------------------------------------------------ VOC

VOC_GT = (GOOD / "voc_gt" / "a.xml").read_bytes()
VOC_PRED = (GOOD / "voc_pred" / "a.xml").read_bytes()
XML_TEXT = st.one_of(
    st.sampled_from(
        ["", "-1", "1e999", "nan", "inf", "0x10", "1,5", " 7 ", "cat", "dog", "&amp;", "]]>"]
    ),
    st.text(max_size=6),
)


@st.composite
def xml_text_mutation(draw: st.DrawFn, data: bytes) -> bytes:
    """Replace the text of 1-3 elements (names, coordinates, scores, sizes)."""
    import re

    text = data.decode()
    spans = [m.span(1) for m in re.finditer(r">([^<>]*)</", text)]
    for _ in range(draw(st.integers(1, 3))):
        a, b = draw(st.sampled_from(spans))
        new = draw(XML_TEXT).replace("<", "&lt;")
        text = text[:a] + new + text[b:]
        spans = [m.span(1) for m in re.finditer(r">([^<>]*)</", text)]
    return text.encode("utf-8", "surrogatepass")


@FUZZ
@given(
    data=st.one_of(byte_mutation(VOC_GT), xml_text_mutation(VOC_GT)),
    role=st.sampled_from(["gt", "pred"]),
    protocol=st.sampled_from(["coco", "voc"]),
)
def test_voc_files(data: bytes, role: str, protocol: str) -> None:
    def go(d: Path) -> None:
        shutil.copytree(GOOD / "voc_gt", d / "gt")
        shutil.copytree(GOOD / "voc_pred", d / "pred")
        if role == "gt":
            (d / "gt" / "a.xml").write_bytes(data)
        else:  # a prediction needs a score: mutate the scored file
            (d / "pred" / "a.xml").write_bytes(
                data.replace(b"<name>", b"<score>0.7</score><name>", 1)
            )
        check([str(d / "pred"), str(d / "gt"), "--protocol", protocol])

    _with_dir(go)


@FUZZ
@given(data=st.one_of(byte_mutation(VOC_PRED), xml_text_mutation(VOC_PRED)))
def test_voc_prediction_files(data: bytes) -> None:
    def go(d: Path) -> None:
        shutil.copytree(GOOD / "voc_pred", d / "pred")
        (d / "pred" / "a.xml").write_bytes(data)
        check([str(d / "pred"), str(GOOD / "voc_gt")])

    _with_dir(go)


# ------------------------------------------------------------------ YOLO

TOKEN = st.one_of(
    st.sampled_from(
        ["0", "1", "2", "0.5", "1.0", "0.0", "-0.1", "1.5", "nan", "inf", "1e-9", "0x1", "cat", ""]
    ),
    st.floats(min_value=-0.5, max_value=1.5).map(repr),
    st.text(alphabet="0123456789.-e ", max_size=6),
)
LINE = st.lists(TOKEN, min_size=0, max_size=8).map(" ".join)


@st.composite
def yolo_file(draw: st.DrawFn, base: bytes) -> bytes:
    if draw(st.booleans()):
        return draw(byte_mutation(base))
    lines = draw(st.lists(LINE, max_size=5))
    eol = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return (bom + eol.join(lines)).encode()


@FUZZ
@given(
    gt=yolo_file((GOOD / "yolo_gt" / "a.txt").read_bytes()),
    pred=yolo_file((GOOD / "yolo_pred" / "a.txt").read_bytes()),
    names=st.one_of(st.just(b"cat\ndog\n"), byte_mutation(b"cat\ndog\n")),
    darknet=st.booleans(),
)
def test_yolo_files(gt: bytes, pred: bytes, names: bytes, darknet: bool) -> None:
    def go(d: Path) -> None:
        shutil.copytree(GOOD / "yolo_gt", d / "gt")
        shutil.copytree(GOOD / "yolo_pred", d / "pred")
        (d / "gt" / "a.txt").write_bytes(gt)
        (d / "pred" / "a.txt").write_bytes(pred)
        (d / "gt" / "classes.txt").write_bytes(names)
        fmt = ["--pred-format", "yolo-darknet"] if darknet else []
        check([str(d / "pred"), str(d / "gt"), *fmt])

    _with_dir(go)


@FUZZ
@given(pred=yolo_file((GOOD / "yolo_pred" / "a.txt").read_bytes()))
def test_yolo_predictions_against_voc(pred: bytes) -> None:
    def go(d: Path) -> None:
        shutil.copytree(GOOD / "yolo_pred", d / "pred")
        (d / "pred" / "a.txt").write_bytes(pred)
        check([str(d / "pred"), str(GOOD / "voc_gt")])

    _with_dir(go)


# ------------------------------------------------------------------ names in outputs (issue 16)

# what makes a name dangerous somewhere: formula starts, rich markup, markdown, HTML, table
# pipes, terminal escapes, line breaks of every kind, lone surrogates
HOSTILE_PIECES = [
    "=", "+", "-", "@", "\t", "\r", "\n", "\r\n", "\x0b", "\x0c", "\x85", "\u2028",
    "[", "[/", "]", "[bold]", "[/x]", "*", "_", "`", "|", "\\", "<b>", "&amp;", "#",
    "\x1b[31m", "\x1b]0;t\x07", "\x00", "\x7f", "\ud800", "\udfff", "\u00d6", "\u202e",
]  # fmt: skip
hostile_name = st.lists(
    st.one_of(
        st.sampled_from(HOSTILE_PIECES),
        st.text(st.characters(), max_size=3),  # any code point, surrogates included
    ),
    min_size=1,
    max_size=6,
).map("".join)


@settings(FUZZ, max_examples=max(EXAMPLES // 3, 1))  # 4 outputs per example
@given(names=st.lists(hostile_name, min_size=1, max_size=4, unique=True))
def test_hostile_names_in_every_output(names: list[str]) -> None:
    from tests.robust.test_names import check_every_output, coco_pair

    # the names as a JSON reader sees them ("\ud800\udfff" in a file is one character)
    seen = [json.loads(json.dumps(n)) for n in names]
    assume(len(set(seen)) == len(seen))
    # a blank name (empty or white space only) is refused by every loader: not this test's case
    assume(all(n.strip() for n in seen))

    def go(d: Path) -> None:
        args = coco_pair(d, names)
        check_every_output(args, seen, matches=d / "m.csv")

    _with_dir(go)


@FUZZ
@given(name=hostile_name)
def test_hostile_file_name_is_one_escaped_error_line(name: str) -> None:
    # a file name is any bytes but "/" and NUL; Python names lone surrogates only as
    # undecodable bytes (surrogateescape), so those stay out here
    stem = "".join(c for c in name if c not in "/\x00" and not "\ud800" <= c <= "\udfff")

    def go(d: Path) -> None:
        bad = d / f"p{stem}.json"
        bad.write_text('[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 1], "score": 1}]')
        line = assert_one_error_line(*run_cli([str(bad), str(GOOD / "coco_gt.json")]))
        assert "\x1b" not in line and "\r" not in line and "\x85" not in line
        line.encode("utf-8")

    _with_dir(go)


SPECIAL_KINDS = ["fifo", "dev-zero-link", "dangling-link", "folder", "unreadable", "empty"]


@FUZZ
@given(
    fmt=st.sampled_from(["voc", "yolo"]),
    side=st.sampled_from(["pred", "gt"]),
    kinds=st.lists(st.sampled_from(SPECIAL_KINDS), min_size=1, max_size=3, unique=True),
)
def test_special_files_inside_input_folders(fmt: str, side: str, kinds: list[str]) -> None:
    """A FIFO, a link to a device or nowhere, a folder or an unreadable file among the label
    files: a report or one error line, never a hang (nobody writes to the FIFO)."""
    import shutil

    ext = "xml" if fmt == "voc" else "txt"

    def go(d: Path) -> None:
        shutil.copytree(GOOD / f"{fmt}_pred", d / "pred")
        shutil.copytree(GOOD / f"{fmt}_gt", d / "gt")
        for i, kind in enumerate(kinds):
            p = d / side / f"z{i}.{ext}"
            if kind == "fifo":
                os.mkfifo(p)
            elif kind == "dev-zero-link":
                p.symlink_to("/dev/zero")
            elif kind == "dangling-link":
                p.symlink_to(d / "nowhere")
            elif kind == "folder":
                p.mkdir()
            elif kind == "unreadable":
                p.write_text("")
                p.chmod(0)
            else:
                p.write_text("")
        code, out, err = run_cli([str(d / "pred"), str(d / "gt"), "-o", "json", "-q"])
        if code == 2:
            assert_one_error_line(code, out, err)
        else:
            assert code == 0, err

    _with_dir(go)
