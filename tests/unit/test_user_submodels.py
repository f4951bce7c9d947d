"""The user sub-models: random streams, workpool, session dynamics, activity cycles."""

from __future__ import annotations

import numpy as np
import pytest

from sitesim.errors import ConfigError
from sitesim.models import streams as streams_module
from sitesim.models.cycles import DAY, ActivityCycle, CycleShares
from sitesim.models.dynamics import SessionDynamics, p_continue
from sitesim.models.streams import (
    PURPOSES,
    StreamTable,
    _pcg64_uniforms,
    draws,
    first_uniforms,
    seed_states,
    stream,
)
from sitesim.models.users import UserModel
from sitesim.models.workpool import EstimateModel, Workpool
from sitesim.workload.distributions import Discrete, Quantiles
from sitesim.workload.profile import default_profile


def test_streams_are_keyed_by_user_and_purpose():
    a = stream(1, 5, "size").random(3)
    assert np.array_equal(a, stream(1, 5, "size").random(3))
    assert not np.array_equal(a, stream(1, 6, "size").random(3))
    assert not np.array_equal(a, stream(1, 5, "runtime").random(3))
    assert not np.array_equal(a, stream(2, 5, "size").random(3))


def test_draws_do_not_depend_on_the_block_size():
    q = Quantiles([0, 0.5, 1], [0, 10, 100])
    small = draws(stream(3, 1, "gap"), q.from_uniform, block=7)
    large = draws(stream(3, 1, "gap"), q.from_uniform, block=1000)
    assert [small() for _ in range(50)] == [large() for _ in range(50)]


@pytest.mark.parametrize("seed", [0, 1, 2**31 + 3, 2**32 + 5, 2**70 + 1, 2**200 + 11])
def test_a_population_draws_what_each_users_generator_draws(seed):
    """The vectorized seeding and PCG64 steps give NumPy's own uniforms (the emulation itself,
    not its fallback), for every purpose, small and large seeds and ids."""
    for users in (range(0, 40), range(2**32 - 4, 2**32)):
        for purpose in PURPOSES:
            expected = np.array([stream(seed, u, purpose).random(5) for u in users])
            assert np.array_equal(_pcg64_uniforms(seed_states(seed, users, purpose), 5), expected)
            assert np.array_equal(first_uniforms(seed, users, purpose, 5), expected)


def test_a_stream_goes_on_past_the_population_draws_with_the_users_own_generator():
    q = Quantiles([0, 0.5, 1], [0, 10, 100])
    table = StreamTable(3, range(1, 50), {"gap": q.from_uniform}, first=8)
    draw = table.open(7, "gap")
    assert [draw() for _ in range(700)] == q.from_uniform(stream(3, 7, "gap").random(700)).tolist()
    alone = StreamTable.alone(3, 7, {"gap": q.from_uniform}).open("gap")
    assert [alone() for _ in range(700)] == q.from_uniform(stream(3, 7, "gap").random(700)).tolist()


def test_a_purpose_every_user_opened_is_let_go_and_drawn_again_if_asked():
    table = StreamTable(5, range(10, 13))
    draws = [table.open(user, "gap") for user in (10, 11)]
    assert "gap" in table._values  # (user 12 may still open it)
    draws.append(table.open(12, "gap"))
    assert "gap" not in table._values
    again = table.open(11, "gap")  # (as if opened twice: the same values)
    expected = stream(5, 11, "gap").random(20).tolist()
    assert [again() for _ in range(20)] == [draws[1]() for _ in range(20)] == expected


def test_users_who_draw_little_make_no_generator_of_their_own(monkeypatch):
    """A population's users draw their first values from its table: 2,000 complete users for a
    day make generators only for the few streams that go past them (the old users made ten
    per user)."""
    made = []
    bits = streams_module._bits
    monkeypatch.setattr(streams_module, "_bits", lambda *key: made.append(key) or bits(*key))
    import sitesim

    sitesim.simulate(2000, "EASY", procs=20_000, days=1, warmup_days=0)
    assert len(made) < 200
    assert all(purpose != "estimate" for _, _, purpose in made)  # (exact estimates: not drawn)


def test_a_population_and_users_alone_are_the_same_users():
    profile, model = default_profile(), UserModel()
    population = model.users(30, profile, 64, 5)
    for uid in (1, 17, 30):
        alone = model.user(uid, profile, 64, 5)
        together = population[uid - 1]
        assert alone.cycle == together.cycle  # type: ignore[attr-defined]
        for one in (alone, together):
            one.shapes = [one.workpool.next_shape() for _ in range(40)]  # type: ignore[attr-defined]
            one.widths = [one.submittal.width() for _ in range(40)]  # type: ignore[attr-defined]
            one.breaks = [one.dynamics.break_length() for _ in range(40)]  # type: ignore[attr-defined]
        assert alone.shapes == together.shapes  # type: ignore[attr-defined]
        assert alone.widths == together.widths  # type: ignore[attr-defined]
        assert alone.breaks == together.breaks  # type: ignore[attr-defined]


def test_workpool_repeats_shapes_and_restricts_sizes():
    profile = default_profile()
    pool = Workpool(profile, 32, seed=4, user=1)
    shapes = [pool.next_shape() for _ in range(3000)]
    sizes = np.array([s[0] for s in shapes])
    assert sizes.max() <= 32 and sizes.min() >= 1
    runs = np.diff(np.flatnonzero(np.diff(sizes) != 0))
    assert runs.mean() > 1.5  # shapes are reused: size repetitions
    assert all(s[1] == round(s[1]) and s[2] >= 1 for s in shapes)  # whole seconds
    assert all(s[2] == max(s[1], 1) for s in shapes)  # exact estimates by default


def test_estimate_models():
    profile = default_profile()
    factor = Workpool(profile, 128, 4, 1, estimates=EstimateModel.parse("factor:2"))
    for _size, runtime, estimate in (factor.next_shape() for _ in range(200)):
        assert estimate == max(round(2 * runtime), 1)
    ratio = Workpool(profile, 128, 4, 1, estimates=EstimateModel.parse("ratio"))
    shapes = [ratio.next_shape() for _ in range(2000)]
    assert all(est <= profile.max_estimate for _, _, est in shapes)
    assert np.median([est / max(rt, 1) for _, rt, est in shapes]) > 1.5  # users overestimate
    assert str(EstimateModel.parse("factor:1.5")) == "factor:1.5"
    with pytest.raises(ConfigError, match="estimate model must be exact, factor or ratio"):
        EstimateModel.parse("perfect")
    with pytest.raises(ConfigError, match="factor:F needs a number"):
        EstimateModel.parse("factor:x")
    with pytest.raises(ConfigError, match="estimate factor must be > 0"):
        EstimateModel.parse("factor:0")


def test_correlated_runtimes_follow_the_size_class():
    profile = default_profile()
    pool = Workpool(profile, 128, 9, 1, correlated=True)
    shapes = [pool.draw_shape() for _ in range(20_000)]  # shapes, not repeated jobs
    ones = [rt for size, rt, _ in shapes if size == 1]
    wide = [rt for size, rt, _ in shapes if 64 < size <= 128]
    expected_ones = profile.runtimes_by_size[1].median
    assert np.median(ones) == pytest.approx(expected_ones, rel=0.1)
    assert np.median(wide) > 2 * np.median(ones)  # wide jobs run longer in these traces


def test_p_continue_formula():
    assert p_continue(0.0) == pytest.approx(0.8)
    assert p_continue(20.0) == pytest.approx(0.4)
    assert p_continue(20.0, a=1.0, b=0.1) == pytest.approx(1 / 3)


def test_session_dynamics_draws_with_the_right_probability():
    dynamics = SessionDynamics(default_profile(), seed=2, user=3)
    kept = np.mean([dynamics.continues(20 * 60.0) for _ in range(20_000)])  # r = 20 min
    assert kept == pytest.approx(0.4, abs=0.015)
    breaks = [dynamics.break_length() for _ in range(1000)]
    assert min(breaks) > 1200 and max(breaks) <= 8 * 3600
    with pytest.raises(ConfigError, match=r"p_cont a must be in \(0, 1\]"):
        SessionDynamics(default_profile(), 1, 1, a=1.5)


@pytest.mark.parametrize(
    ("day", "weekday", "t", "inside", "opens"),
    [
        # day, weekday worker: Monday 07:30-17:30
        (True, True, 0.0, False, 7.5 * 3600),
        (True, True, 7.5 * 3600, True, 7.5 * 3600),
        (True, True, 17.5 * 3600, False, DAY + 7.5 * 3600),
        (True, True, 4 * DAY + 18 * 3600, False, 7 * DAY + 7.5 * 3600),  # Friday evening
        # night, weekday worker: Monday 17:30 to Tuesday 07:30; Friday night ends Saturday
        (False, True, 0.0, False, 17.5 * 3600),
        (False, True, DAY + 3 * 3600, True, DAY + 17.5 * 3600),
        (False, True, 5 * DAY + 7 * 3600, True, 7 * DAY + 17.5 * 3600),
        (False, True, 5 * DAY + 8 * 3600, False, 7 * DAY + 17.5 * 3600),
        # weekend workers: Saturday and Sunday; Sunday night runs into Monday morning
        (True, False, 0.0, False, 5 * DAY + 7.5 * 3600),
        (False, False, 0.0, True, 5 * DAY + 17.5 * 3600),
    ],
)
def test_activity_windows(day, weekday, t, inside, opens):
    cycle = ActivityCycle(day_worker=day, weekday_worker=weekday, shift=0.0)
    assert cycle.in_window(t) is inside
    assert cycle.next_open(t) == opens


def test_shift_moves_the_window():
    cycle = ActivityCycle(day_worker=True, weekday_worker=True, shift=-1800.0)
    assert cycle.next_open(0.0) == 7 * 3600
    assert cycle.in_window(17 * 3600 - 1) and not cycle.in_window(17 * 3600)


def test_worker_types_follow_the_shares():
    cycles = [ActivityCycle.draw(stream(1, u, "cycle")) for u in range(4000)]
    assert np.mean([c.day_worker for c in cycles]) == pytest.approx(0.7, abs=0.025)
    assert np.mean([c.weekday_worker for c in cycles]) == pytest.approx(0.8, abs=0.025)
    shifts = [c.shift for c in cycles]
    assert min(shifts) >= -3600 and max(shifts) <= 3600 and all(s == round(s) for s in shifts)
    with pytest.raises(ConfigError, match="day-worker share must be in"):
        CycleShares(day=1.2)


def test_fixed_distributions_give_fixed_draws():
    d = Discrete([3], [1])
    assert draws(stream(1, 1, "width"), d.from_uniform)() == 3


@pytest.mark.parametrize("correlated", [False, True])
def test_runtime_scale_scales_the_same_draws(correlated):
    """A workload transform: the same sizes, runtimes scaled (then rounded), estimates follow."""
    profile = default_profile()
    plain = Workpool(profile, 128, seed=9, user=3, correlated=correlated)
    short = Workpool(profile, 128, seed=9, user=3, correlated=correlated, runtime_scale=0.1)
    for _ in range(500):
        (size, runtime, _), (size10, runtime10, estimate10) = plain.next_shape(), short.next_shape()
        assert size10 == size
        assert abs(runtime10 - runtime * 0.1) <= 0.5 + 0.1 * 0.5  # both rounded to seconds
        assert estimate10 == max(runtime10, 1.0)  # exact estimates follow the scaled runtime


def test_a_batch_width_cap_cuts_the_same_draws():
    from sitesim.models.submittal import Submittal

    profile = default_profile()
    plain, capped = Submittal(profile, 2, 7), Submittal(profile, 2, 7, max_width=2)
    widths = [(plain.width(), capped.width()) for _ in range(2000)]
    assert all(c == min(w, 2) for w, c in widths)
    assert max(w for w, _ in widths) > 2  # the cap did cut something
