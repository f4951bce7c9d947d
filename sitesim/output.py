"""Writing output files atomically: a temporary file in the same folder, then a rename.

An interrupted run therefore never leaves a half-written result behind.
"""

from __future__ import annotations

import gzip
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (gzip-compressed when ``path`` ends in .gz).

    Compression is deterministic (no timestamp or name in the gzip header), so the same data
    always gives the same bytes.
    """
    target = Path(path)
    raw = data.encode() if isinstance(data, str) else data
    if target.suffix == ".gz":
        raw = gzip.compress(raw, compresslevel=6, mtime=0)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; give what open() would
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def to_json(obj: Any) -> str:
    """``obj`` as indented JSON; NaN and infinities become ``null`` and NumPy scalars plain."""
    return json.dumps(_plain(obj), indent=2, sort_keys=False) + "\n"


def _plain(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    if hasattr(obj, "tolist"):  # NumPy scalars and arrays
        return _plain(obj.tolist())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj
