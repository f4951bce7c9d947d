"""The GA's pieces on hand-built queues: zipper crossover, the fluid fitness, the EASY plan."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitesim.engine.job import Job
from sitesim.errors import ConfigError
from sitesim.models.utility import UtilityFunction
from sitesim.schedulers import EASY, GA
from sitesim.schedulers.genetic import EasyPlan, Fitness, zipper
from tests.conftest import run_jobs

#: Worth 10 until t = 1000 s after submission, then falling linearly to 0 at 2000 s.
VALUE = UtilityFunction.of([0, 1000, 2000], [10, 10, 0])


def queue(*jobs: tuple[int, float]) -> list[Job]:
    """Waiting jobs (size, estimate), submitted at 0, each worth VALUE."""
    made = []
    for k, (size, estimate) in enumerate(jobs):
        job = Job(size=size, runtime=estimate, estimate=estimate, id=k + 1, submit=0.0)
        job.utility = VALUE
        made.append(job)
    return made


def test_zipper_takes_jobs_alternately_skipping_those_taken():
    a = np.array([[0, 1, 2, 3, 4]])
    b = np.array([[4, 3, 2, 1, 0]])
    assert zipper(a, b, np.arange(1)[:, None]).tolist() == [[0, 4, 1, 3, 2]]
    rng = np.random.default_rng(3)
    parents = np.array([rng.permutation(30) for _ in range(40)])
    children = zipper(parents[:20], parents[20:], np.arange(20)[:, None])
    assert all(sorted(child) == list(range(30)) for child in children.tolist())


def test_the_fluid_fitness_by_hand():
    # 4 processors, 2 busy for 400 s more; jobs (size, estimate): A (2, 600), B (4, 900)
    jobs = queue((2, 600.0), (4, 900.0))
    fitness = Fitness(jobs, 0.0, 2, 4, [(400.0, None, 2)])
    # A first: A fits now, ends 600 (value 10); B ends at max(900, (800 + 1200 + 3600) / 4)
    # = 1400 (value 6). B first: B ends at max(900, (800 + 3600) / 4) = 1100 (value 9), A at
    # max(600, (800 + 3600 + 1200) / 4) = 1400 (value 6)
    assert fitness(np.array([[0, 1], [1, 0]])).tolist() == pytest.approx([16.0, 15.0])


def test_the_easy_plan_by_hand():
    # 4 processors, 2 busy until 100: A (4, 50), B (2, 40), C (2, 200)
    plan = EasyPlan(queue((4, 50.0), (2, 40.0), (2, 200.0)), 0.0, 2, 4, [(100.0, None, 2)])
    # A reserved at 100; B backfills (ends 40 <= 100); C would end after 100 with no extra
    assert plan._completions([0, 1, 2]).tolist() == [150.0, 40.0, 350.0]
    # C fits and starts; B is reserved at 100; A needs all four: at 200
    assert plan._completions([2, 1, 0]).tolist() == [250.0, 140.0, 200.0]


@given(st.lists(st.tuples(st.integers(1, 8), st.integers(1, 50)), min_size=1, max_size=12))
def test_the_easy_plan_is_what_easy_does(jobs):
    """Jobs all submitted at once, exact estimates: the plan's completions are the engine's."""
    procs = 8
    result = run_jobs([(0.0, size, float(runtime)) for size, runtime in jobs], procs, EASY())
    plan = EasyPlan(queue(*[(s, float(r)) for s, r in jobs]), 0.0, procs, procs, [])
    assert plan._completions(list(range(len(jobs)))).tolist() == result.records["end"].tolist()


def test_the_ga_takes_either_fitness_and_refuses_others():
    assert GA(fitness="easy").params()["fitness"] == "easy"
    with pytest.raises(ConfigError, match="fitness must be one of fluid, easy"):
        GA(fitness="exact")
