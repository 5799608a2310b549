"""The one JSON rule, for every JSON iou-eval reads (ground truths, predictions, LabelMe,
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
and no suspicious number is in the text, nothing can be wrong; otherwise the slow path
re-parses with every pair kept and walks everything, bounded in depth beforehand.
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
# a superset of what _NUM can match, found with bytes.translate and substring searches
# (C speed: ~20 ms on 9 MB where _NUM's look-behind scan takes ~300 ms); _NUM runs only
# when one of these is present
_DIGITS_TO_0 = bytes.maketrans(b"123456789E", b"000000000e")
_NUM_HINTS = (b"0" * 16, b"e000", b"e+000")
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
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            path, f"byte {exc.start}", "not UTF-8 text (is this a JSON file?)"
        ) from None
    try:
        import msgspec

        # about twice as fast as json.loads, same values; anything it refuses goes to
        # json.loads, whose errors carry a line and column
        doc = msgspec.json.decode(data)
    except Exception:  # noqa: BLE001 - any refusal: the slow path judges and locates it
        return _slow(path, text)
    containers, keys, depth = _stats(doc)
    if depth > MAX_DEPTH:
        _check_depth(path, text)
    if (
        data.count(b"{") + data.count(b"[") != containers
        or data.count(b'":') + len(_KEY_WS.findall(data)) != keys
        or _suspicious_number(data)
    ):
        return _slow(path, text)
    return doc


def _suspicious_number(data: bytes) -> bool:
    """``_NUM.search(data)``, with the regular expression run only when a cheap superset
    test finds 16 digits in a row or a 3-digit exponent."""
    folded = data.translate(_DIGITS_TO_0)
    if not any(h in folded for h in _NUM_HINTS):
        return False
    return _NUM.search(data) is not None


def _stats(doc: Any) -> tuple[int, int, int]:
    """(containers, keys, depth) of the containers a quick walk visits. Lists whose first
    item is a scalar are not entered: they are counted, never looked into, so a container
    hidden after a scalar makes the counts disagree with the text (-> the slow path)."""
    containers = keys = depth = 0
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        v, d = stack.pop()
        t = type(v)
        if t is dict:
            containers += 1
            keys += len(v)
            depth = max(depth, d)
            if d > MAX_DEPTH:
                continue
            for x in v.values():
                tx = type(x)
                if tx is dict or tx is list:
                    stack.append((x, d + 1))
        elif t is list:
            containers += 1
            depth = max(depth, d)
            if d > MAX_DEPTH or not v:
                continue
            t0 = type(v[0])
            if t0 is dict or t0 is list:
                for x in v:
                    tx = type(x)
                    if tx is dict or tx is list:
                        stack.append((x, d + 1))
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
