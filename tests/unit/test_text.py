"""The escaping functions of iou_cli/text.py, one table of hostile names per output."""

from __future__ import annotations

import csv
import io

import pytest

from iou_cli.text import csv_cell, html_text, md_cell, rich_text, term


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("dog", "dog"),
        ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
        ("two\nlines", "two\\nlines"),
        ("cr\rtab\t", "cr\\rtab\\t"),
        ("\x7fdel\x9bcsi", "\\x7fdel\\x9bcsi"),
        ("\ud800cat", "\\ud800cat"),
        ("Ölkanne", "Ölkanne"),
        ("line\u2028sep", "line\\u2028sep"),
    ],
)
def test_term_escapes_controls_and_surrogates(name: str, shown: str) -> None:
    assert term(name) == shown
    # the result is one printable line that encodes as UTF-8
    assert "\n" not in term(name)
    term(name).encode("utf-8")


@pytest.mark.parametrize("name", ["[bold]dog", "[/x]", "[link=http://x]y[/link]", "a\x1bb"])
def test_rich_text_is_never_markup(name: str) -> None:
    from rich.console import Console

    buf = io.StringIO()
    Console(file=buf, width=200, color_system=None).print(rich_text(name))
    assert buf.getvalue().rstrip("\n") == term(name)


@pytest.mark.parametrize(
    ("name", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+SUM(A1)", "'+SUM(A1)"),
        ("-2", "'-2"),
        ("@cmd", "'@cmd"),
        ("\tx", "'\tx"),
        # a leading CR gets the quote, and is then shown escaped: csv.writer with LF line
        # ends leaves a bare CR unquoted, and csv.reader then refuses the record
        ("\rx", "'\\rx"),
        ("a\x1b[31mb", "a\\x1b[31mb"),  # ESC would drive a terminal showing the CSV
        ("a\nb", "a\nb"),  # newline and tab are CSV data: quoted by the writer
        ("dog", "dog"),
        ("a=b", "a=b"),
        ("\ud800cat", "\ufffdcat"),
    ],
)
def test_csv_cell_owasp_rule(name: str, cell: str) -> None:
    assert csv_cell(name) == cell
    buf = io.StringIO()
    csv.writer(buf).writerow([csv_cell(name)])
    buf.getvalue().encode("utf-8")  # a lone surrogate would raise here
    lf = io.StringIO()
    csv.writer(lf, lineterminator="\n").writerow([csv_cell(name), "1"])
    assert list(csv.reader(io.StringIO(lf.getvalue(), newline=""))) == [[csv_cell(name), "1"]]


@pytest.mark.parametrize(
    ("name", "cell"),
    [
        ("dog", "dog"),
        ("a|b", "a\\|b"),
        ("*bold* _it_", "\\*bold\\* \\_it\\_"),
        ("two\nlines", "two lines"),
        ("<img src=x>", "&lt;img src=x&gt;"),
        ("[x](y)", "\\[x\\]\\(y\\)"),
        ("back\\slash", "back\\\\slash"),
    ],
)
def test_md_cell(name: str, cell: str) -> None:
    assert md_cell(name) == cell
    assert "\n" not in md_cell(name)


def test_html_text() -> None:
    assert html_text("<script>alert('x')</script>&") == (
        "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;"
    )
    assert html_text("\ud800\x1b") == "\ufffd"
