"""Text from inputs is data: one escaping function per output it can reach.

Class names, file names and image keys come from files that anyone may have written. Each
output has its own dangerous characters, so each gets its own function; every reporter calls
the one for its output on every string that came from an input:

* :func:`term` -- terminal and stderr lines: control characters (ESC, newline, ...) and lone
  surrogates are shown escaped (``\\x1b``, ``\\n``, ``\\ud800``), so a name can neither move
  the cursor nor split one error line into several.
* :func:`rich_text` -- a :class:`rich.text.Text` holding :func:`term` of the string: rich never
  parses it as markup (``[bold]dog`` stays ``[bold]dog``; ``[/x]`` cannot raise).
* :func:`csv_cell` -- a spreadsheet cell: the OWASP rule against formula injection (a cell that
  starts with ``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading ``'``); lone
  surrogates become U+FFFD so the UTF-8 writer cannot fail; control characters other than
  tab and newline (ESC, CR) are shown escaped.
* :func:`md_cell` -- a GitHub-flavoured markdown table cell: ``|``, emphasis and link
  characters, HTML and backslashes are escaped, line breaks become spaces.
* :func:`json_text` -- JSON documents: lone surrogates written as ``\\uXXXX`` escapes.
* :func:`html_text` -- HTML text and attribute values (``&<>"'``).
"""

from __future__ import annotations

import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udfff]")
# C0 controls, DEL, C1 controls, and the Unicode line/paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_control(m: re.Match[str]) -> str:
    c = m.group(0)
    if c in _NAMED:
        return _NAMED[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def _escape_surrogate(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group(0)):04x}"


def term(value: Any) -> str:
    """``value`` as one line of safe terminal text (controls and lone surrogates escaped)."""
    s = str(value)
    s = _CONTROL.sub(_escape_control, s)
    return _SURROGATE.sub(_escape_surrogate, s)


def rich_text(value: Any, style: str = "") -> Any:
    """A rich ``Text`` of :func:`term` (``value``): printed as is, never parsed as markup."""
    from rich.text import Text

    return Text(term(value), style=style)


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_CSV_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def csv_cell(value: str) -> str:
    """A text cell a spreadsheet shows as text, never evaluates (OWASP CSV injection rule).

    Only text from inputs goes through here; numbers are written as numbers by the caller.
    """
    s = _SURROGATE.sub("\ufffd", str(value))
    if s.startswith(_FORMULA_START):
        s = "'" + s
    # other control characters are shown escaped: ESC would drive a terminal that shows
    # the CSV, and a bare CR (which csv.writer with LF line ends leaves unquoted) would
    # split the record for every CSV reader; tab and newline are CSV data (quoted)
    return _CSV_CONTROL.sub(_escape_control, s)


def md_cell(value: Any) -> str:
    """Text for a GitHub-flavoured markdown table cell: shown literally, on one line."""
    s = _SURROGATE.sub("\ufffd", str(value))
    s = re.sub(r"[\r\n\u2028\u2029]+", " ", s)
    s = _CONTROL.sub(_escape_control, s)
    # & < > as entities (GitHub would otherwise read HTML); the rest backslash-escaped
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~])", r"\\\1", s)


def json_text(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) that is valid UTF-8: a lone
    surrogate in a name (valid JSON, ``"\\ud800cat"``) is written back as its ``\\ud800``
    escape, so the file still round-trips through ``json.loads``; all else stays readable."""
    return _SURROGATE.sub(_escape_surrogate, dumped)


def html_text(value: Any) -> str:
    """Text (or an attribute value) for HTML: ``& < > " '`` escaped, surrogates replaced."""
    import html  # (html.entities is ~5 ms: only the HTML report needs it)

    s = _SURROGATE.sub("\ufffd", str(value))
    s = _CONTROL.sub(lambda m: "" if m.group(0) not in "\n\t" else m.group(0), s)
    return html.escape(s, quote=True)
