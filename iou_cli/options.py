"""Typed options: what a run needs to know besides its inputs, built once and checked once.

* :class:`LoadOptions`: what the loaders need besides the two paths;
* :class:`AnalysisOptions`: the analyses to attach (TIDE, confusion, per-image, calibration);
* :class:`RunOptions`: one evaluation: the common settings (protocol, IoU type, operating
  point), subsets, the protocol's own ``Params`` (declared by the protocol module, see
  :mod:`iou_cli.protocols`), and the two groups above.

:meth:`RunOptions.build` routes flat ``name=value`` pairs to these classes by field name: the
CLI hands it its parsed parameters, ``api.evaluate(**keywords)`` its keywords. One
:meth:`RunOptions.validate` checks every value before any input is read; its
:class:`~iou_cli.errors.UsageError` carries the option key and names its flag. A new option
is one field here (or in a protocol's ``Params``), one CLI flag with its help, and a test:
see docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .errors import UsageError, flag

IOU_TYPES = ("bbox", "segm", "obb", "keypoints")
UNKNOWN = ("error", "skip", "skip-images", "skip-classes")


@dataclass
class LoadOptions:
    """Everything the loaders need to know besides the two paths."""

    pred_format: str | None = None  # None: detect; else one of loaders.FORMATS
    gt_format: str | None = None
    iou_type: str = "bbox"  # "bbox", "segm", "obb" (rotated boxes) or "keypoints"
    angle_unit: str = "rad"  # COCO obb angles: "rad" (hotcoco) or "deg"
    names: str | None = None  # class-names file for both sides (YOLO)
    gt_names: str | None = None
    pred_names: str | None = None
    images: str | None = None  # folder of images: sizes read from their headers
    image_size: tuple[float, float] | None = None  # W, H for every image
    # "error"; "skip" (both), "skip-images" or "skip-classes": predictions for images or
    # classes the ground truth does not know
    unknown: str = "error"
    # --- issue 17: layouts as tools write them
    split: str | None = None  # data.yaml / obj.data / ImageSets split (default: val)
    image_map: str | None = None  # COCO dataset: image id <-> file_name for results lists
    voc_origin: int = 0  # 0: VOC corners are continuous pixels; 1: 1-based (devkit)
    protocol: str | None = None  # the evaluation's protocol (set by RunOptions)
    # boxes on an image of unknown size may stay unscaled (NaN) when the other side has no
    # box there: they can only be unmatched (set from the protocol's capability)
    unscaled_boxes: bool = False
    # a results list's category ids against class indices: "auto", "index", "index+1"
    pred_ids: str = "auto"
    # progress(side, done, total): called while reading many files (CLI draws a bar)
    progress: Callable[[str, int, int], None] | None = None
    # keypoints: the user's OKS sigmas (one per keypoint; --sigmas values or file)
    sigmas: tuple[float, ...] | None = None
    jobs: int = 1  # processes decoding a big COCO results list (--jobs, issue 24)

    def names_for(self, role: str) -> str | None:
        """The class-names file of one side: its own (``--pred-names``/``--gt-names``),
        else ``--names``."""
        own = self.pred_names if role == "pred" else self.gt_names
        return own or self.names

    def validate(self) -> None:
        """Choices and ranges of the loaders' options (a :class:`UsageError` names the key)."""
        from .limits import check_ranges

        self.check_choices()
        self.check_origin()
        check_ranges(image_size=self.image_size)

    def check_choices(self) -> None:
        from .loaders.formats import FORMATS

        if self.unknown not in UNKNOWN:
            raise UsageError(
                f"expected one of {', '.join(UNKNOWN)}, got {self.unknown!r}", option="unknown"
            )
        for f in (self.pred_format, self.gt_format):
            if f is not None and f not in FORMATS:
                raise UsageError(f"format {f!r}: expected one of {', '.join(FORMATS)}")

    def check_origin(self) -> None:
        if self.voc_origin not in (0, 1):
            raise UsageError(f"expected 0 or 1, got {self.voc_origin}", option="voc_origin")
        from .loaders.class_ids import check_mode

        check_mode(self.pred_ids)
        if self.angle_unit not in ("rad", "deg"):
            raise UsageError(f"expected rad or deg, got {self.angle_unit!r}", option="angle_unit")


@dataclass
class AnalysisOptions:
    """The analyses attached to a result (``result.analyses``), read from its match table."""

    tide: bool = False
    confusion: bool = False
    per_image: bool = False
    calibration: bool = False
    per_keypoint: bool = False  # which joints fail (keypoints)
    tide_pos_thr: float = 0.5
    tide_bg_thr: float = 0.1

    @property
    def any(self) -> bool:
        return (
            self.tide or self.confusion or self.per_image or self.calibration or self.per_keypoint
        )

    def validate(self, protocol: str) -> None:
        """Option errors, before any reading (TIDE needs a protocol that can re-score)."""
        if not (0.0 < self.tide_pos_thr <= 1.0):
            raise UsageError(
                f"expected a number in (0, 1], got {self.tide_pos_thr}", option="tide_pos_thr"
            )
        if not (0.0 <= self.tide_bg_thr < self.tide_pos_thr):
            raise UsageError(
                f"expected a number in [0, --tide-pos-thr), got {self.tide_bg_thr}",
                option="tide_bg_thr",
            )
        from .protocols import get_protocol, protocol_names

        if self.tide and not get_protocol(protocol).tide:
            able = "/".join(n for n in protocol_names() if get_protocol(n).tide)
            raise UsageError(
                f"--tide re-scores through the COCO AP; it needs --protocol {able} (got {protocol})"
            )


@dataclass
class RunOptions:
    """One evaluation's options. ``params``: the protocol's own ``Params`` (None: its
    defaults); ``classes`` / ``image_ids`` / ``class_agnostic``: the subset evaluated
    (pycocotools' ``catIds`` / ``imgIds`` / ``useCats=0``)."""

    protocol: str = "coco"
    iou_type: str = "bbox"
    iou_thr: float = 0.5  # the operating point's IoU (--tp-iou), and the VOC AP threshold
    score_thr: float | None = None  # the operating point's confidence (None: max F1)
    matches: bool = False  # keep the per-prediction outcome rows (--matches)
    classes: Sequence[str] | None = None
    image_ids: Sequence[str] | None = None
    class_agnostic: bool = False
    params: Any = None
    load: LoadOptions = field(default_factory=LoadOptions)
    analyses: AnalysisOptions = field(default_factory=AnalysisOptions)
    # protocol options given that the chosen protocol does not take (validate() refuses them)
    aside: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.load = replace(self.load, iou_type=self.iou_type, protocol=self.protocol)
        if self.params is None:  # the protocol's defaults (an unknown protocol: validate())
            from .protocols import params_of

            params_cls = params_of(self.protocol)
            self.params = params_cls() if params_cls is not None else None

    # ----------------------------------------------------------------- building

    @classmethod
    def build(
        cls,
        values: Mapping[str, Any],
        *,
        ignore: frozenset[str] = frozenset(),
        checked: bool = False,
    ) -> RunOptions:
        """Route flat ``name=value`` pairs to the option classes by field name.

        A protocol option (a field of some protocol's ``Params``) goes to the chosen
        protocol's ``Params``; one that only other protocols take is kept aside when it is
        set (``None`` / ``False`` mean not given) and :meth:`validate` says it does not
        apply. A name no option class declares is a ``TypeError`` (the API's unknown
        keyword), unless it is in ``ignore`` (the CLI's own parameters: outputs, gates).
        ``checked``: every name is known to be an option or ignored (the CLI's parameters,
        which ``tests/unit/test_options.py`` checks), so one not given needs no look-up in
        the other protocols (that imports every protocol module).
        """
        from .protocols import option_owners, params_of

        protocol = values.get("protocol", "coco")
        params_cls = params_of(protocol)  # None: an unknown protocol (validate says so)
        own = _names(params_cls) if params_cls is not None else set()
        homes = (
            ("run", _names(cls) - {"params", "load", "analyses", "aside"}),
            ("load", _names(LoadOptions) - {"protocol", "iou_type", "unscaled_boxes"}),
            ("analyses", _names(AnalysisOptions)),
        )
        groups: dict[str, dict[str, Any]] = {g: {} for g in ("run", "load", "analyses")}
        mine: dict[str, Any] = {}
        aside: dict[str, Any] = {}
        owners: dict[str, list[str]] | None = None
        for name, value in values.items():
            home = next((g for g, names in homes if name in names), None)
            if home is not None:
                groups[home][name] = value
            elif name in own:
                if value is not None:
                    mine[name] = value
            elif checked and (value is None or value is False or name in ignore):
                continue
            elif name in (owners := option_owners() if owners is None else owners):
                if value is not None and value is not False:
                    aside[name] = value
            elif name not in ignore:
                raise TypeError(f"unexpected option {name!r}")
        return cls(
            **groups["run"],
            params=params_cls(**mine) if params_cls is not None else None,
            load=LoadOptions(**groups["load"]),
            analyses=AnalysisOptions(**groups["analyses"]),
            aside=aside,
        )

    # ----------------------------------------------------------------- checking

    def validate(self) -> None:
        """Every value, before any input is read, in this order: sizes of lists, the
        protocol, ranges and choices of the common options, the loaders' choices, protocol
        options the protocol does not take, its IoU types, the analyses, the VOC origin."""
        from .limits import check_ranges
        from .protocols import get_protocol, option_owners

        given = {**(_fields_of(self.params) if self.params is not None else {}), **self.aside}
        max_dets, iou_thrs = given.get("max_dets"), given.get("iou_thrs")
        check_ranges(max_dets=max_dets, iou_thrs=iou_thrs)  # sizes first: never print 10k
        spec = get_protocol(self.protocol)
        if self.iou_type not in IOU_TYPES:
            raise UsageError(
                f"expected one of {', '.join(IOU_TYPES)}, got {self.iou_type!r}",
                option="iou_type",
            )
        if not (0.0 < self.iou_thr <= 1.0):
            raise UsageError(f"expected an IoU in (0, 1], got {self.iou_thr:g}", option="iou_thr")
        if self.score_thr is not None and not (0.0 <= self.score_thr <= 1.0):
            raise UsageError(
                f"expected a confidence in [0, 1], got {self.score_thr:g}", option="score_thr"
            )
        if max_dets is not None:
            md = list(max_dets)
            if not md or any(m < 1 for m in md) or md != sorted(set(md)):
                raise UsageError(
                    f"expected increasing positive integers such as 1,10,100, got {md}",
                    option="max_dets",
                )
        if iou_thrs is not None:
            th = list(iou_thrs)
            if not th or any(not (0 < t <= 1) for t in th) or th != sorted(set(th)):
                raise UsageError(
                    f"expected increasing thresholds in (0, 1], got {th}", option="iou_thrs"
                )
        self.load.check_choices()
        for name in self.aside:
            users = [n for n in option_owners()[name] if n != self.protocol]
            used_by = f" (it is used by --protocol {'/'.join(users)})" if users else ""
            raise UsageError(
                f"{flag(name)} does not apply to --protocol {self.protocol}{used_by}",
                option=name,
            )
        if self.iou_type not in spec.iou_types:
            raise UsageError(
                f"--protocol {spec.name} evaluates {' and '.join(spec.iou_types)} only "
                f"(got --iou-type {self.iou_type})"
            )
        self.analyses.validate(self.protocol)
        if self.analyses.per_keypoint and self.iou_type != "keypoints":
            raise UsageError("--per-keypoint needs --iou-type keypoints", option="per_keypoint")
        self.load.check_origin()
        check_ranges(image_size=self.load.image_size)

    # ----------------------------------------------------------------- views

    def for_inputs(self) -> RunOptions:
        """These options as ``evaluate`` and the CLI read inputs with them: the default
        ``bbox`` means the geometry a protocol scores when it scores another one only (its
        ``bbox_as``; DOTA: ``obb``). ``evaluate_dataset`` takes a dataset as it is."""
        from .protocols import get_protocol, protocol_names

        if self.iou_type != "bbox" or self.protocol not in protocol_names():
            return self
        native = get_protocol(self.protocol).bbox_as
        return replace(self, iou_type=native) if native else self

    def protocol_params(self) -> dict[str, Any]:
        """The protocol's own options as a dict (its ``Params`` defaults filled in)."""
        from .protocols import get_protocol

        params = self.params if self.params is not None else get_protocol(self.protocol).params()
        return _fields_of(params)

    def protocol_options(self) -> dict[str, Any]:
        """What ``Protocol.run`` reads: the common settings and the protocol's own."""
        return {
            "iou_type": self.iou_type,
            "iou_thr": self.iou_thr,
            "score_thr": self.score_thr,
            "matches": self.matches,
            **self.protocol_params(),
        }

    def loader_options(self) -> LoadOptions:
        """The loaders' options, with what the protocol tells them."""
        from .protocols import get_protocol

        spec = get_protocol(self.protocol)
        return replace(
            self.load,
            iou_type=self.iou_type,
            protocol=self.protocol,
            unscaled_boxes=spec.unscaled_boxes,
        )

    def summary_keys(self) -> list[str]:
        """The summary keys this run reports (metrics, then the operating point): what a
        gate may name."""
        from .metrics import OP_KEYS
        from .protocols import get_protocol

        return get_protocol(self.protocol).summary_keys(self.protocol_options()) + list(OP_KEYS)


def _names(cls: Any) -> set[str]:
    return {f.name for f in fields(cls)}


def _fields_of(obj: Any) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}
