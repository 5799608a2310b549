r"""The one JSON rule, for every JSON iou-eval reads (ground truths, predictions, LabelMe,
saved reports): located errors, never a traceback, never a silent guess.

* UTF-8 (a BOM is fine); an empty file is an error;
* NaN / Infinity literals, and numbers that overflow to infinity (``1e400``), are refused;
* integers beyond 2**53 (where a float id or count silently changes value) or of more than
  4300 digits are refused, located by their JSON path;
* nesting deeper than ``MAX_DEPTH`` is refused with its line and column (no parser or walker
  ever recurses deeper);
* a key written twice in one object, at ANY depth, is refused (JSON parsers keep the last
  value, so a second ``"annotations": []`` would silently replace the real ones).

Fast path: msgspec decodes; one walk counts containers and keys and measures the depth;
cheap counts on the bytes bound them from above (``{``/``[``, ``":``). When the counts agree
and no suspicious number is in the text, nothing can be wrong. Strings may hold brackets and
runs of digits (COCO's compressed RLE counts use ``0``-``9``, ``[``, ``]``, ``:``, ``\``):
then the counts are taken again outside the strings, exactly, and only integers outside
strings are suspicious (:func:`_outside_strings`; numbers that overflow a float need no
search there: msgspec refused them already). Otherwise the slow path re-parses with every
pair kept and walks everything, bounded in depth beforehand.
"""

from __future__ import annotations

import json
import math
import os
import re
from typing import Any

from ..errors import InputError

MAX_DEPTH = 100  # COCO is 5 deep, a saved report about 8
MAX_SAFE_INT = 2**53
_KEY_WS = re.compile(rb'"[ \t\r\n]+:')
# an integer of 16+ digits (not the fraction of a float), or a 3+-digit exponent
_NUM = re.compile(rb"(?<![\d.])\d{16,}(?![\d.eE])|[eE][+]?\d{3,}")
# _NUM's answer from bytes.translate and substring searches (C speed: ~10 ms on 9 MB where
# _NUM's look-behind scan takes ~300 ms, and floats of 17 digits made it run every time)
_FOLD = bytes(
    ord("0") if c in b"0123456789" else ord("e") if c in b"eE" else c if c in b".+" else ord(",")
    for c in range(256)
)
_ZERO_RUN = re.compile(rb"0*")
# digits -> "0", what may precede a number -> ","; then ",0000000000000000" marks a run of
# 16 digits that may be an integer token (a superset: also inside strings, or a float)
_NUM_MAP = bytes.maketrans(b"0123456789[,: \t\r\n-", b"0" * 10 + b"," * 8)
_LONG_NUM = b"," + b"0" * 16
_CONSTANT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|(?:-?Infinity|NaN)')
_LONG_INT = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|\d{4301,}')
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def read_bytes(path: str, *, member: bool = False) -> bytes:
    from .files import read_input

    # a regular file, a pipe or stdin, bounded; gzip inflated, bounded (files.py); found in
    # an input folder (``member``): a regular file only
    return read_input(path, expected="a JSON file", decompress=True, member=member)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use a finite number)")


class _Dup(dict):
    """An object that had a key twice (built by the slow path, found by the walk)."""

    dup: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set[str] = set()
        out = _Dup(d)
        for k, _ in pairs:
            if k in seen:
                out.dup = k
                break
            seen.add(k)
        return out
    return d


def parse_json(path: str, data: bytes) -> Any:
    """Parse ``data`` by the rule above."""
    if not data.strip():
        raise InputError(path, None, "empty file, expected JSON")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        import msgspec

        # about twice as fast as json.loads, same values; anything it refuses goes to
        # json.loads, whose errors carry a line and column. (msgspec refuses text that is
        # not UTF-8, so the text is decoded only for the slow path: 3 ms of a 5 MB file.)
        doc = msgspec.json.decode(data)
    except Exception:  # noqa: BLE001 - any refusal: the slow path judges and locates it
        return _slow(path, _text(path, data))
    if not isinstance(doc, (dict, list)):  # a bare scalar: nothing to gain from speed
        return _slow(path, _text(path, data))
    containers, keys, depth = _stats(doc)
    if depth > MAX_DEPTH:
        _check_depth(path, _text(path, data))
    if (
        data.count(b"{") + data.count(b"[") == containers
        and data.count(b'":') + len(_KEY_WS.findall(data)) == keys
        and not _suspicious_number(data)
    ):
        return doc
    if _outside_strings(data) == (containers, keys, False):
        return doc
    return _slow(path, _text(path, data))


def _text(path: str, data: bytes) -> str:
    """``data`` as UTF-8 text, else the located error."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            path, f"byte {exc.start}", "not UTF-8 text (is this a JSON file?)"
        ) from None


def _suspicious_number(data: bytes) -> bool:
    """``_NUM.search(data) is not None``, computed on ``data`` folded to five classes
    (digit, ``.``, ``e``/``E``, ``+``, anything else) with substring searches: a 3-digit
    exponent is ``e000`` or ``e+000``; a 16-digit integer is a run of 16+ digits that a
    class other than digit or ``.`` (or the start) precedes and that no ``.``/``e`` follows.
    Only runs starting such an integer are visited (a float's long fraction follows a
    ``.``: none of them is)."""
    folded = data.translate(_FOLD)
    if b"e000" in folded or b"e+000" in folded:
        return True
    run = b"0" * 16
    hits = [0] if folded.startswith(run) else []
    for lead in (b",", b"+"):
        at = folded.find(lead + run)
        while at >= 0:
            hits.append(at + 1)
            at = folded.find(lead + run, at + 1)
    for at in hits:
        end = _run_end(folded, at)
        if folded[end : end + 1] not in (b".", b"e"):
            return True
    return False


def _run_end(folded: bytes, at: int) -> int:
    """The end of the run of ``0`` bytes that starts at ``at``."""
    m = _ZERO_RUN.match(folded, at)
    return at if m is None else m.end()


def _outside_strings(data: bytes) -> tuple[int, int, bool]:
    """(``{`` and ``[`` characters, keys, an integer of 16+ digits) of valid JSON text, all
    outside strings: exact.

    A quote ends or starts a string unless an odd run of backslashes precedes it (in valid
    JSON backslashes occur only inside strings); the text between quote 2k and 2k+1 is a
    string; a key is a string whose closing quote is followed, after white space, by ``:``;
    a number is preceded by ``[ , :``, white space or ``-``.
    """
    import numpy as np

    b = np.frombuffer(data, dtype=np.uint8)
    q = np.flatnonzero(b == 34)
    slash = np.flatnonzero(b == 92)
    if slash.size and q.size:
        after = q[q > 0]
        after = after[b[after - 1] == 92]  # quotes right after a backslash
        run_start = slash[np.r_[0, np.flatnonzero(np.diff(slash) != 1) + 1]]
        k = np.searchsorted(run_start, after - 1, side="right") - 1
        escaped = after[((after - run_start[k]) & 1).astype(bool)]  # an odd run
        q = np.setdiff1d(q, escaped, assume_unique=True)

    def outside(pos: Any) -> Any:
        return (np.searchsorted(q, pos, side="right") & 1) == 0

    opened = sum(int(outside(np.flatnonzero(b == ch)).sum()) for ch in (123, 91))
    nxt = q[1::2] + 1
    nxt = nxt[nxt < b.size]
    keys = 0
    while nxt.size:  # step over white space after each closing quote
        c = b[nxt]
        keys += int((c == 58).sum())
        nxt = nxt[(c == 32) | (c == 9) | (c == 10) | (c == 13)] + 1
        nxt = nxt[nxt < b.size]
    folded = data.translate(_NUM_MAP)
    long_int = False
    at = folded.find(_LONG_NUM)
    while at >= 0 and not long_int:  # each hit: a number, or inside a string (skip it)
        long_int = bool(outside(np.asarray([at])).all())
        end = int(q[np.searchsorted(q, at, side="right")]) if not long_int else at
        at = folded.find(_LONG_NUM, end + 1)
    return opened, keys, long_int


def _stats(doc: Any) -> tuple[int, int, int]:
    """(containers, keys, depth) of the containers a quick walk visits. Lists whose first
    item is a scalar are not entered: they are counted, never looked into, so a container
    hidden after a scalar makes the counts disagree with the text (-> the slow path).

    The walk goes a level at a time (each level's containers in a few comprehensions, no
    per-container stack step): a panoptic JSON's 100k segment records took 0.3 s a file
    with a stack."""
    containers = keys = depth = 0
    level: list[Any] = [doc] if type(doc) is dict or type(doc) is list else []
    d = 1
    while level:
        depth = d
        containers += len(level)
        dicts = [v for v in level if type(v) is dict]
        keys += sum(map(len, dicts))
        if d > MAX_DEPTH:
            break
        deeper = [x for v in dicts for x in v.values() if type(x) is dict or type(x) is list]
        entered = [v for v in level if type(v) is list and v and type(v[0]) in (dict, list)]
        deeper += [x for v in entered for x in v if type(x) is dict or type(x) is list]
        level = deeper
        d += 1
    return containers, keys, depth


def _check_depth(path: str, text: str) -> None:
    """Refuse nesting deeper than ``MAX_DEPTH``, at the line and column where it goes
    deeper (strings skipped, no recursion)."""
    depth = 0
    for m in _TOKENS.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise InputError(
                    path,
                    _line_col(text, m.start()),
                    f"JSON nested more than {MAX_DEPTH} deep: refused",
                )
        elif c in "]}":
            depth -= 1


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"{line}:{pos - text.rfind(chr(10), 0, pos)}"


def _locate(text: str, pattern: re.Pattern[str]) -> str | None:
    """line:col of the first match of ``pattern`` outside strings (strings match whole)."""
    for m in pattern.finditer(text):
        if not m.group().startswith('"'):
            return _line_col(text, m.start())
    return None


def _slow(path: str, text: str) -> Any:
    _check_depth(path, text)  # json.loads and the walk below recurse no deeper than this
    try:
        doc = json.loads(text, object_pairs_hook=_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"{exc.lineno}:{exc.colno}", f"not valid JSON: {exc.msg}") from None
    except ValueError as exc:  # NaN / Infinity literals, integers of more than 4300 digits
        if "digits" in str(exc) and "NaN" not in str(exc) and "Infinity" not in str(exc):
            where = _locate(text, _LONG_INT)
            raise InputError(
                path, where, "not valid JSON: an integer of more than 4300 digits"
            ) from None
        raise InputError(path, _locate(text, _CONSTANT), str(exc)) from None
    except RecursionError:  # cannot happen after _check_depth; said, not a traceback
        raise InputError(path, None, f"JSON nested more than {MAX_DEPTH} deep: refused") from None
    _walk(path, doc)
    return doc


def _where(parts: tuple[str | int, ...]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "top level"


def _walk(path: str, doc: Any) -> None:
    """Every value: duplicate keys, integers beyond 2**53, non-finite numbers (located)."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        v, at = stack.pop()
        if isinstance(v, dict):
            if isinstance(v, _Dup):
                raise InputError(
                    path,
                    _where(at) if at else None,
                    f"duplicate {'' if at else 'top-level '}key {v.dup!r}: a JSON parser "
                    "keeps only the last one, so the first would be silently lost",
                )
            stack.extend((x, (*at, k)) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, (*at, i)) for i, x in enumerate(v))
        elif type(v) is int:
            if abs(v) > MAX_SAFE_INT:
                raise InputError(
                    path,
                    _where(at),
                    f"integer {_short(v)} is beyond 2**53: it cannot be kept exactly "
                    "as a number here",
                )
        elif type(v) is float and not math.isfinite(v):
            raise InputError(path, _where(at), "a number too large for a float (infinite)")


def _short(v: int) -> str:
    s = str(v)
    return s if len(s) <= 24 else f"{s[:10]}...({len(s)} digits)"


def load_json(path: str, *, member: bool = False) -> Any:
    if path != "-" and os.path.isdir(path):
        raise InputError(path, None, "is a folder, expected a JSON file")
    return parse_json(path, read_bytes(path, member=member))
