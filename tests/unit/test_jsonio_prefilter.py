"""jsonio's cheap pre-test for suspicious numbers (16+ digit integers, 3-digit exponents):
it must say exactly what the regular expression it stands in front of says."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from iou_cli.loaders import jsonio

_PIECES = st.sampled_from(
    [b"0", b"7", b"1234567890", b"12345678", b"e", b"E", b"+", b"-", b".", b",", b'"', b" "]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_PIECES, max_size=40).map(b"".join))
def test_prefilter_agrees_with_the_expression(data: bytes) -> None:
    assert jsonio._suspicious_number(data) == (jsonio._NUM.search(data) is not None)


def test_prefilter_cases_by_hand() -> None:
    assert jsonio._suspicious_number(b'{"id": 12345678901234567}')  # 17 digits
    assert not jsonio._suspicious_number(b'{"x": 0.12345678901234567}')  # a fraction
    assert jsonio._suspicious_number(b'{"x": 1e400}')
    assert jsonio._suspicious_number(b'{"x": 1E+308}')
    assert not jsonio._suspicious_number(b'{"x": 1e-400, "y": 1e99}')
