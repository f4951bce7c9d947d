"""SWF reading and writing: round trips, headers, and every malformed-line message."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from sitesim.errors import SitesimError, SWFFormatError
from sitesim.workload.swf import FIELDS, format_swf, read_swf, write_swf
from tests.conftest import trace_path

SAMPLE = """\
; Version: 2.2
; Computer: Test machine
; MaxProcs: 1664 (72, 1368, 224)
; MaxNodes: 184
;
1 0 5 100 4 12.5 -1 4 200 -1 1 1 1 -1 0 -1 -1 -1

2 10 0 50 2 -1 -1 2 60 -1 1 2 1 -1 0 -1 1 30 0 100 3600 50 7200 0
   3 20.25 1 3 1 -1 -1 1 10 -1 0 1 1 -1 0 -1 -1 -1
"""


def write(tmp_path, text, name="t.swf"):  # type: ignore[no-untyped-def]
    path = tmp_path / name
    path.write_text(text)
    return path


def test_read_sample(tmp_path):
    trace = read_swf(write(tmp_path, SAMPLE))
    assert len(trace) == 3 and trace.data.shape == (3, 18)
    assert trace.column("submit").tolist() == [0.0, 10.0, 20.25]
    assert trace.column("cpu")[0] == 12.5
    assert trace.tails == {1: "0 100 3600 50 7200 0"}
    assert trace.header[1] == "; Computer: Test machine" and len(trace.header) == 5
    assert trace.max_procs == 1664
    assert trace.header_value("computer") == "Test machine"
    assert len(trace.sha256) == 64


def test_round_trip_is_identical(tmp_path):
    first = read_swf(write(tmp_path, SAMPLE))
    write_swf(tmp_path / "copy.swf", first.data, first.header, first.tails)
    second = read_swf(tmp_path / "copy.swf")
    assert np.array_equal(first.data, second.data)
    assert first.header == second.header and first.tails == second.tails


def test_gzip_round_trip_is_deterministic(tmp_path):
    trace = read_swf(write(tmp_path, SAMPLE))
    write_swf(tmp_path / "a.swf.gz", trace.data, trace.header, trace.tails)
    write_swf(tmp_path / "b.swf.gz", trace.data, trace.header, trace.tails)
    assert (tmp_path / "a.swf.gz").read_bytes() == (tmp_path / "b.swf.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.swf.gz").read_bytes()).startswith(b"; Version")
    assert np.array_equal(read_swf(tmp_path / "a.swf.gz").data, trace.data)


def test_header_machine_size_fallbacks(tmp_path):
    line = "1 0 0 1 1 -1 -1 1 1 -1 1 1 1 -1 0 -1 -1 -1\n"
    assert read_swf(write(tmp_path, "; MaxNodes: 256\n" + line)).max_procs == 256
    assert read_swf(write(tmp_path, "; Note: x\n" + line)).max_procs is None


def test_header_only_file_has_no_jobs(tmp_path):
    trace = read_swf(write(tmp_path, "; Version: 2.2\n"))
    assert len(trace) == 0 and trace.data.shape == (0, 18)


BAD_LINE = "1 0 5 100 4 12.5 -1 4 200 -1 1 1 1 -1 0 -1 -1 -1"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("1 0 5 100 4 12.5 -1 4 200 -1 1 1 1 -1 0 -1 -1",
         "t.swf:4: expected 18 fields, found 17"),
        ("1 0 5 100 x 12.5 -1 4 200 -1 1 1 1 -1 0 -1 -1 -1",
         "t.swf:4: field 5 (procs): 'x' is not a number"),
        ("1 0 5 100 4.5 12.5 -1 4 200 -1 1 1 1 -1 0 -1 -1 -1",
         "t.swf:4: field 5 (procs): '4.5' is not an integer"),
        ("1 nan 5 100 4 12.5 -1 4 200 -1 1 1 1 -1 0 -1 -1 -1",
         "t.swf:4: field 2 (submit): 'nan' is not finite"),
        ("1 0 5 100 4 12.5 -1 4 200 -1 1 1 1 -1 0 -1 -1 -1 0 abc",
         "t.swf:4: field 20 (extension): 'abc' is not a number"),
        ("1 0 5 100 4 12.5 -1 4 200 -1 1 1 1 -1 0 -1 7.25 -1",
         "t.swf:4: field 17 (preceding): '7.25' is not an integer"),
    ],
)  # fmt: skip
def test_malformed_lines_name_file_line_and_field(tmp_path, line, message):
    text = f"; header\n{BAD_LINE}\n\n{line}\n{BAD_LINE}\n"
    with pytest.raises(SWFFormatError) as err:
        read_swf(write(tmp_path, text))
    assert str(err.value).endswith(message)
    assert str(err.value).startswith(str(tmp_path))


def test_unreadable_files(tmp_path):
    with pytest.raises(SitesimError, match=r"nothere\.swf: cannot read: No such file"):
        read_swf(tmp_path / "nothere.swf")
    (tmp_path / "bad.swf.gz").write_bytes(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(SitesimError, match="not a readable gzip file"):
        read_swf(tmp_path / "bad.swf.gz")


def test_a_file_without_jobs_round_trips(tmp_path):
    write_swf(tmp_path / "empty.swf", np.empty((0, 18)), ["Version: 2.2"])
    trace = read_swf(tmp_path / "empty.swf")
    assert len(trace) == 0 and trace.header == ["; Version: 2.2"]


def test_writer_formats_integers_fractions_and_unknowns():
    data = np.full((1, 18), -1.0)
    data[0, :4] = [1, 2.5, np.nan, 3]
    text = format_swf(data, ["Version: 2.2"])
    header, line = text.splitlines()
    assert header == "; Version: 2.2"
    assert line.split()[:4] == ["1", "2.5", "-1", "3"]


@pytest.mark.traces
def test_real_trace_round_trip(tmp_path):
    trace = read_swf(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz"))
    assert len(trace) == 59_715 and trace.max_procs == 128
    assert trace.sha256 == "e03fe48be50c4ab04d6bb2285296d9c3399e9c1f27ee79b754ad32a14abd9bac"
    write_swf(tmp_path / "sp2.swf.gz", trace.data, trace.header, trace.tails)
    again = read_swf(tmp_path / "sp2.swf.gz")
    assert np.array_equal(trace.data, again.data) and trace.header == again.header
    assert len(FIELDS) == 18


def _submits(tmp_path, submits, name="o.swf"):  # type: ignore[no-untyped-def]
    lines = "".join(f"{n} {s} 0 1 1 -1 -1 1 1 -1 1 1 -1 -1 -1 -1 -1 -1\n"
                    for n, s in enumerate(submits, start=1))  # fmt: skip
    return read_swf(write(tmp_path, "; MaxProcs: 4\n" + lines, name))


@pytest.mark.parametrize(
    ("submits", "rows"),
    [
        ([10_000, *range(1, 124)], [0]),  # one line too early: 1, not the 123 after it
        ([*range(1, 124), 0], [123]),  # one line too late
        ([0, 10, 20, 1000, 30, 40, 50], [3]),  # one line in the middle
        ([50, 60, 70, 0, 10, 20, 30], [0, 1, 2]),  # a block: the fewest lines to move
        ([0, 5, -1, 6, 3, 9], [4]),  # unknown submit times (-1) are left out
        ([0, 0, 5, 5, 9], []),
    ],
)
def test_out_of_order_counts_the_fewest_lines_to_move(tmp_path, submits, rows):
    trace = _submits(tmp_path, submits)
    assert trace.out_of_order().tolist() == rows


def test_strict_refuses_the_first_line_earlier_than_the_line_before_it(tmp_path):
    trace = _submits(tmp_path, [10_000, 1, 2, 3])
    assert trace.out_of_order().tolist() == [0] and trace.first_descent() == 1
    assert _submits(tmp_path, [1, 2, 2], name="s.swf").first_descent() is None


@pytest.mark.parametrize(
    ("value", "column", "message"),
    [
        ("1e300", 1, "field 2 (submit): '1e+300' is out of range: times lie within "
                     "±10,000,000,000 s (about 317 years)"),
        ("10000000001", 8, "field 9 (req_time): '1e+10' is out of range"),
        ("-1e11", 2, "field 3 (wait): '-1e+11' is out of range"),
        ("1e16", 0, "field 1 (job): '1e+16' is out of range: values lie "
                                "within ±9,007,199,254,740,992 (2**53)"),
        ("1e20", 9, "field 10 (req_memory): '1e+20' is out of range"),
    ],
)  # fmt: skip
def test_absurd_values_are_refused_with_the_allowed_range(tmp_path, value, column, message):
    fields = BAD_LINE.split(" ")
    fields[column] = value
    with pytest.raises(SWFFormatError) as err:
        read_swf(write(tmp_path, f"; header\n{BAD_LINE}\n{' '.join(fields)}\n"))
    assert str(err.value).startswith(f"{tmp_path / 't.swf'}:3: {message}")


def test_the_largest_values_of_the_archive_traces_are_read(tmp_path):
    # CEA-Curie's requested time of 2^31 - 1 s; a Unix time as a submit time
    line = "1 1712044800 5 100 4 12.5 -1 4 2147483647 -1 1 1 1 -1 0 -1 -1 -1"
    assert read_swf(write(tmp_path, line + "\n")).column("req_time")[0] == 2**31 - 1


def test_a_trace_made_in_memory_is_checked_before_a_replay():
    from sitesim.runs.replay import replay
    from sitesim.workload.swf import SWFTrace

    data = np.full((2, 18), -1.0)
    data[:, 0], data[:, 1], data[:, 3], data[:, 4] = [1, 2], [0, 1e300], 100, 2
    with pytest.raises(SWFFormatError, match=r"^mem: job line 2: field 2 \(submit\): '1e\+300' is"):
        replay(SWFTrace("mem", ["; MaxProcs: 4"], data), "FCFS")
