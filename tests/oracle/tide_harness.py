"""Run the reference TIDE (``tidecv`` 1.0.1 from PyPI) on scenes given as JSON on stdin.

Runs in its own process (tests/oracle/tide_oracle.py starts it) with ``PYTHONPATH`` pointing
at the fixture install that ``make tidecv-oracle`` makes (``pip install --no-deps --target
.venv/tidecv-oracle tidecv appdirs``). tidecv imports OpenCV, matplotlib and seaborn at module
level for its plots only; this process stubs whichever of them is missing (none is called by
the numbers compared here). Nothing of tidecv is copied.

Input: ``[{"images": [id, ...], "categories": [id, ...], "gt": [[image, cat, x, y, w, h], ...],
"dets": [[image, cat, score, x, y, w, h], ...]}, ...]``. Output, per scene:
``{"ap": AP%, "main": {name: dAP%}, "special": {name: dAP%}, "count": {name: n},
"pred_error": {det index: name}, "gt_miss": [gt index, ...]}``.
"""

from __future__ import annotations

import importlib
import json
import sys
import types


class _Inert:
    """Stands for any attribute of a stubbed plotting module: callable, subscriptable."""

    def __getattr__(self, attr: str) -> _Inert:
        if attr.startswith("__"):
            raise AttributeError(attr)
        return self

    def __call__(self, *args: object, **kwargs: object) -> _Inert:
        return self

    def __getitem__(self, key: object) -> _Inert:
        return self

    def __setitem__(self, key: object, value: object) -> None:
        pass


def _stub(name: str) -> None:
    try:
        importlib.import_module(name)
    except ImportError:
        mod = types.ModuleType(name)

        def __getattr__(attr: str) -> object:  # noqa: N807
            if attr.startswith("__"):
                raise AttributeError(attr)
            return _Inert()

        mod.__getattr__ = __getattr__  # type: ignore[method-assign]
        sys.modules[name] = mod


for _name in ("cv2", "seaborn", "matplotlib", "matplotlib.pyplot", "matplotlib.lines"):
    _stub(_name)

from tidecv import TIDE, Data  # noqa: E402


def run_scene(scene: dict) -> dict:
    gt = Data("gt")
    preds = Data("preds")
    for cat in scene["categories"]:
        gt.add_class(cat, str(cat))
        preds.add_class(cat, str(cat))
    for img in scene["images"]:
        gt.add_image(img, str(img))
        preds.add_image(img, str(img))
    for image, cat, x, y, w, h in scene["gt"]:
        gt.add_ground_truth(image, cat, [x, y, w, h])
    for image, cat, score, x, y, w, h in scene["dets"]:
        preds.add_detection(image, cat, score, [x, y, w, h])
    tide = TIDE()
    run = tide.evaluate(gt, preds, mode=TIDE.BOX, name="run")
    main = {k.short_name: float(v) for k, v in run.fix_main_errors().items()}
    special = {k.short_name: float(v) for k, v in run.fix_special_errors().items()}
    count = {k.short_name: int(v) for k, v in run.count_errors().items()}
    pred_error: dict[int, str] = {}
    gt_miss: list[int] = []
    for err in run.errors:
        if hasattr(err, "pred"):
            pred_error[int(err.pred["_id"])] = type(err).short_name
        else:
            gt_miss.append(int(err.gt["_id"]))
    return {
        "ap": float(run.ap),
        "main": main,
        "special": special,
        "count": count,
        "pred_error": pred_error,
        "gt_miss": sorted(gt_miss),
    }


def main() -> None:
    scenes = json.load(sys.stdin)
    json.dump([run_scene(s) for s in scenes], sys.stdout)


if __name__ == "__main__":
    main()
