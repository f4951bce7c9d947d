"""The reinforcement-learning environment: steps a second in one process, with a linear policy.

An agent that scores each job shown by a linear function of its row (the decision of
sitesim.gym.policies.LinearPick: one matrix product and a masked argmax, about what a linear
policy of any learner costs) plays whole episodes of sitesim.gym.env.SiteEnv; the CPU time of
the episode (reset included: building the site) over its steps. Targets: >= 20,000 steps a
second on processors, >= 5,000 on a platform of nodes. For scale, the same policy run as an
ordinary scheduler (LinearPick, no environment) and EASY on the same site.

- processors, users in the loop: 250 complete users of the thesis-regime profile, 128
  processors, 7 days, the "start" actions, k = 16;
- the same with the "priority" actions (EASY with the weights of each step);
- processors, an open replay: the first 20,000 jobs of SDSC-SP2 (skipped when
  ../shared/traces is absent);
- a platform: the same users on 30 four-core nodes and 2 four-core nodes with 2 GPUs each,
  one shared partition (128 cores).

    python benchmarks/bench_gym.py [--days D] [--jobs N] [--k K] [--repeat R]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sitesim.gym.env import SiteEnv
from sitesim.gym.observation import JOB_FEATURES
from sitesim.gym.policies import LinearPick
from sitesim.runs.config import ReplayConfig, RunConfig, SiteConfig
from sitesim.runs.runner import prepare, run

HERE = Path(__file__).parent
SP2 = HERE.parent.parent / "shared" / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"
WEIGHTS = [0.0, -0.5, 0.0, -0.3, 0.2, 1.0, 0.1, 0.0, 0.2, -0.5]  # (9 job features, then waiting)
PLATFORM = """\
[[nodes]]
type = "cpu"
count = 30
cores = 4

[[nodes]]
type = "gpu"
count = 2
cores = 4
gpus = 2

[[partitions]]
name = "all"
nodes = ["cpu", "gpu"]
allocation = "shared"
"""


def episode(env: SiteEnv, agent: Callable[[np.ndarray, dict[str, Any]], Any]) -> tuple[int, float]:
    """Steps and CPU seconds of one episode (seed 1), reset included."""
    began = time.process_time()
    obs, info = env.reset(seed=1)
    steps, done = 0, False
    while not done:
        obs, _, done, _, info = env.step(agent(obs, info))
        steps += 1
    return steps, time.process_time() - began


def best(repeat: int, measure: Callable[[], tuple[int, float]]) -> tuple[int, float]:
    """The fastest of ``repeat`` measurements (the machine is shared)."""
    runs = [measure() for _ in range(repeat)]
    return min(runs, key=lambda r: r[1])


def cpu_of(config: RunConfig, scheduler: Any = None) -> float:
    """CPU seconds of an ordinary run (building the site included)."""
    began = time.process_time()
    if scheduler is None:
        run(config)
    else:
        prepare(config, scheduler=scheduler).run()
    return time.process_time() - began


def report(name: str, config: RunConfig, k: int, repeat: int, target: int) -> None:
    """One row: the environment's steps a second with the linear policy, and for scale the
    same policy as an ordinary scheduler and EASY."""
    pick = LinearPick(WEIGHTS, k=k)
    env = SiteEnv(config, k=k)
    steps, cpu = best(
        repeat, lambda: episode(env, lambda obs, info: pick.decide(obs, info["action_mask"]))
    )
    ordinary = min(cpu_of(config, LinearPick(WEIGHTS, k=k)) for _ in range(repeat))
    easy = min(cpu_of(config.replace(scheduler="EASY")) for _ in range(repeat))
    verdict = "met" if steps / cpu >= target else "missed"
    print(f"{name:42s} {steps:8,d} {cpu:7.2f} {steps / cpu:9,.0f}  {ordinary:6.2f} "
          f"{easy:6.2f}  >= {target:,}: {verdict}")  # fmt: skip


def report_priority(name: str, config: SiteConfig, repeat: int) -> None:
    """The "priority" actions: the same weights at every step."""
    weights = np.array(WEIGHTS[: len(JOB_FEATURES)])
    env = SiteEnv(config, actions="priority")
    steps, cpu = best(repeat, lambda: episode(env, lambda obs, info: weights))
    print(f"{name:42s} {steps:8,d} {cpu:7.2f} {steps / cpu:9,.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--days", type=float, default=7.0, help="days of users (default 7)")
    parser.add_argument("--jobs", type=int, default=20_000, help="SDSC-SP2 jobs (default 20,000)")
    parser.add_argument("--k", type=int, default=16, help="jobs shown (default 16)")
    parser.add_argument("--repeat", type=int, default=3, help="best of (default 3)")
    args = parser.parse_args()
    users = SiteConfig(users=250, profile="thesis", days=args.days, warmup_days=1)
    print(f"{'episode':42s} {'steps':>8s} {'CPU s':>7s} {'steps/s':>9s}  {'policy':>6s} "
          f"{'EASY':>6s}  (CPU s of the same run without the environment)")  # fmt: skip
    report(f"processors: 250 users, {args.days:g} days, k = {args.k}", users, args.k, args.repeat,
           20_000)  # fmt: skip
    report_priority("  the same, the priority actions", users, args.repeat)
    if SP2.exists():
        replay = ReplayConfig(trace=str(SP2), stop_job=args.jobs)
        report(f"processors: SDSC-SP2, first {args.jobs:,} jobs", replay, args.k, args.repeat,
               20_000)  # fmt: skip
    else:
        print(f"{SP2} not found: the replay is skipped")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "nodes.toml"
        path.write_text(PLATFORM)
        nodes = users.replace(platform=str(path))
        report(f"platform: 32 nodes, 250 users, {args.days:g} days", nodes, args.k, args.repeat,
               5_000)  # fmt: skip


if __name__ == "__main__":
    main()
