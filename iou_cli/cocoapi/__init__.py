"""A pycocotools drop-in: ``from iou_cli.cocoapi import COCO, COCOeval``.

The names, attributes and call sequence of ``pycocotools.coco.COCO`` and
``pycocotools.cocoeval.COCOeval`` (``params``, ``evaluate()``, ``accumulate()``,
``summarize()``, ``stats``, ``eval``, ``evalImgs``), with the numbers computed by iou-eval's
own vectorised COCO engine (:mod:`iou_cli.protocols.coco`), bit-identical to pycocotools.
``COCOeval`` also takes pycocotools' own ``COCO`` objects.

Printing: like the rest of the library, nothing here prints, with one exception kept for
the API contract: :meth:`COCOeval.summarize` prints pycocotools' twelve summary lines (code
that calls it expects them on stdout). The progress lines pycocotools prints while loading,
evaluating and accumulating are not printed. See docs/pycocotools-dropin.md.
"""

from __future__ import annotations

from .coco import COCO
from .cocoeval import COCOeval, Params

__all__ = ["COCO", "COCOeval", "Params"]
