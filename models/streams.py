"""Random streams: one generator per user and purpose, drawn in vectorized blocks.

Every random quantity of a user (job sizes, runtimes, batch widths, think times, ...) has its own
``numpy.random.Generator``, derived from the run's root seed and the key (user id, purpose)
(spec README §3). So the same seed reproduces a run bit for bit; adding a user or changing the
scheduler does not change any other draw; and a user's k-th job shape is the same under every
scheduler (common random numbers).

A :func:`draws` function hands out one value at a time from blocks computed in one NumPy call.
Each value uses exactly one uniform number, so the values do not depend on the block size.

Durations are drawn in whole seconds (:func:`seconds`): the profiles come from traces that count
whole seconds, so the fractions an interpolated quantile table would add are not data. Every
event time of a site-level run is then an exact integer, and its SWF output is plain SWF.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from itertools import chain

import numpy as np

#: Stream keys: each purpose draws from its own generator.
PURPOSES = {
    "size": 1, "runtime": 2, "estimate": 3, "repetition": 4,  # workpool
    "width": 5, "gap": 6, "think": 7,  # job submittal
    "continue": 8, "break": 9,  # session dynamics
    "cycle": 10,  # activity cycles
    "utility": 11,  # utility functions
}  # fmt: skip
BLOCK = 256


def stream(seed: int, user: int, purpose: str) -> np.random.Generator:
    """The generator of ``purpose`` for ``user`` in a run with root ``seed``."""
    sequence = np.random.SeedSequence(seed, spawn_key=(user, PURPOSES[purpose]))
    return np.random.Generator(np.random.PCG64(sequence))


def _identity(u: np.ndarray) -> np.ndarray:
    return u


def seconds(rng: np.random.Generator, inverse_cdf: Callable[[np.ndarray], np.ndarray]) -> Draw:
    """Draws of a duration distribution, rounded to whole seconds."""
    return draws(rng, lambda u: np.rint(inverse_cdf(u)))


#: One value at a time: ``draw()`` gives the next.
Draw = Callable[[], float]


def draws(
    rng: np.random.Generator,
    transform: Callable[[np.ndarray], np.ndarray] | None = None,
    block: int = BLOCK,
) -> Draw:
    """Successive values ``transform(u)`` of uniforms ``u`` from one generator, one per call.

    The values are computed ``block`` at a time, when the last block runs out; a call is a
    ``next`` on C iterators (no Python frame per value).

    Args:
        rng: the stream.
        transform: vectorized map from uniforms to values (an inverse CDF); identity if None.
        block: how many values to compute at once.
    """
    to_values = transform or _identity

    def blocks() -> Iterator[list[float]]:
        while True:
            yield to_values(rng.random(block)).tolist()

    return partial(next, chain.from_iterable(blocks()))
