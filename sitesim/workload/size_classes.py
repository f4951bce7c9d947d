"""Power-of-two size classes (1, 2, 4, 8, ...): the classes a profile's runtimes and requests
are conditioned on (docs/reference/profiles.md)."""

from __future__ import annotations

from typing import Any

import numpy as np

from sitesim.errors import ConfigError


def size_class(size: Any) -> np.ndarray:
    """Power-of-two class of each size: the smallest 2**k >= size (1, 2, 4, 8, ...)."""
    size = np.maximum(np.asarray(size, dtype=np.float64), 1.0)
    return np.exp2(np.ceil(np.log2(size))).astype(np.int64)


def size_class_key(key: Any, where: str) -> int:
    """A size class as a key of a profile file: a power of two, as text."""
    try:
        size = int(key)
    except ValueError:
        size = 0
    if size < 1 or size & (size - 1):
        raise ConfigError(f"{where}: keys must be powers of two (size classes), got {key!r}")
    return size
