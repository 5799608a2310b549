"""One Side from per-box records: the shared tail of the CVAT, LabelMe and Open Images readers.

Each reader collects images (stem, width, height) and boxes (image row, class name, corners,
score, where) and hands them here; categories are the file's own label list when it has one
(CVAT ``<labels>``), else class names in name order (as for VOC).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..data import Boxes, Categories, Images, Side
from ..errors import InputError


@dataclass
class Records:
    path: str
    fmt: str
    role: str
    keys: list[str] = field(default_factory=list)
    widths: list[float] = field(default_factory=list)
    heights: list[float] = field(default_factory=list)
    image: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    xyxy: list[list[float]] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    iscrowd: list[bool] = field(default_factory=list)
    labels: list[str] | None = None  # the file's own class list, in its order
    normalized: bool = False
    info: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _index: dict[str, int] = field(default_factory=dict)

    def add_image(self, stem: str, width: float, height: float, where: str) -> int:
        if stem in self._index:
            raise InputError(self.path, where, f"image {stem!r} appears twice")
        self._index[stem] = len(self.keys)
        self.keys.append(stem)
        self.widths.append(width if width > 0 else math.nan)
        self.heights.append(height if height > 0 else math.nan)
        return self._index[stem]

    def image_of(self, stem: str) -> int | None:
        return self._index.get(stem)

    def add_box(
        self,
        image: int,
        name: str,
        corners: list[float],
        score: float,
        where: str,
        iscrowd: bool = False,
    ) -> None:
        x1, y1, x2, y2 = corners
        if not name.strip():
            raise InputError(self.path, where, "empty class name")
        if not all(math.isfinite(v) for v in corners):
            raise InputError(self.path, where, f"expected finite coordinates, got {corners}")
        if x2 < x1 or y2 < y1:
            raise InputError(self.path, where, f"inverted box (x2 < x1 or y2 < y1): {corners}")
        if self.role == "pred" and not math.isfinite(score):
            raise InputError(
                self.path,
                where,
                f"prediction {name!r} has no score (predictions come first: "
                "iou-eval PREDICTIONS GROUND_TRUTH)",
            )
        self.image.append(image)
        self.names.append(name)
        self.xyxy.append(list(corners))
        self.score.append(score)
        self.where.append(where)
        self.iscrowd.append(iscrowd)

    def side(self) -> Side:
        order = list(self.labels) if self.labels is not None else []
        known = set(order)
        extra = sorted({n for n in self.names if n not in known})
        order = extra if self.labels is None else order + extra
        pos = {n: i for i, n in enumerate(order)}
        n = len(self.xyxy)
        xy = np.asarray(self.xyxy, dtype=np.float64).reshape(n, 4)
        boxes = Boxes.build(
            xy,
            image=np.asarray(self.image, dtype=np.int64),
            category=np.asarray([pos[c] for c in self.names], dtype=np.int64),
            score=np.asarray(self.score, dtype=np.float64),
            iscrowd=np.asarray(self.iscrowd, dtype=bool) if self.role == "gt" else None,
            normalized=self.normalized,
        )
        where = list(self.where)

        def locator(origin: int) -> str:
            return where[origin]

        images = Images(
            list(self.keys),
            list(self.keys),
            np.asarray(self.widths, dtype=np.float64),
            np.asarray(self.heights, dtype=np.float64),
        )
        notes = {"files": 1, "info": list(self.info), "warnings": list(self.warnings)}
        side = Side(
            self.path,
            self.fmt,
            images,
            Categories([None] * len(order), list(order)),
            boxes,
            has_scores=n > 0 and bool(np.isfinite(boxes.score).all()),
            notes=notes,
            locator=locator,
        )
        return side
