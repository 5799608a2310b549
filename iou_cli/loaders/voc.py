"""Pascal VOC XML: a folder of one ``.xml`` per image (or a single file).

Each file gives ``<size>`` (optional) and ``<object>`` elements with ``<name>``, ``<bndbox>``
(``xmin ymin xmax ymax``, integer or float), ``<difficult>`` (missing = 0) and, for
predictions, ``<score>`` or ``<confidence>``. The image key is the XML file's stem (the VOC
convention: ``Annotations/2007_000027.xml`` describes ``JPEGImages/2007_000027.jpg``).
Files are read in name order, so ties between equal scores break the same way every time.
Parsing goes through defusedxml: no entity expansion, no external entities or DTDs.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ..data import Boxes, Categories, Images, Side
from ..errors import InputError
from .files import is_readable_member, read_input

if TYPE_CHECKING:  # pragma: no cover
    from ..options import LoadOptions

_COORDS = ("xmin", "ymin", "xmax", "ymax")


def voc_files(path: str) -> tuple[str, list[str]]:
    """``(folder, sorted xml file names)`` for a VOC folder, its ``Annotations/`` or one file."""
    if not os.path.isdir(path):
        return os.path.dirname(path) or ".", [os.path.basename(path)]
    folder = path
    sub = os.path.join(path, "Annotations")
    if os.path.isdir(sub) and not any(n.lower().endswith(".xml") for n in os.listdir(path)):
        folder = sub
    # only regular files are read inside a folder: a FIFO or device named *.xml is refused
    # (is_readable_member raises), a folder named *.xml is not an annotation
    names = sorted(
        n
        for n in os.listdir(folder)
        if n.lower().endswith(".xml") and is_readable_member(os.path.join(folder, n))
    )
    if not names:
        raise InputError(path, None, "no .xml files in this folder (expected Pascal VOC XML)")
    return folder, names


def _split_files(path: str, stems: list[str]) -> tuple[str, list[str], list[str]]:
    """``(folder, xml names of the listed images, listed stems without an XML file)``."""
    folder = path
    sub = os.path.join(path, "Annotations")
    if os.path.isdir(sub):
        folder = sub
    # a folder named b.xml is not an annotation (b has no XML); a FIFO is refused by name
    have = {
        os.path.splitext(n)[0]: n
        for n in os.listdir(folder)
        if n.lower().endswith(".xml") and is_readable_member(os.path.join(folder, n))
    }
    wanted = list(dict.fromkeys(stems))
    names = sorted(have[s] for s in wanted if s in have)
    extra = [s for s in wanted if s not in have]
    return folder, names, extra


def _parse(file: str, member: bool = True) -> tuple[Any, dict[int, int]]:
    """Root element and ``id(element) -> line`` for every element of one XML file."""
    import xml.etree.ElementTree as ET  # noqa: N817

    from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden
    from defusedxml.ElementTree import DefusedXMLParser

    lines: dict[int, int] = {}

    class _Builder(ET.TreeBuilder):
        parser: Any = None

        def start(self, tag: Any, attrs: Any) -> Any:
            el = super().start(tag, attrs)
            lines[id(el)] = self.parser.parser.CurrentLineNumber if self.parser else 0
            return el

    builder = _Builder()
    parser = DefusedXMLParser(target=builder, forbid_dtd=False)
    builder.parser = parser
    data = read_input(file, member=member, expected="a VOC XML file")
    try:
        parser.feed(data)
        root = parser.close()
    except ET.ParseError as e:
        line = getattr(e, "position", (None,))[0]
        raise InputError(
            file, line, f"not well-formed XML: {e.msg if hasattr(e, 'msg') else e}"
        ) from None
    except (EntitiesForbidden, ExternalReferenceForbidden, DTDForbidden) as e:
        raise InputError(
            file, None, f"refused: {type(e).__name__} (entities are not expanded)"
        ) from None
    except LookupError as e:  # <?xml encoding="..."?> names no codec Python knows
        raise InputError(file, 1, f"unknown XML encoding ({e})") from None
    return root, lines


def _text(el: Any) -> str | None:
    if el is None or el.text is None:
        return None
    t = str(el.text).strip()
    return t or None


def _number(el: Any, file: str, line: int, what: str) -> float:
    t = _text(el)
    if t is None:
        raise InputError(file, line, f"missing <{what}>")
    try:
        v = float(t)
    except ValueError:
        raise InputError(file, line, f"<{what}>: expected a number, got {t[:20]!r}") from None
    if not math.isfinite(v):
        raise InputError(file, line, f"<{what}>: expected a finite number, got {t!r}")
    return v


def _flag(el: Any, file: str, line: int, what: str) -> bool:
    t = _text(el)
    if t is None:
        return False
    low = t.lower()
    if low in ("0", "false", "no"):
        return False
    if low in ("1", "true", "yes"):
        return True
    try:
        v = float(t)
    except ValueError:
        v = math.nan
    if not math.isfinite(v):  # "nan" is no flag: not difficult, not easy
        raise InputError(file, line, f"<{what}>: expected 0 or 1, got {t[:20]!r}")
    return v != 0.0


def load_voc(
    path: str,
    *,
    role: str,
    progress: Callable[[str, int, int], None] | None = None,
    stems: list[str] | None = None,
) -> Side:
    """Read a VOC folder (or one XML file). ``role`` is ``"pred"`` or ``"gt"``.

    Predictions need a ``<score>`` or ``<confidence>`` on every object.
    """
    if stems is not None:
        folder, names, extra = _split_files(path, stems)
    else:
        folder, names = voc_files(path)
        extra = []
    keys: list[str] = []
    widths: list[float] = []
    heights: list[float] = []
    cat_index: dict[str, int] = {}
    xyxy: list[list[float]] = []
    img: list[int] = []
    cat: list[int] = []
    score: list[float] = []
    difficult: list[bool] = []
    loc_file: list[int] = []
    loc_line: list[int] = []
    scored = 0
    total = len(names)
    single = not os.path.isdir(path)
    read_paths: list[str] = []
    for fi, name in enumerate(names):
        file = path if single else os.path.join(folder, name)
        root, lines = _parse(file, member=not single)
        read_paths.append(file)
        if root.tag != "annotation":
            raise InputError(file, lines.get(id(root)), f"expected <annotation>, got <{root.tag}>")
        k = len(keys)
        keys.append(os.path.splitext(name)[0])
        w = h = math.nan
        size = root.find("size")
        if size is not None:
            for tag in ("width", "height"):
                el = size.find(tag)
                if _text(el) is None:
                    continue
                v = _number(el, file, lines.get(id(el), 0), f"size/{tag}")
                if v > 0:
                    if tag == "width":
                        w = v
                    else:
                        h = v
        widths.append(w)
        heights.append(h)
        for obj in root.findall("object"):
            line = lines.get(id(obj), 0)
            nm = _text(obj.find("name"))
            if nm is None:
                raise InputError(file, line, "<object> without a <name>")
            bb = obj.find("bndbox")
            if bb is None:
                raise InputError(file, line, f"<object> {nm!r} without a <bndbox>")
            coords = []
            for tag in _COORDS:
                el = bb.find(tag)
                at = lines.get(id(el), lines.get(id(bb), line)) if el is not None else line
                coords.append(_number(el, file, at, f"bndbox/{tag}"))
            if coords[2] < coords[0] or coords[3] < coords[1]:
                raise InputError(
                    file,
                    lines.get(id(bb), line),
                    f"<bndbox> of {nm!r} is inverted (xmax < xmin or ymax < ymin): {coords}",
                )
            s_el = obj.find("score")
            if s_el is None:
                s_el = obj.find("confidence")
            if s_el is not None and _text(s_el) is not None:
                score.append(_number(s_el, file, lines.get(id(s_el), line), s_el.tag))
                scored += 1
            else:
                if role == "pred":
                    raise InputError(
                        file,
                        line,
                        f"prediction {nm!r} has no <score> or <confidence> "
                        "(predictions come first: iou-eval PREDICTIONS GROUND_TRUTH)",
                    )
                score.append(math.nan)
            d_el = obj.find("difficult")
            difficult.append(_flag(d_el, file, lines.get(id(d_el), line), "difficult"))
            xyxy.append(coords)
            img.append(k)
            cat.append(cat_index.setdefault(nm, len(cat_index)))
            loc_file.append(fi)
            loc_line.append(line)
        if progress is not None:
            progress(role, fi + 1, total)

    for stem in extra:  # listed images without an XML file: images without objects
        keys.append(stem)
        widths.append(math.nan)
        heights.append(math.nan)

    # categories in name order (VOC has no ids): stable, readable per-class rows
    order = sorted(cat_index, key=str)
    remap = np.empty(len(order), dtype=np.int64)
    for new, nm in enumerate(order):
        remap[cat_index[nm]] = new
    n = len(xyxy)
    cat_arr = remap[np.asarray(cat, dtype=np.int64)] if n else np.zeros(0, dtype=np.int64)
    boxes = Boxes.build(
        np.asarray(xyxy, dtype=np.float64).reshape(n, 4),
        image=np.asarray(img, dtype=np.int64),
        category=cat_arr,
        score=np.asarray(score, dtype=np.float64),
        difficult=np.asarray(difficult, dtype=bool) if role == "gt" else None,
        ids=np.arange(1, n + 1, dtype=np.int64),
        origin=np.arange(n, dtype=np.int64),
    )
    rel = [
        os.path.relpath(os.path.join(folder, nm), path) if os.path.isdir(path) else nm
        for nm in names
    ]

    def locator(origin: int) -> str:
        if single:  # the side's path is the file: the line number is the whole location
            return str(loc_line[origin])
        return f"{rel[loc_file[origin]]}:{loc_line[origin]}"

    images = Images(list(keys), list(keys), np.asarray(widths), np.asarray(heights))
    categories = Categories([None] * len(order), list(order))
    has_scores = n > 0 and scored == n
    return Side(
        path, "voc", images, categories, boxes, has_scores, locator=locator, read_paths=read_paths
    )


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader: a VOC folder or XML file; the split's ``ImageSets`` list, and
    ``--images`` (ground truth): images without an XML file are images without objects."""
    from .layout import voc_split

    stems, _, info = voc_split(path, opts.split)
    if stems is None and opts.images and role == "gt" and os.path.isdir(path):
        # --images shows which images exist: those without an XML file have no objects
        from .layout import image_stems

        _, xmls = voc_files(path)
        xml_stems = [os.path.splitext(n)[0] for n in xmls]
        known = set(xml_stems)
        no_xml = [st for st in image_stems(opts.images) if st not in known]
        stems = xml_stems + no_xml
        if no_xml:
            info.append(f"--images: {len(no_xml)} images without an XML file: no objects")
    side = load_voc(path, role=role, progress=opts.progress, stems=stems)
    side.notes.setdefault("info", []).extend(info)
    return side
