"""Typed evaluations: what a protocol returns, and what analyses and reporters read.

An :class:`Evaluation` keeps the protocol's parameters, the joined dataset, and the match
table of area "all" (:class:`~iou_cli.matching.MatchTable`); each protocol's subclass adds
its curves (COCO: pycocotools' ``precision``/``recall``/``scores`` arrays). ``summary()``
and ``per_class()`` give the numbers; ``result()`` the flat :class:`~iou_cli.result.Result`
the reporters print.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .data import Dataset
from .matching.table import MatchTable
from .result import Result


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
