"""Empirical distributions: fitting, sampling, restriction, validation, JSON."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from sitesim.errors import ConfigError
from sitesim.workload.distributions import Discrete, Quantiles, from_dict


def test_discrete_fit_sample_and_restrict():
    d = Discrete.fit([1, 1, 2, 4, 4, 4, 8, 8])
    assert d.values.tolist() == [1, 2, 4, 8]
    assert d.probabilities.tolist() == [0.25, 0.125, 0.375, 0.25]
    assert repr(d) == "Discrete(values=[1, 2, 4, 8], n=4, mode=4, mean=4)"
    draws = d.sample(np.random.default_rng(3), 200_000)
    freq = [np.mean(draws == v) for v in d.values]
    assert np.allclose(freq, d.probabilities, atol=0.005)
    small = d.restricted(4)
    assert small.values.tolist() == [1, 2, 4]
    assert np.allclose(small.probabilities, [0.25 / 0.75, 0.125 / 0.75, 0.375 / 0.75])
    assert d.cdf([0, 1, 3, 8, 9]).tolist() == [0.0, 0.25, 0.375, 1.0, 1.0]
    with pytest.raises(ConfigError, match="no value of Discrete"):
        d.restricted(0.5)


def test_weighted_fit_gives_each_group_its_weight():
    # 10 ones with total weight 1 and 1 four with weight 1: equal halves
    d = Discrete.fit([1] * 10 + [4], weights=[0.1] * 10 + [1.0])
    assert np.allclose(d.probabilities, [0.5, 0.5])
    q = Quantiles.fit([1.0] * 10 + [9.0], weights=[0.1] * 10 + [1.0])
    assert q.quantile(0.2) == 1.0 and q.quantile(0.8) == 9.0


def test_quantiles_reproduce_the_sample():
    rng = np.random.default_rng(11)
    data = np.concatenate([rng.lognormal(5, 1.5, 20_000), np.full(5_000, 3600.0)])  # an atom
    q = Quantiles.fit(data)
    assert q.x[0] == data.min() and q.x[-1] == data.max()
    assert q.median == pytest.approx(np.median(data), rel=0.01)
    draws = q.sample(rng, 20_000)
    assert stats.ks_2samp(draws, data).statistic < 0.02
    assert (draws == 3600.0).mean() == pytest.approx(0.2, abs=0.01)  # the atom survives
    assert q.cdf(3600.0) == pytest.approx((data <= 3600).mean(), abs=0.003)
    assert q.cdf([data.min() - 1, data.max()]).tolist() == [0.0, 1.0]
    assert q.mean == pytest.approx(data.mean(), rel=0.02)


def test_sampling_does_not_depend_on_block_size():
    q = Quantiles([0, 0.5, 1], [0, 10, 100])
    d = Discrete([1, 2, 3], [0.2, 0.3, 0.5])
    for dist in (q, d):
        whole = dist.sample(np.random.default_rng(5), 100)
        rng = np.random.default_rng(5)
        parts = np.concatenate([dist.sample(rng, 37), dist.sample(rng, 63)])
        assert np.array_equal(whole, parts)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Discrete([2, 1], [0.5, 0.5]), "distinct and ascending"),
        (lambda: Discrete([1, 2], [-1, 2]), "probabilities must be >= 0"),
        (lambda: Discrete([], []), "needs values"),
        (lambda: Quantiles([0, 0.5], [1, 2]), "from 0 to 1"),
        (lambda: Quantiles([0, 1], [2, 1]), "must not decrease"),
        (lambda: Quantiles([0, 0.5, 0.5, 1], [1, 2, 3, 4]), "increase strictly"),
        (lambda: Quantiles.fit([]), "no samples"),
    ],
)
def test_bad_parameters_are_named(make, message):
    with pytest.raises(ConfigError, match=message):
        make()


def test_dict_round_trip_and_errors():
    for dist in (Discrete([1, 2.5], [0.3, 0.7]), Quantiles([0, 0.3, 1], [1, 1.5, 10])):
        again = from_dict(dist.to_dict())
        assert again.to_dict() == dist.to_dict()
    with pytest.raises(ConfigError, match="sizes: unknown kind 'normal'"):
        from_dict({"kind": "normal"}, "sizes")
    with pytest.raises(ConfigError, match="x: missing key 'probabilities'"):
        from_dict({"kind": "discrete", "values": [1]}, "x")
