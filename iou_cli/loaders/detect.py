"""Which format a path holds (``--pred-format`` / ``--gt-format`` override it), and which
file or folder of an export root is read.

* a ``.json`` file: COCO (dataset or results list); LabelMe (``"shapes"``) by content;
* a ``.xml`` file, or a folder holding ``.xml`` files (directly or in ``Annotations/``): VOC;
  a ``.xml`` file whose root is ``<annotations>``: CVAT;
* a ``.txt`` file, or a folder holding ``obj.data``, ``labels/``, ``obj_train_data/`` or
  ``.txt`` files: YOLO (predictions: Ultralytics ``class cx cy w h conf`` order; the darknet
  ``class conf cx cy w h`` order needs ``--pred-format yolo-darknet``);
* DOTA txt: a folder of ``Task1_<class>.txt`` result files, a ``labelTxt/`` folder, or txt
  files whose lines are ``x1 y1 ... y4 category difficult`` (or ``imagesource:``/``gsd:``);
* a ``.csv`` file with Open Images' columns: Open Images;
* formats that are not read (KITTI, TFRecord, VIA, CreateML, Label Studio): an error that
  says how to convert them.
"""

from __future__ import annotations

import os
import stat

from ..errors import InputError
from .files import (
    check_file_arg,
    is_readable_member,
    is_stream,
    note_read,
    read_input,
    shown,
    stat_input,
)


def detect_format(path: str) -> str:
    """``coco``, ``voc`` or ``yolo`` for a file or folder (or ``-``, a pipe: COCO JSON)."""
    if path != "-":
        st = stat_input(path)
        if not stat.S_ISDIR(st.st_mode) and not stat.S_ISREG(st.st_mode):
            check_file_arg(path)  # a device or a socket is refused before it is opened
    if is_stream(path):
        return sniff_stream(path)
    if not os.path.exists(path):
        raise InputError(path, None, "no such file or folder")
    if os.path.isfile(path):
        low = path.lower()
        foreign = _foreign_file(path, low)
        if foreign is not None:
            return foreign
        if low.endswith(".xml"):
            return "voc"
        if low.endswith(".txt") and _dota_txt(path):
            return "dota"
        if low.endswith((".txt", ".yaml", ".yml")) or os.path.basename(low) == "obj.data":
            return "yolo"
        if low.endswith((".json", ".json.gz")):
            return "coco"
        with open(path, "rb") as f:
            head = f.read(256).lstrip(b"\xef\xbb\xbf \t\r\n")
        if head[:1] in (b"{", b"["):
            return "coco"
        if head[:1] == b"<":
            return "voc"
        return "coco"  # the COCO reader says what is wrong
    try:
        entries = os.listdir(path)
    except OSError as e:
        raise InputError(path, None, f"cannot list folder: {e.strerror or e}") from None
    lowered = {e.lower() for e in entries}
    if os.path.basename(os.path.normpath(path)) == "label_2" or "label_2" in lowered:
        raise InputError(path, None, _NOT_READ.format(what="KITTI labels (label_2/)"))
    if any(e.endswith(".xml") for e in lowered):
        return "voc"
    if "annotations" in lowered and os.path.isdir(os.path.join(path, "Annotations")):
        sub = os.path.join(path, "Annotations")
        if any(n.lower().endswith(".xml") for n in os.listdir(sub)):
            return "voc"
    if _dota_folder(path, entries):
        return "dota"
    if {"obj.data", "labels", "obj_train_data", "data.yaml", "dataset.yaml"} & lowered or any(
        e.endswith((".txt", ".names")) for e in lowered
    ):
        return "yolo"
    jsons = sorted(e for e in entries if e.lower().endswith(".json"))
    if jsons and _head(os.path.join(path, jsons[0])).find(b'"shapes"') >= 0:
        return "labelme"
    if jsons:
        raise InputError(
            path,
            None,
            f"a folder of JSON files ({', '.join(jsons[:3])}): pass the COCO JSON file itself",
        )
    raise InputError(
        path, None, "cannot tell the format: no .xml (VOC), .txt (YOLO) or .json (COCO) files here"
    )


def _dota_txt(path: str) -> bool:
    """A DOTA txt file: named ``Task1_<class>.txt``, or its first line is a DOTA header
    (``imagesource:``, ``gsd:``) or object line (8 numbers, a category, a 0/1 flag)."""
    from .dota import TASK1, is_dota_gt_line

    if TASK1.match(os.path.basename(path)):
        return True
    for line in _head(path, 2048).decode("utf-8", "replace").splitlines()[:3]:
        if not line.strip():
            continue
        low = line.strip().lower()
        return low.startswith(("imagesource:", "gsd:")) or is_dota_gt_line(line)
    return False


def _dota_folder(path: str, entries: list[str]) -> bool:
    """A DOTA folder: Task1 result files, a ``labelTxt/`` folder, or txt files that read as
    DOTA ground truth (their first file decides)."""
    from .dota import TASK1

    if any(TASK1.match(e) for e in entries):
        return True
    if "labelTxt" in entries and os.path.isdir(os.path.join(path, "labelTxt")):
        return True
    txts = sorted(e for e in entries if e.lower().endswith(".txt"))
    for name in txts[:20]:  # the first label file with a line decides
        full = os.path.join(path, name)
        if os.path.isfile(full) and _head(full, 512).strip():
            return _dota_txt(full)
    return False


_NOT_READ = (
    "{what} is not read by iou-eval; convert it to COCO JSON, Pascal VOC XML or YOLO txt "
    "(e.g. with datumaro: datum convert -if <format> -f coco)"
)


def sniff_stream(path: str) -> str:
    """The format of a pipe's content (read once, kept for the run): ``coco`` (JSON), else
    a located error."""
    head = read_input(path, expected="a JSON file", decompress=True)[:256]
    head = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] in (b"{", b"["):
        return "coco"
    if not head:
        raise InputError(shown(path), None, "empty input, expected COCO JSON")
    what = "XML (VOC)" if head[:1] == b"<" else "not JSON"
    raise InputError(
        shown(path),
        None,
        f"{what}: only COCO JSON can be read from stdin or a pipe (VOC and YOLO are folders "
        "of files: pass the folder)",
    )


def _head(path: str, n: int = 4096) -> bytes:
    is_readable_member(path)  # a FIFO named *.json in a folder: refused by name, never opened
    note_read(path)
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError as e:
        raise InputError(path, None, f"cannot read: {e.strerror or e}") from None


def _foreign_file(path: str, low: str) -> str | None:
    """The format of a single file that is not COCO/VOC/YOLO by name: ``cvat``, ``labelme``,
    ``openimages``, or an error naming a format that is not read."""
    if low.endswith((".tfrecord", ".record", ".pbtxt")):
        raise InputError(path, None, _NOT_READ.format(what="TFRecord (TensorFlow OD API)"))
    if low.endswith(".csv"):
        import csv
        import io

        first = _head(path).decode("utf-8-sig", "replace").splitlines()[:1]
        header = next(csv.reader(io.StringIO(first[0]))) if first else []
        from .openimages import is_openimages_header

        if is_openimages_header([h.strip() for h in header]):
            return "openimages"
        raise InputError(
            path,
            1,
            _NOT_READ.format(what="this CSV layout")
            + "; Open Images CSV needs the columns ImageID, LabelName, XMin, XMax, YMin, YMax",
        )
    head = _head(path)
    body = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if low.endswith(".xml") or body[:1] == b"<":
        text = head.decode("utf-8", "replace")
        import re

        m = re.search(r"<([A-Za-z_][\w.-]*)", re.sub(r"<\?.*?\?>|<!--.*?-->", "", text, flags=re.S))
        if m and m.group(1) == "annotations":
            return "cvat"
        return None
    if low.endswith(".json") or body[:1] in (b"{", b"["):
        if b'"_via_img_metadata"' in head or (b'"regions"' in head and b'"filename"' in head):
            raise InputError(
                path, None, _NOT_READ.format(what="a VIA (VGG Image Annotator) project")
            )
        if b'"shapes"' in head and body[:1] == b"{":
            return "labelme"
        if b'"coordinates"' in head and b'"image"' in head and body[:1] == b"[":
            raise InputError(path, None, _NOT_READ.format(what="CreateML JSON"))
        if (
            b'"result"' in head
            and (b'"annotations"' in head or b'"data"' in head)
            and body[:1] == b"["
        ):
            raise InputError(
                path,
                None,
                _NOT_READ.format(what="a Label Studio JSON export")
                + " (Label Studio exports COCO, Pascal VOC and YOLO directly)",
            )
    return None


_SPLIT_DIRS = ("train", "valid", "val", "validation", "test")
_ROBOFLOW_COCO = "_annotations.coco.json"


def split_root(path: str, split: str | None) -> tuple[str, str | None]:
    """An export root whose splits are folders (Roboflow: ``train/ valid/ test/`` beside
    ``README.roboflow.txt``, in COCO, VOC or YOLO form): the chosen split's folder, or its
    ``_annotations.coco.json``. Roots that say what they hold (data.yaml, obj.data,
    labels/, Annotations/) are left to their readers."""
    if not os.path.isdir(path):
        return path, None
    entries = set(os.listdir(path))
    low = {e.lower() for e in entries}
    coco_root = _coco_root(path, split)
    if coco_root is not None:
        return coco_root
    if low & {
        "data.yaml",
        "dataset.yaml",
        "data.yml",
        "obj.data",
        "labels",
        "annotations",
        "imagesets",
    }:
        return path, None
    splits = [
        e
        for e in sorted(entries)
        if e.lower() in _SPLIT_DIRS and os.path.isdir(os.path.join(path, e))
    ]
    if not splits:
        return path, None
    from .layout import choose_split

    chosen = choose_split(path, splits, split)
    assert chosen is not None
    folder = os.path.join(path, chosen)
    coco = os.path.join(folder, _ROBOFLOW_COCO)
    robo = "Roboflow export" if "readme.roboflow.txt" in low else "export root"
    from ..text import term

    if os.path.isfile(coco):
        return coco, f"{robo}: split {term(chosen)} ({_ROBOFLOW_COCO})"
    return folder, f"{robo}: split {term(chosen)}"


def _coco_root(path: str, split: str | None) -> tuple[str, str | None] | None:
    """A COCO root: ``annotations/instances_<split>.json`` (COCO itself, detectron2 and
    mmdetection layouts); the chosen split's file."""
    ann = os.path.join(path, "annotations")
    if not os.path.isdir(ann):
        return None
    files = sorted(n for n in os.listdir(ann) if n.startswith("instances_") and n.endswith(".json"))
    if not files:
        return None
    from ..text import term
    from .layout import choose_split

    splits = [n[len("instances_") : -len(".json")] for n in files]
    chosen = choose_split(path, splits, split)
    assert chosen is not None
    return os.path.join(ann, f"instances_{chosen}.json"), f"COCO root: split {term(chosen)}"
