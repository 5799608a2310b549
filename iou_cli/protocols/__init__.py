"""Matching protocols behind one registry: COCO (pycocotools), VOC and VOC2007 (devkit),
LVIS (lvis-api), Ultralytics (``yolo val``).

Each protocol module defines a :class:`Protocol`: the options it takes beyond the common
ones, its summary keys, and ``run(ds, options) -> Evaluation``. An option the chosen protocol
does not use is a usage error, never silently ignored. Adding a protocol means one module
and one line in ``_MODULES``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UsageError

if TYPE_CHECKING:  # pragma: no cover
    from ..data import Dataset
    from ..result import Evaluation

# options every protocol takes (API keyword names)
COMMON_OPTIONS = frozenset({"iou_type", "iou_thr", "score_thr", "matches"})

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
    """One protocol: ``options`` are its own option names (API keywords) beyond
    :data:`COMMON_OPTIONS`; ``defaults`` their values when not given; ``summary_keys(opts)``
    the summary's metric keys (the operating-point keys come on top); ``run(ds, opts)``
    evaluates a joined dataset."""

    name: str
    description: str
    options: frozenset[str]
    defaults: Mapping[str, Any]
    iou_types: tuple[str, ...]
    summary_keys: Callable[[Mapping[str, Any]], list[str]]
    run: Callable[[Dataset, Mapping[str, Any]], Evaluation]


def protocol_names() -> tuple[str, ...]:
    return tuple(_MODULES)


def get_protocol(name: str) -> Protocol:
    """The registered protocol ``name`` (a :class:`UsageError` names the choices)."""
    module = _MODULES.get(name)
    if module is None:
        raise UsageError(f"--protocol: expected one of {', '.join(protocol_names())}, got {name!r}")
    protocols: dict[str, Protocol] = importlib.import_module(f".{module}", __name__).PROTOCOLS
    return protocols[name]


def option_flag(name: str) -> str:
    """The command-line spelling of an API option name (``plus_one`` -> ``--plus-one``)."""
    return "--" + name.replace("_", "-")


def resolve_options(protocol: Protocol, given: Mapping[str, Any]) -> dict[str, Any]:
    """The protocol's full option set: ``given`` (None / False = not given) over its
    defaults. An option set for a protocol that does not use it is a :class:`UsageError`."""
    opts: dict[str, Any] = {}
    for key, value in given.items():
        if key in COMMON_OPTIONS:
            opts[key] = value
            continue
        if key in protocol.options:
            if value is not None:
                opts[key] = value
            continue
        if value is None or value is False:
            continue
        users = [
            n for n in protocol_names() if key in get_protocol(n).options and n != protocol.name
        ]
        used_by = f" (it is used by --protocol {'/'.join(users)})" if users else ""
        raise UsageError(
            f"{option_flag(key)} does not apply to --protocol {protocol.name}{used_by}"
        )
    for key, value in protocol.defaults.items():
        opts.setdefault(key, value)
    iou_type = opts.get("iou_type", "bbox")
    if iou_type not in protocol.iou_types:
        raise UsageError(
            f"--protocol {protocol.name} evaluates {' and '.join(protocol.iou_types)} only "
            f"(got --iou-type {iou_type})"
        )
    return opts
