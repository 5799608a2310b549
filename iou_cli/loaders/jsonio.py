"""Reading JSON files with located errors (never a traceback, never a silent guess)."""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import InputError


def read_bytes(path: str) -> bytes:
    from . import streams
    from .files import read_input

    if streams.is_stream(path) or streams.is_gzip(path):
        return streams.read_input(path)
    return read_input(path, expected="a JSON file")  # regular file, bounded (files.py)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON (use a finite number)")


def parse_json(path: str, data: bytes) -> Any:
    """Parse ``data`` strictly: UTF-8 (a BOM is fine), no NaN/Infinity literals."""
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
    except Exception:  # noqa: BLE001 - any refusal: let json.loads judge and locate it
        pass
    else:
        _refuse_duplicate_keys(path, data, doc)
        return doc
    try:
        doc = json.loads(text, parse_constant=_reject_constant)
        _refuse_duplicate_keys(path, data, doc)
        return doc
    except json.JSONDecodeError as exc:
        raise InputError(path, f"{exc.lineno}:{exc.colno}", f"not valid JSON: {exc.msg}") from None
    except ValueError as exc:  # NaN / Infinity literals, integers of more than 4300 digits
        if "digits" in str(exc) and "NaN" not in str(exc) and "Infinity" not in str(exc):
            raise InputError(
                path, None, "not valid JSON: an integer with too many digits"
            ) from None
        raise InputError(path, None, str(exc)) from None
    except RecursionError:
        raise InputError(path, None, "JSON nested too deeply") from None


def _refuse_duplicate_keys(path: str, data: bytes, doc: Any) -> None:
    """A second top-level ``"annotations"`` would silently replace the first (JSON parsers
    keep the last): refuse duplicate keys of the top-level object.

    Fast path: a key written once in the whole file cannot be duplicated; only when some
    top-level key occurs more than once is the file parsed again keeping every pair.
    """
    if not isinstance(doc, dict):
        return
    suspects = [
        k
        for k in doc
        if not (k.isascii() and "\\" not in k and '"' not in k)
        or data.count(b'"' + k.encode() + b'"') > 1
    ]
    if not suspects:
        return
    top: list[list[str]] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        top.append([k for k, _ in pairs])  # the outermost object is the last one built
        return dict(pairs)

    text = data.decode("utf-8", errors="replace")
    try:
        json.loads(text, object_pairs_hook=pairs_hook, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        return  # msgspec took it; the first parse stands
    keys = top[-1] if top else []
    seen: set[str] = set()
    for k in keys:
        if k in seen:
            raise InputError(
                path,
                None,
                f"duplicate top-level key {k!r}: a JSON parser keeps only the last one, "
                "so the first would be silently lost",
            )
        seen.add(k)


def load_json(path: str) -> Any:
    if path != "-" and os.path.isdir(path):
        raise InputError(path, None, "is a folder, expected a JSON file")
    return parse_json(path, read_bytes(path))
