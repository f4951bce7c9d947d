"""Utility functions: the format and its errors, generators, inaccuracy models, the EM fit."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sitesim.errors import ConfigError
from sitesim.models.utility import (
    EPS,
    LeeSnavely,
    UtilityColumns,
    UtilityFunction,
    gini,
    kind_function,
    uncertain_values,
    wealth,
)
from sitesim.workload.mixture import fit_mixture


def test_a_function_is_linear_between_points_and_zero_after():
    u = UtilityFunction.of([0, 100, 300], [10, 10, 0])
    assert (u(0), u(50), u(100), u(200), u(300), u(301)) == (10, 10, 10, 5, 0, 0)
    assert (u.start_value, u.deadline) == (10, 300)
    assert u.scaled(5).values == (5, 5, 0)


@pytest.mark.parametrize(
    ("times", "values", "message"),
    [
        ([], [], "at least one point"),
        ([0, 1], [1], "as many times as values"),
        ([5, 10], [1, 0], "first time must be 0, got 5"),
        ([0, 10, 10], [3, 2, 1], "utility times must increase: 10 after 10"),
        ([0, 10], [1, 2], "utility values must not increase: 2 after 1"),
        ([0, 10], [1, -1], "must be >= 0"),
        ([0, math.inf], [1, 0], "must be finite"),
    ],
)
def test_every_violation_is_a_clear_error(times, values, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        UtilityFunction.of(times, values)


def test_the_swf_extension_round_trips_and_names_its_place():
    u = UtilityFunction.of([0, 60, 61, 120.5], [8, 8, 2.25, 0])
    assert u.to_text() == "0 8 60 8 61 2.25 120.5 0"
    assert UtilityFunction.parse(u.to_text()) == u
    with pytest.raises(ConfigError, match=r"t.swf:7: a utility function is pairs 't v', got 3"):
        UtilityFunction.parse("0 1 5", "t.swf:7")
    with pytest.raises(ConfigError, match=r"t\.swf:8: utility values must not increase"):
        UtilityFunction.parse("0 1 5 2", "t.swf:8")


def test_columns_evaluate_many_functions_as_each_would():
    rng = np.random.default_rng(3)
    maker = LeeSnavely()
    functions = [maker.function(rng, k % 4, 1 + k % 7, 600.0 * (1 + k % 5), 300.0 * (k % 3))
                 for k in range(60)]  # fmt: skip
    columns = UtilityColumns(functions)
    rows = rng.integers(60, size=500)
    t = rng.uniform(-10, 8000, size=500)
    expected = [0.0 if x < 0 else functions[r](x) for r, x in zip(rows, t, strict=True)]
    assert np.allclose(columns.evaluate(rows, t), expected)
    assert np.array_equal(columns.start_values, [f.start_value for f in functions])


@pytest.mark.parametrize("decay", ["linear", "exponential", "step"])
def test_lee_snavely_holds_the_value_for_the_request_then_decays_over_the_slack(decay):
    rng = np.random.default_rng(1)
    maker = LeeSnavely(decay=decay, factor=2)
    for _ in range(200):
        u = maker.function(rng, priority=1, size=4, requested=600.0, wait=1000.0)
        assert u(0) == u(600) == u.start_value > 0  # held until the requested time
        assert u.deadline <= 600 + 2000 + 3 * EPS  # 0 after the slack of 2 x the wait
        assert u(u.deadline + 1) == 0
        if decay == "step":
            assert len(set(u.values)) == 3  # v, one lower level, 0


def test_lee_snavely_values_by_priority_and_deadline_factor():
    rng = np.random.default_rng(2)
    levels = 4
    maker = LeeSnavely(levels=levels, globmax=1.0)
    per_minute = {p: np.mean([maker.function(rng, p, 1, 60.0, 0.0).start_value
                              for _ in range(4000)]) for p in range(levels)}  # fmt: skip
    for p in range(levels):  # mean ((P - p - 0.5) / P) globmax: priority 0 is worth most
        assert per_minute[p] == pytest.approx((levels - p - 0.5) / levels, abs=0.02)
    assert per_minute[0] > per_minute[1] > per_minute[2] > per_minute[3]
    value = maker.function(rng, 0, size=8, requested=1800.0, wait=0).start_value
    assert value > 0
    for factor in (1, 2, 3):
        u = LeeSnavely(factor=factor, decay="linear").function(rng, 0, 1, 60.0, 500.0)
        assert 60 + factor * 500 - 1 <= u.deadline <= 60 + factor * 500 + 3 * EPS
    short = LeeSnavely(decay="linear").function(rng, 0, 1, 60.0, 0.0)
    assert short.deadline <= 60 + 10 + 3 * EPS  # at least 10 s of slack


@pytest.mark.parametrize("kind", ["linear", "convex", "flat"])
def test_the_robustness_kinds(kind):
    u = kind_function(kind, 100.0, deadline=1000.0, runtime=200.0)
    assert u.start_value == 100 and u(1000 + 2 * EPS) == 0
    if kind == "linear":
        assert u(200) == 100 and u(600) == pytest.approx(50)
    if kind == "flat":
        assert u(1000) == 100
    if kind == "convex":
        assert u(500) == pytest.approx(25, abs=2)  # 100 (1 - 0.5)^2


def test_uncertainty_zero_is_exact_and_stays_within_the_values():
    rng = np.random.default_rng(4)
    values = rng.lognormal(3, 1, 1000)
    assert np.array_equal(uncertain_values(values, 0.0, rng), values)
    for k in (0.2, 0.6, 1.0):
        stated = uncertain_values(values, k, rng)
        assert values.min() <= stated.min() and stated.max() <= values.max()
    near = uncertain_values(values, 0.1, np.random.default_rng(5))
    far = uncertain_values(values, 1.0, np.random.default_rng(5))
    rank = np.corrcoef(np.argsort(np.argsort(values)), np.argsort(np.argsort(near)))[0, 1]
    rank_far = np.corrcoef(np.argsort(np.argsort(values)), np.argsort(np.argsort(far)))[0, 1]
    assert rank > 0.9 > rank_far  # more uncertainty, less the truth


@pytest.mark.parametrize(("n", "k"), [(5, 0.2), (5, 0.6), (10, 0.5), (20, 0.0), (4, 0.75)])
def test_wealth_inequity_has_the_gini_asked_for(n, k):
    riches = wealth(list(range(1, n + 1)), k, np.random.default_rng(1))
    assert gini(list(riches.values())) == pytest.approx(k, abs=1e-5)
    assert sum(w < 1 for w in riches.values()) == round(k * n)


def test_full_inequity_leaves_one_user_rich():
    riches = wealth(list(range(1, 9)), 1.0, np.random.default_rng(1))
    assert sorted(riches.values())[-1] == 1.0 and sum(w < 1 for w in riches.values()) == 7
    assert gini(list(riches.values())) == pytest.approx(7 / 8, abs=1e-5)


def test_the_em_fit_recovers_a_known_mixture():
    rng = np.random.default_rng(7)
    means, sds, weights = [-4.0, 0.0, 3.0, 8.0], [0.5, 1.0, 0.7, 1.5], [0.2, 0.3, 0.3, 0.2]
    counts = rng.multinomial(20_000, weights)
    x = np.concatenate([rng.normal(m, s, c) for m, s, c in zip(means, sds, counts, strict=True)])
    fit = fit_mixture(x, 4)
    assert fit.means == pytest.approx(means, abs=0.1)
    assert fit.sds == pytest.approx(sds, abs=0.1)
    assert fit.weights == pytest.approx(weights, abs=0.02)
    assert fit.predict(np.array([-4.2, 0.1, 2.9, 8.5])).tolist() == [0, 1, 2, 3]
    assert fit_mixture(x, 4).means.tolist() == fit.means.tolist()  # deterministic
    with pytest.raises(ConfigError, match="needs as many samples"):
        fit_mixture(np.array([1.0, 2.0]), 4)
