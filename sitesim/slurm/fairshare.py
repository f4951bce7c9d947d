"""Slurm's fairshare: usage decayed by a half-life, and each user's fairshare factor.

:class:`Fairshare` keeps the decayed usage (core-seconds) of every user of an association tree
(:class:`sitesim.slurm.associations.Associations`) and turns it into factors in [0, 1] with one of
Slurm's two algorithms:

- ``"fair_tree"`` (Slurm's default since 19.05; fair_tree.html): at every level of the tree an
  association's *Level Fairshare* ``LF = S / U``, its raw shares over those of itself and its
  siblings, over its usage over that of itself and its siblings; the tree sorted by ``LF`` and
  visited depth-first ranks the users; a user's factor is ``rank / number of users``.
- ``"classic"`` (``PriorityFlags=NO_FAIR_TREE``; classic_fair_share.html, formerly the
  Fair-share section of priority_multifactor.html): ``F = 2^(-UE/S)``, ``S`` the user's
  normalized shares (the product of the share ratios down the tree) and ``UE`` its effective
  usage (``UE = UA + (UE_parent - UA) * S_child / S_all_siblings``, the actual usage at the
  first level under root).

Usage is charged as Slurm's decay thread does (``_apply_decay`` and ``_apply_new_usage`` in
``src/plugins/priority/multifactor/priority_multifactor.c``): each call of :meth:`advance`
decays every user's usage by ``2^(-elapsed / half_life)`` and adds what running jobs used
since, every core-second itself decayed from the moment it was used; usage is reset at the
``PriorityUsageResetPeriod`` boundaries, sim time 0 being Monday 1 January 2018, 00:00
(:data:`EPOCH`). Where sitesim departs from Slurm's code, and why, is in
``docs/background/decisions.md`` (section Fairshare).

:func:`fair_tree_factors` and :func:`classic_factors` are the two formulas on their own, for a
:class:`ShareTree` (the tree compiled to arrays) and given usage.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from sitesim.errors import ConfigError
from sitesim.platform.downtime import EPOCH  # (the calendar date of sim time 0: a Monday)
from sitesim.slurm.associations import Associations, own_account

__all__ = [
    "ALGORITHMS",
    "EPOCH",
    "RESETS",
    "Fairshare",
    "ShareTree",
    "classic_factors",
    "fair_tree_factors",
    "next_reset",
]

#: The fairshare algorithms: Slurm's default, and ``PriorityFlags=NO_FAIR_TREE``.
ALGORITHMS = ("fair_tree", "classic")
#: ``PriorityUsageResetPeriod``'s values (slurm.conf(5)).
RESETS = ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")

_DAY = 86400.0
_LN2 = math.log(2.0)
#: A window of accrual longer than this many half-lives is folded at the next start/stop, so
#: that ``2^(elapsed / half_life)`` stays far from overflow.
_FOLD_HALF_LIVES = 256.0

Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


class ShareTree:
    """An association tree as arrays: accounts (index 0 is ``root``) and users.

    Users are kept in the order they were added; :meth:`add_user` adds one as its own account
    under ``root`` with one share (:meth:`Associations.with_users`). The arrays derived from
    the shape (level shares, depth levels, paths, normalized shares) are rebuilt lazily after
    a change.

    Attributes:
        users: user ids, by index.
        index: user id -> index.
    """

    def __init__(self, associations: Associations) -> None:
        names = ["root", *associations.accounts]
        position = {name: i for i, name in enumerate(names)}
        parent = [-1] + [position[associations.accounts[n][0]] for n in names[1:]]
        shares = [0.0] + [float(associations.accounts[n][1]) for n in names[1:]]
        self._names = names
        self._account_index = position
        self.acct_parent: IntArray = np.array(parent, dtype=np.intp)
        self.acct_shares: Array = np.array(shares, dtype=np.float64)
        self.users: list[int] = list(associations.users)
        self.index: dict[int, int] = {user: i for i, user in enumerate(self.users)}
        self.user_acct: IntArray = np.array(
            [position[associations.users[u][0]] for u in self.users], dtype=np.intp
        )
        self.user_shares: Array = np.array(
            [float(associations.users[u][1]) for u in self.users], dtype=np.float64
        )
        self._shape: _Shape | None = None

    def add_user(self, user: int) -> int:
        """Add ``user`` as its own account ``u<id>`` under root with one share; its index."""
        name = own_account(user, self._account_index)
        self._account_index[name] = len(self._names)
        self._names.append(name)
        self.acct_parent = np.append(self.acct_parent, 0)
        self.acct_shares = np.append(self.acct_shares, 1.0)
        self.index[user] = len(self.users)
        self.users.append(user)
        self.user_acct = np.append(self.user_acct, len(self._names) - 1)
        self.user_shares = np.append(self.user_shares, 1.0)
        self._shape = None
        return len(self.users) - 1

    @property
    def shape(self) -> _Shape:
        """The arrays derived from the tree's shape (rebuilt after :meth:`add_user`)."""
        if self._shape is None:
            self._shape = _Shape(self)
        return self._shape

    def account_shares(self) -> dict[str, float]:
        """Each account's normalized shares, by name: the product of its share ratios down
        the tree (its raw shares over its level's, times its parent's), the share of the
        machine its shares promise it."""
        norm = self.shape.acct_norm
        return {name: float(norm[k]) for k, name in enumerate(self._names) if k}

    def account_usage(self, usage: Array) -> Array:
        """Every account's usage (index 0: root, the total), summed up from its users'."""
        shape = self.shape
        n = len(self.acct_parent)
        total: Array = np.bincount(self.user_acct, weights=usage, minlength=n).astype(float)
        for level in reversed(shape.levels):  # the deepest accounts first, root last
            total += np.bincount(self.acct_parent[level], weights=total[level], minlength=n)
        return total


class _Shape:
    """What the tree's shape gives, computed once per shape.

    Attributes:
        up: per account, its parent (root's is itself, 0).
        level_shares: per account, the raw shares of all its children (users and accounts).
        levels: ``levels[d - 1]``: the accounts at depth ``d`` (1 = under root).
        acct_s: per account, its raw shares over its level's (Fair Tree's S; 0 if none).
        user_s: the same for users.
        acct_norm: per account, its normalized shares (the product down the tree; root's 1).
        norm_shares: per user, Slurm's classic normalized shares (the product down the tree).
        user_depth: per user, its depth (its account's + 1).
        uniform: every user at the same depth.
        paths: ``paths[k]``: per user, its ancestor account at depth ``k + 1`` (0 if none).
        holders: the accounts with users; ``holder_paths[k]``: their ancestors at depth
            ``k + 1`` (themselves at their own depth).
    """

    def __init__(self, tree: ShareTree) -> None:
        parent, shares = tree.acct_parent, tree.acct_shares
        n = len(parent)
        up: IntArray = np.maximum(parent, 0)
        self.up = up
        level_shares = np.bincount(up[1:], weights=shares[1:], minlength=n).astype(float)
        level_shares += np.bincount(tree.user_acct, weights=tree.user_shares, minlength=n)
        self.level_shares: Array = level_shares
        chain = [np.arange(n)]  # chain[j]: every account's ancestor j levels up
        while chain[-1].any():
            chain.append(up[chain[-1]])
        depth = (np.array(chain) > 0).sum(axis=0)
        top = len(chain) - 1
        self.levels: list[IntArray] = [np.flatnonzero(depth == d) for d in range(1, top + 1)]
        # ancestors[k, a]: a's ancestor at depth k + 1 (a itself at its depth; 0 below it)
        ancestors = np.zeros((top, n), dtype=np.intp)
        for j, nodes in enumerate(chain[:-1]):
            at = depth - j - 1
            here = at >= 0
            ancestors[at[here], np.flatnonzero(here)] = nodes[here]
        self.acct_s = _ratio(shares, self.level_shares[up])
        self.acct_s[0] = 1.0
        self.user_s = _ratio(tree.user_shares, self.level_shares[tree.user_acct])
        acct_norm = np.ones(n)
        for level in self.levels:
            acct_norm[level] = acct_norm[up[level]] * self.acct_s[level]
        self.acct_norm: Array = acct_norm
        self.norm_shares: Array = acct_norm[tree.user_acct] * self.user_s
        self.user_depth: IntArray = depth[tree.user_acct] + 1
        deepest = int(self.user_depth.max()) if len(self.user_depth) else 1
        self.uniform = bool((self.user_depth == deepest).all())
        self.paths: IntArray = ancestors[: deepest - 1][:, tree.user_acct]
        self.holders: IntArray = np.unique(tree.user_acct)
        self.holder_paths: IntArray = ancestors[: deepest - 1][:, self.holders]
        self.acct_no_shares: IntArray = np.flatnonzero(self.acct_s == 0)
        self.user_no_shares: IntArray = np.flatnonzero(self.user_s == 0)
        self.rank_type: type[np.integer] = np.int16 if n < 2**15 else np.int64
        #: the users by Level Fairshare at the last computation: where the next sort starts
        self.hint: IntArray = np.arange(len(tree.user_acct))
        self.positions: IntArray = np.arange(len(tree.user_acct))


def _ratio(part: Array, whole: Array) -> Array:
    """``part / whole``, 0 where ``whole`` is 0 (Slurm: no shares at the level, S = 0)."""
    out = np.zeros(len(part))
    np.divide(part, whole, out=out, where=whole > 0)
    return out


def _level_fs(s: Array, no_shares: IntArray, mine: Array, parents: Array) -> Array:
    """Fair Tree's ``LF = S / U``, ``U = usage / parent's usage`` (fair_tree.c, _calc_assoc_fs),
    as ``S * parent's usage / usage``: 0 where S is 0, infinity where U is 0 (no usage)."""
    out = np.full(len(mine), np.inf)
    np.divide(s * parents, mine, out=out, where=mine > 0)
    if len(no_shares):
        out[no_shares] = 0.0
    return out


def fair_tree_factors(tree: ShareTree, usage: Array) -> Array:
    """Every user's Fair Tree factor (fair_tree.html, "Algorithm", "Ties").

    The users in the order of a depth-first traversal of the tree with siblings sorted by
    Level Fairshare, highest first, users before accounts of equal LF, sibling accounts of
    equal LF merged; rank counts down from the number of users, a user tied with the one
    before it (equal LF at the level where their paths part) keeping its rank; factor =
    rank / number of users.

    The traversal is one lexicographic sort: a user's key is, level by level down its path,
    ``(-LF, 1)`` for an account and ``(-LF, 0)`` for itself (merging tied accounts is leaving
    the account's name out of the key). When every user is at the same depth, the accounts'
    part of the key is ranked among the accounts first, and the users sorted by two keys.
    Accounts without users are not visited (docs/background/decisions.md, Fairshare).

    Args:
        tree: the association tree.
        usage: per user (by index), its usage; only ratios matter.
    """
    n = len(usage)
    if n == 0:
        return np.zeros(0)
    shape = tree.shape
    acct_usage = tree.account_usage(usage)
    acct_lf = _level_fs(shape.acct_s, shape.acct_no_shares, acct_usage, acct_usage[shape.up])
    user_lf = _level_fs(shape.user_s, shape.user_no_shares, usage, acct_usage[tree.user_acct])
    if shape.uniform:
        group = _path_ranks(shape, acct_lf)[tree.user_acct]
        value = -user_lf
        hint = shape.hint  # the last order by value: nearly sorted, sorts fast
        first = hint[np.argsort(value[hint], kind="stable")]
        shape.hint = first
        order = first[np.argsort(group[first], kind="stable")]
        g, v = group[order], value[order]
        tied = (g[1:] == g[:-1]) & (v[1:] == v[:-1])
    else:
        order, tied = _traversal(shape, acct_lf, user_lf)
    begins = np.zeros(n, dtype=np.intp)  # per position, where its run of tied users begins
    np.maximum.accumulate(np.where(tied, 0, shape.positions[1:]), out=begins[1:])
    factors = np.empty(n)
    factors[order] = (n - begins) / n
    return factors


def _path_ranks(shape: _Shape, acct_lf: Array) -> npt.NDArray[np.integer]:
    """Per account holding users (all at one depth), the rank of its path of ``-LF`` from the
    top: equal paths (accounts merged at every level) share a rank."""
    paths = -acct_lf[shape.holder_paths]  # one row per level, top first
    rows = paths[0] if len(paths) == 1 else np.ascontiguousarray(paths.T)
    inverse = np.unique(rows, axis=None if len(paths) == 1 else 0, return_inverse=True)[1]
    ranks = np.zeros(len(shape.up), dtype=shape.rank_type)
    ranks[shape.holders] = inverse.reshape(-1)
    return ranks


def _traversal(
    shape: _Shape, acct_lf: Array, user_lf: Array
) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """Fair Tree's order of users at any depths, and whether each is tied with the one
    before it: the level-by-level keys sorted at once."""
    depth = shape.user_depth
    values: list[Array] = []
    flags: list[Array] = []
    for k, ancestors in enumerate(shape.paths, start=1):
        below = depth > k
        values.append(np.where(below, -acct_lf[ancestors], np.where(depth == k, -user_lf, 0.0)))
        flags.append(below.astype(np.float64))
    values.append(np.where(depth == len(values) + 1, -user_lf, 0.0))
    flags.append(np.zeros(len(depth)))
    keys = [key for pair in zip(values, flags, strict=True) for key in pair]
    order: IntArray = np.lexsort(keys[::-1])
    same = np.ones(len(order) - 1, dtype=bool)  # equal keys on every level so far
    tied = np.zeros(len(order) - 1, dtype=bool)
    for value, flag in zip(values, flags, strict=True):
        v, f = value[order], flag[order]
        equal_value, equal_flag = v[1:] == v[:-1], f[1:] == f[:-1]
        tied |= same & equal_value & ~equal_flag
        same &= equal_value & equal_flag
    return order, tied | same


def classic_factors(tree: ShareTree, usage_norm: Array) -> Array:
    """Every user's classic factor ``F = 2^(-UE/S)`` (classic_fair_share.html, "The Slurm
    Fair-Share Formula"; 0 for a user with no normalized shares, as Slurm's
    ``_set_assoc_fs_factor``).

    Args:
        tree: the association tree.
        usage_norm: per user, its normalized usage ``U`` (Slurm: its usage over root's, the
            total; the documentation's example gives fractions of the machine).
    """
    shape = tree.shape
    parent = shape.up
    ua = tree.account_usage(usage_norm)
    ue = ua.copy()
    for level in shape.levels[1:]:
        ue[level] = _effective(
            ua[level], ue[parent[level]], tree.acct_shares[level], shape.level_shares[parent[level]]
        )
    user_ue = _effective(
        usage_norm, ue[tree.user_acct], tree.user_shares, shape.level_shares[tree.user_acct]
    )
    s = shape.norm_shares
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s > 0.0, np.exp2(-user_ue / s), 0.0)


def _effective(ua: Array, ue_parent: Array, shares: Array, level: Array) -> Array:
    """``UE = UA + (UE_parent - UA) * S_child / S_all_siblings``; ``UE_parent`` when the
    level has no shares (priority_multifactor.c, _set_usage_efctv)."""
    fraction = _ratio(shares, level)
    return np.where(level > 0, ua + (ue_parent - ua) * fraction, ue_parent)


def next_reset(reset: str, now: float) -> float:
    """The first ``PriorityUsageResetPeriod`` boundary strictly after sim time ``now``
    (infinity for NONE and NOW): midnight every day; Sunday 00:00 (slurm.conf(5)); the first
    day of each month, quarter or year. Sim time 0 is :data:`EPOCH`, a Monday."""
    if reset in ("NONE", "NOW"):
        return math.inf
    if reset == "DAILY":
        return (math.floor(now / _DAY) + 1) * _DAY
    if reset == "WEEKLY":  # the first Sunday is day 6
        return (math.floor((now - 6 * _DAY) / (7 * _DAY)) + 1) * 7 * _DAY + 6 * _DAY
    date = EPOCH + datetime.timedelta(seconds=now)
    step = {"MONTHLY": 1, "QUARTERLY": 3, "YEARLY": 12}[reset]
    month = (date.year * 12 + date.month - 1) // step * step + step
    boundary = datetime.datetime(month // 12, month % 12 + 1, 1)
    return (boundary - EPOCH).total_seconds()


class Fairshare:
    """Usage and fairshare factors of an association tree (sitesim.slurm.associations.Associations).

    The scheduler calls :meth:`start` and :meth:`stop` as jobs start and end, and
    :meth:`advance` at every ``PriorityCalcPeriod`` boundary (Slurm's decay thread); factors
    and usage are as of the last :meth:`advance`, factors recomputed only when asked for after
    one that changed usage other than by decay. Usage is per user in core-seconds; a user not
    in the tree is added as its own account under root with one share at its first
    :meth:`start` or :meth:`factor`.

    Args:
        associations: the tree.
        algorithm: ``"fair_tree"`` (Slurm's default) or ``"classic"``.
        half_life: ``PriorityDecayHalfLife`` in seconds; 0: no decay.
        reset: ``PriorityUsageResetPeriod``: one of :data:`RESETS`.

    Raises:
        ConfigError: a parameter out of range, naming it and the allowed values.
    """

    def __init__(
        self,
        associations: Associations,
        *,
        algorithm: str = "fair_tree",
        half_life: float = 7 * 86400.0,
        reset: str = "NONE",
    ) -> None:
        if algorithm not in ALGORITHMS:
            raise ConfigError(
                f"fairshare algorithm: {algorithm!r} is not one of {', '.join(ALGORITHMS)}"
            )
        if (
            isinstance(half_life, bool)
            or not isinstance(half_life, int | float)
            or not 0 <= half_life < math.inf
        ):
            raise ConfigError(
                f"PriorityDecayHalfLife: must be a number of seconds >= 0 (0: no decay), "
                f"got {half_life!r}"
            )
        if reset not in RESETS:
            raise ConfigError(
                f"PriorityUsageResetPeriod: {reset!r} is not one of {', '.join(RESETS)}"
            )
        self.algorithm = algorithm
        self.half_life = float(half_life)
        self.reset = reset
        self._tree = ShareTree(associations)
        n = len(self._tree.users)
        self._base: Array = np.zeros(n)  # usage at _t0, decayed
        self._running: Array = np.zeros(n)  # cores held now
        self._acc: Array = np.zeros(n)  # start/stop terms of the window since _t0
        self._usage: Array = self._base  # as of the last advance (never changed in place)
        self._t0 = 0.0
        self._jobs = 0  # jobs running
        self._events = False  # a start or stop since _t0
        self._dirty = False  # usage changed other than by decay since the last advance
        self._factors: Array | None = None
        self._listed: list[float] = []
        self._next_reset = next_reset(reset, 0.0)
        self._rate = _LN2 / self.half_life if self.half_life > 0 else 0.0
        self._fold_span = _FOLD_HALF_LIVES * self.half_life if self.half_life else math.inf

    def start(self, user: int, cores: float, now: float) -> None:
        """A job of ``user`` started at ``now`` holding ``cores`` cores."""
        i = self._index(user)
        self._catch_up(now)
        self._running[i] += cores
        self._acc[i] -= cores * self._h(now)
        self._jobs += 1
        self._events = True

    def stop(self, user: int, cores: float, now: float) -> None:
        """That job ended (or was requeued) at ``now``."""
        i = self._index(user)
        self._catch_up(now)
        self._running[i] -= cores
        self._acc[i] += cores * self._h(now)
        self._jobs -= 1
        self._events = True

    def advance(self, now: float) -> None:
        """Slurm's decay pass at ``now``: usage decayed by the half-life over the time since
        the last pass, running jobs' new usage added (each core-second decayed from when it
        was used), usage zeroed at every reset boundary passed (exactly at the boundary).

        Raises:
            ValueError: ``now`` before the last pass or job event.
        """
        if now < self._t0:
            raise ValueError(f"fairshare: advance({now}) is before time {self._t0}")
        self._catch_up(now)
        self._fold(now)
        if self._dirty:
            self._factors = None
            self._dirty = False
        self._usage = self._base

    def factor(self, user: int) -> float:
        """The user's fairshare factor in [0, 1] as of the last :meth:`advance`."""
        i = self._tree.index.get(user)
        if i is None or self._factors is None:  # a user first seen, or usage changed
            i = self._index(user)
            if self._factors is None:
                self._refresh()
        return self._listed[i]

    def factors(self, users: Iterable[int] | None = None) -> Array:
        """:meth:`factor` of several users at once, in their order (default: :attr:`users`)."""
        index = None if users is None else [self._index(user) for user in users]
        if self._factors is None:
            self._refresh()
        assert self._factors is not None
        if index is None:
            return self._factors.copy()
        return self._factors[np.array(index, dtype=np.intp)]

    @property
    def users(self) -> list[int]:
        """Every user known, in the order of :meth:`factors` (those of the tree, then those
        added as they came)."""
        return list(self._tree.users)

    def usage(self, user: int) -> float:
        """The user's decayed raw usage (core-seconds) as of the last :meth:`advance`."""
        i = self._tree.index.get(user)
        return 0.0 if i is None else float(self._usage[i])

    def _refresh(self) -> None:
        """The factors from the last pass's usage (also as a list: :meth:`factor` is hot)."""
        usage = self._usage
        if self.algorithm == "fair_tree":
            self._factors = fair_tree_factors(self._tree, usage)
        else:
            total = usage.sum()
            norm = np.minimum(usage / total, 1.0) if total > 0 else np.zeros(len(usage))
            self._factors = classic_factors(self._tree, norm)
        self._listed = self._factors.tolist()

    def _index(self, user: int) -> int:
        i = self._tree.index.get(user)
        if i is None:
            i = self._tree.add_user(user)
            self._base = np.append(self._base, 0.0)
            self._running = np.append(self._running, 0.0)
            self._acc = np.append(self._acc, 0.0)
            self._usage = np.append(self._usage, 0.0)
            self._factors = None
        return i

    def _h(self, now: float) -> float:
        """``2^((now - t0) / half_life) - 1`` (``now - t0`` without decay): what a core held
        from ``now`` on weighs less in this window's accrual (see :meth:`_fold`)."""
        if self._rate:
            return math.expm1((now - self._t0) * self._rate)
        return now - self._t0

    def _catch_up(self, now: float) -> None:
        """Pass reset boundaries before ``now``; fold a window grown too long."""
        while self._next_reset <= now:
            self._fold(self._next_reset)
            self._base = np.zeros(len(self._base))
            self._next_reset = next_reset(self.reset, self._t0)
            self._dirty = True
        if now - self._t0 > self._fold_span:
            self._fold(now)

    def _fold(self, now: float) -> None:
        """Close the window ``[t0, now]``: base usage decayed by ``d = 2^(-(now - t0)/T)``,
        plus the window's accrual ``∫ cores(s) 2^(-(now - s)/T) ds``. With ``R`` the cores
        held at ``now`` and ``A`` the sum over the window's stops of ``cores * h(time)`` minus
        that over its starts, ``h(s) = 2^((s - t0)/T) - 1``, the integral is
        ``T/ln 2 * (R * (1 - d) + d * A)`` (``R * (now - t0) + A`` with no decay)."""
        span = now - self._t0
        if span <= 0:
            return
        accrues = self._jobs > 0 or self._events
        self._dirty |= accrues
        if self._rate:
            d = math.exp(-span * self._rate)
            if accrues:
                new = (self._running * -math.expm1(-span * self._rate) + d * self._acc) / self._rate
                self._base = self._base * d + new
            else:
                self._base = self._base * d
        elif accrues:
            self._base = self._base + self._running * span + self._acc
        if self._events:
            self._acc = np.zeros(len(self._acc))
            self._events = False
        self._t0 = now
