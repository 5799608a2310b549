"""The level-at-a-time ``_stats`` walk of ``loaders/jsonio`` visits exactly what the
container-at-a-time walk it replaced visited: the reference below is that walk, kept here
as the oracle (same counts, same keys, same depth, MAX_DEPTH cut-off included)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from iou_cli.loaders import jsonio


def _reference(doc: Any) -> tuple[int, int, int]:
    containers = keys = depth = 0
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        v, d = stack.pop()
        if type(v) is dict:
            containers += 1
            keys += len(v)
            depth = max(depth, d)
            if d > jsonio.MAX_DEPTH:
                continue
            stack.extend((x, d + 1) for x in v.values() if type(x) in (dict, list))
        elif type(v) is list:
            containers += 1
            depth = max(depth, d)
            if d > jsonio.MAX_DEPTH or not v:
                continue
            if type(v[0]) in (dict, list):
                stack.extend((x, d + 1) for x in v if type(x) in (dict, list))
    return containers, keys, depth


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
docs = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=3), inner, max_size=5)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(doc=st.lists(docs, max_size=6) | st.dictionaries(st.text(max_size=3), docs, max_size=6))
def test_stats_equal_the_container_walk(doc: Any) -> None:
    assert jsonio._stats(doc) == _reference(doc)


def test_hidden_container_after_a_scalar_is_not_entered() -> None:
    doc = [[1, {"a": 1}], [{"b": [2, [3]]}]]
    assert (
        jsonio._stats(doc) == _reference(doc) == (5, 1, 4)
    )  # root, 2 lists, dict, [2, [3]] (not entered)


def test_deeper_than_max_depth_is_counted_not_entered() -> None:
    doc: Any = {"k": 1}
    for _ in range(jsonio.MAX_DEPTH + 3):
        doc = [doc]
    got = jsonio._stats(doc)
    assert got == _reference(doc)
    assert got[2] == jsonio.MAX_DEPTH + 1
