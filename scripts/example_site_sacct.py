"""Write docs/howto/own-site/site.sacct.gz: a made-up sacct log of the small cluster of
docs/howto/own-site/slurm.conf (16 CPU nodes of 32 cores; 4 GPU nodes of 32 cores, 4 GPUs and
512,000 MB), four weeks of twelve users, for the own-site how-to's profile example.

It is an example, not a site's data: the users work in sessions of batches on weekdays; eight of
them run CPU jobs (partition batch, whole nodes, a few debug jobs), four run GPU jobs (partition
gpu, 1-4 GPUs a node, some on two nodes). Seeded: running it again writes the same file.

    python scripts/example_site_sacct.py
"""

from __future__ import annotations

import gzip
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "docs" / "howto" / "own-site" / "site.sacct.gz"
HEADER = (
    "JobID|JobIDRaw|User|Account|Partition|QOS|Submit|Eligible|Start|End|Timelimit|NNodes|"
    "NCPUS|ReqCPUS|ReqMem|AllocTRES|ReqTRES|State|ExitCode"
)
FIRST_DAY = datetime(2024, 3, 4, tzinfo=UTC)  # a Monday
DAYS = 28


def stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S")


def limit(seconds: float) -> str:
    minutes = int(np.ceil(seconds / 1800.0)) * 30
    days, minutes = divmod(minutes, 1440)
    text = f"{minutes // 60:02d}:{minutes % 60:02d}:00"
    return f"{days}-{text}" if days else text


def job_shape(rng: np.random.Generator, gpu_user: bool) -> tuple[str, int, int, int, int, float]:
    """(partition, nodes, cores, GPUs per node, memory per node MB, runtime s)."""
    if gpu_user:
        gpus = int(rng.choice([1, 2, 4], p=[0.4, 0.3, 0.3]))
        nodes = 2 if gpus == 4 and rng.random() < 0.25 else 1
        cores = 8 * gpus * nodes
        memory = int(rng.choice([64_000, 128_000, 256_000]))
        return "gpu", nodes, cores, gpus, memory, float(rng.lognormal(8.0, 1.0))
    if rng.random() < 0.15:
        return "debug", 1, 32, 0, 64_000, float(rng.uniform(60, 1500))
    nodes = int(rng.choice([1, 2, 4, 8], p=[0.4, 0.3, 0.2, 0.1]))
    memory = int(rng.choice([128_000, 250_000], p=[0.7, 0.3]))
    return "batch", nodes, 32 * nodes, 0, memory, float(rng.lognormal(8.5, 1.1))


def main() -> None:
    rng = np.random.default_rng(2024)
    lines, jid = [HEADER], 1000
    users = [(f"user{k:02d}", ("chem", "phys", "bio")[k % 3], k >= 8) for k in range(12)]
    jobs = []
    for name, account, gpu_user in users:
        for day in range(DAYS):
            start = FIRST_DAY + timedelta(days=day)
            if start.weekday() >= 5 or rng.random() < 0.2:
                continue
            t = start + timedelta(hours=float(rng.uniform(8, 11)))
            for _batch in range(int(rng.integers(2, 7))):
                shape = job_shape(rng, gpu_user)
                for _k in range(int(rng.choice([1, 1, 2, 3]))):
                    jobs.append((t, name, account, shape))
                    t += timedelta(seconds=float(rng.integers(5, 90)))
                t += timedelta(seconds=float(shape[5] + rng.exponential(600.0)))
                if t.hour >= 19:
                    break
    jobs.sort(key=lambda job: job[0])
    for submit, name, account, (part, nodes, cores, gpus, memory, runtime) in jobs:
        jid += 1
        run = min(round(runtime), 86_000 if part != "debug" else 1_700)
        begin = submit + timedelta(seconds=round(float(rng.exponential(900.0))))
        end = begin + timedelta(seconds=run)
        gres = f"gres/gpu={gpus * nodes}," if gpus else ""
        tres = f"billing={cores},cpu={cores},{gres}mem={memory * nodes // 1000}G,node={nodes}"
        state = "COMPLETED" if rng.random() < 0.9 else "FAILED"
        fields = [
            str(jid), str(jid), name, account, part, "normal", stamp(submit), stamp(submit),
            stamp(begin), stamp(end), limit(run * 1.5 + 60), str(nodes), str(cores), str(cores),
            f"{memory // 1000}G", tres, tres, state, "0:0" if state == "COMPLETED" else "1:0",
        ]  # fmt: skip
        lines.append("|".join(fields))
    text = "\n".join(lines) + "\n"
    OUT.write_bytes(gzip.compress(text.encode(), mtime=0))  # (the same bytes every time)
    print(f"{len(lines) - 1} jobs written to {OUT}")


if __name__ == "__main__":
    main()
