"""Write the small synthetic VOC and YOLO sample sets (deterministic; no third-party data).

    python sample_data/make_samples.py

* ``voc/annotations/``: 8 images of 640x480, classes cat, dog, person; one difficult person.
* ``yolo/labels/`` + ``yolo/classes.txt``: the same ground truth as YOLO txt (normalised).
* ``yolo/preds/`` + ``yolo/preds/classes.txt``: predictions in Ultralytics order
  (``class cx cy w h conf``), with a class order different from the labels' (matched by name),
  a few localisation errors, a duplicate, a miss and a false alarm.
"""

from __future__ import annotations

import random
from pathlib import Path

HERE = Path(__file__).resolve().parent
W, H = 640, 480
GT_NAMES = ["cat", "dog", "person"]
PRED_NAMES = ["person", "cat", "dog"]  # another order on purpose


def main() -> None:
    rng = random.Random(7)
    voc = HERE / "voc" / "annotations"
    labels = HERE / "yolo" / "labels"
    preds = HERE / "yolo" / "preds"
    for d in (voc, labels, preds):
        d.mkdir(parents=True, exist_ok=True)
        for f in d.glob("*"):
            f.unlink()
    (HERE / "yolo" / "classes.txt").write_text("\n".join(GT_NAMES) + "\n")
    (preds / "classes.txt").write_text("\n".join(PRED_NAMES) + "\n")
    for i in range(8):
        stem = f"img_{i:03d}"
        objs = []
        for _ in range(rng.randint(1, 4)):
            w, h = rng.randint(40, 220), rng.randint(40, 200)
            x, y = rng.randint(0, W - w), rng.randint(0, H - h)
            objs.append((rng.choice(GT_NAMES), x, y, x + w, y + h))
        difficult = i == 2  # one small difficult person
        if difficult:
            objs.append(("person", 600, 10, 630, 50))
        xml = [
            "<annotation>",
            f"  <filename>{stem}.jpg</filename>",
            f"  <size><width>{W}</width><height>{H}</height><depth>3</depth></size>",
        ]
        yolo_lines, pred_lines = [], []
        for k, (name, x1, y1, x2, y2) in enumerate(objs):
            is_diff = difficult and k == len(objs) - 1
            xml += [
                "  <object>",
                f"    <name>{name}</name>",
                f"    <difficult>{int(is_diff)}</difficult>",
                f"    <bndbox><xmin>{x1}</xmin><ymin>{y1}</ymin>"
                f"<xmax>{x2}</xmax><ymax>{y2}</ymax></bndbox>",
                "  </object>",
            ]
            yolo_lines.append(_yolo(GT_NAMES.index(name), x1, y1, x2, y2))
            if i == 5 and k == 0:
                continue  # a missed object
            j = rng.randint(-12, 12)
            conf = round(rng.uniform(0.35, 0.98), 3)
            pred_lines.append(
                _yolo(PRED_NAMES.index(name), x1 + j, y1 - j // 2, x2 + j, y2 + j // 3, conf)
            )
            if i == 3 and k == 0:  # a duplicate
                pred_lines.append(_yolo(PRED_NAMES.index(name), x1, y1, x2 - 5, y2 - 5, 0.31))
        if i == 6:  # a false alarm
            pred_lines.append(_yolo(PRED_NAMES.index("dog"), 20, 20, 120, 100, 0.66))
        xml.append("</annotation>")
        (voc / f"{stem}.xml").write_text("\n".join(xml) + "\n")
        (labels / f"{stem}.txt").write_text("\n".join(yolo_lines) + "\n")
        (preds / f"{stem}.txt").write_text("\n".join(pred_lines) + "\n")


def _yolo(c: int, x1: float, y1: float, x2: float, y2: float, conf: float | None = None) -> str:
    x1, x2 = max(0, x1), min(W, x2)
    y1, y2 = max(0, y1), min(H, y2)
    vals = [(x1 + x2) / 2 / W, (y1 + y2) / 2 / H, (x2 - x1) / W, (y2 - y1) / H]
    text = f"{c} " + " ".join(f"{v:.6f}" for v in vals)
    return text + (f" {conf}" if conf is not None else "")


if __name__ == "__main__":
    main()
