"""ECON, the microeconomic scheduler: accounts, bids, reservation and charges by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitesim.engine.job import Job
from sitesim.engine.site import Site
from sitesim.errors import ConfigError
from sitesim.models.trace_user import TraceUser, TraceWorkload
from sitesim.schedulers import EASY, ECON, create
from tests.conftest import on_procs
from tests.unit.test_policies import SecretJob, as_started, as_submitted


def job(jid: int, size: int, estimate: float, submit: float, user: int = 0) -> Job:
    """A waiting job of ``user`` whose actual runtime cannot be read."""
    return as_submitted(
        SecretJob(size=size, runtime=math.nan, estimate=estimate, user=user, id=jid), submit
    )


def start(policy: ECON, now: float, free: int, running=()) -> list[int]:  # type: ignore[no-untyped-def]
    """One allocation pass; the started jobs are marked running. Returns their ids."""
    started = policy.allocate(now, on_procs(now, free, list(running)))
    for j in started:
        as_started(j, now)
    return [j.id for j in started]


# One user, income 100 $/min. Job A (2 procs x 10 min = 20 proc-min) is submitted at 10 min
# with the savings of 10 minutes; job B (3 x 20 min = 60 proc-min) at 20 min, with empty
# savings (A was waiting: the income went to A). From 20 to 30 min the 1000 $ of income are
# split: equally (const), 20 : 60 (prop), 1/20 : 1/60 (inv).
@pytest.mark.parametrize(
    ("transfer", "a", "b"), [("const", 2500, 500), ("prop", 2250, 750), ("inv", 2750, 250)]
)
def test_balances_integrate_exactly_for_each_transfer_policy(transfer, a, b):
    policy = ECON(transfer)
    assert policy.savings(0, 600.0) == 1000
    A, B = job(1, 2, 600, 600.0), job(2, 3, 1200, 1200.0)
    policy.submit(A, 600.0)
    assert policy.savings(0, 600.0) == 0
    assert policy.balance(A, 600.0) == 1000
    assert policy.balance(A, 900.0) == pytest.approx(1500)  # all the income goes to A
    assert policy.savings(0, 900.0) == 0  # none to savings while a job waits
    policy.submit(B, 1200.0)
    assert policy.balance(A, 1200.0) == pytest.approx(2000)
    assert policy.balance(B, 1200.0) == 0
    assert policy.balance(A, 1800.0) == pytest.approx(a)
    assert policy.balance(B, 1800.0) == pytest.approx(b)
    assert policy.bid(A, 1800.0) == pytest.approx(a / 20)  # $ per processor-minute
    assert policy.bid(B, 1800.0) == pytest.approx(b / 60)
    # A starts at 30 min and pays its balance; then all the income goes to B
    assert start(policy, 1800.0, 2) == [1]
    assert policy.system_income == pytest.approx(a)
    assert policy.balance(B, 2400.0) == pytest.approx(b + 1000)
    assert start(policy, 2400.0, 3) == [2]
    assert policy.spending == {0: pytest.approx(a + b + 1000)}
    # no waiting job: the savings grow again from the last start
    assert policy.savings(0, 3000.0) == pytest.approx(1000)
    stats = policy.stats()
    assert stats["system_income"] == pytest.approx(4000)  # 40 minutes of income, all spent
    assert stats["spending"] == {0: pytest.approx(4000)}


def test_savings_stop_at_the_cap():
    policy = ECON(income=100, cap=500)
    assert policy.savings(0, 60.0) == pytest.approx(100)
    assert policy.savings(0, 3600.0) == 500
    A = job(1, 1, 60, 600.0)
    policy.submit(A, 600.0)
    assert policy.balance(A, 600.0) == 500  # the cap, not 1000
    assert policy.balance(A, 900.0) == pytest.approx(1000)  # expense accounts have no cap
    assert start(policy, 900.0, 1) == [1]
    assert policy.savings(0, 1080.0) == pytest.approx(300)
    assert policy.savings(0, 1200.0) == pytest.approx(500)  # full after 5 minutes
    assert policy.savings(0, 9000.0) == 500


def test_the_default_cap_is_one_day_of_income():
    assert ECON().cap == 100 * 1440
    assert ECON(income=10).cap == 10 * 1440
    assert ECON(income=0).cap == 0


def test_jobs_submitted_at_once_share_the_savings_evenly():
    policy = ECON()  # 100 $/min: 1000 $ saved by t = 10 min
    jobs = [job(i, 1, 60, 600.0) for i in (1, 2, 3)]
    policy.submit(jobs[0], 600.0)
    policy.submit(jobs[1], 600.0)
    assert [policy.balance(j, 600.0) for j in jobs[:2]] == [500, 500]
    policy.submit(jobs[2], 600.0)
    assert [policy.balance(j, 600.0) for j in jobs] == pytest.approx([1000 / 3] * 3)
    # another user's job at the same instant has its own savings
    other = job(4, 1, 60, 600.0, user=1)
    policy.submit(other, 600.0)
    assert policy.balance(other, 600.0) == 1000
    # a later job of user 0 gets no share of the earlier deposit
    late = job(5, 1, 60, 660.0)
    policy.submit(late, 660.0)
    assert policy.balance(late, 660.0) == 0
    assert policy.balance(jobs[0], 660.0) == pytest.approx(1000 / 3 + 100 / 3)


def test_a_cancelled_job_returns_its_balance_to_savings():
    policy = ECON(income=100, cap=500)
    A = job(1, 8, 60, 600.0)
    policy.submit(A, 600.0)  # 500 (the cap)
    assert start(policy, 900.0, 4, [(1000.0, 9, 4)]) == []  # waits; the clock is 15 min
    policy.withdraw([A])
    assert policy.queue == []
    assert policy.refunded == pytest.approx(1000)
    assert policy.savings(0, 900.0) == pytest.approx(1000)  # above the cap: refunds may be
    assert policy.savings(0, 1800.0) == pytest.approx(1000)  # ... but no income beyond it
    assert policy.system_income == 0 and policy.spending == {}


# Income 60 $/min = 1 $/s, equal shares. At t = 0 user 1 submits B1 and B2 (1 proc x 1 min
# each) and user 2 submits C (3 x 10 min); at t = 100 s user 0 submits A (8 x 1 min) with 100 $
# saved. At t = 100: B1, B2 have 50 $ each (bid 50), A 100 $ (bid 12.5), C 100 $ (bid 3.3).
# R holds 6 of 10 processors until t = 200.
R = [(200.0, 99, 6)]


def bidding_queue() -> tuple[ECON, dict[str, Job]]:
    policy = ECON(income=60)
    jobs = {
        "B1": job(1, 1, 60, 0.0, user=1),
        "B2": job(2, 1, 60, 0.0, user=1),
        "C": job(3, 3, 600, 0.0, user=2),
        "A": job(4, 8, 60, 100.0, user=0),
    }
    for j in jobs.values():
        policy.submit(j, j.submit)
    return policy, jobs


def test_queue_order_is_bid_descending_and_the_best_blocked_bidder_is_reserved():
    policy, jobs = bidding_queue()
    assert [policy.bid(j, 100.0) for j in jobs.values()] == pytest.approx([50, 50, 10 / 3, 12.5])
    assert [j.id for j in policy.ordered(100.0)] == [1, 2, 4, 3]
    assert start(policy, 100.0, 4, R) == [1, 2]
    # A is reserved at R's end (t = 200, 2 extra processors); C (3 procs, to t = 700) would
    # delay it, so it waits although 2 processors are idle
    assert policy.reservation is not None
    assert (policy.reservation[0].id, policy.reservation[1]) == (4, 200.0)
    assert policy.spending == {1: pytest.approx(100)}
    # EASY in arrival order reserves C instead and starts the same two jobs
    easy = EASY()
    for j in bidding_queue()[1].values():
        easy.submit(j, j.submit)
    assert [j.id for j in easy.allocate(100.0, on_procs(100.0, 4, R))] == [1, 2]
    assert easy.reservation is not None and easy.reservation[0].id == 3


def test_the_fragmentation_charge_is_the_idle_processor_time_of_the_reserved_job():
    policy, jobs = bidding_queue()
    A, B1, B2 = jobs["A"], jobs["B1"], jobs["B2"]
    assert start(policy, 100.0, 4, R) == [1, 2]  # A reserved, 2 processors idle
    for b in (B1, B2):
        policy.job_ended(b, 160.0)
    assert policy.fragmentation == {4: pytest.approx(2 * 60)}
    # t = 160: A (bid 20) still first and blocked; C fits now but would delay it: 4 idle
    assert start(policy, 160.0, 4, R) == []
    assert start(policy, 200.0, 10) == [4]  # R ended; C (3) does not fit beside A (8)
    assert policy.fragmentation == {4: pytest.approx(2 * 60 + 4 * 40)}
    # A pays 200 $ = 25 $ per processor-minute; 280 idle processor-seconds cost 280/60 x 25
    assert policy.spending[0] == pytest.approx(200)
    assert policy.fragmentation_charge == {4: pytest.approx(280 / 60 * 25)}
    # C holds the reservation with 2 processors idle until A ends at its estimate
    policy.job_ended(A, 260.0)
    assert start(policy, 260.0, 10) == [3]
    assert policy.fragmentation[3] == pytest.approx(2 * 60)
    assert policy.fragmentation_charge[3] == pytest.approx(2 * 60 / 60 * 260 / 30)
    stats = policy.stats()
    assert stats["system_income"] == pytest.approx(100 + 200 + 260)
    assert stats["spending"] == {0: pytest.approx(200), 1: pytest.approx(100), 2: 260}
    assert stats["fragmentation_proc_s"] == pytest.approx(400)
    assert stats["fragmented_jobs"] == 2
    assert stats["fragmentation_charge"] == pytest.approx(280 / 60 * 25 + 2 * 260 / 30)
    assert stats["fragmentation_charge_by_user"] == {
        0: pytest.approx(280 / 60 * 25),
        2: pytest.approx(2 * 260 / 30),
    }


def test_bids_are_recomputed_at_every_pass():
    # 1 $/s, cap 1000 $. User 1's job Z waits from 0 to 1990 s, so user 1 has saved only 10 $
    # when it submits Y (1 proc-min) at 2000 s; user 0 submits X (2 proc-min) then with the
    # cap. Bids: X (1000 + t - 2000) / 2, Y 10 + t - 2000: X leads until 2980 s, then Y.
    policy = ECON(income=60, cap=1000)
    Z = job(1, 1, 60, 0.0, user=1)
    policy.submit(Z, 0.0)
    assert start(policy, 1990.0, 1) == [1]
    X, Y = job(2, 2, 60, 2000.0, user=0), job(3, 1, 60, 2000.0, user=1)
    policy.submit(X, 2000.0)
    policy.submit(Y, 2000.0)
    assert (policy.bid(X, 2000.0), policy.bid(Y, 2000.0)) == (500, 10)
    assert [j.id for j in policy.ordered(2000.0)] == [2, 3]
    assert [j.id for j in policy.ordered(3000.0)] == [3, 2]
    # one processor free, the other busy for 30 s more: X is reserved and Y (60 s) may not
    # backfill; a thousand seconds later Y outbids X and starts
    assert start(policy, 2000.0, 1, [(2030.0, 99, 1)]) == []
    assert policy.reservation is not None and policy.reservation[0] is X
    assert start(policy, 3000.0, 1, [(3030.0, 99, 1)]) == [3]
    assert policy.spending == {1: pytest.approx(1990 + 1010)}


def test_params_create_and_validation():
    policy = create("econ", transfer="inv", income=50)
    assert isinstance(policy, ECON)
    assert policy.params() == {"transfer": "inv", "income": 50.0, "cap": 72000.0}
    assert repr(create("ECON", **policy.params())) == repr(policy)
    assert ECON().params() == {"transfer": "const", "income": 100.0, "cap": 144000.0}
    assert ECON(cap=0).cap == 0
    with pytest.raises(ConfigError, match="ECON transfer must be one of const, prop, inv"):
        ECON("proportional")
    for income in (-1, math.inf, math.nan, "10", True):
        with pytest.raises(ConfigError, match="ECON income must be a finite number >= 0"):
            ECON(income=income)  # type: ignore[arg-type]
    for cap in (-1.0, math.inf, "inf"):
        with pytest.raises(ConfigError, match="ECON cap must be a finite number >= 0"):
            ECON(cap=cap)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="ECON does not take 'alpha'"):
        create("ECON", alpha=1.0)


@pytest.mark.parametrize("transfer", ["const", "prop", "inv"])
def test_money_is_conserved_in_a_site_run(transfer):
    """With a cap never reached, every user's income up to the end is either spent or saved."""
    rng = np.random.default_rng(5)
    n = 150
    submit = np.sort(rng.integers(0, 20_000, n)).astype(float)
    size = rng.integers(1, 17, n)
    runtime = rng.integers(1, 2000, n).astype(float)
    estimate = runtime * rng.choice([1.0, 1.5, 3.0], n)
    user = rng.integers(0, 4, n)
    policy = ECON(transfer, income=100, cap=1e12)
    site = Site(16, policy)
    site.add_user(TraceUser(TraceWorkload.from_jobs(submit, size, runtime, estimate, user)))
    rec = site.run().records
    end = float(rec["end"].max())
    for u in range(4):
        total = policy.spending.get(u, 0.0) + policy.savings(u, end)
        assert total == pytest.approx(100 / 60 * end, rel=1e-9)
    stats = site.result().scheduler_stats
    assert stats["system_income"] == pytest.approx(sum(policy.spending.values()))
    assert stats["fragmentation_proc_s"] > 0
