"""GA: a genetic algorithm that orders the queue to maximise aggregate utility (Lee & Snavely).

At every allocation pass where the order matters (some waiting job does not fit now), the GA
evolves an order of the waiting jobs; EASY then schedules in that order (its reservation and
backfilling rules, unchanged). utility.md §4:

- population 20, 100 generations; the initial population holds random permutations and four
  seeded orders: by arrival, by priority then arrival, by current utility per node-hour, by
  absolute current utility (current utility: the stated value if the job started now);
- fitness-proportional selection of two parents per child; "zipper" crossover (take the next
  job alternately from each parent, skipping jobs already taken); mutation swaps two random
  jobs (a child is mutated with probability ``mutation``); the best order seen is kept;
- seeded: the same seed and the same passes give the same schedule.

**Fitness.** The spec's fitness is the aggregate stated utility of the waiting jobs "if EASY
scheduled them in that order": :class:`EasyPlan` (``fitness="easy"``) simulates exactly that,
one order at a time, at milliseconds per order, seconds per pass over a long queue. The
default, :class:`Fitness` (``fitness="fluid"``), estimates each job's completion from the order
in the fluid limit: the jobs of the order's leading run that fit in the free processors start
now (completion now + estimate); every later job completes at now + max(estimate, W / N), where
W is the work (size × estimate) of the running jobs' remaining estimates and of every job up to
it in the order, and N the machine size. It is computed for the whole population at once with
NumPy, within the 100 ms a pass may take. Either way, the order found is then scheduled by
EASY for real (docs/background/decisions.md).
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

from sitesim.engine.job import Job
from sitesim.engine.profile import shadow_time
from sitesim.engine.resources import Resources, Running
from sitesim.errors import require
from sitesim.models.utility import UtilityColumns, UtilityFunction

from .queue_order import EASY

#: The function of a job without one: worth nothing.
_WORTHLESS = UtilityFunction((0.0,), (0.0,))


class GA(EASY):
    """EASY backfilling in the order a genetic algorithm finds best for aggregate utility.

    Args:
        population: orders per generation (20).
        generations: generations per pass (100).
        mutation: probability that a child has two of its jobs swapped.
        fitness: ``fluid`` (the fast estimate, default) or ``easy`` (the spec's: EASY simulated
            on the waiting jobs in each order; exact, and orders of magnitude slower).
        seed: the GA's random stream; in a configured run it is combined with the run's seed
            (:meth:`use_seed`), so replications evolve differently.
    """

    name = "GA"

    def __init__(
        self,
        population: int = 20,
        generations: int = 100,
        mutation: float = 0.5,
        seed: int = 1,
        fitness: str = "fluid",
    ) -> None:
        require(population >= 6, f"population must be >= 6 (4 seeded orders), got {population}")
        require(generations >= 0, f"generations must be >= 0, got {generations}")
        require(0 <= mutation <= 1, f"mutation must be in [0, 1], got {mutation}")
        require(seed >= 0, f"seed must be >= 0, got {seed}")
        require(fitness in FITNESS, f"fitness must be one of {', '.join(FITNESS)}, got {fitness!r}")
        super().__init__()
        self.fitness = fitness
        self.population = int(population)
        self.generations = int(generations)
        self.mutation = float(mutation)
        self.seed = int(seed)
        self.rng = np.random.default_rng(seed)
        self.evolved = 0
        self._running: Running = []
        self._free = 0

    def use_seed(self, seed: int) -> None:
        self.rng = np.random.default_rng([self.seed, seed])

    def select(self, now: float, resources: Resources) -> list[Job]:
        """EASY's pass in the evolved order; the fitness sees the machine as one pool of cores
        (its free cores, the running jobs' cores), on processors and nodes alike."""
        self._running, self._free = resources.running, resources.free
        return super().select(now, resources)

    def ordered(self, now: float) -> list[Job]:
        queue, free = self.queue, self._free
        if len(queue) < 2 or sum(job.size for job in queue) <= free:
            return queue  # every job starts now: the order does not matter
        self.evolved += 1
        order = self.evolve(queue, now, free)
        return [queue[k] for k in order.tolist()]

    # -- the GA ------------------------------------------------------------------------------
    def evolve(self, queue: list[Job], now: float, free: int) -> np.ndarray:
        """The best order found (indices into ``queue``)."""
        n, rng = len(queue), self.rng
        procs = free + sum(size for _, _, size in self._running)
        fitness = FITNESS[self.fitness](queue, now, free, procs, self._running)
        population = self.initial(queue, fitness, n)
        scores = fitness(population)
        best = int(np.argmax(scores))
        best_order, best_score = population[best].copy(), float(scores[best])
        rows = np.arange(self.population)[:, None]
        for _ in range(self.generations):
            total = scores.sum()
            chances = scores / total if total > 0 else None
            parents = rng.choice(self.population, size=(self.population, 2), p=chances)
            population = zipper(population[parents[:, 0]], population[parents[:, 1]], rows)
            mutate = np.flatnonzero(rng.random(self.population) < self.mutation)
            if len(mutate):
                i, j = rng.integers(n, size=(2, len(mutate)))
                population[mutate, i], population[mutate, j] = (
                    population[mutate, j], population[mutate, i],
                )  # fmt: skip
            scores = fitness(population)
            top = int(np.argmax(scores))
            if scores[top] > best_score:
                best_order, best_score = population[top].copy(), float(scores[top])
        return best_order

    def initial(self, queue: list[Job], fitness: Fitness, n: int) -> np.ndarray:
        """Random permutations and the four seeded orders (utility.md §4)."""
        rng = self.rng
        seeded = [
            np.arange(n),  # by arrival (the queue is in arrival order)
            np.lexsort((np.arange(n), -np.array([job.priority for job in queue]))),
            np.argsort(-fitness.current / fitness.node_hours, kind="stable"),
            np.argsort(-fitness.current, kind="stable"),
        ]
        random = [rng.permutation(n) for _ in range(self.population - len(seeded))]
        return np.array(seeded + random, dtype=np.int64)

    def params(self) -> dict[str, Any]:
        names = ("population", "generations", "mutation", "seed", "fitness")
        return {name: getattr(self, name) for name in names}

    def stats(self) -> dict[str, Any]:
        return {"passes_evolved": self.evolved}


def zipper(a: np.ndarray, b: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Zipper crossover of parent orders ``a`` and ``b`` (one pair per row): take the next job
    alternately from each parent, skipping jobs already taken. Vectorized: a job's place in the
    child is its first appearance in the interleaving a0 b0 a1 b1 ..."""
    n = a.shape[1]
    place_a = np.empty_like(a)
    place_b = np.empty_like(b)
    positions = np.broadcast_to(np.arange(n), a.shape)
    np.put_along_axis(place_a, a, positions, axis=1)
    np.put_along_axis(place_b, b, positions, axis=1)
    first = np.minimum(2 * place_a, 2 * place_b + 1)
    return np.argsort(first, axis=1)


class Fitness:
    """Aggregate stated utility of orders of the waiting jobs, in the fluid limit (see the
    module's docstring); callable on a population (orders as rows)."""

    def __init__(
        self, queue: list[Job], now: float, free: int, procs: int, running: Running
    ) -> None:
        self.columns = UtilityColumns([job.bid or _WORTHLESS for job in queue])
        self.size = np.array([job.size for job in queue], dtype=np.float64)
        self.estimate = np.array([job.estimate for job in queue])
        self.submit = np.array([job.submit for job in queue])
        self.now, self.free, self.procs = now, free, max(procs, 1)
        self.running = [(end, size) for end, _, size in running]
        self.busy = sum(size * max(end - now, 0.0) for end, size in self.running)
        rows = np.arange(len(queue))
        #: stated value of each job if it started now, and its node-hours
        self.current = self.columns.evaluate(rows, now + self.estimate - self.submit)
        self.node_hours = np.maximum(self.size * self.estimate / 3600.0, 1e-9)

    def __call__(self, orders: np.ndarray) -> np.ndarray:
        size, estimate = self.size[orders], self.estimate[orders]
        fits_now = np.cumsum(size, axis=1) <= self.free  # the order's leading run that fits
        work = self.busy + np.cumsum(size * estimate, axis=1)
        end = self.now + np.where(fits_now, estimate, np.maximum(estimate, work / self.procs))
        value = self.columns.evaluate(orders, end - self.submit[orders])
        return value.sum(axis=1)


class EasyPlan(Fitness):
    """The spec's fitness: the aggregate stated utility the waiting jobs would earn if EASY
    scheduled them in the order, simulated with their estimates from the running jobs'
    estimated ends (no arrivals)."""

    def __call__(self, orders: np.ndarray) -> np.ndarray:
        ends = np.array([self._completions(order.tolist()) for order in orders])
        rows = np.broadcast_to(np.arange(orders.shape[1]), orders.shape)
        return self.columns.evaluate(rows, ends - self.submit).sum(axis=1)

    def __init__(
        self, queue: list[Job], now: float, free: int, procs: int, running: Running
    ) -> None:
        super().__init__(queue, now, free, procs, running)
        self.ids = [job.id for job in queue]
        #: the running jobs as the engine keeps them, (estimated end, id, size)
        self.running_by_end = [(max(end, now), id_, size) for end, id_, size in running]

    def _completions(self, order: list[int]) -> np.ndarray:
        size, estimate, ids = self.size, self.estimate, self.ids
        now, free = self.now, self.free
        running = list(self.running_by_end)
        heapq.heapify(running)
        end = np.empty(len(order))
        waiting = order
        while waiting:
            while waiting and size[waiting[0]] <= free:  # the head starts while it fits
                j = waiting.pop(0)
                end[j] = now + estimate[j]
                free -= int(size[j])
                heapq.heappush(running, (end[j], ids[j], int(size[j])))
            if waiting:  # the head's reservation, then backfilling around it
                # (the heap, sorted: as the machine keeps its running jobs)
                shadow, extra = shadow_time(int(size[waiting[0]]), free, sorted(running))
                kept = waiting[:1]
                for j in waiting[1:]:
                    fits = size[j] <= free
                    if fits and (now + estimate[j] <= shadow or size[j] <= extra):
                        if now + estimate[j] > shadow:
                            extra -= int(size[j])
                        end[j] = now + estimate[j]
                        free -= int(size[j])
                        heapq.heappush(running, (end[j], ids[j], int(size[j])))
                    else:
                        kept.append(j)
                waiting = kept
                now, _, released = heapq.heappop(running)  # the next end
                free += released
                while running and running[0][0] <= now:
                    free += heapq.heappop(running)[2]
        return end


FITNESS = {"fluid": Fitness, "easy": EasyPlan}
