"""What an evaluation returns: the typed :class:`Evaluation` of a protocol, and the flat
:class:`Result` the reporters read.

An :class:`Evaluation` keeps the protocol's parameters, the joined dataset, and the match
table of area "all" (:class:`~iou_cli.matching.MatchTable`); each protocol's subclass adds
its curves (COCO: pycocotools' ``precision``/``recall``/``scores`` arrays). ``summary()``
and ``per_class()`` give the numbers; ``result()`` the flat :class:`Result` the reporters
print. ``Matches`` (the per-prediction outcome rows) is defined beside the match table that
builds it and re-exported here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .matching.table import Matches

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .data import Dataset
    from .matching.table import MatchTable

__all__ = ["Evaluation", "Matches", "Result", "clean"]


@dataclass
class Evaluation:
    """Base of every protocol's evaluation (see the module docstring)."""

    protocol: str
    params: Any
    dataset: Dataset
    table: MatchTable

    def summary(self) -> dict[str, Any]:
        raise NotImplementedError

    def per_class(self) -> list[dict[str, Any]]:
        raise NotImplementedError

    def result(self) -> Result:
        raise NotImplementedError


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
    # the typed evaluation behind the numbers (protocol verbs), with its match table
    evaluation: Evaluation | None = field(default=None, repr=False)
    # further top-level JSON sections, in order (analyses: "tide", "curves", ...)
    extra: dict[str, Any] = field(default_factory=dict)
    # the ground truth's fingerprint (data.fingerprint) where the evaluation's dataset is a
    # skeleton without its boxes (a result merged from partial states)
    gt_fingerprint: str | None = field(default=None, repr=False)

    def __repr__(self) -> str:
        """One line: the protocol, the first few summary values, the sizes (the full
        dataclass repr of a COCO-scale result runs to hundreds of kilobytes)."""
        shown = []
        for key, value in list(self.summary.items())[:4]:
            v = clean(value)
            shown.append(f"{key}={v:.4f}" if isinstance(v, float) else f"{key}={v!r}")
        parts = [f"protocol={self.params.get('protocol')!r}", *shown]
        parts.append(f"classes={len(self.per_class)}")
        if self.matches is not None:
            parts.append("matches=...")
        if self.extra:
            parts.append(f"extra={list(self.extra)}")
        return f"Result({', '.join(parts)})"

    @property
    def table(self) -> Any:
        """The match table of area "all" (``None`` for verbs without one)."""
        return None if self.evaluation is None else self.evaluation.table

    def to_pandas(self) -> pd.DataFrame:
        """One row per class with the per-class columns (pandas is imported here only)."""
        import pandas as pd

        cols: list[str] = []
        for row in self.per_class:
            for key in row:
                if key not in cols:
                    cols.append(key)
        return pd.DataFrame(
            [{k: clean(row.get(k)) for k in cols} for row in self.per_class], columns=cols
        )


def clean(value: Any) -> Any:
    """One number for the outside world: NumPy scalars (and 0-d arrays) become Python
    scalars; NaN and infinities become ``None`` (undefined: empty in CSV, ``null`` in JSON).
    pycocotools' -1 sentinel is the caller's business. Anything else passes through."""
    if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and value.ndim == 0):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
