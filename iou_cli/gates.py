"""CI gates: ``--fail-under KEY=VALUE`` and ``--fail-over KEY=VALUE`` (no printing, no exiting).

Every summary key has a direction:

* higher is better (AP, AR, mAP, precision, recall, f1, mean_iou, tp, IoU, mIoU, ...): only
  ``--fail-under`` makes sense ("fail when AP drops below 0.5");
* lower is better (fp, fn, and error counts): only ``--fail-over`` ("fail when there are more
  than 700 false positives");
* a setting (iou_thr, score_thr): an echo of the options, not a result: no gate;
* a count of the input (images, pixels, samples, classes): either gate.

A gate that points the wrong way is a :class:`~iou_cli.errors.UsageError` that names the right
option. Keys with the same meaning across protocols are accepted under their other names
(``mAP`` is COCO's ``AP``; ``AP50`` is the VOC ``mAP`` at ``--iou-thr 0.5``; torchmetrics'
``map``/``map_50``; under ``--protocol ultralytics`` its short names ``mAP50``, ``mAP50-95``,
``map50``, ``mp``, ``mr``); a key whose meaning differs says which key or protocol to use
(Ultralytics' ``mAP50-95`` is not COCO's ``AP``: other matching, no maxDets, float32, another
AP integral).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import UsageError

HIGHER = "higher"
LOWER = "lower"
SETTING = "setting"
COUNT = "count"

_EXACT: dict[str, str] = {
    "iou_thr": SETTING,
    "score_thr": SETTING,
    "tp": HIGHER,
    "fp": LOWER,
    "fn": LOWER,
    "precision": HIGHER,
    "recall": HIGHER,
    "f1": HIGHER,
    "mean_iou": HIGHER,
    "images": COUNT,
    "pixels": COUNT,
    "samples": COUNT,
    "classes": COUNT,
    "n_gt": COUNT,
    "n_det": COUNT,
    "N": COUNT,  # panoptic: categories averaged (All, Things, Stuff)
    "N_th": COUNT,
    "N_st": COUNT,
}
# AP, AP50, APs, APr, AR100, ARl, mAP, IoU, IoU_macro, mIoU, fwIoU, mAcc, aAcc, mDice, ...
_HIGHER_RE = re.compile(r"^(m?AP|AR|IoU|mIoU|fwIoU|mAcc|aAcc|mDice|Dice)")
# metrics that are fractions in [0, 1] (a gate of 50 means a percentage)
_RATIO_RE = re.compile(
    r"^(m?AP|AR|IoU|mIoU|fwIoU|mAcc|aAcc|mDice|Dice|precision$|recall$|f1$|mean_iou$|metrics/)"
)
# error counts of the analyses (TIDE-style): lower is better
_LOWER_RE = re.compile(r"(^|_)(errors?|fp|fn|dupe|bkg|miss)($|_)", re.IGNORECASE)

_WHAT = {
    "fp": "the number of false positives",
    "fn": "the number of missed ground truths",
    "tp": "the number of true positives",
    "iou_thr": "the IoU threshold of the operating point",
    "score_thr": "the confidence threshold of the operating point",
}


def direction(key: str) -> str:
    """``higher``, ``lower``, ``setting`` or ``count`` for a summary key."""
    if key in _EXACT:
        return _EXACT[key]
    if _HIGHER_RE.match(key):
        return HIGHER
    if _LOWER_RE.search(key):
        return LOWER
    return HIGHER


@dataclass(frozen=True)
class Gate:
    """One gate as the user wrote it (``option``, ``text``) and as it is checked (``key``)."""

    option: str  # "--fail-under" or "--fail-over"
    key: str
    value: float
    text: str  # KEY=VALUE as given

    @property
    def over(self) -> bool:
        return self.option == "--fail-over"


def parse_gates(
    fail_under: Iterable[str] | None = None, fail_over: Iterable[str] | None = None
) -> list[Gate]:
    """Syntax only (``KEY=VALUE``, VALUE a finite number); keys are checked by :func:`resolve`."""
    gates: list[Gate] = []
    for option, items in (("--fail-under", fail_under), ("--fail-over", fail_over)):
        for item in items or ():
            key, sep, value = item.partition("=")
            key = key.strip()
            try:
                if not sep or not key:
                    raise ValueError
                number = float(value)
                if not math.isfinite(number):
                    raise ValueError
            except ValueError:
                example = "fp=100" if option == "--fail-over" else "AP=0.5"
                raise UsageError(
                    f"{option}: expected KEY=VALUE such as {example}, got {item!r}"
                ) from None
            gates.append(Gate(option, key, number, item))
    return gates


# Ultralytics' names (results_dict keys, the printed columns, Metric attributes)
_UL_P, _UL_R = "metrics/precision(B)", "metrics/recall(B)"
_UL_MAP50, _UL_MAP = "metrics/mAP50(B)", "metrics/mAP50-95(B)"
_ULTRALYTICS: dict[str, str] = {
    "mAP50": _UL_MAP50,
    "map50": _UL_MAP50,
    "mAP50(B)": _UL_MAP50,
    "mAP50-95": _UL_MAP,
    "mAP50_95": _UL_MAP,
    "mAP50-95(B)": _UL_MAP,
    "mp": _UL_P,
    "precision(B)": _UL_P,
    "mr": _UL_R,
    "recall(B)": _UL_R,
    _UL_P: _UL_P,
    _UL_R: _UL_R,
    _UL_MAP50: _UL_MAP50,
    _UL_MAP: _UL_MAP,
}


def _alias(
    key: str, keys: Sequence[str], protocol: str | None, iou_thr: float | None, option: str
) -> str:
    """The key of this run that means what ``key`` means elsewhere; ``key`` if none."""
    if key in keys:
        return key
    ul = _ULTRALYTICS.get(key)
    if ul is not None:
        if ul in keys:
            return ul
        where = f"--protocol {protocol}" if protocol else "this protocol"
        raise UsageError(
            f"{option}: {key} is Ultralytics' {ul}, which {where} does not compute (other "
            f"matching, no maxDets, float32, another AP integral); run with --protocol "
            "ultralytics to gate it"
        )
    voc = "mAP" in keys and "AP" not in keys
    thr = None if iou_thr is None else round(float(iou_thr) * 100)
    table = {
        "mAP": "AP",
        "map": "AP",
        "map_50": "AP50",
        "mAP75": "AP75",
        "map_75": "AP75",
        "map_small": "APs",
        "map_medium": "APm",
        "map_large": "APl",
    }
    for n in (1, 10, 100, 300):
        table[f"mar_{n}"] = f"AR{n}"
    target = table.get(key, key)
    if voc:
        m = re.fullmatch(r"AP(\d\d)", target)
        if m and thr is not None and int(m.group(1)) == thr:
            return "mAP"  # the VOC mAP at this --iou-thr is AP at that IoU
        if m or target in ("AP", "APs", "APm", "APl") or target.startswith("AR"):
            where = f"--protocol {protocol}" if protocol else "this protocol"
            at = f" at --tp-iou {iou_thr:g}" if iou_thr is not None else ""
            alt = f" (or run with --tp-iou 0.{m.group(1)})" if m else ""
            raise UsageError(
                f"{option}: unknown summary key {key!r} under {where} ({target} is a COCO "
                f"stat); use mAP, the VOC AP{at}{alt}"
            )
    return target if target in keys else key


def resolve(
    gates: Sequence[Gate],
    keys: Sequence[str],
    *,
    protocol: str | None = None,
    iou_thr: float | None = None,
) -> list[Gate]:
    """Check every gate's key against this run's summary ``keys`` and its direction.

    Returns the gates with aliases replaced by this run's keys. Raises UsageError naming the
    right key or the right option.
    """
    out: list[Gate] = []
    for g in gates:
        key = _alias(g.key, keys, protocol, iou_thr, g.option)
        if key not in keys:
            import difflib

            close = difflib.get_close_matches(key, list(keys), n=1, cutoff=0.6)
            lowered = {k.lower(): k for k in keys}
            hint = lowered.get(key.lower()) or (close[0] if close else None)
            raise UsageError(
                f"{g.option}: unknown summary key {g.key!r}"
                + (f" (did you mean {hint}?)" if hint else "")
                + f"; expected one of {', '.join(keys)}"
            )
        d = direction(key)
        what = _WHAT.get(key, key)
        if d == SETTING:
            raise UsageError(
                f"{g.option} {g.text}: {key} is a setting ({what}), not a result; "
                "gate a metric such as AP, mAP, f1 or fp"
            )
        if d == LOWER and not g.over:
            raise UsageError(
                f"--fail-under {g.text}: {key} is lower-is-better ({what}); "
                f"use --fail-over {key}={g.value:g} to fail when it exceeds {g.value:g}"
            )
        if _RATIO_RE.match(key) and not 0 <= g.value <= 1:
            hint = f" (did you mean {g.value / 100:.2f}?)" if 1 < g.value <= 100 else ""
            raise UsageError(
                f"{g.option} {g.text}: {key} is a fraction from 0 to 1, not a percentage{hint}"
            )
        if d == HIGHER and g.over:
            raise UsageError(
                f"--fail-over {g.text}: {key} is higher-is-better ({what}); "
                f"use --fail-under {key}={g.value:g} to fail when it drops below {g.value:g}"
            )
        out.append(Gate(g.option, key, g.value, g.text))
    return out


def failures(gates: Sequence[Gate], summary: Mapping[str, Any]) -> list[str]:
    """One message per failed gate (empty: all passed). An undefined value fails."""
    out: list[str] = []
    for g in gates:
        name = g.option.lstrip("-")
        given = g.text.partition("=")[0].strip()
        key = g.key if given == g.key else f"{g.key} (as {given})"
        value = summary.get(g.key)
        if value is None or (isinstance(value, float) and not math.isfinite(value)):
            need = "<=" if g.over else ">="
            out.append(f"{name}: {key} is undefined (null), required {need} {g.value:g}")
        elif g.over and value > g.value:
            out.append(f"{name}: {key} = {value:.6g} > {g.value:g}")
        elif not g.over and value < g.value:
            out.append(f"{name}: {key} = {value:.6g} < {g.value:g}")
    return out
