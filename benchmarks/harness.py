"""What the scheduler benchmarks share: time a kernel N times, then replay a real trace."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


def kernel_then_replay(
    doc: str,
    kernel: Callable[[int], None],
    count: tuple[str, int],
    replay: Callable[[Path], None],
    trace: Path,
) -> None:
    """Parse ``--<count name> N``, ``--trace PATH`` and ``--skip-replay``; run ``kernel(N)``,
    then ``replay(trace)`` unless skipped or the trace is absent (said so)."""
    name, default = count
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument(f"--{name}", type=int, default=default)
    parser.add_argument("--trace", type=Path, default=trace)
    parser.add_argument("--skip-replay", action="store_true")
    args = parser.parse_args()
    kernel(getattr(args, name))
    if args.skip_replay:
        return
    if args.trace.exists():
        replay(args.trace)
    else:
        print(f"{args.trace} not found: the replay is skipped")
