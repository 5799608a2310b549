"""What an evaluation returns: the reporter's only input."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class Matches:
    """One row per prediction and per missed ground truth at the operating point.

    Columns (equal length): ``image`` (image key as in the ground truth), ``category``
    (category name or id), ``pred_id`` / ``gt_id`` (annotation ids, -1 where none),
    ``score`` (NaN for a missed ground truth), ``iou`` (NaN where no pair), ``outcome``
    (``TP``, ``FP``, ``FN`` or ``ignored``).
    """

    columns: dict[str, Any]

    def __len__(self) -> int:
        return len(self.columns["outcome"]) if self.columns else 0


@dataclass
class Result:
    """``summary`` keys follow the contract (ordered); ``per_class`` rows each carry
    ``category_id`` and ``name`` first; ``params`` echoes the settings that produced them.
    Undefined values are ``None`` (JSON ``null``)."""

    summary: dict[str, Any]
    per_class: list[dict[str, Any]]
    params: dict[str, Any]
    matches: Matches | None = None
    warnings: list[str] = field(default_factory=list)
    info: list[str] = field(default_factory=list)
    # JSON "meta": version, predictions, ground_truth, protocol, seconds, warnings (set by
    # the CLI, which knows the paths as typed and the wall time)
    meta: dict[str, Any] = field(default_factory=dict)


def clean(value: Any) -> Any:
    """NumPy scalars -> Python; NaN and pycocotools' -1 sentinel are handled by callers."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value
