"""Random streams: one generator per user and purpose, drawn in vectorized blocks.

Every random quantity of a user (job sizes, runtimes, batch widths, think times, ...) has its own
stream of uniforms, that of the ``numpy.random.Generator`` derived from the run's root seed and
the key (user id, purpose) (spec README §3). So the same seed reproduces a run bit for bit;
adding a user or changing the scheduler does not change any other draw; and a user's k-th job
shape is the same under every scheduler (common random numbers).

A draw function hands out one value at a time from blocks computed in one NumPy call. Each value
uses exactly one uniform, so the values do not depend on the block size.

A population of users (:class:`StreamTable`) draws the first values of every user's stream of a
purpose at once, in one vectorized pass over all users (:func:`first_uniforms`, the generators'
own arithmetic on arrays), when the first user opens a stream of that purpose; a user's own
generator is made only if the user goes past them. A run of many users, each drawing a few
values, then costs neither a generator per user and purpose nor a NumPy call per user: the values
are the same, uniform for uniform.

Durations are drawn in whole seconds (:func:`seconds`): the profiles come from traces that count
whole seconds, so the fractions an interpolated quantile table would add are not data. Every
event time of a site-level run is then an exact integer, and its SWF output is plain SWF.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping
from functools import partial
from itertools import chain
from typing import Any

import numpy as np
import numpy.typing as npt

#: Stream keys: each purpose draws from its own generator.
PURPOSES = {
    "size": 1, "runtime": 2, "estimate": 3, "repetition": 4,  # workpool
    "width": 5, "gap": 6, "think": 7,  # job submittal
    "continue": 8, "break": 9,  # session dynamics
    "cycle": 10,  # activity cycles
    "utility": 11,  # utility functions
    "request": 12,  # workpool: what a job asks for beyond its cores (a profile's request mix)
}  # fmt: skip
BLOCK = 256
#: A user's own generator draws its first block this large, each next one twice as large up to
#: :data:`BLOCK` (a user who draws a few values holds a few).
FIRST_BLOCK = 16
#: Values of each stream a population draws for every user at once (:class:`StreamTable`).
FIRST_VALUES = 16

#: A map from uniforms to values, vectorized (an inverse CDF).
Transform = Callable[[np.ndarray], np.ndarray]
#: One value at a time: ``draw()`` gives the next.
Draw = Callable[[], float]


def stream(seed: int, user: int, purpose: str) -> np.random.Generator:
    """The generator of ``purpose`` for ``user`` in a run with root ``seed``."""
    return np.random.Generator(_bits(seed, user, purpose))


def _bits(seed: int, user: int, purpose: str) -> np.random.PCG64:
    return np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(user, PURPOSES[purpose])))


def _identity(u: np.ndarray) -> np.ndarray:
    return u


def rounded(inverse_cdf: Transform) -> Transform:
    """A duration distribution's transform, rounded to whole seconds."""
    return lambda u: np.rint(inverse_cdf(u))


def seconds(rng: np.random.Generator, inverse_cdf: Transform) -> Draw:
    """Draws of a duration distribution, rounded to whole seconds."""
    return draws(rng, rounded(inverse_cdf))


def draws(rng: np.random.Generator, transform: Transform | None = None, block: int = BLOCK) -> Draw:
    """Successive values ``transform(u)`` of uniforms ``u`` from one generator, one per call.

    The values are computed a block at a time, when the last block runs out (the first block
    :data:`FIRST_BLOCK` values at most, each next one twice as large up to ``block``); a call
    is a ``next`` on C iterators (no Python frame per value).

    Args:
        rng: the stream.
        transform: vectorized map from uniforms to values (an inverse CDF); identity if None.
        block: the largest block computed at once.
    """
    return partial(next, chain.from_iterable(_blocks(lambda: rng, transform, block)))


def _blocks(
    make: Callable[[], np.random.Generator], transform: Transform | None, block: int = BLOCK
) -> Iterator[list[float]]:
    """The values of a stream, a block at a time; its generator is made at the first block."""
    rng, to_values = make(), transform or _identity
    size = min(FIRST_BLOCK, block)
    while True:
        yield to_values(rng.random(size)).tolist()
        size = min(2 * size, block)


class StreamTable:
    """The random streams of a population of users, purpose by purpose.

    The first ``first`` values of every user's stream of a purpose are drawn for all users at
    once, when a user opens a stream of that purpose (:meth:`open`); a user who goes past them
    goes on with its own generator, made then and advanced past them. Every value is the one the
    user's generator (:func:`stream`) gives, transformed.

    Args:
        seed: the run's root seed.
        users: the users' ids.
        transforms: the map from uniforms to values of each purpose (identity if absent).
        first: values of each stream drawn for the whole population at once (0: none, each
            stream is its own generator from its first value: a user alone).
    """

    def __init__(
        self,
        seed: int,
        users: range,
        transforms: Mapping[str, Transform] | None = None,
        first: int = FIRST_VALUES,
    ) -> None:
        self.seed = seed
        self.users = users
        self.transforms = dict(transforms or {})
        self.first = first
        self._values: dict[str, np.ndarray] = {}
        #: Streams opened per purpose: once every user has opened its stream of a purpose, the
        #: purpose's first values are let go (drawn again, the same, if ever asked for).
        self._opened: dict[str, int] = {}

    @classmethod
    def alone(cls, seed: int, user: int, transforms: Mapping[str, Transform]) -> Streams:
        """The streams of one user alone (each its own generator from its first value)."""
        return cls(seed, range(user, user + 1), transforms, first=0).of(user)

    def of(self, user: int) -> Streams:
        """The streams of ``user``, one of :attr:`users`."""
        return Streams(self, user)

    def values(self, purpose: str) -> np.ndarray:
        """The first values of every user's stream of ``purpose``, a row per user."""
        values = self._values.get(purpose)
        if values is None:
            uniforms = first_uniforms(self.seed, self.users, purpose, self.first)
            to_values = self.transforms.get(purpose, _identity)
            values = to_values(uniforms.ravel()).reshape(uniforms.shape).astype(np.float64)
            self._values[purpose] = values
        return values

    def open(self, user: int, purpose: str) -> Draw:
        """The draw function of ``user``'s stream of ``purpose``."""
        rest = _Rest(self.seed, user, purpose, self.transforms.get(purpose), self.first)
        if not self.first:
            return partial(next, iter(rest))
        head = array("d", self.values(purpose)[user - self.users.start].tobytes())
        opened = self._opened[purpose] = self._opened.get(purpose, 0) + 1
        if opened == len(self.users):
            del self._values[purpose]
        return partial(next, chain(head, rest))


class Streams:
    """One user's streams in a :class:`StreamTable`."""

    __slots__ = ("table", "user")

    def __init__(self, table: StreamTable, user: int) -> None:
        self.table = table
        self.user = user

    def open(self, purpose: str) -> Draw:
        """The draw function of the user's stream of ``purpose``."""
        return self.table.open(self.user, purpose)


class _Rest:
    """A stream past its first ``skip`` values: an iterable whose iterator (made when a user
    reaches it) is the user's own generator, advanced past them."""

    __slots__ = ("purpose", "seed", "skip", "transform", "user")

    def __init__(
        self, seed: int, user: int, purpose: str, transform: Transform | None, skip: int
    ) -> None:
        self.seed, self.user, self.purpose = seed, user, purpose
        self.transform, self.skip = transform, skip

    def _generator(self) -> np.random.Generator:
        bits = _bits(self.seed, self.user, self.purpose)
        if self.skip:
            bits.advance(self.skip)  # (one 64-bit output per uniform)
        return np.random.Generator(bits)

    def __iter__(self) -> Iterator[float]:
        return chain.from_iterable(_blocks(self._generator, self.transform))


class Drawn:
    """A draw function as an attribute, its stream opened at the first use:
    ``gap = Drawn("gap")`` in a class whose objects have ``_streams``
    (:class:`Streams`). A user who never draws a purpose never opens its stream."""

    def __init__(self, purpose: str) -> None:
        self.purpose = purpose
        self.name = purpose

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Draw:
        if obj is None:
            return self  # type: ignore[return-value]  # (the class attribute itself)
        draw = obj._streams.open(self.purpose)
        obj.__dict__[self.name] = draw  # (found before this descriptor from now on)
        return draw


# -- the generators' arithmetic, on arrays ------------------------------------------------------
# NumPy's SeedSequence (M. E. O'Neill's seed_seq design) turns (seed, spawn key) into a PCG64
# state; PCG64 (XSL-RR 128/64) steps a 128-bit LCG and outputs 64 bits, of which a uniform takes
# the high 53. Both are computed here on uint32/uint64 arrays, one element per user: the same
# integers, so the same uniforms. :func:`first_uniforms` checks one user against NumPy's own
# generator on every call and falls back to NumPy's generators, user by user, if they differ.

_M32 = 0xFFFF_FFFF
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4
_PCG_MULT = (2549297995355413924 << 64) + 4865540595714422341
Words = npt.NDArray[np.uint32]


def _words(value: int) -> list[int]:
    """A non-negative integer as 32-bit words, least significant first (0 is one word)."""
    words = [value & _M32]
    value >>= 32
    while value:
        words.append(value & _M32)
        value >>= 32
    return words


def seed_states(seed: int, users: range, purpose: str) -> np.ndarray:
    """The PCG64 seeds of the streams of ``purpose`` of ``users``: a row of 4 uint64 per user,
    ``SeedSequence(seed, spawn_key=(user, p)).generate_state(4, np.uint64)``."""
    n = len(users)
    run = _words(seed)
    run += [0] * (_POOL - len(run))  # (a spawn key follows: the run's words fill the pool)
    ids = np.arange(users.start, users.stop, dtype=np.uint64)
    entropy = [np.full(n, w, dtype=np.uint32) for w in run]
    entropy += [ids.astype(np.uint32), np.full(n, PURPOSES[purpose], dtype=np.uint32)]
    hash_const = _INIT_A

    def hashmix(value: Words) -> Words:
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = (hash_const * _MULT_A) & _M32
        value = value * np.uint32(hash_const)
        return value ^ (value >> np.uint32(16))

    def mix(x: Words, y: Words) -> Words:
        result: Words = x * np.uint32(_MIX_L) - y * np.uint32(_MIX_R)
        return result ^ (result >> np.uint32(16))

    with np.errstate(over="ignore"):
        pool = [hashmix(entropy[i]) for i in range(_POOL)]
        for source in range(_POOL):
            for target in range(_POOL):
                if source != target:
                    pool[target] = mix(pool[target], hashmix(pool[source]))
        for word in entropy[_POOL:]:
            for target in range(_POOL):
                pool[target] = mix(pool[target], hashmix(word))
        state = np.empty((n, 8), dtype=np.uint32)
        hash_b = _INIT_B
        for i in range(8):
            value = pool[i % _POOL] ^ np.uint32(hash_b)
            hash_b = (hash_b * _MULT_B) & _M32
            value = value * np.uint32(hash_b)
            state[:, i] = value ^ (value >> np.uint32(16))
    return state.astype("<u4").view("<u8").astype(np.uint64)


class _Pcg128:
    """128-bit integers as (high, low) uint64 arrays, for PCG64's LCG step."""

    _LOW32 = np.uint64(_M32)
    _32 = np.uint64(32)

    @classmethod
    def mul_high(cls, a: np.ndarray, b: int) -> np.ndarray:
        """The high 64 bits of ``a * b`` (``b`` < 2**64)."""
        a0, a1 = a & cls._LOW32, a >> cls._32
        b0, b1 = np.uint64(b & _M32), np.uint64(b >> 32)
        p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
        middle = (p00 >> cls._32) + (p01 & cls._LOW32) + (p10 & cls._LOW32)
        return p11 + (p01 >> cls._32) + (p10 >> cls._32) + (middle >> cls._32)

    @classmethod
    def step(
        cls, high: np.ndarray, low: np.ndarray, inc_high: np.ndarray, inc_low: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """``state * multiplier + inc`` modulo 2**128."""
        m_high, m_low = _PCG_MULT >> 64, _PCG_MULT & (2**64 - 1)
        new_high = cls.mul_high(low, m_low) + low * np.uint64(m_high) + high * np.uint64(m_low)
        new_low = low * np.uint64(m_low)
        low = new_low + inc_low
        carry = (low < inc_low).astype(np.uint64)
        return new_high + inc_high + carry, low


def _pcg64_uniforms(states: np.ndarray, k: int) -> np.ndarray:
    """The first ``k`` uniforms (``Generator.random``) of PCG64 generators seeded with
    ``states`` (a row of 4 uint64 each)."""
    n = len(states)
    out = np.empty((n, k))
    one, six = np.uint64(1), np.uint64(58)
    with np.errstate(over="ignore"):
        seed_high, seed_low = states[:, 0], states[:, 1]
        inc_high = (states[:, 2] << one) | (states[:, 3] >> np.uint64(63))
        inc_low = (states[:, 3] << one) | one
        high, low = inc_high, inc_low  # step from 0
        low = low + seed_low  # (+= the seed)
        high = high + seed_high + (low < seed_low).astype(np.uint64)
        high, low = _Pcg128.step(high, low, inc_high, inc_low)
        for j in range(k):
            high, low = _Pcg128.step(high, low, inc_high, inc_low)
            x = high ^ low
            rotation = high >> six
            bits = (x >> rotation) | (x << ((np.uint64(64) - rotation) & np.uint64(63)))
            out[:, j] = (bits >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    return out


def first_uniforms(seed: int, users: range, purpose: str, k: int) -> np.ndarray:
    """The first ``k`` uniforms of the stream of ``purpose`` of each of ``users`` (a row per
    user): what ``stream(seed, user, purpose).random(k)`` gives, for all users at once."""
    if k == 0 or not len(users):
        return np.empty((len(users), k))
    if users.step == 1 and users.start >= 0 and users.stop - 1 <= _M32:
        out = _pcg64_uniforms(seed_states(seed, users, purpose), k)
        if np.array_equal(out[0], stream(seed, users.start, purpose).random(k)):
            return out
    return np.array([stream(seed, user, purpose).random(k) for user in users])
