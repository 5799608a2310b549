"""Matching protocols behind one registry: COCO (pycocotools), VOC and VOC2007 (devkit),
LVIS (lvis-api), Ultralytics (``yolo val``).

Each protocol module defines :class:`Protocol` values (its ``PROTOCOLS``): its own options
(``params``, a dataclass; see :class:`iou_cli.options.RunOptions`), its summary keys and their
gate directions, the kind of curves its evaluation holds, what it can do (bootstrap scorer,
TIDE re-scoring, boxes left unscaled, IoU types), and ``run(ds, options) -> Evaluation``. No
module outside this package tests a protocol by its name: it asks the registry. Adding a
protocol means one module and one line in ``_MODULES``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..data import Dataset
    from ..result import Evaluation

# protocol name -> module (imported on first use, so `--help` stays light)
_MODULES = {
    "coco": "coco",
    "voc": "voc",
    "voc07": "voc",
    "lvis": "lvis",
    "dota": "dota",
    "ultralytics": "ultralytics",
}


@dataclass(frozen=True)
class Protocol:
    """One protocol.

    * ``params``: the dataclass of its own options (beyond the common ones: IoU type,
      operating point, matches); its field defaults are the protocol's defaults;
    * ``summary_keys(opts)``: the summary's metric keys (the operating-point keys come on
      top; :meth:`gate_keys` adds each key's gate direction);
    * ``curves``: the curves its evaluation holds, ``"coco"`` (pycocotools' precision
      arrays) or ``"voc"`` (the devkit's curve per class);
    * ``bootstrap``: the kind of paired-bootstrap scorer (``"coco"``, ``"voc"``; None: no
      confidence intervals), with ``bootstrap_options`` for the evaluations it re-scores;
    * ``tide``: TIDE can re-score through its AP;
    * ``unscaled_boxes``: normalised boxes on images of unknown size may stay unscaled when
      the other side has no box there (they can only be unmatched);
    * ``sigma_default``: whose rule gives keypoint sigmas the data lacks (``"coco"``:
      COCO's 17 or an error; ``"ultralytics"``: COCO's for [17, 3], else 1/K);
    * ``bbox_as``: the geometry the default ``--iou-type bbox`` means for a protocol that
      scores another one only (DOTA: ``obb``);
    * ``run(ds, opts)``: evaluates a joined dataset (``opts``: the common options and the
      protocol's own, as :meth:`iou_cli.options.RunOptions.protocol_options` gives them).
    """

    name: str
    description: str
    params: type
    iou_types: tuple[str, ...]
    summary_keys: Callable[[Mapping[str, Any]], list[str]]
    run: Callable[[Dataset, Mapping[str, Any]], Evaluation]
    curves: str = "coco"
    bootstrap: str | None = None
    bootstrap_options: Mapping[str, Any] = field(default_factory=dict)
    tide: bool = False
    unscaled_boxes: bool = False
    bbox_as: str | None = None
    class_key: str = "AP"
    sigma_default: str = "coco"  # keypoints without sigmas of their own: whose rule applies

    @property
    def options(self) -> frozenset[str]:
        """Its own option names (API keywords)."""
        return frozenset(f.name for f in fields(self.params))

    def gate_keys(self, opts: Mapping[str, Any]) -> dict[str, str]:
        """Every summary key with its gate direction (``higher``, ``lower``, ``setting``,
        ``count``; see :mod:`iou_cli.gates`)."""
        from ..gates import direction
        from ..metrics import OP_KEYS

        return {k: direction(k) for k in [*self.summary_keys(opts), *OP_KEYS]}


def protocol_names() -> tuple[str, ...]:
    return tuple(_MODULES)


def get_protocol(name: str) -> Protocol:
    """The registered protocol ``name`` (a :class:`UsageError` names the choices)."""
    module = _MODULES.get(name)
    if module is None:
        raise UsageError(
            f"expected one of {', '.join(protocol_names())}, got {name!r}", option="protocol"
        )
    protocols: dict[str, Protocol] = importlib.import_module(f".{module}", __name__).PROTOCOLS
    return protocols[name]


def params_of(name: str) -> type | None:
    """The ``Params`` class of protocol ``name`` (None when there is no such protocol)."""
    return get_protocol(name).params if name in _MODULES else None


@cache
def option_owners() -> dict[str, list[str]]:
    """Each protocol option's name -> the protocols that take it (registry order)."""
    owners: dict[str, list[str]] = {}
    for name in protocol_names():
        for option in sorted(get_protocol(name).options):
            owners.setdefault(option, []).append(name)
    return owners
