"""The vectorized SWF reader gives exactly what Python's float() gives, or hands over."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitesim.workload import swf_parse
from sitesim.workload.swf_parse import parse_job_lines, split_header

# numbers as they appear in traces: integers, -1, fractions with up to 6 decimals
integer = st.integers(-1, 10**12).map(str)
fraction = st.builds(
    lambda whole, digits, sign: f"{sign}{whole}.{digits}",
    st.integers(0, 10**9),
    st.text("0123456789", min_size=0, max_size=6),
    st.sampled_from(["", "-"]),
)
number = st.one_of(integer, fraction, st.sampled_from(["0", "-0", ".5", "-.25", "7."]))
line = st.lists(number, min_size=18, max_size=18)
spacing = st.sampled_from([" ", "  ", "\t", " \t "])


def expected(lines: list[list[str]]) -> np.ndarray:
    return np.array([[float(tok) for tok in row] for row in lines]).reshape(-1, 18)


@given(st.lists(line, max_size=30), spacing, st.booleans(), st.booleans())
def test_values_are_pythons_floats(lines, sep, crlf, indent):
    end = "\r\n" if crlf else "\n"
    text = "".join(("  " if indent else "") + sep.join(row) + end for row in lines)
    data = parse_job_lines(text.encode())
    assert data is not None
    want = expected(lines)
    assert np.array_equal(data, want) and np.array_equal(np.signbit(data), np.signbit(want))


def test_blocks_split_at_line_ends(monkeypatch):
    monkeypatch.setattr(swf_parse, "CHUNK", 200)  # two or three lines per block
    rows = [[str(k * 18 + j) for j in range(18)] for k in range(50)]
    data = parse_job_lines(("\n".join(" ".join(r) for r in rows) + "\n\n").encode())
    assert data is not None and np.array_equal(data, expected(rows))


@pytest.mark.parametrize(
    "body",
    [
        "1 2 3\n",  # too few fields
        " ".join(["1"] * 19) + "\n",  # an extended line
        " ".join(["1"] * 17 + ["1e3"]) + "\n",  # an exponent
        " ".join(["1"] * 17 + ["1-2"]) + "\n",  # a minus inside
        " ".join(["1"] * 17 + ["1.2.3"]) + "\n",  # two points
        " ".join(["1"] * 17 + ["-"]) + "\n",  # no digit
        " ".join(["1"] * 17 + ["1" * 19]) + "\n",  # too long to be exact
        " ".join(["1"] * 18) + "\n; a comment between job lines\n",
    ],
)
def test_anything_else_is_handed_over(body):
    assert parse_job_lines(body.encode()) is None


def test_header_is_the_leading_comment_lines():
    raw = b";  Version: 2\n\n  ; Note: x  \r\n1 2\n; later\n"
    header, offset = split_header(raw)
    assert header == [";  Version: 2", "  ; Note: x"] and raw[offset:].startswith(b"1 2")
    assert split_header(b"; only\n") == (["; only"], 7)
