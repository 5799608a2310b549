"""The corpus of bad (and odd-but-valid) inputs in tests/data/bad/cases.json.

Every case runs ``iou-eval ARGS`` in-process from tests/data/bad/ (so messages carry the
relative paths a user would type) and must give the expected exit code; exit 2 must come
with exactly one ``iou-eval: error: <file>[:<where>]: <what>`` line that contains the
expected text. Exit-0 cases pin their summary values (hand counts noted in cases.json).
Hostile inputs too big to commit (100k-deep nesting, entity bombs, an external entity that
names a local secret) are generated here, under tmp_path.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DATA
from tests.robust._cli import assert_one_error_line, run_cli

BAD = DATA / "bad"
CASES: list[dict[str, Any]] = json.loads((BAD / "cases.json").read_text(encoding="utf-8"))["cases"]


def test_case_ids_are_unique_and_files_exist() -> None:
    ids = [c["id"] for c in CASES]
    assert len(ids) == len(set(ids))
    for c in CASES:
        for a in c["args"]:
            if "/" in a and not a.startswith(("{", "no/such")):
                assert (BAD / a).exists(), (c["id"], a)


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_case(case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    args = [a.replace("{empty_dir}", str(empty)) for a in case["args"]]
    monkeypatch.chdir(BAD)
    want_json = case["exit"] == 0 and ("summary" in case or "per_class_names" in case)
    extra = ["-o", "json", "-q"] if want_json else ["-q"]
    code, out, err = run_cli([*args, *extra])
    assert "Traceback" not in err
    if case["exit"] == 2:
        line = assert_one_error_line(code, out, err)
        assert case["stderr"] in line, (line, case["stderr"])
        return
    assert code == case["exit"], (code, err)
    if case["stderr"]:
        # a warning is said once, and it is the only stderr line
        assert err.count(case["stderr"]) == 1 and len(err.splitlines()) == 1, err
    else:
        assert err == "", err
    if want_json:
        doc = json.loads(out)
        for key, value in case.get("summary", {}).items():
            # AP of a perfect scene is 1 by hand; pycocotools' float sums give
            # 0.9999999999999998 and so do we, hence the oracle tests' 1e-12
            assert doc["summary"][key] == pytest.approx(value, abs=1e-12), (key, doc["summary"])
        if "per_class_names" in case:
            assert [r["name"] for r in doc["per_class"]] == case["per_class_names"]


# ---------------------------------------------------------------- generated hostile inputs

GOOD_GT = str(BAD / "good" / "coco_gt.json")
GOOD_PRED = str(BAD / "good" / "coco_pred.json")
VOC_PRED = str(BAD / "good" / "voc_pred")


def deep_json(depth: int = 100_000) -> str:
    return "[" * depth + "]" * depth


def deep_object(depth: int = 100_000) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def billion_laughs(levels: int = 10) -> str:
    ents = ['<!ENTITY lol0 "lol">']
    ents += [f'<!ENTITY lol{i} "{f"&lol{i - 1};" * 10}">' for i in range(1, levels)]
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE annotation [\n'
        + "\n".join(ents)
        + f"\n]>\n<annotation><object><name>&lol{levels - 1};</name></object></annotation>\n"
    )


def quadratic_blowup(size: int = 100_000, refs: int = 10_000) -> str:
    return (
        '<?xml version="1.0"?>\n<!DOCTYPE annotation [<!ENTITY a "'
        + "x" * size
        + '">]>\n<annotation><filename>'
        + "&a;" * refs
        + "</filename></annotation>\n"
    )


def external_entity(secret: Path) -> str:
    return (
        '<?xml version="1.0"?>\n'
        f'<!DOCTYPE annotation [<!ENTITY xxe SYSTEM "file://{secret}">]>\n'
        "<annotation><object><name>&xxe;</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>5</xmax><ymax>5</ymax></bndbox><score>0.5</score></object></annotation>\n"
    )


def external_parameter_entity(secret: Path) -> str:
    return (
        '<?xml version="1.0"?>\n'
        f'<!DOCTYPE annotation [<!ENTITY % p SYSTEM "file://{secret}"> %p;]>\n'
        "<annotation/>\n"
    )


def external_dtd(secret: Path) -> str:
    return (
        '<?xml version="1.0"?>\n'
        f'<!DOCTYPE annotation SYSTEM "file://{secret}">\n'
        "<annotation><object><name>cat</name><bndbox><xmin>1</xmin><ymin>1</ymin>"
        "<xmax>5</xmax><ymax>5</ymax></bndbox></object></annotation>\n"
    )


@pytest.mark.parametrize("make", [deep_json, deep_object], ids=["list", "object"])
@pytest.mark.parametrize("role", ["pred", "gt"])
def test_100k_deep_json(tmp_path: Path, make: Any, role: str) -> None:
    f = tmp_path / "deep.json"
    f.write_text(make())
    args = [str(f), GOOD_GT] if role == "pred" else [GOOD_PRED, str(f)]
    line = assert_one_error_line(*run_cli([*args, "-q"]))
    assert line.startswith(f"iou-eval: error: {f}:1:")  # line:column where it goes deeper
    assert line.endswith(": JSON nested more than 100 deep: refused")


@pytest.mark.parametrize("make", [billion_laughs, quadratic_blowup], ids=["billion", "quadratic"])
def test_entity_expansion_bomb_is_refused(tmp_path: Path, make: Any) -> None:
    f = tmp_path / "bomb.xml"
    f.write_text(make())
    line = assert_one_error_line(*run_cli([VOC_PRED, str(f), "-q"]))
    assert line == f"iou-eval: error: {f}: refused: EntitiesForbidden (entities are not expanded)"


SECRET = "TOP-SECRET-d41d8cd98f00b204"


@pytest.mark.parametrize(
    "make",
    [external_entity, external_parameter_entity, external_dtd],
    ids=["entity", "param", "dtd"],
)
@pytest.mark.parametrize("role", ["pred", "gt"])
def test_external_entity_never_reads_the_file(tmp_path: Path, make: Any, role: str) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    f = tmp_path / "xxe" / "a.xml"
    f.parent.mkdir()
    f.write_text(make(secret))
    args = [str(f.parent), VOC_PRED] if role == "pred" else [VOC_PRED, str(f.parent)]
    code, out, err = run_cli([*args, "-o", "json"])
    assert SECRET not in out and SECRET not in err
    assert code == 2 and "Traceback" not in err
    # the entity forms are refused outright; an external DTD is never fetched, and the file
    # then fails on its own merits (no <score>, or an image the other side lacks)
    if make is not external_dtd:
        assert "refused: EntitiesForbidden" in assert_one_error_line(code, out, err)
    else:
        assert_one_error_line(code, out, err)


def test_every_hostile_generator_is_small_enough_to_write_fast() -> None:
    # the point of generating: the files are big (bombs stay small, nesting is 200 kB)
    assert len(deep_json()) == 200_000 and len(billion_laughs()) < 2_000
    assert os.path.getsize(BAD / "cases.json") < 60_000
