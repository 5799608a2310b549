"""Names from inputs are data in every output (issue 16).

Class names, file names and image keys holding spreadsheet formulas, rich markup, markdown,
terminal escapes, newlines and lone surrogates go through every output of every verb that
shows them, and each output is checked the way its own reader sees it:

* CSV (report and ``--matches``): parsed by ``csv.reader`` as a spreadsheet would import it;
  no text cell starts a formula (OWASP: ``= + - @``, tab, CR), every record has the header's
  width, no control character but tab/newline, valid UTF-8;
* markdown: rendered by markdown-it (CommonMark + GFM tables, what rich itself uses): one
  table row per class, no emphasis, link, code or HTML made from a name;
* table: rich prints the names literally (``[bold]dog`` stays, ``[/x]`` cannot raise), no
  ESC reaches the terminal;
* JSON: valid UTF-8 that ``json.loads`` reads back to the very same names;
* stderr: one line per error or warning, control characters shown escaped.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import assert_one_error_line, run_cli

FORMULA = ("=", "+", "-", "@", "\t", "\r")
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

HOSTILE = [
    '=HYPERLINK("http://x","y")',
    "+1+1",
    "-2+3",
    "@SUM(A1:A2)",
    "\t=1",
    "\r=1",
    "[/x]",
    "[bold]dog",
    "[link=http://x]y[/link]",
    "a|b",
    "two\nlines",
    "*em* _u_ `c`",
    "<script>alert(1)</script>",
    "[x](http://evil)",
    "esc\x1b[31mred\x1b[0m",
    "bell\x07",
    "\ud800cat",
    "\u00d6lkanne",
    "back\\slash",
    "line\u2028sep",
]


def coco_pair(folder: Path, names: list[str], file_names: list[str] | None = None) -> list[str]:
    """One image per name, one exact prediction per ground truth: AP 1 for every class."""
    n = len(names)
    files = file_names or [f"{i}.jpg" for i in range(n)]
    gt = {
        "images": [
            {"id": i + 1, "file_name": files[i], "width": 100, "height": 100} for i in range(n)
        ],
        "annotations": [
            {
                "id": i + 1,
                "image_id": i + 1,
                "category_id": i + 1,
                "bbox": [10, 10, 20, 20],
                "area": 400,
                "iscrowd": 0,
            }
            for i in range(n)
        ],
        "categories": [{"id": i + 1, "name": nm} for i, nm in enumerate(names)],
    }
    pred = [
        {"image_id": i + 1, "category_id": i + 1, "bbox": [10, 10, 20, 20], "score": 0.5}
        for i in range(n)
    ]
    # json.dumps writes lone surrogates as \ud800 escapes: valid JSON, as users' tools do
    (folder / "gt.json").write_text(json.dumps(gt), encoding="utf-8")
    (folder / "pred.json").write_text(json.dumps(pred), encoding="utf-8")
    return [str(folder / "pred.json"), str(folder / "gt.json")]


# ------------------------------------------------------------------ per-output checks


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _subsequence(small: str, big: str) -> bool:
    it = iter(big)
    return all(c in it for c in small)


def check_csv(text: str, names: list[str] | None = None) -> list[list[str]]:
    text.encode("utf-8")  # a lone surrogate would raise here
    rows = list(csv.reader(io.StringIO(text, newline="")))
    width = len(rows[0])
    for row in rows:
        assert len(row) == width, row
        for cell in row:
            # a number is a number (-1 is data); text may not start a formula
            assert not cell.startswith(FORMULA) or _is_number(cell), cell
            assert not CONTROL.search(cell.replace("\t", "").replace("\n", "")), cell
    if names is not None:
        col = rows[0].index("name") if "name" in rows[0] else rows[0].index("category")
        shown = [r[col] for r in rows[1:]]
        for nm in names:
            # each name is there, recognisable: its letters survive the escaping in order
            key = re.sub(r"[^A-Za-z0-9]", "", nm)
            assert any(_subsequence(key, s) for s in shown), (nm, shown)
    return rows


def check_markdown(text: str, n_class_rows: int | None) -> None:
    from markdown_it import MarkdownIt

    html = MarkdownIt("commonmark").enable("table").render(text)
    for tag in ("<em>", "<strong>", "<a ", "<code>", "<script", "<br"):
        assert tag not in html, (tag, html)
    tables = html.split("<table>")[1:]
    if n_class_rows is not None:
        body = tables[-1]
        assert body.count("<tr>") == n_class_rows + 1, html  # + the header row
        widths = {r.count("<td") for r in body.split("<tr>")[2:]}
        assert len(widths) == 1, widths
    text.encode("utf-8")


def check_table(text: str, names: list[str]) -> None:
    assert "\x1b" not in text and "\x07" not in text
    assert "[bold]dog" in text or "[bold]dog" not in names
    text.encode("utf-8")


def check_json(text: str, names: list[str]) -> None:
    text.encode("utf-8")
    doc = json.loads(text)
    assert [r["name"] for r in doc["per_class"]] == names


def check_stderr(err: str) -> None:
    for line in err.splitlines():
        assert line.startswith("iou-eval: "), err
    assert "\x1b" not in err and "\r" not in err


def check_every_output(args: list[str], names: list[str], *, matches: Path | None) -> None:
    """Run ``args`` with each output format (and ``--matches`` for evaluate) and check each."""
    for fmt in ("table", "csv", "json", "markdown"):
        extra = ["--per-class", "-o", fmt, "-q"]
        if matches is not None and fmt == "csv":
            extra += ["--matches", str(matches)]
        code, out, err = run_cli([*args, *extra])
        assert code == 0, err
        check_stderr(err)
        if fmt == "csv":
            check_csv(out, names)
        elif fmt == "json":
            check_json(out, names)
        elif fmt == "markdown":
            check_markdown(out, len(names))
        else:
            check_table(out, names)
    if matches is not None:
        rows = check_csv(matches.read_text(encoding="utf-8"), names)
        assert len(rows) == len(names) + 1


# ------------------------------------------------------------------ the verbs


def test_evaluate_every_output(tmp_path: Path) -> None:
    args = coco_pair(tmp_path, HOSTILE)
    check_every_output(args, HOSTILE, matches=tmp_path / "m.csv")


def test_matches_image_keys_are_csv_safe(tmp_path: Path) -> None:
    # image keys in --matches are VOC file stems: a file name is input text too
    stems = ["=cmd|' C calc'!A0", "+x", "@y", "-z"]
    for side, extra in (("pred", "<score>0.5</score>"), ("gt", "")):
        folder = tmp_path / side
        folder.mkdir()
        for stem in stems:
            (folder / f"{stem}.xml").write_text(
                f"<annotation><object><name>cat</name>{extra}<bndbox><xmin>10</xmin>"
                "<ymin>10</ymin><xmax>30</xmax><ymax>30</ymax></bndbox></object></annotation>"
            )
    m = tmp_path / "m.csv"
    code, out, err = run_cli(
        [str(tmp_path / "pred"), str(tmp_path / "gt"), "-q", "-o", "csv", "--matches", str(m)]
    )
    assert code == 0, err
    rows = check_csv(m.read_text(encoding="utf-8"))
    assert sorted(r[0] for r in rows[1:]) == sorted("'" + s for s in stems)


def test_labels_every_output(tmp_path: Path) -> None:
    names = [n for n in HOSTILE if "\n" not in n and "\r" not in n and "\u2028" not in n]
    names = [n.replace(",", "").replace(";", "").replace('"', "") for n in names]
    names = [n for n in names if n.strip() == n and n]
    gt = tmp_path / "gt.csv"
    pred = tmp_path / "pred.csv"
    with open(gt, "w", encoding="utf-8", newline="", errors="surrogatepass") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "labels"])
        w.writerow(["s1", ";".join(names)])
    with open(pred, "w", encoding="utf-8", newline="", errors="surrogatepass") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "labels"])
        w.writerow(["s1", ";".join(names[:3])])
    code, out, err = run_cli(["labels", str(pred), str(gt), "-q", "-o", "json", "--per-class"])
    if "\ud800cat" in names:
        # a CSV file with a lone surrogate is not UTF-8: one located error, never a crash
        assert_one_error_line(code, out, err)
        names.remove("\ud800cat")
        with open(gt, "w", encoding="utf-8", newline="") as fh:
            csv.writer(fh).writerows([["id", "labels"], ["s1", ";".join(names)]])
    shown = sorted(names)
    check_every_output(["labels", str(pred), str(gt)], shown, matches=None)


def test_segment_names_every_output(tmp_path: Path) -> None:
    from tests.cli.test_cli_segment_labels import SEG

    names = ["=1+1", "[/x]", "esc\x1b[2Jx"]
    f = tmp_path / "names.txt"
    f.write_text("\n".join(names) + "\n", encoding="utf-8")
    args = ["segment", str(SEG / "pred"), str(SEG / "gt"), "--num-classes", "3"]
    args += ["--ignore-index", "255", "--names", str(f)]
    check_every_output(args, names, matches=None)


# ------------------------------------------------------------------ error lines


def test_file_name_with_escapes_and_newline_stays_on_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "p\x1b[2J\nx\u2028.json"
    bad.write_text('[{"image_id": 1, "category_id": 1, "bbox": [1, 1, 1], "score": 1}]')
    args = coco_pair(tmp_path, ["cat"])
    line = assert_one_error_line(*run_cli([str(bad), args[1]]))
    assert "p\\x1b[2J\\nx\\u2028.json:[0].bbox: expected 4 numbers" in line


def test_class_name_in_an_error_is_escaped(tmp_path: Path) -> None:
    voc = tmp_path / "voc"
    voc.mkdir()
    (voc / "0.xml").write_text(
        "<annotation><object><name>ze\u0085b\u2028ra</name><score>0.5</score><bndbox><xmin>1</xmin>"
        "<ymin>1</ymin><xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>"
    )
    args = coco_pair(tmp_path, ["cat"])
    line = assert_one_error_line(*run_cli([str(voc), args[1]]))
    assert "ze\\x85b\\u2028ra" in line  # XML has no ESC; NEL and LS split lines too


@pytest.mark.parametrize("name", ["\ud800cat", "\u00d6lkanne", "[/x]"])
def test_warning_lines_are_escaped(tmp_path: Path, name: str) -> None:
    # a class with predictions but no ground truth is named in a warning
    args = coco_pair(tmp_path, ["cat", name])
    doc: Any = json.loads((tmp_path / "gt.json").read_text())
    doc["annotations"] = doc["annotations"][:1]
    (tmp_path / "gt.json").write_text(json.dumps(doc))
    code, out, err = run_cli([*args, "-q", "-o", "json"])
    assert code == 0
    check_stderr(err)
    err.encode("utf-8")
