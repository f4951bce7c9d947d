"""ECON: the microeconomic scheduler of Stoica, Abdel-Wahab & Pothen, as reconstructed in
schedulers.md (the seed paper gives the mechanism only in outline).

- Every user has a **savings account** that receives ``income`` $/min while the user has no
  waiting job, up to ``cap`` $ (income beyond the cap is lost).
- On submitting a job the user opens an **expense account** for it and moves the whole savings
  balance into it (split evenly among the jobs the user submits at the same instant).
- While the user has waiting jobs, the income flows into their expense accounts, divided by the
  **transfer policy**: ``const`` equal shares, ``prop`` in proportion to each job's demand
  (size × estimate), ``inv`` in inverse proportion to it.
- A job's **bid** is its balance / demand in processor-minutes. EASY schedules the waiting
  jobs in bid order (highest first, ties by arrival): the best bidder that does not fit is
  reserved, the others backfill in bid order. Bids grow while jobs wait, so the order is
  recomputed at every pass. With zero income every bid is 0 and the schedule is EASY's.
- When a job starts, its whole balance moves to the **system account**. The processors left
  idle while a job held the reservation are its **fragmentation charge**.

Rates are piecewise constant between the events the scheduler is told about, so balances are
integrated exactly: each user's account keeps the income paid so far per unit of transfer
weight (``level``), and a job's balance is its opening deposit plus its weight times the growth
of that level since it was submitted. Advancing a user is O(1); a pass is O(n log n).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from sitesim.engine.job import MIN_ESTIMATE, Job
from sitesim.engine.resources import Resources
from sitesim.errors import require

from .queue_order import EASY

#: The transfer policies: how a user's income is divided among the user's waiting jobs.
TRANSFERS = ("const", "prop", "inv")
#: The default savings cap, in minutes of income (one day).
CAP_MINUTES = 1440.0


def demand(job: Job) -> float:
    """The job's cumulative demand: size × estimate, in processor-minutes."""
    return job.size * max(job.estimate, MIN_ESTIMATE) / 60.0


@dataclass(slots=True)
class Expense:
    """A waiting job's expense account.

    Attributes:
        deposit: the savings moved into it when the job was submitted ($).
        level: the user's :attr:`Account.level` when it opened.
        weight: its share of the user's income, relative to the user's other waiting jobs.
        demand: size × estimate, in processor-minutes.
    """

    deposit: float
    level: float
    weight: float
    demand: float

    def balance(self, level: float) -> float:
        """The balance when the user's :attr:`Account.level` is ``level`` ($)."""
        return self.deposit + self.weight * (level - self.level)


@dataclass(slots=True)
class Account:
    """A user's accounts, integrated up to :attr:`since` (seconds).

    Attributes:
        savings: the savings balance ($).
        level: income paid into expense accounts per unit of weight since the user last had
            no waiting job ($); reset to 0 when the last waiting job leaves.
        weight: total weight of the user's waiting jobs.
        waiting: the user's waiting jobs (in submit order, so sums are deterministic).
        batch_time: when the last deposit was made; ``batch`` the jobs that shared it.
    """

    savings: float = 0.0
    since: float = 0.0
    level: float = 0.0
    weight: float = 0.0
    waiting: dict[Job, Expense] = field(default_factory=dict)
    batch_time: float = -math.inf
    batch: list[Job] = field(default_factory=list)


class ECON(EASY):
    """The microeconomic scheduler: EASY in the order of bids paid from users' budgets.

    Every account opens at t = 0 with empty savings. Savings grow only while the user has no
    waiting job (otherwise the income goes to the waiting jobs). A cancelled job's balance goes
    back to its owner's savings (and may exceed the cap, which limits income only).

    The fragmentation charge of a job is the processor-seconds left idle while it held the
    reservation: after each pass that reserves it, the processors still free times the time to
    the next event. :attr:`fragmentation` keeps it per job id; :attr:`fragmentation_charge`
    prices it in $ at the job's bid when it starts (reported; the job pays its balance, no more).

    Args:
        transfer: ``const``, ``prop`` or ``inv`` (ECON_CONST, ECON_PROP, ECON_INV).
        income: each user's income, $/min, ``>= 0``.
        cap: the savings cap in $, ``>= 0`` and finite; default one day of income
            (``income`` × 1440).
    """

    name = "ECON"

    def __init__(
        self, transfer: str = "const", income: float = 100.0, cap: float | None = None
    ) -> None:
        require(
            transfer in TRANSFERS,
            f"ECON transfer must be one of {', '.join(TRANSFERS)}, got {transfer!r}",
        )
        require(
            _number(income) and math.isfinite(income) and income >= 0,
            f"ECON income must be a finite number >= 0 ($/min), got {income!r}",
        )
        if cap is None:
            cap = income * CAP_MINUTES
        require(
            _number(cap) and math.isfinite(cap) and cap >= 0,
            f"ECON cap must be a finite number >= 0 ($), got {cap!r}",
        )
        super().__init__()
        self.transfer = transfer
        self.income = float(income)
        self.cap = float(cap)
        self._rate = self.income / 60.0  # $/s
        self._accounts: dict[int, Account] = {}
        self._now = 0.0  # the latest time the scheduler was told
        #: The job holding the reservation since the last pass, when, and the idle processors.
        self._held: tuple[Job, float, int] | None = None
        #: Total moved to the system account ($).
        self.system_income = 0.0
        #: Paid into the system account per user ($).
        self.spending: dict[int, float] = {}
        #: Balances of cancelled jobs returned to savings ($).
        self.refunded = 0.0
        #: Idle processor-seconds while each job held the reservation, by job id.
        self.fragmentation: dict[int, float] = {}
        #: :attr:`fragmentation` in $ at the job's bid when it started, by job id.
        self.fragmentation_charge: dict[int, float] = {}
        self._charge_by_user: dict[int, float] = {}

    # -- accounts ---------------------------------------------------------------------------
    def _weight(self, job_demand: float) -> float:
        if self.transfer == "const":
            return 1.0
        return job_demand if self.transfer == "prop" else 1.0 / job_demand

    def _account(self, user: int) -> Account:
        account = self._accounts.get(user)
        if account is None:
            account = self._accounts[user] = Account()
        return account

    def _level_at(self, account: Account, now: float) -> float:
        dt = now - account.since
        if dt > 0 and account.waiting:
            return account.level + self._rate * dt / account.weight
        return account.level

    def _savings_at(self, account: Account, now: float) -> float:
        dt = now - account.since
        if dt > 0 and not account.waiting and account.savings < self.cap:
            return min(self.cap, account.savings + self._rate * dt)
        return account.savings

    def _advance(self, account: Account, now: float) -> None:
        """Integrate ``account`` up to ``now`` (rates are constant since :attr:`since`)."""
        if now > account.since:
            account.level = self._level_at(account, now)
            account.savings = self._savings_at(account, now)
            account.since = now

    def _leave(self, job: Job, now: float) -> float:
        """Close a waiting job's expense account at ``now``; return its balance."""
        account = self._accounts[job.user]
        self._advance(account, now)
        balance = account.waiting.pop(job).balance(account.level)
        if account.waiting:
            account.weight = math.fsum(e.weight for e in account.waiting.values())
        else:
            account.weight = account.level = 0.0
        return balance

    def savings(self, user: int, now: float) -> float:
        """User ``user``'s savings balance at ``now`` ($)."""
        return self._savings_at(self._account(user), now)

    def balance(self, job: Job, now: float) -> float:
        """Waiting job ``job``'s expense balance at ``now`` ($)."""
        account = self._accounts[job.user]
        return account.waiting[job].balance(self._level_at(account, now))

    def bid(self, job: Job, now: float) -> float:
        """Waiting job ``job``'s bid at ``now``: its balance per processor-minute of demand."""
        return self.balance(job, now) / self._accounts[job.user].waiting[job].demand

    # -- the scheduler contract ---------------------------------------------------------------
    def _tick(self, now: float) -> None:
        """The clock moved to ``now``: charge the idle processors to the reserved job."""
        if self._held is not None:
            job, since, idle = self._held
            if now > since:
                if idle:
                    charge = idle * (now - since)
                    self.fragmentation[job.id] = self.fragmentation.get(job.id, 0.0) + charge
                self._held = (job, now, idle)
        self._now = max(self._now, now)

    def submit(self, job: Job, now: float) -> None:
        """Open the job's expense account with the user's savings, shared with the user's other
        jobs submitted at this instant."""
        self._tick(now)
        account = self._account(job.user)
        self._advance(account, now)
        job_demand = demand(job)
        expense = Expense(0.0, account.level, self._weight(job_demand), job_demand)
        batch = account.batch
        if account.batch_time == now and batch and all(j in account.waiting for j in batch):
            # no time has passed since the batch's deposit: share it anew, one more way
            pot = account.savings + math.fsum(account.waiting[j].deposit for j in batch)
            batch.append(job)
        else:
            pot = account.savings
            batch = [job]
            account.batch_time, account.batch = now, batch
        account.savings = 0.0
        account.waiting[job] = expense
        for j in batch:
            account.waiting[j].deposit = pot / len(batch)
        account.weight = math.fsum(e.weight for e in account.waiting.values())
        super().submit(job, now)

    def job_ended(self, job: Job, now: float) -> None:
        self._tick(now)

    def ordered(self, now: float) -> list[Job]:
        """The waiting jobs by bid, highest first, ties by arrival."""
        levels = {user: self._level_at(a, now) for user, a in self._accounts.items() if a.waiting}
        bids: dict[Job, float] = {}
        for job in self.queue:
            expense = self._accounts[job.user].waiting[job]
            bids[job] = expense.balance(levels[job.user]) / expense.demand
        return sorted(self.queue, key=lambda job: (-bids[job], job.id))

    def select(self, now: float, resources: Resources) -> list[Job]:
        self._tick(now)
        self._held = None  # until this pass reserves a job (backfill)
        return super().select(now, resources)

    def backfill(
        self, now: float, resources: Resources, queue: list[Job], first: int, started: list[Job]
    ) -> None:
        """EASY's reservation and backfilling; the cores still free after it are idle while
        the reserved job holds the reservation (charged at the next event)."""
        super().backfill(now, resources, queue, first, started)
        if self.reservation is not None and self.reservation[0] is queue[first]:
            self._held = (self.reservation[0], now, resources.free)

    def dequeue(self, started: list[Job]) -> None:
        """Started jobs pay their whole balance into the system account."""
        super().dequeue(started)
        now = self._now
        for job in started:
            if job not in self._accounts[job.user].waiting:
                continue  # withdrawn: already refunded
            job_demand = self._accounts[job.user].waiting[job].demand
            paid = self._leave(job, now)
            self.system_income += paid
            self.spending[job.user] = self.spending.get(job.user, 0.0) + paid
            idle = self.fragmentation.get(job.id)
            if idle is not None:
                charge = idle / 60.0 * paid / job_demand
                self.fragmentation_charge[job.id] = charge
                by_user = self._charge_by_user
                by_user[job.user] = by_user.get(job.user, 0.0) + charge

    def withdraw(self, jobs: list[Job]) -> None:
        """Cancelled jobs' balances (at the latest time the scheduler was told, in a site the
        pass's instant) go back to their owners' savings."""
        now = self._now
        for job in jobs:
            account = self._accounts[job.user]
            if job in account.waiting:
                refund = self._leave(job, now)
                account.savings += refund
                self.refunded += refund
        super().withdraw(jobs)

    def params(self) -> dict[str, Any]:
        return {"transfer": self.transfer, "income": self.income, "cap": self.cap}

    def stats(self) -> dict[str, Any]:
        """System income, spending per user, refunds and fragmentation (totals and per user;
        per job in :attr:`fragmentation` and :attr:`fragmentation_charge`)."""
        return {
            "system_income": self.system_income,
            "spending": dict(sorted(self.spending.items())),
            "refunded": self.refunded,
            "fragmentation_proc_s": math.fsum(self.fragmentation.values()),
            "fragmentation_charge": math.fsum(self.fragmentation_charge.values()),
            "fragmented_jobs": len(self.fragmentation),
            "fragmentation_charge_by_user": dict(sorted(self._charge_by_user.items())),
        }


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
