"""DOTA txt: rotated ground truth (``labelTxt``) and Task1 result folders.

Ground truth, one ``.txt`` per image (the file stem is the image)::

    imagesource:GoogleEarth          (optional header lines, any of the two, first)
    gsd:0.146343590398
    x1 y1 x2 y2 x3 y3 x4 y4 category difficult

``difficult`` is ``0`` or ``1`` (absent: 0, as the devkit reads it). Predictions are a folder
of ``Task1_<class>.txt`` files, one per class, each line ``image score x1 y1 ... x4 y4``; the
line order is kept (the DOTA protocol sorts by score as the devkit does, over that order).
Corners stay as written (``Boxes.obb``); quadrilaterals that are not convex are counted in a
warning (IoU uses their convex hull).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Hashable

import numpy as np

from ..data import Boxes, Categories, Images, Side
from ..errors import InputError
from ..geometry.obb import convex_geometry
from ..options import LoadOptions
from .bulktext import token_rows
from .bytetable import Table, chunk_table, line_spans, name_table, roomy_malloc, token_floats
from .files import decode_text, is_readable_member, read_input, read_text

_HEADER = re.compile(r"^(imagesource|gsd)\s*:", re.IGNORECASE)
TASK1 = re.compile(r"^Task1_(.+)\.txt$")


def _lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _corners(parts: list[str], file: str, ln: int) -> list[float]:
    out = []
    for k, p in enumerate(parts):
        try:
            v = float(p)
        except ValueError:
            raise InputError(
                file, ln, f"corner {k + 1}: expected a number, got {p[:20]!r}"
            ) from None
        if not math.isfinite(v):
            raise InputError(file, ln, f"corner {k + 1}: expected a finite number, got {p!r}")
        out.append(v)
    return out


def _txt_files(path: str, what: str) -> tuple[str, list[str]]:
    if not os.path.isdir(path):
        return os.path.dirname(path) or ".", [os.path.basename(path)]
    base = path
    sub = os.path.join(path, "labelTxt")
    if os.path.isdir(sub):
        base = sub
    files = sorted(
        n
        for n in os.listdir(base)
        if n.lower().endswith(".txt") and is_readable_member(os.path.join(base, n))
    )
    if not files:
        raise InputError(path, None, f"no .txt files in this folder (expected {what})")
    return base, files


def _plain_quad(parts: list[str]) -> list[float] | None:
    """The corners of a well-formed object line, or None (the checks then say why not)."""
    if len(parts) not in (9, 10) or (len(parts) == 10 and parts[9] not in ("0", "1")):
        return None
    try:
        quad = [float(p) for p in parts[:8]]
    except ValueError:
        return None
    if not math.isfinite(sum(quad)) or _is_number(parts[8]):
        return None
    return quad


def is_dota_gt_line(line: str) -> bool:
    """A DOTA ground-truth object line: 8 numbers, a category, an optional flag."""
    parts = line.split()
    if len(parts) not in (9, 10):
        return False
    try:
        [float(p) for p in parts[:8]]
    except ValueError:
        return False
    return not _is_number(parts[8])


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _quad_notes(corners: np.ndarray, path: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Areas and axis-aligned hulls of the quads, and the warning for non-convex ones. The
    arrays are the geometry's own, read-only (shared with the matching, not copied: a
    writer copies first, and one that did not would fail loudly, never change them)."""
    _, bad, area, box = convex_geometry(corners.reshape(-1, 4, 2))
    notes = []
    if bad.any():
        notes.append(
            f"{path}: {int(bad.sum())} quadrilateral(s) are not convex (a dent or crossed "
            "edges); IoU uses their convex hull"
        )
    return area, box, notes


def _side(
    path: str,
    fmt: str,
    keys: list[str],
    names: list[str],
    corners: list[list[float]] | np.ndarray,
    img: list[int] | np.ndarray,
    cat: list[int] | np.ndarray,
    *,
    score: list[float] | np.ndarray | None,
    difficult: list[bool] | np.ndarray | None,
    loc: Callable[[int], str],
    read_paths: list[str],
) -> Side:
    n = len(corners)
    c = np.asarray(corners, dtype=np.float64).reshape(n, 8)
    area, xyxy, warnings = _quad_notes(c, path)
    boxes = Boxes.build(
        xyxy,
        image=np.asarray(img, dtype=np.int64),
        category=np.asarray(cat, dtype=np.int64),
        box_area=area,
        area=area,
        score=score,
        difficult=difficult,
        obb=c,
    )
    nk = len(keys)
    ids: list[Hashable | None] = list(names)
    return Side(
        path,
        fmt,
        Images(list(keys), list(keys), np.full(nk, np.nan), np.full(nk, np.nan)),
        Categories(ids, list(names)),
        boxes,
        has_scores=score is not None,
        notes={"warnings": warnings, "info": []},
        locator=loc,
        read_paths=read_paths,
    )


def _split_header(text: str) -> tuple[int, str]:
    """(number of leading ``imagesource:`` / ``gsd:`` lines, the text after them)."""
    pos, k = 0, 0
    while pos < len(text):
        nl = text.find("\n", pos)
        end = len(text) if nl < 0 else nl
        if not _HEADER.match(text[pos:end].strip()):
            break
        k, pos = k + 1, end + 1
    return k, text[pos:]


class _GtRows:
    """Ground-truth rows as they are read: corners, image, category, difficult, and where
    each row was (file index, line)."""

    def __init__(self) -> None:
        self.cat_index: dict[str, int] = {}
        self.corners: list[list[float]] = []
        self.img: list[int] = []
        self.cat: list[int] = []
        self.diff: list[bool] = []
        self.where: list[tuple[int, int]] = []

    def add(self, quad: list[float], name: str, k: int, hard: bool, ln: int) -> None:
        self.corners.append(quad)
        self.cat.append(self.cat_index.setdefault(name, len(self.cat_index)))
        self.img.append(k)
        self.diff.append(hard)
        self.where.append((k, ln))


def _gt_bulk(
    texts: list[str],
) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Every file plain (header lines, then only ``8 numbers, category, 0 or 1`` lines):
    (corners, category names, category, image, difficult, line of each row) in one pass over
    the joined text; None otherwise (the line reader then locates what is not plain)."""
    bodies, first, counts = [], [], []
    for text in texts:
        skip, body = _split_header(text)
        if body and not body.endswith("\n"):
            body += "\n"
        bodies.append(body)
        first.append(skip + 1)
        counts.append(body.count("\n"))
    n = sum(counts)
    joined = "".join(bodies)
    rows: tuple[np.ndarray, list[str], np.ndarray, np.ndarray]
    rows = (np.zeros((0, 8)), [], np.zeros(0, np.int64), np.zeros(0, bool))
    if n:  # the byte reader, else the token reader (other whitespace, other characters)
        read = _gt_bytes(joined, n) or _gt_tokens(joined, n)
        if read is None:
            return None
        rows = read
    corners, names, cat, hard = rows
    if any(_is_number(c) for c in names):
        return None
    img = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    start = np.cumsum([0, *counts[:-1]], dtype=np.int64)
    lines = np.arange(n, dtype=np.int64) - np.repeat(start - np.asarray(first), counts)
    return corners, names, cat, img, hard, lines


def _gt_tokens(body: str, n: int) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray] | None:
    """:func:`_gt_bytes` by one split of the text (any whitespace, any characters)."""
    tok = token_rows(body, 10)
    if tok is None:
        return None
    flags = tok[9::10]
    if not set(flags) <= {"0", "1"}:
        return None
    names = tok[8::10]
    index = {c: i for i, c in enumerate(dict.fromkeys(names))}
    del tok[8::10]
    del tok[8::9]
    values = token_floats(tok)
    if values is None:
        return None
    cat = np.fromiter(map(index.__getitem__, names), np.int64, n)
    return values.reshape(n, 8), list(index), cat, np.asarray(flags) == "1"


def _gt_bytes(body: str, n: int) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray] | None:
    """The joined object lines (``n``, each ending in a newline) when they are plain to the
    byte reader (ASCII, single spaces: :func:`~.bytetable.name_table` with the category as
    the name column) and each flag is the one character ``0`` or ``1``: (corners, category
    names, category of each row, difficult); None otherwise (the token reader then)."""
    try:
        data = body.encode("ascii")
    except UnicodeEncodeError:
        return None
    table = name_table(data, 10, name_col=8)
    if table is None or table[2].shape[0] != n:
        return None
    cat, names, values = table
    buf = np.frombuffer(data, dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    flag = buf[nl - 1]
    if not (((flag == 48) | (flag == 49)) & (buf[nl - 2] == 32)).all():
        return None  # a flag of more than one character ('00', '1.0', '+1')
    return np.ascontiguousarray(values[:, :8]), names, cat, flag == 49


def _gt_lines(rows: _GtRows, text: str, file: str, k: int) -> None:
    """One labelTxt file line by line into ``rows``; a bad line is an :class:`InputError`."""
    header = True
    for ln, line in enumerate(_lines_of(text), 1):
        parts = line.split()
        if not parts:
            continue
        if header and _HEADER.match(line.strip()):
            continue
        header = False
        quad = _plain_quad(parts)
        if quad is not None:  # the usual line: 8 finite numbers, a category, 0 or 1
            rows.add(quad, parts[8], k, len(parts) == 10 and parts[9] == "1", ln)
            continue
        lead = next((k for k, p in enumerate(parts) if not _is_number(p)), len(parts))
        if lead != 8 or len(parts) not in (9, 10):
            got = (
                f"{lead} numbers and no category"
                if lead == len(parts)
                else f"{lead} numbers before the category"
                if lead != 8
                else f"{len(parts) - 9} fields after the category"
            )
            raise InputError(
                file,
                ln,
                "expected 'x1 y1 x2 y2 x3 y3 x4 y4 category difficult' (8 corner numbers), "
                f"got {got}",
            )
        flag = parts[9] if len(parts) == 10 else "0"
        if flag not in ("0", "1"):
            raise InputError(file, ln, f"difficult: expected 0 or 1, got {flag[:20]!r}")
        rows.add(_corners(parts[:8], file, ln), parts[8], k, flag == "1", ln)


def load_dota_gt(path: str) -> Side:
    """A DOTA ``labelTxt`` folder (or one file) as a ground-truth side."""
    roomy_malloc()
    base, files = _txt_files(path, "DOTA labelTxt files")
    single = not os.path.isdir(path)
    read_paths = [path if single else os.path.join(base, rel) for rel in files]
    texts = [read_text(file, member=not single) for file in read_paths]
    bulk = _gt_bulk(texts)
    if bulk is not None:
        corners, names, cat, img, diff, lines = bulk
    else:
        rows = _GtRows()
        for k, (text, file) in enumerate(zip(texts, read_paths, strict=True)):
            _gt_lines(rows, text, file, k)
        corners, names = np.asarray(rows.corners, np.float64), list(rows.cat_index)
        cat, img, diff = np.asarray(rows.cat), np.asarray(rows.img), np.asarray(rows.diff, bool)
        lines = np.asarray([ln for _, ln in rows.where], dtype=np.int64)
    return _side(
        path,
        "dota",
        [os.path.splitext(rel)[0] for rel in files],
        names,
        corners,
        img,
        cat,
        score=None,
        difficult=diff,
        loc=lambda r: f"{files[int(img[r])]}:{int(lines[r])}",
        read_paths=read_paths,
    )


def _task1_table(text: str) -> tuple[np.ndarray, list[str], np.ndarray] | None:
    """A plain Task1 file (every line ``image`` + 9 finite numbers, no blank line) parsed by
    pandas' C reader, several times faster than splitting lines here: (image codes, their
    names, values). None for anything else: the line reader then says what is wrong where."""
    body = text[:-1] if text.endswith("\n") else text
    if not body:
        return None
    import io

    import pandas as pd

    # numbers as float() reads them: pandas 3's default; "round_trip" before it (deprecated now)
    exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
    try:
        df = pd.read_csv(
            io.StringIO(body),
            sep=r"\s+",
            header=None,
            dtype={0: str},
            na_filter=False,
            engine="c",
            **exact,
        )
    except (ValueError, pd.errors.ParserError):
        return None
    # a skipped blank line would shift every later line number: the line reader takes those
    if df.shape != (body.count("\n") + 1, 10):
        return None
    if not all(df[k].dtype == np.float64 for k in range(1, 10)):
        return None
    values = df.iloc[:, 1:].to_numpy(dtype=np.float64)
    if not np.isfinite(values).all():
        return None
    codes, uniques = pd.factorize(df[0].astype(str))
    return codes.astype(np.int64), [str(u) for u in uniques], values


_PIECE = 1 << 18  # bytes of whole lines parsed at once (temporaries of about 2 MiB)


class _PlainRows:
    """The rows of the plain Task1 files, written piece by piece straight into the final
    score and corner columns (no per-piece arrays kept, no copy after): ``names[k]`` is
    file ``k``'s list of (image codes, their names) per piece, None if it is not plain;
    its rows are ``score[at[k]:at[k + 1]]``, ``corners[...]``."""

    def __init__(self, datas: list[bytes]) -> None:
        self.spans: list[tuple[int, bytes, int, int, int]] = []  # file, data, start, end, row
        at = [0]
        for k, d in enumerate(datas):
            row = at[-1]
            for s, e in line_spans(d, _PIECE or None):
                self.spans.append((k, d, s, e, row))
                row += d.count(b"\n", s, e) + (d[e - 1 : e] != b"\n")  # its lines
            at.append(row)
        self.at = at
        self.size = sum(len(d) for d in datas)
        self.score = np.empty(at[-1], dtype=np.float64)
        self.corners = np.empty((at[-1], 8), dtype=np.float64)
        self.names: list[list[tuple[np.ndarray, list[str]]] | None] = [[] for _ in datas]

    def piece(self, i: int) -> tuple[np.ndarray, list[str]] | None:
        """Parse piece ``i`` into its rows; its (image codes, names), or None."""
        _, d, s, e, row = self.spans[i]
        table = name_table_piece(memoryview(d)[s:e])
        end = self.spans[i + 1][4] if i + 1 < len(self.spans) else self.at[-1]
        if table is None or table[2].shape[0] != end - row:  # (a plain piece: a row a line)
            return None
        codes, names, values = table
        self.score[row:end] = values[:, 0]
        self.corners[row:end] = values[:, 1:]
        return codes, names

    def parse(self) -> None:
        """Every piece, in order, on this thread. (Threads were tried: each thread's own
        malloc arena gave its freed temporaries back to the system after every piece, so
        the pages were faulted in again: 8x the page faults, slower on two cores.)"""
        for i, (k, *_) in enumerate(self.spans):
            names = self.names[k]
            if names is not None:  # (a file already not plain: its other pieces skipped)
                t = self.piece(i)
                if t is None:
                    self.names[k] = None
                else:
                    names.append(t)


def name_table_piece(data: bytes | memoryview) -> Table | None:
    """One piece of a Task1 file (:func:`chunk_table` of its 10 columns)."""
    return chunk_table(data, 10)


def _task1_slow(data: bytes, file: str) -> tuple[np.ndarray, list[str], np.ndarray, np.ndarray]:
    """A Task1 file the byte reader does not take: pandas' reader for other whitespace,
    else the line reader (which locates errors): (image codes, their names, values, line
    of each row)."""
    text = decode_text(data, file)
    table = _task1_table(text)
    if table is not None:
        codes, uniques, values = table
        return codes, uniques, values, np.arange(1, values.shape[0] + 1, dtype=np.int64)
    images, values, rows = _task1_lines(text, file)
    uniques = list(dict.fromkeys(images))
    local = {u: i for i, u in enumerate(uniques)}
    return np.asarray([local[im] for im in images], dtype=np.int64), uniques, values, rows


def _task1_lines(text: str, file: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """A Task1 file line by line: (image of each row, values, line numbers); a bad line is
    an :class:`InputError` at its line."""
    images: list[str] = []
    rows: list[list[float]] = []
    lines: list[int] = []
    for ln, line in enumerate(text.split("\n"), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 10:
            raise InputError(
                file,
                ln,
                f"expected 'image score x1 y1 x2 y2 x3 y3 x4 y4' (10 fields), got {len(parts)}",
            )
        try:
            s = float(parts[1])
        except ValueError:
            raise InputError(file, ln, f"score: expected a number, got {parts[1][:20]!r}") from None
        if not math.isfinite(s):
            raise InputError(file, ln, f"score: expected a finite number, got {parts[1]!r}")
        rows.append([s, *_corners(parts[2:], file, ln)])
        images.append(parts[0])
        lines.append(ln)
    n = len(rows)
    return images, np.asarray(rows, dtype=np.float64).reshape(n, 9), np.asarray(lines, np.int64)


def task1_files(path: str) -> list[tuple[str, str]]:
    """``(class name, file name)`` of the ``Task1_<class>.txt`` files of a folder."""
    if not os.path.isdir(path):
        m = TASK1.match(os.path.basename(path))
        return [(m.group(1), os.path.basename(path))] if m else []
    out = []
    for n in sorted(os.listdir(path)):
        m = TASK1.match(n)
        if m and is_readable_member(os.path.join(path, n)):
            out.append((m.group(1), n))
    return out


def load_dota_task1(path: str) -> Side:
    """A folder of DOTA ``Task1_<class>.txt`` result files (or one file) as predictions."""
    roomy_malloc()
    files = task1_files(path)
    if not files:
        raise InputError(path, None, "no Task1_<class>.txt files (expected DOTA task-1 results)")
    single = not os.path.isdir(path)
    base = os.path.dirname(path) if single else path
    key_index: dict[str, int] = {}
    img: list[np.ndarray] = []
    line_no: list[np.ndarray] = []
    counts = [0] * len(files)
    read_paths = [os.path.join(base, name) for _, name in files]
    datas: list[bytes | InputError] = []
    for file in read_paths:
        try:
            datas.append(read_input(file, member=not single))
        except InputError as e:  # raised in its turn below (an earlier file's error first)
            datas.append(e)
    plain = _PlainRows([d for d in datas if not isinstance(d, InputError)])
    plain.parse()
    parts: list[tuple[np.ndarray, np.ndarray]] = []  # per file: (scores, corners)
    for k, (file, data) in enumerate(zip(read_paths, datas, strict=True)):
        if isinstance(data, InputError):
            raise data
        j = len(parts)  # the file's place among the readable ones
        tables = plain.names[j]
        if tables is not None:  # plain: every line is a row
            a, b = plain.at[j], plain.at[j + 1]
            parts.append((plain.score[a:b], plain.corners[a:b]))
            line_no.append(np.arange(1, b - a + 1, dtype=np.int64))
        else:
            codes, uniques, values, rows = _task1_slow(data, file)
            tables = [(codes, uniques)]
            parts.append((values[:, 0], values[:, 1:]))
            line_no.append(rows)
        for codes, uniques in tables:
            to_global = [key_index.setdefault(u, len(key_index)) for u in uniques]
            img.append(np.asarray(to_global, dtype=np.int64)[codes])
        counts[k] = parts[-1][0].shape[0]
    if all(t is not None for t in plain.names):
        corners, score = plain.corners, plain.score  # written in place: no copy
    else:
        score = np.concatenate([s for s, _ in parts]) if parts else np.zeros(0)
        corners = np.concatenate([c for _, c in parts]) if parts else np.zeros((0, 8))
    corners.setflags(write=False)  # (convex_geometry: the matching asks for the same quads)
    cat = np.repeat(np.arange(len(files), dtype=np.int64), counts)
    ll = np.concatenate(line_no) if line_no else np.zeros(0, dtype=np.int64)
    file_names = [name for _, name in files]
    return _side(
        path,
        "dota-task1",
        list(key_index),
        [cname for cname, _ in files],
        corners,
        np.concatenate(img) if img else np.zeros(0, dtype=np.int64),
        cat,
        score=score,
        difficult=None,
        loc=lambda r: f"{file_names[int(cat[r])]}:{int(ll[r])}",
        read_paths=read_paths,
    )


def read_side(path: str, *, role: str, fmt: str, opts: LoadOptions, detected: bool) -> Side:
    """The registry's reader: ground truth from ``labelTxt`` files, predictions from a folder
    of ``Task1_<class>.txt`` files."""
    if role == "gt":
        return load_dota_gt(path)
    if not task1_files(path):
        raise InputError(
            path,
            None,
            "DOTA predictions are Task1_<class>.txt files (one per class: 'image score x1 y1 "
            "... y4' lines); none here",
        )
    return load_dota_task1(path)
