"""Dataset layouts as real tools write them: which label files belong to the evaluated split,
and which images exist without a label file (images without objects).

* Ultralytics: ``data.yaml`` (``path:``, ``train:``/``val:``/``test:`` as image folders, image
  list files or lists of either; labels beside ``images/`` in ``labels/``), or a dataset root
  holding ``images/<split>`` and ``labels/<split>``;
* Roboflow exports: ``data.yaml`` + ``README.roboflow.txt`` beside ``train/ valid/ test/``
  (each with ``images/`` and ``labels/``; ``../train/images`` paths resolve from the root);
* darknet ``obj.data`` (``train =``/``valid =`` image lists, ``names =``);
* Pascal VOC roots with ``ImageSets/Main/<split>.txt`` (datumaro writes ``default.txt``).

The split is ``--split`` when given, ``val`` when the layout names one, the only split when
there is one; otherwise an error lists the splits. Parsing YAML goes through PyYAML's
``safe_load`` (no tags, no code).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ..errors import InputError
from ..text import term
from .files import is_readable_member, read_text
from .sizes import IMAGE_EXTS

# the names a split is known by, per layout key (Roboflow writes "valid", darknet "valid =")
_VAL_ALIASES = ("val", "valid", "validation")
_DARKNET_KEYS = {"classes", "names", "backup", "eval", "results", "map"}
_YAML_FILES = ("data.yaml", "dataset.yaml", "data.yml", "dataset.yml")


@dataclass
class Listing:
    """What to read: label files (relative to ``base``) and every image stem of the split."""

    base: str
    files: list[str]
    stems: list[str] | None = None  # every image of the split (None: the label files only)
    names: str | None = None  # a names file the layout points at (data.yaml, obj.names)
    split: str | None = None
    info: list[str] = field(default_factory=list)
    # stem -> image file of the layout: sizes are read from its header only when needed
    image_paths: dict[str, str] = field(default_factory=dict)


def _is_image(name: str) -> bool:
    return name.lower().endswith(IMAGE_EXTS)


def _stem(p: str) -> str:
    return os.path.splitext(os.path.basename(p.replace("\\", "/")))[0]


def image_files(folder: str) -> dict[str, str]:
    """``stem -> path`` of the image files under ``folder`` (recursively), in name order."""
    out: dict[str, str] = {}
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for n in sorted(files):
            if _is_image(n):
                out.setdefault(os.path.splitext(n)[0], os.path.join(root, n))
    return out


def image_stems(folder: str) -> list[str]:
    """Stems of the image files under ``folder`` (recursively), in name order."""
    return list(image_files(folder))


def choose_split(
    where: str, splits: list[str], wanted: str | None, what: str = "splits"
) -> str | None:
    """The split to read: ``wanted``, else ``val`` (or an alias), else the only one."""
    if not splits:
        if wanted is not None:
            raise InputError(where, None, f"--split {term(wanted)}: this layout has no splits")
        return None
    if wanted is not None:
        if wanted in splits:
            return wanted
        if wanted in _VAL_ALIASES:
            for a in _VAL_ALIASES:
                if a in splits:
                    return a
            vals = [s for s in splits if s.lower().startswith("val")]
            if len(vals) == 1:
                return vals[0]
        raise InputError(
            where,
            None,
            f"--split {term(wanted)}: no such split; the {what} are "
            + ", ".join(term(s) for s in splits),
        )
    for a in _VAL_ALIASES:
        if a in splits:
            return a
    if len(splits) == 1:
        return splits[0]
    vals = [s for s in splits if s.lower().startswith("val")]  # COCO's val2017
    if len(vals) == 1:
        return vals[0]
    raise InputError(
        where,
        None,
        f"{len(splits)} {what} ({', '.join(term(s) for s in splits)}) and none is named val: "
        "choose one with --split NAME",
    )


def read_lines(file: str) -> list[str]:
    """Lines of a small text file (a split list, obj.data), or a located error."""
    from .files import read_text

    return read_text(file).splitlines()  # regular file or pipe, bounded (files.py)


# --------------------------------------------------------------------------- YAML


def read_yaml(file: str) -> dict[str, Any]:
    import yaml

    from .files import read_text

    text = read_text(file)  # regular file or pipe, bounded (files.py)
    _check_flow_depth(file, text)
    try:
        data = yaml.safe_load(text)
    except RecursionError:  # a flow collection nested thousands deep
        raise InputError(file, None, "YAML nested too deeply: refused") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InputError(file, line, f"not valid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise InputError(file, None, "expected a YAML mapping (keys such as names:, train:, val:)")
    return data


MAX_YAML_DEPTH = 100  # a data.yaml is 2 deep; PyYAML recurses once per level


def _check_flow_depth(file: str, text: str) -> None:
    """Refuse ``[[[[...`` nested deeper than ``MAX_YAML_DEPTH`` before PyYAML recurses into
    it (brackets inside quoted names are counted too: harmless, no name is 100 deep)."""
    import re

    depth = 0
    for m in re.finditer(r"[\[\]{}]", text):
        depth += 1 if m.group() in "[{" else -1
        if depth > MAX_YAML_DEPTH:
            line = text.count("\n", 0, m.start()) + 1
            raise InputError(file, line, "YAML nested too deeply: refused")


def yaml_names(file: str) -> list[str]:
    """``names:`` of a data.yaml: a list, or a map ``index: name`` with indices 0..n-1."""
    data = read_yaml(file)
    names = data.get("names")
    if names is None:
        raise InputError(file, None, "no 'names:' entry (expected the class names of the dataset)")
    if isinstance(names, dict):
        try:
            idx = {int(k): v for k, v in names.items()}
        except (TypeError, ValueError):
            raise InputError(file, "names", "expected 'index: name' entries") from None
        if len(idx) != len(names):  # keys 1 and '1': one index twice, one name lost
            keys = [k for k in names if sum(int(j) == int(k) for j in names) > 1]
            raise InputError(
                file,
                "names",
                f"the keys {' and '.join(repr(k) for k in keys[:2])} are one class index",
            )
        if sorted(idx) != list(range(len(idx))):
            raise InputError(file, "names", "class indices must be 0, 1, 2, ... without gaps")
        names = [idx[k] for k in range(len(idx))]
    if not isinstance(names, list):
        raise InputError(file, "names", "expected a list of class names or an index map")
    out: list[str] = []
    for i, n in enumerate(names):
        if n is None or isinstance(n, (dict, list)) or str(n).strip() == "":
            raise InputError(file, f"names[{i}]", "expected a class name")
        out.append(str(n))
    return out


# --------------------------------------------------------------------------- YOLO


def _label_path(image: str) -> str:
    """Ultralytics' rule: the last ``/images/`` becomes ``/labels/``, the extension ``.txt``."""
    p = image.replace("\\", "/")
    if "/images/" in p:
        head, tail = p.rsplit("/images/", 1)
        p = head + "/labels/" + tail
    return os.path.splitext(p)[0] + ".txt"


def _resolve(root: str, value: str) -> str | None:
    """A path from a layout file: absolute, from ``root``, or Roboflow's ``../x`` from root."""
    value = value.strip()
    cands = [value] if os.path.isabs(value) else [os.path.join(root, value)]
    if value.startswith("../"):
        cands.append(os.path.join(root, value[3:]))
    if value.startswith("data/"):  # darknet: paths relative to darknet's working folder
        cands.append(os.path.join(root, value[5:]))
    for c in cands:
        if os.path.exists(c):
            return os.path.normpath(c)
    return None


def _images_of(root: str, value: str, where: str) -> list[str]:
    """Image paths of one split entry: a folder (walked), a list file, or one image."""
    p = _resolve(root, value)
    if p is None:
        raise InputError(where, None, f"split path {value!r} does not exist (from {root})")
    if os.path.isdir(p):
        from .files import note_folder

        note_folder(p)
        out: list[str] = []
        for r, dirs, files in os.walk(p):
            dirs.sort()
            out.extend(os.path.join(r, n) for n in sorted(files) if _is_image(n))
        return out
    if _is_image(p):
        return [p]
    # a list file: one image path per line, relative to the list's folder or the root
    base = os.path.dirname(p)
    out = []
    for line in read_lines(p):
        if "\x00" in line:
            raise InputError(p, None, "not a text list of image paths (NUL byte)")
        s = line.strip()
        if not s:
            continue
        q = _resolve(base, s) or _resolve(root, s)
        if q is None:  # the image itself may be absent: its label file is what counts
            rel = s[5:] if s.startswith("data/") else s  # darknet's working folder
            q = s if os.path.isabs(s) else os.path.join(root, rel)
        out.append(q)
    return out


def _listing_from_images(
    images: list[str], where: str, split: str | None, names: str | None, how: str
) -> Listing:
    stems: list[str] = []
    files: list[str] = []
    seen: set[str] = set()
    paths: dict[str, str] = {}
    for img in images:
        s = _stem(img)
        if s in seen:
            continue
        seen.add(s)
        stems.append(s)
        if os.path.isfile(img):
            paths[s] = img
        for lab in (_label_path(img), os.path.splitext(img)[0] + ".txt"):
            if os.path.isfile(lab):
                files.append(os.path.abspath(lab))
                break
    n_empty = len(stems) - len(files)
    info = [
        f"{how}: split {term(split)}, {len(stems)} images"
        + (f" ({n_empty} without a label file: images without objects)" if n_empty else "")
    ]
    return Listing(os.sep, [f.lstrip(os.sep) for f in files], stems, names, split, info, paths)


def _yaml_listing(file: str, split: str | None) -> Listing:
    data = read_yaml(file)
    here = os.path.dirname(os.path.abspath(file))
    root = here
    p = data.get("path")
    if isinstance(p, str) and p.strip():
        cand = p if os.path.isabs(p) else os.path.join(here, p)
        if os.path.isdir(cand):
            root = cand
    splits = [k for k in ("train", "val", "test") if data.get(k)]
    chosen = choose_split(file, splits, split)
    if chosen is None:
        raise InputError(file, None, "no train:/val:/test: entries: which images does it describe?")
    entry = data[chosen]
    entries = entry if isinstance(entry, list) else [entry]
    images: list[str] = []
    outside: list[str] = []
    done: set[str] = set()
    for e in entries:
        if not isinstance(e, str):
            raise InputError(file, chosen, "expected a path or a list of paths")
        real = os.path.realpath(_resolve(root, e) or os.path.join(root, e))
        if real in done:  # 3,000 aliases of one folder: walked once
            continue
        done.add(real)
        if not _inside(real, os.path.realpath(root)):
            outside.append(e)
        images.extend(_images_of(root, e, file))
    robo = os.path.isfile(os.path.join(here, "README.roboflow.txt"))
    how = "Roboflow export" if robo else "Ultralytics data.yaml"
    names = file if data.get("names") is not None else None
    listing = _listing_from_images(images, file, chosen, names, how)
    for e in outside:
        listing.info.append(
            f"{term(file)}: split {term(chosen)} reads {term(e)}, outside the dataset root "
            f"{term(os.path.normpath(root))}"
        )
    return listing


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _darknet_listing(file: str, split: str | None) -> Listing:
    root = os.path.dirname(os.path.abspath(file))
    kv: dict[str, str] = {}
    for line in read_lines(file):
        k, sep, v = line.partition("=")
        if sep:
            kv[k.strip().lower()] = v.strip()
    # every key but these names a subset (datumaro writes any subset name; darknet: train, valid)
    splits = [k for k, v in kv.items() if v and k not in _DARKNET_KEYS]
    chosen = choose_split(file, splits, split)
    names = _resolve(root, kv["names"]) if kv.get("names") else None
    if chosen is None:
        return Listing(root, [], None, names)
    images = _images_of(root, kv[chosen], file)
    return _listing_from_images(images, file, chosen, names, "darknet obj.data")


def _split_dirs(folder: str) -> list[str]:
    """Subfolders of ``folder`` that hold files (the splits of a labels/ or images/ tree)."""
    try:
        return sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
    except OSError:
        return []


def _has_txt(folder: str) -> bool:
    return any(n.lower().endswith(".txt") for n in os.listdir(folder))


def yolo_listing(path: str, split: str | None) -> Listing | None:
    """The label files to read for a YOLO path, or None for a plain folder of label files
    (read as before: every txt file is one image)."""
    if os.path.isfile(path):
        if path.lower().endswith((".yaml", ".yml")):
            return _yaml_listing(path, split)
        if os.path.basename(path).lower() == "obj.data":
            return _darknet_listing(path, split)
        return None
    entries = set(os.listdir(path))
    for y in _YAML_FILES:
        if y in entries:
            data = read_yaml(os.path.join(path, y))
            if any(data.get(k) for k in ("train", "val", "test")):
                return _yaml_listing(os.path.join(path, y), split)
    if "obj.data" in entries:
        lst = _darknet_listing(os.path.join(path, "obj.data"), split)
        if lst.split is not None:
            return lst
        return None
    # Roboflow-style root without data.yaml: train/ valid/ test/ each with images/ labels/
    robo = [
        d
        for d in _split_dirs(path)
        if os.path.isdir(os.path.join(path, d, "labels"))
        or os.path.isdir(os.path.join(path, d, "images"))
    ]
    if robo and not os.path.isdir(os.path.join(path, "labels")):
        chosen = choose_split(path, robo, split)
        assert chosen is not None
        return _tree_listing(path, os.path.join(path, chosen), chosen, "dataset root")
    # Ultralytics root: images/<split> + labels/<split>, or labels/<split> alone
    labels = os.path.join(path, "labels")
    if os.path.isdir(labels) and not _has_txt(labels):
        splits = _split_dirs(labels)
        if splits:
            chosen = choose_split(path, splits, split)
            assert chosen is not None
            lab = os.path.join(labels, chosen)
            img = os.path.join(path, "images", chosen)
            return _pair_listing(lab, img if os.path.isdir(img) else None, chosen, "dataset root")
    if os.path.isdir(labels) and _has_txt(labels) and os.path.isdir(os.path.join(path, "images")):
        return _pair_listing(labels, os.path.join(path, "images"), None, "dataset root")
    # a labels/<split> folder whose sibling images/<split> exists
    parent, leaf = os.path.split(os.path.normpath(os.path.abspath(path)))
    if os.path.basename(parent) == "labels":
        img = os.path.join(os.path.dirname(parent), "images", leaf)
        if os.path.isdir(img):
            return _pair_listing(path, img, None, "labels beside images")
    if leaf == "labels":
        img = os.path.join(parent, "images")
        if os.path.isdir(img) and _has_txt(path):
            return _pair_listing(path, img, None, "labels beside images")
    return None


def _tree_listing(root: str, split_dir: str, split: str, how: str) -> Listing:
    lab = os.path.join(split_dir, "labels")
    img = os.path.join(split_dir, "images")
    if not os.path.isdir(lab):
        lab = split_dir
    return _pair_listing(lab, img if os.path.isdir(img) else None, split, how)


def _pair_listing(labels: str, images: str | None, split: str | None, how: str) -> Listing:
    files: list[str] = []
    for r, dirs, names in os.walk(labels):
        dirs.sort()
        for n in sorted(names):
            if n.lower().endswith(".txt") and n.lower() not in ("classes.txt",):
                files.append(os.path.relpath(os.path.join(r, n), labels))
    stems = None
    info: list[str] = []
    paths: dict[str, str] = {}
    if images is not None:
        have = {_stem(f) for f in files}
        paths = image_files(images)
        stems = list(paths)
        n_empty = sum(1 for s in stems if s not in have)
        stems = stems + sorted(have - set(stems))
        info.append(
            f"{how}: {'split ' + term(split) + ', ' if split else ''}{len(stems)} images"
            + (f" ({n_empty} without a label file: images without objects)" if n_empty else "")
        )
    elif split:
        info.append(f"{how}: split {term(split)}")
    return Listing(labels, files, stems, None, split, info, paths)


# --------------------------------------------------------------------------- VOC


def voc_split(path: str, split: str | None) -> tuple[list[str] | None, str | None, list[str]]:
    """``(stems of the split or None, split, info lines)`` for a VOC root.

    ``ImageSets/Main/<split>.txt`` lists the images (``<class>_<split>.txt`` files are the
    devkit's per-class lists and are not splits). Without ImageSets, ``JPEGImages/`` shows
    which images exist.
    """
    if not os.path.isdir(path):
        return None, None, []
    main = os.path.join(path, "ImageSets", "Main")
    if os.path.isdir(main):
        files = sorted(n for n in os.listdir(main) if n.lower().endswith(".txt") and "_" not in n)
        splits = [os.path.splitext(n)[0] for n in files]
        if splits:
            chosen = choose_split(path, splits, split)
            assert chosen is not None
            stems: list[str] = []
            for line in read_lines(os.path.join(main, chosen + ".txt")):
                s = line.split()
                if s:
                    stems.append(s[0])
            return stems, chosen, [f"VOC ImageSets/Main: split {term(chosen)}, {len(stems)} images"]
    if split is not None:
        raise InputError(
            path, None, f"--split {term(split)}: this VOC folder has no ImageSets/Main"
        )
    jpeg = os.path.join(path, "JPEGImages")
    if os.path.isdir(jpeg):
        stems = image_stems(jpeg)
        return stems, None, [f"VOC JPEGImages: {len(stems)} images"]
    return None, None, []


# --------------------------------------------------------------------------- names files

_NAMES_FILES = ("obj.names", "classes.txt", "data.yaml", "dataset.yaml", "data.yml")


def split_lines(text: str) -> list[str]:
    """Lines split at LF only: ``str.splitlines()`` also splits at \\x0b, \\x0c, \\x1c..
    and U+2028, which would shift every line number after one of them."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def read_names(file: str) -> list[str]:
    """Class names from a names file (one per line) or a YAML file with ``names:``."""
    if file.lower().endswith((".yaml", ".yml")):
        names = yaml_names(file)
    else:
        names = []
        lines = split_lines(read_text(file))
        while lines and not lines[-1].strip():
            lines.pop()
        for i, line in enumerate(lines, 1):
            name = line.strip()
            if not name:
                raise InputError(file, i, "empty class name (one name per line, no gaps)")
            names.append(name)
    seen: dict[str, int] = {}
    for i, nm in enumerate(names):
        if nm in seen:
            raise InputError(
                file, None, f"class name {nm!r} appears twice (classes {seen[nm]} and {i})"
            )
        seen[nm] = i
    if not names:
        raise InputError(file, None, "no class names in this file")
    return names


def find_names(label_dir: str, root: str) -> str | None:
    """A names file next to the labels, in the given folder or its parent (first found)."""
    dirs = []
    for d in (label_dir, root, os.path.dirname(os.path.abspath(root))):
        if d not in dirs and os.path.isdir(d):
            dirs.append(d)
    for d in dirs:
        for name in _NAMES_FILES:
            p = os.path.join(d, name)
            if os.path.lexists(p) and is_readable_member(p):
                return p
        extra = sorted(
            n
            for n in os.listdir(d)
            if n.endswith(".names") and is_readable_member(os.path.join(d, n))
        )
        if extra:
            return os.path.join(d, extra[0])
    return None
