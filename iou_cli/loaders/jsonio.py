"""Reading JSON files with located errors (never a traceback, never a silent guess)."""

from __future__ import annotations

import json
import os
from typing import Any

from ..errors import InputError


def read_bytes(path: str) -> bytes:
    from . import streams

    if streams.is_stream(path) or streams.is_gzip(path):
        return streams.read_input(path)
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except IsADirectoryError:
        raise InputError(path, None, "is a folder, expected a JSON file") from None
    except FileNotFoundError:
        raise InputError(path, None, "no such file or folder") from None
    except PermissionError:
        raise InputError(path, None, "permission denied") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror or exc}") from None


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
        return msgspec.json.decode(data)
    except Exception:  # noqa: BLE001 - any refusal: let json.loads judge and locate it
        pass
    try:
        return json.loads(text, parse_constant=_reject_constant)
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


def load_json(path: str) -> Any:
    if path != "-" and os.path.isdir(path):
        raise InputError(path, None, "is a folder, expected a JSON file")
    return parse_json(path, read_bytes(path))
