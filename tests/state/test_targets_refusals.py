"""Targets given per batch: what is refused (a label outside the categories, an image given
twice, parts that cannot merge, newer files), what the ids are, real torch tensors, and the
partial files they write merged by ``iou-eval merge``."""

from __future__ import annotations

import copy
import json
import os
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from iou_cli import Evaluator, evaluate
from iou_cli.errors import InputError, UsageError
from iou_cli.state.codec import FORMAT_VERSION
from tests.oracle.cocogen import random_scene
from tests.state.test_merge_exact import same
from tests.state.test_targets_exact import per_image

ROOT = Path(__file__).resolve().parents[2]
TORCH = ROOT / ".venv" / "ultralytics-oracle"

CATS = [{"id": 1, "name": "cat"}, {"id": 2, "name": "dog"}, {"id": 5, "name": "fox"}]


def image(k: int | None, labels: list[int], pred_labels: list[int] | None = None) -> Any:
    n, m = len(labels), len(pred_labels if pred_labels is not None else labels)
    target: dict[str, Any] = {
        "boxes": np.tile([10.0, 10.0, 50.0, 60.0], (n, 1)),
        "labels": np.array(labels, dtype=np.int64),
    }
    if k is not None:
        target["image_id"] = k
    pred = {
        "boxes": np.tile([12.0, 10.0, 50.0, 60.0], (m, 1)),
        "scores": np.linspace(0.9, 0.5, m),
        "labels": np.array(pred_labels if pred_labels is not None else labels, dtype=np.int64),
    }
    return pred, target


def update(ev: Evaluator, *images: Any) -> None:
    ev.update([p for p, _ in images], [t for _, t in images])


def test_a_label_outside_the_categories_names_the_update_and_the_image() -> None:
    ev = Evaluator(protocol="coco", categories=CATS)
    update(ev, image(7, [1]))
    with pytest.raises(InputError) as err:
        update(ev, image(8, [2]), image(9, [1, 3]))
    assert str(err.value) == (
        "update 2:targets[1].labels[1]: label 3 of image 9 is not one of the categories (1, 2, 5)"
    )
    with pytest.raises(InputError, match=r"update 3:predictions\[0\].labels\[0\]: label 4 "):
        update(ev, image(10, [1], pred_labels=[4]))


def test_an_image_given_twice_is_refused() -> None:
    ev = Evaluator(protocol="coco", categories=[1, 2, 5])
    update(ev, image(7, [1]), image(8, [2]))
    with pytest.raises(UsageError, match="update 2: image 8 was already evaluated"):
        update(ev, image(8, [2]))
    with pytest.raises(InputError, match=r"targets\[1\]: image 9 is given twice in this batch"):
        update(ev, image(9, [1]), image(9, [2]))
    other = Evaluator(protocol="coco", categories=[1, 2, 5])
    update(other, image(3, [1]), image(8, [1]))
    with pytest.raises(InputError, match="image 8 is also in part 1 .1 image.s. overlap"):
        Evaluator.merge([ev, other])
    both = Evaluator.merge([ev, other], allow_overlap=True).state()
    assert both.image_keys is not None and both.image_keys.tolist() == [3, 7, 8]


def test_assigned_ids_do_not_merge_and_say_why() -> None:
    a, b = (Evaluator(protocol="voc", categories=CATS) for _ in range(2))
    update(a, image(None, [1]))
    update(b, image(None, [2]))
    with pytest.raises(InputError, match="ids assigned in order of arrival start at 0"):
        Evaluator.merge([Evaluator.from_bytes(a.to_bytes()), b])
    with pytest.raises(InputError, match="an image_id, where earlier targets had none"):
        update(a, image(4, [1]))


def test_parts_that_cannot_merge() -> None:
    ids = iter(range(100))

    def part(categories: Any = CATS, protocol: str = "coco", **kw: Any) -> Evaluator:
        ev = Evaluator(protocol=protocol, categories=categories, **kw)
        update(ev, image(next(ids), [1]))
        return ev

    cases = [
        (part([1, 2, 5]), "a different categories"),  # the same ids, no names
        (part(list(reversed(CATS))), None),  # the same table in another order: fine
        (part(max_dets=[1, 10, 50]), "different parameters .max_dets"),
        (part(protocol="voc"), "a different protocol"),
        (part(iou_thrs=[0.5, 0.75]), "different parameters .iou_thrs"),
    ]
    for other, message in cases:
        if message is None:
            Evaluator.merge([part(), other])
        else:
            with pytest.raises(InputError, match=message):
                Evaluator.merge([part(), other])
    with_file = Evaluator("sample_data/coco/gt.json")
    with_file.update([], image_ids=[])
    with pytest.raises(InputError, match="targets given per batch .images by id., the other"):
        Evaluator.merge([with_file, part()])


def test_usage_errors() -> None:
    with pytest.raises(UsageError, match="give a ground truth or categories="):
        Evaluator("sample_data/coco/gt.json", categories=[1])
    with pytest.raises(UsageError, match="--protocol ultralytics --iou-type bbox needs a ground"):
        Evaluator(protocol="ultralytics", categories=[1])
    with pytest.raises(UsageError, match="categories\\[1\\]: category id 1 is given twice"):
        Evaluator(protocol="coco", categories=[1, {"id": 1}])
    with pytest.raises(UsageError, match="categories: expected at least one"):
        Evaluator(protocol="coco", categories=[])
    ev = Evaluator(protocol="coco", categories=[1])
    with pytest.raises(UsageError, match="give each batch's targets"):
        ev.update([image(1, [1])[0]])


def test_file_versions() -> None:
    """An id-keyed state is format version 2; a ground-truth file's state stays version 1
    (what earlier releases write and read); a version beyond 2 is refused."""
    ev = Evaluator(protocol="coco", categories=CATS)
    update(ev, image(7, [1]), image(3, [5]))
    data = ev.to_bytes()
    assert struct.unpack_from("<I", data, 8)[0] == FORMAT_VERSION == 2
    back = Evaluator.from_bytes(data).state()
    assert back.image_keys is not None and back.image_keys.tolist() == [3, 7]
    old = Evaluator("sample_data/coco/gt.json")
    old.update([], image_ids=[])
    assert struct.unpack_from("<I", old.to_bytes(), 8)[0] == 1
    newer = data[:8] + struct.pack("<I", 3) + data[12:]
    with pytest.raises(InputError, match="version 3 is newer than this iou-eval reads .2."):
        Evaluator.from_bytes(newer, "p.iou")


def test_no_update_computes_an_empty_result_and_merges() -> None:
    empty = Evaluator(protocol="coco", categories=CATS)
    same(evaluate([], {"images": [], "annotations": [], "categories": CATS}), empty.compute())
    full = Evaluator(protocol="coco", categories=CATS)
    update(full, image(1, [1, 2]))
    merged = Evaluator.merge([Evaluator.from_bytes(empty.to_bytes()), full]).compute()
    same(full.compute(), merged)


def test_cli_merge_of_evaluator_parts(tmp_path: Path) -> None:
    """Partial files written by ``to_bytes`` in targets mode: ``iou-eval merge`` prints what
    ``iou-eval PRED GT`` prints for the equivalent files (the title aside)."""
    gt, dets = random_scene(5, n_images=8, n_cats=3)
    ids = [im["id"] for im in gt["images"]]
    parts = []
    for k, chunk in enumerate((ids[:3], ids[3:])):
        ev = Evaluator(protocol="coco", categories=gt["categories"])
        pairs = [per_image(gt, dets, i, "xyxy", np.asarray) for i in chunk]
        ev.update([p for p, _ in pairs], [t for _, t in pairs])
        path = tmp_path / f"part{k}.iou"
        path.write_bytes(ev.to_bytes())
        parts.append(str(path))
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dets.json").write_text(json.dumps(dets))
    cli = [sys.executable, "-m", "iou_cli"]
    merged = subprocess.run([*cli, "merge", *parts, "-o", "json"], capture_output=True, text=True)
    one = subprocess.run(
        [*cli, str(tmp_path / "dets.json"), str(tmp_path / "gt.json"), "-o", "json"],
        capture_output=True,
        text=True,
    )
    assert merged.returncode == 0 == one.returncode, merged.stderr + one.stderr
    a, b = json.loads(merged.stdout), json.loads(one.stdout)
    assert a["summary"] == b["summary"] and a["per_class"] == b["per_class"]


@pytest.mark.skipif(
    not (TORCH / "torch").is_dir(), reason="no CPU torch at .venv/ultralytics-oracle"
)
def test_real_torch_tensors() -> None:
    """torch tensors straight from a training loop (in a child process with torch)."""
    gt, dets = random_scene(21, n_images=9, n_cats=4)
    env = dict(os.environ, PYTHONPATH=f"{TORCH}{os.pathsep}{ROOT}")
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("torch_targets_child.py"))],
        input=json.dumps({"gt": gt, "dets": dets, "protocol": "coco"}),
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    summary, precision = (json.loads(line) for line in proc.stdout.splitlines())
    one = evaluate(copy.deepcopy(dets), copy.deepcopy(gt))
    assert summary == json.loads(json.dumps(one.summary, default=str))
    assert precision == np.asarray(one.evaluation.precision).ravel().tolist()
