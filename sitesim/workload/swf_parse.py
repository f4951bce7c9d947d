"""A vectorized reader for the common shape of SWF files: NumPy parses the job lines straight
from their bytes, with no Python work per number.

It accepts what nearly every archive trace is: comment lines before the first job line, then job
lines of exactly 18 numbers, each made of decimal digits with an optional leading minus and an
optional decimal point. Anything else (a comment between job lines, an extended line, an
exponent, a stray character) makes :func:`parse_job_lines` return None, and the caller falls back
to the line-by-line reader, which names the file, line and field of any problem. Every number
it returns is the float Python's ``float()`` gives for the same text: the digits make an exact
integer, divided once by an exact power of ten.
"""

from __future__ import annotations

import numpy as np

#: Fields of a plain SWF job line.
FIELDS = 18
#: Bytes parsed at a time (bounds the temporary arrays: about 15 bytes of them per byte).
CHUNK = 1 << 20
#: Most digits in one number (10**18 fits an int64).
MAX_DIGITS = 18

_POW10 = 10 ** np.arange(MAX_DIGITS + 1, dtype=np.int64)
_ZERO, _MINUS, _DOT = np.uint8(ord("0")), ord("-"), ord(".")
_SPACE, _TAB, _RETURN, _NEWLINE = ord(" "), ord("\t"), ord("\r"), ord("\n")


def split_header(raw: bytes) -> tuple[list[str], int]:
    """The comment lines before the first job line (decoded, right-stripped; blank lines
    skipped), and the offset of the first job line in ``raw``."""
    header: list[str] = []
    pos, size = 0, len(raw)
    while pos < size:
        end = raw.find(b"\n", pos)
        if end < 0:
            end = size
        line = raw[pos:end]
        stripped = line.strip()
        if stripped.startswith(b";"):
            header.append(line.decode("utf-8", errors="replace").rstrip())
        elif stripped:
            break
        pos = end + 1
    return header, min(pos, size)


def parse_job_lines(content: bytes, start: int = 0) -> np.ndarray | None:
    """The job lines of ``content`` from offset ``start`` on (the file after its header) as a
    float64 array (jobs × 18), or None when they are not all plain 18-number lines."""
    if content.find(b";", start) >= 0:
        return None  # comments between job lines: the line-by-line reader keeps them out
    data = np.empty((content.count(b"\n", start) + 1, FIELDS))  # room for every line
    rows = 0
    lo, size = start, len(content)
    while lo < size:
        hi = size if size - lo <= CHUNK else content.rfind(b"\n", lo, lo + CHUNK) + 1
        if hi <= lo:  # a single line longer than a chunk: not an SWF job line
            return None
        part = _parse_chunk(np.frombuffer(content, dtype=np.uint8, count=hi - lo, offset=lo))
        if part is None:
            return None
        data[rows : rows + len(part)] = part
        rows += len(part)
        lo = hi
    return data[:rows] if rows > 0.9 * len(data) else data[:rows].copy()


def _parse_chunk(b: np.ndarray) -> np.ndarray | None:
    """Whole lines of bytes -> (lines × 18) values, or None if any is not a plain job line."""
    value = b - _ZERO  # (uint8: bytes below "0" wrap around)
    digit = value <= 9
    newline = b == _NEWLINE
    blank = (b == _SPACE) | newline | (b == _TAB) | (b == _RETURN)
    minus = b == _MINUS
    dot = b == _DOT
    known = [np.count_nonzero(mask) for mask in (digit, blank, minus, dot)]
    if sum(known) != len(b):
        return None  # a character no plain number has
    edge = np.flatnonzero(blank[1:] != blank[:-1]) + 1
    if not blank[0]:
        edge = np.concatenate(([0], edge))
    if len(edge) % 2:
        edge = np.append(edge, len(b))
    starts, ends = edge[0::2], edge[1::2]  # each token is b[starts[k]:ends[k]]
    if not len(starts):
        return np.empty((0, FIELDS))
    # every line with a token has exactly 18
    per_line = np.diff(np.searchsorted(starts, np.flatnonzero(newline)), prepend=0)
    if ((per_line != 0) & (per_line != FIELDS)).any() or len(starts) % FIELDS:
        return None
    if known[2] != np.count_nonzero(minus[starts]):
        return None  # a minus inside a number
    seen = np.cumsum(digit, dtype=np.int32)  # digits up to and including each byte
    digits = np.flatnonzero(digit)
    first = seen[starts] - digit[starts]  # index in digits of each token's first digit
    last = seen[ends - 1]  # one past its last
    count = last - first
    if count.min() < 1 or count.max() > MAX_DIGITS:
        return None  # "-", "." or a number too long to be exact
    dots = np.flatnonzero(dot)
    token_of_dot = np.searchsorted(starts, dots, side="right") - 1
    if len(dots) > 1 and (np.diff(token_of_dot) == 0).any():
        return None  # two points in one number
    # each digit times ten to the number of digits after it in its number
    power = np.repeat(last - 1, count) - np.arange(len(digits))
    mantissa = np.add.reduceat(value[digits].astype(np.int64) * _POW10[power], first)
    values = mantissa.astype(np.float64)
    if len(dots):
        decimals = last[token_of_dot] - seen[dots]
        values[token_of_dot] /= _POW10[decimals].astype(np.float64)
    negative = minus[starts]
    values[negative] = -values[negative]
    return values.reshape(-1, FIELDS)
