"""Typed analysis results. Each is a dataclass with ``to_json()`` (its section of the ``-o json``
report, key for key) that also reads as that section (``section["dAP"]``, ``rows[0]``), so
code written against the JSON shape keeps working. ``Result.analyses`` holds them."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, overload


class Section(Mapping[str, Any]):
    """A dataclass whose fields are its JSON section's keys, in order."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]

    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(fields(self))  # type: ignore[arg-type]


@dataclass(eq=False)
class TideBreakdown(Section):
    """TIDE: the AP at ``pos_thr`` (``baseline``), the AP gained by fixing each error type
    (``dAP``), and how many errors of each type (``count``)."""

    pos_thr: float
    bg_thr: float
    baseline: float | None
    dAP: dict[str, float | None]
    count: dict[str, int]


@dataclass(eq=False)
class Confusion(Section):
    """The confusion matrix at the operating point: rows ground-truth classes and
    "background" (false positives), columns predicted classes and "missed"."""

    score_thr: float | None
    iou_thr: float
    labels: list[str]
    matrix: list[list[int]]


@dataclass(eq=False)
class Calibration(Section):
    """ECE / MCE of the scores against being a true positive at ``iou_thr``: overall (with
    its bins) and per class."""

    iou_thr: float
    n_bins: int
    overall: dict[str, Any]
    per_class: list[dict[str, Any]]


@dataclass(eq=False)
class Rows(Sequence[dict[str, Any]]):
    """A list section (``per_image``, ``label_errors``): one dict per row."""

    rows: list[dict[str, Any]]

    def to_json(self) -> list[dict[str, Any]]:
        return self.rows

    @overload
    def __getitem__(self, i: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, i: slice) -> list[dict[str, Any]]: ...

    def __getitem__(self, i: int | slice) -> Any:
        return self.rows[i]

    def __len__(self) -> int:
        return len(self.rows)

    def __eq__(self, other: object) -> bool:
        return self.rows == (other.rows if isinstance(other, Rows) else other)

    __hash__ = None  # type: ignore[assignment]


def plain(sections: Mapping[str, Any]) -> dict[str, Any]:
    """The sections as their JSON shapes (what the renderers and saved reports read)."""
    return {k: v.to_json() if hasattr(v, "to_json") else v for k, v in sections.items()}
