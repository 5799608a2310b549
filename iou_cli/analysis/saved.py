"""Saved ``-o json`` reports read back for ``compare``: through the one JSON rule
(:mod:`iou_cli.loaders.jsonio`), then checked enough to compare: summary keys that are
metric names (never markup or a spreadsheet formula), numbers where numbers go, a
well-formed ``curves`` section, and the ground-truth fingerprint when the report has one."""

from __future__ import annotations

import os
import re
from typing import Any

from ..errors import InputError

_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_@.:+/-]{0,39}")
_ROW_TEXT = ("name",)


def load_report(path: str) -> dict[str, Any]:
    """A saved ``iou-eval ... -o json`` report, checked enough to compare: read by the one
    JSON rule (duplicate keys at any depth, NaN, huge integers, nesting: refused, located),
    summary keys that are metric names, numbers where numbers go, a well-formed ``curves``
    section when there is one."""
    from ..loaders.jsonio import load_json

    if os.path.isdir(path):
        raise InputError(path, None, "is a folder, expected a saved -o json report")
    doc = load_json(path)
    if not is_report(doc):
        raise InputError(
            path,
            None,
            "not a saved iou-eval -o json report (expected an object with summary, per_class "
            "and params)",
        )
    summary = doc["summary"]
    for k, v in summary.items():
        if not _KEY.fullmatch(k):
            raise InputError(path, "summary", f"{k[:40]!r} is not a metric name")
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
            raise InputError(path, f"summary.{k}", f"expected a number or null, got {v!r:.40}")
    for i, row in enumerate(doc["per_class"]):
        if not isinstance(row, dict):
            raise InputError(path, f"per_class[{i}]", "expected an object")
        for k, v in row.items():
            if k in _ROW_TEXT:
                if v is not None and not isinstance(v, str):
                    raise InputError(path, f"per_class[{i}].{k}", f"expected text, got {v!r:.40}")
            elif k == "category_id":
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, str))):
                    raise InputError(path, f"per_class[{i}].{k}", f"expected an id, got {v!r:.40}")
            elif v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise InputError(
                    path, f"per_class[{i}].{k}", f"expected a number or null, got {v!r:.40}"
                )
    if "curves" in doc:
        _check_curves(path, doc["curves"])
    return doc


def _check_curves(path: str, cv: Any) -> None:
    """The parts of a saved ``curves`` section that are drawn: ``recall`` (R numbers) and
    ``precision`` (threshold -> class -> R numbers or null)."""

    def bad(where: str, what: str) -> InputError:
        return InputError(path, f"curves{where}", what)

    if not isinstance(cv, dict):
        raise bad("", "expected an object (write the report again with --curves)")
    recall = cv.get("recall")
    if not isinstance(recall, list) or not recall or not all(_is_num(v) for v in recall):
        raise bad(".recall", "expected a list of numbers")
    prec = cv.get("precision")
    if not isinstance(prec, dict):
        raise bad(".precision", "expected an object of IoU thresholds")
    for t, by_class in prec.items():
        if not isinstance(by_class, dict):
            raise bad(f".precision.{t}", "expected an object of classes")
        for name, row in by_class.items():
            if row is None:
                continue
            if (
                not isinstance(row, list)
                or len(row) != len(recall)
                or not all(_is_num(v) for v in row)
            ):
                raise bad(
                    f".precision.{t}.{name}",
                    f"expected {len(recall)} numbers (one per recall point) or null",
                )


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def fingerprint(doc: dict[str, Any]) -> str | None:
    meta = doc.get("meta")
    fp = meta.get("gt_fingerprint") if isinstance(meta, dict) else None
    return fp if isinstance(fp, str) else None


def is_report(doc: Any) -> bool:
    return (
        isinstance(doc, dict)
        and isinstance(doc.get("summary"), dict)
        and isinstance(doc.get("per_class"), list)
        and isinstance(doc.get("params", {}), dict)
    )


def looks_like_report(path: str) -> bool:
    """Cheap sniff: a JSON object file whose first kilobytes mention "summary"."""
    if not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"{") and b'"summary"' in head
