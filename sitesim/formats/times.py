"""Time stamps as accounting logs print them, to seconds since the Unix epoch (UTC).

``sacct`` prints times as ``YYYY-MM-DDTHH:MM:SS`` in the time zone of the machine it runs on
(its ``TZ``), or as Unix seconds with ``SLURM_TIME_FORMAT=%s``; ``Unknown`` (or ``None``) where
a time does not apply (the start of a job that never ran). Local times are turned into UTC with
the IANA zone given (``--timezone``, default UTC): where a zone's clocks go back, an hour of
local times happens twice and the first is taken; that ambiguity is why the how-to asks for
``TZ=UTC`` or Unix seconds. Every conversion is vectorized: NumPy parses the text, and each
zone's offset is looked up once per quarter hour that occurs.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np

from sitesim.errors import ConfigError

StampKind = Literal["iso", "epoch"]
#: Texts that stand for "no such time" (never started, still running).
UNKNOWN_STAMPS = ("Unknown", "None", "")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
_EPOCH = re.compile(r"^\d{1,12}$")
#: Zones change their offset on a quarter hour (at the finest): one lookup a quarter hour.
_BUCKET = 900
#: What a stamp may look like, for messages.
FORMATS = "YYYY-MM-DDTHH:MM:SS, Unix seconds (SLURM_TIME_FORMAT=%s) or Unknown"


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name`` (``UTC``, ``Europe/Paris``).

    Raises:
        ConfigError: an unknown zone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ConfigError(
            f"--timezone: {name!r} is not an IANA time zone (such as UTC or Europe/Paris)"
        ) from None


def stamp_kind(text: str) -> StampKind | None:
    """Which of the known forms ``text`` has (None: neither)."""
    if _ISO.match(text):
        return "iso"
    if _EPOCH.match(text):
        return "epoch"
    return None


def parse_stamps(values: list[str], kind: StampKind, tz: ZoneInfo) -> tuple[np.ndarray, int | None]:
    """Seconds since the epoch (float64, NaN for ``Unknown``), and the index of the first value
    that is not of form ``kind`` (None when all are).

    Args:
        values: the stamps as text.
        kind: their form (:func:`stamp_kind` of the first known one).
        tz: the zone of local times (not used for Unix seconds).
    """
    unknown = any(text in values for text in UNKNOWN_STAMPS)
    given = [_NOT_A_TIME if v in UNKNOWN_STAMPS else v for v in values] if unknown else values
    lengths = set(map(len, given)) - {len(_NOT_A_TIME)}
    try:
        seconds = _cast(given, kind, lengths)
    except ValueError:
        return np.full(len(values), np.nan), _first_bad(values, kind)
    return (to_utc(seconds, tz) if kind == "iso" else seconds), None


def _cast(given: list[str], kind: StampKind, lengths: set[int]) -> np.ndarray:
    """The stamps parsed (ValueError: one is not of form ``kind``).

    Unix seconds go through Python's ``int``, not NumPy's cast of text to integers: that cast
    calls back into Python, and a Ctrl-C arriving then is lost (the conversion goes on)."""
    if kind == "epoch":
        if lengths and max(lengths) > 12:
            raise ValueError
        if _NOT_A_TIME in given:
            given = ["-1" if v == _NOT_A_TIME else v for v in given]
        seconds = np.fromiter(map(int, given), dtype=np.int64, count=len(given))
        return np.where(seconds < 0, np.nan, seconds.astype(np.float64))
    if lengths - {19}:
        raise ValueError
    stamps = np.array(given, dtype="datetime64[s]")
    return np.where(np.isnat(stamps), np.nan, stamps.astype(np.int64))


#: What an unknown time becomes before NumPy parses the column (NumPy's not-a-time).
_NOT_A_TIME = "NaT"


def _first_bad(values: list[str], kind: StampKind) -> int:
    pattern = _ISO if kind == "iso" else _EPOCH
    for k, value in enumerate(values):
        if value in UNKNOWN_STAMPS:
            continue
        if not pattern.match(value):
            return k
        if kind == "iso":
            try:
                datetime.fromisoformat(value)
            except ValueError:
                return k
    raise AssertionError("no bad stamp found")  # (the vectorized parse found one)


def to_utc(local: np.ndarray, tz: ZoneInfo) -> np.ndarray:
    """Local wall-clock times (seconds, as if UTC) in zone ``tz`` -> seconds since the epoch."""
    if tz.key == "UTC" or not len(local):
        return local
    known = ~np.isnan(local)
    utc = local.copy()
    utc[known] = _shift(local[known], tz)
    return utc


def _shift(local: np.ndarray, tz: ZoneInfo) -> np.ndarray:
    buckets, inverse = np.unique(np.floor(local / _BUCKET), return_inverse=True)
    offsets = np.array(
        [_offset(float(bucket) * _BUCKET, tz) for bucket in buckets.tolist()], dtype=np.float64
    )
    return local - offsets[inverse.reshape(-1)]


def _offset(wall: float, tz: ZoneInfo) -> float:
    naive = datetime.fromtimestamp(wall, UTC).replace(tzinfo=None)
    delta = naive.replace(tzinfo=tz).utcoffset()  # (fold 0: the first of a repeated hour)
    return delta.total_seconds() if delta is not None else 0.0


def iso_utc(seconds: float) -> str:
    """``2024-01-31T12:00:00Z``: an epoch time as text, for headers."""
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def started_before_submit(jobs: int, largest: float, submitted: str = "submitted") -> str:
    """The note for jobs a log shows starting before they were submitted (clock skew), which
    a conversion keeps: their start is their submit time (wait 0), their runtime as logged
    (end minus start)."""
    many = jobs != 1
    return (
        f"{jobs:,} job{'s' if many else ''} started before {'they were' if many else 'it was'} "
        f"{submitted} (by up to {largest:,.0f} s: clock skew): kept, wait 0 (start set to the "
        "submit time), runtime as logged"
    )
