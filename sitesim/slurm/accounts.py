"""Statistics per account (Slurm's association tree): what a fairshare study compares.

A run under the SLURM scheduler groups its users by account (:mod:`sitesim.slurm.associations`); the
table has one row per account with jobs in the measurement window: its users, its share (its
normalized shares in the tree: the share of the machine its shares promise it) and usage (the
share of the window's core-hours its jobs used), jobs, throughput (jobs an hour of the window),
sessions and the jobs of sessions per session (site-level runs; NaN, not applicable, for an
account without sessions, as in a trace replay, and printed "-"), mean wait and response, and
the core-hours its jobs used.
"""

from __future__ import annotations

import numpy as np

from sitesim.engine.metrics import pair_keys, window_jobs
from sitesim.slurm.associations import Associations
from sitesim.slurm.fairshare import ShareTree

ACCOUNT_DTYPE = np.dtype(
    [
        ("account", "U64"),
        ("users", np.int64),
        ("share", np.float64),
        ("usage", np.float64),
        ("jobs", np.int64),
        ("jobs_per_hour", np.float64),
        ("sessions", np.int64),
        ("jobs_per_session", np.float64),
        ("wait_mean_min", np.float64),
        ("response_mean_min", np.float64),
        ("core_hours", np.float64),
    ]
)


def per_account(
    records: np.ndarray, window: tuple[float, float], associations: Associations
) -> np.ndarray:
    """One :data:`ACCOUNT_DTYPE` row per account with jobs submitted in ``window``, in the
    order of the tree (then accounts of users it does not list, ``u<id>``)."""
    sel = window_jobs(records, window)
    user = sel["user"]
    names = [associations.account_of(int(u)) for u in np.unique(user)]
    order = list(associations.accounts) + sorted(set(names) - set(associations.accounts))
    index = {name: k for k, name in enumerate(order)}
    users = np.unique(user)
    account_of_user = np.array([index[n] for n in names], dtype=np.int64)
    account = account_of_user[np.searchsorted(users, user)] if len(sel) else user
    n = len(order)
    jobs = np.bincount(account, minlength=n)
    hours = max(window[1] - window[0], 1e-9) / 3600
    wait = sel["start"] - sel["submit"]
    table = np.zeros(n, dtype=ACCOUNT_DTYPE)
    table["account"] = order
    table["users"] = np.bincount(account_of_user, minlength=n)
    table["jobs"] = jobs
    table["jobs_per_hour"] = jobs / hours
    belongs = sel["session"] >= 0
    in_sessions = np.bincount(account[belongs], minlength=n)
    if belongs.any():
        pairs = np.unique(pair_keys(user[belongs], sel["session"][belongs]))
        owner = account_of_user[np.searchsorted(users, pairs >> 31)]
        table["sessions"] = np.bincount(owner, minlength=n)
    with np.errstate(invalid="ignore", divide="ignore"):
        # as in the summary: the jobs of sessions over the sessions; none, not applicable
        table["jobs_per_session"] = np.where(
            table["sessions"] > 0, in_sessions / table["sessions"], np.nan
        )
        table["wait_mean_min"] = np.bincount(account, weights=wait, minlength=n) / jobs / 60
        table["response_mean_min"] = (
            np.bincount(account, weights=sel["response"], minlength=n) / jobs / 60
        )
    used = sel["size"] * (sel["end"] - sel["start"]) / 3600
    table["core_hours"] = np.bincount(account, weights=used, minlength=n)
    total = float(table["core_hours"].sum())
    table["usage"] = table["core_hours"] / total if total > 0 else np.nan
    # (the tree as fairshare saw it: the run's users it does not list, each an account)
    tree = ShareTree(associations.with_users(np.unique(records["user"]).tolist()))
    shares = tree.account_shares()
    table["share"] = [shares.get(name, np.nan) for name in order]
    return table[jobs > 0]


class AccountTable:
    """Adds the per-account table (:func:`per_account`) to a run's result (an observer of
    the run, :class:`~sitesim.engine.scheduler.Observer`)."""

    def __init__(self, associations: Associations) -> None:
        self.associations = associations

    def collect(self, records: np.ndarray, window: tuple[float, float]) -> dict[str, object]:
        return {"per_account": per_account(records, window, self.associations)}
