"""A one-line progress bar for long runs; silent when the stream is not a terminal.

Written here rather than taken from tqdm or rich: its callers report a fraction done and a note,
which tqdm's counts take in three calls (set ``n``, a postfix, a refresh), and either would be a
new dependency of every command for these forty lines; on a terminal tqdm took twice as long a
call.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class ProgressBar:
    """Call with the fraction done (0..1) and an optional note; ``close()`` ends the line.

    Redraws at most ten times a second, and only on a terminal, so piping sitesim's output
    into a file stays clean.
    """

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30) -> None:
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last = 0.0
        self._drawn = False
        self._length = 0  # of the line drawn last

    def __call__(self, fraction: float, note: str = "") -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < 0.1 and fraction < 1.0:
            return
        self._last = now
        filled = round(self.width * min(max(fraction, 0.0), 1.0))
        bar = "#" * filled + "-" * (self.width - filled)
        line = f"{self.label} [{bar}] {100 * fraction:5.1f}%" + (f" {note}" if note else "")
        self.stream.write("\r" + line.ljust(self._length))
        self.stream.flush()
        self._length = len(line)
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * self._length + "\r")
            self.stream.flush()
            self._drawn = False

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
