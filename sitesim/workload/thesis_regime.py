"""The thesis regime: a workload profile shaped like the site of the Site-Sim thesis' chapter 5.

sitesim's shipped profile comes from five real traces in which long, wide jobs hold most of the
processor-time (about 113,000 processor-seconds a job); the thesis' CREASY study ran a site
whose baseline implies about 5,700 (docs/results/creasy.md, part 5). This module derives, from
any profile, the named profile ``"thesis"`` (``sitesim run --profile thesis``) by four
documented transforms, each with one parameter:

- **runtimes**: the classes <= 1 min, 1-10 min and > 10 min get a third of the jobs each (the
  thesis: "of approximately the same size"), each keeping the base profile's shape inside the
  class; runtimes above 10 minutes are compressed towards 10 minutes by ``long_scale``
  (600 + (x - 600) * long_scale), chosen so that the mean work of a job (size x runtime) is the
  thesis' (:func:`long_scale_for`). Size-conditioned runtime tables are dropped (correlated
  draws use the overall table).
- **batch widths**: capped at ``max_width`` (None: as drawn).
- **inter-submission gaps**: the base profile's gaps of at most ``gap_max`` seconds (the
  thesis: "very short").
- **breaks**: multiplied by ``break_scale`` (how often users start sessions). A scale below 1
  makes breaks shorter than the 20-minute think/break boundary that defines a session.

Everything else (sizes, repetitions, think times, estimates, cycles) is the base profile's.
The fitted values and the calibration are in ``scenarios/creasy_study.py --part 5`` and
docs/results/creasy.md; ``scripts/build_thesis_profile.sh`` rebuilds the shipped file.

:data:`REVISITED` is the regime revisited (docs/results/creasy.md, part 5): breaks as drawn
(all >= 20 minutes), batch widths as drawn, and either no long-job compression or the thesis'
work per job; nothing in it is fitted to a thesis result.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

import numpy as np

from sitesim.errors import require
from sitesim.workload.distributions import Discrete, Quantiles
from sitesim.workload.profile import WorkloadProfile

#: The runtime classes (seconds): <= 1 min, 1-10 min, > 10 min.
SHORT, MEDIUM = 60.0, 600.0
#: Quantile grid of the derived tables (a third of it per class).
GRID = np.linspace(0.0, 1.0, 1501)


@dataclass(frozen=True)
class ThesisRegime:
    """The four transform parameters (see the module's docstring)."""

    long_scale: float
    max_width: int | None
    gap_max: float
    break_scale: float

    def __post_init__(self) -> None:
        require(0 < self.long_scale <= 1, f"long_scale must be in (0, 1], got {self.long_scale}")
        require(
            self.max_width is None or self.max_width >= 1,
            f"max_width must be >= 1 (or none), got {self.max_width}",
        )
        require(self.gap_max >= 0, f"gap_max must be >= 0 seconds, got {self.gap_max}")
        require(self.break_scale > 0, f"break_scale must be > 0, got {self.break_scale}")

    def apply(self, base: WorkloadProfile) -> WorkloadProfile:
        """``base`` transformed; the parameters are recorded in the profile's settings."""
        return replace(
            base,
            runtimes=equal_thirds(base.runtimes, self.long_scale),
            runtimes_by_size={},
            batch_widths=(
                base.batch_widths
                if self.max_width is None
                else capped(base.batch_widths, self.max_width)
            ),
            inter_submission=below(base.inter_submission, self.gap_max),
            breaks=Quantiles(base.breaks.p, base.breaks.x * self.break_scale),
            settings={**base.settings, "thesis_regime": asdict(self)},
        )


def equal_thirds(runtimes: Quantiles, long_scale: float) -> Quantiles:
    """Runtimes with a third of the jobs in each class, the long ones compressed."""
    low, high = runtimes.cdf([SHORT, MEDIUM])
    require(0 < low < high < 1, "the base profile needs runtimes in each of the three classes")
    u = GRID * 3.0
    cls = np.minimum(u.astype(int), 2)
    within = u - cls  # position inside the class, 0..1
    start = np.array([0.0, low, high])[cls]
    width = np.array([low, high - low, 1.0 - high])[cls]
    x = runtimes.quantile(start + within * width)
    x = np.where(cls == 2, MEDIUM + np.maximum(x - MEDIUM, 0.0) * long_scale, x)
    x = np.where(cls == 0, np.minimum(x, SHORT), np.maximum(x, np.where(cls == 1, SHORT, MEDIUM)))
    return Quantiles(GRID, np.maximum.accumulate(x))


def long_scale_for(base: WorkloadProfile, procs: int, work: float) -> float:
    """The ``long_scale`` that gives jobs a mean work (size x runtime, processor-seconds) of
    ``work`` on a machine of ``procs`` processors (sizes and runtimes are drawn independently)."""
    size = base.sizes.restricted(procs).mean
    low, high = runtimes_mean(base, 0.0), runtimes_mean(base, 1.0)
    require(
        size * low <= work <= size * high,
        f"a mean work of {work:g} needs long_scale outside (0, 1] "
        f"(reachable: {size * low:g} to {size * high:g})",
    )
    # the mean runtime is linear in long_scale
    return float((work / size - low) / (high - low))


def runtimes_mean(base: WorkloadProfile, long_scale: float) -> float:
    """Mean runtime of the equal-thirds table with ``long_scale``."""
    return equal_thirds(base.runtimes, long_scale).mean


def capped(widths: Discrete, max_width: int) -> Discrete:
    """Batch widths above ``max_width`` become ``max_width``."""
    values = np.minimum(widths.values, max_width)
    kept = np.unique(values)
    return Discrete(kept, [widths.probabilities[values == v].sum() for v in kept])


def below(gaps: Quantiles, gap_max: float) -> Quantiles:
    """The gaps of at most ``gap_max`` seconds (the conditional distribution)."""
    top = float(gaps.cdf([gap_max])[0])
    require(top > 0, f"no inter-submission gap is <= {gap_max:g} s")
    return Quantiles(GRID, np.minimum(gaps.quantile(GRID * top), gap_max))


#: The calibration of docs/results/creasy.md, part 5 (``scenarios/creasy_study.py --part 5
#: --calibrate``: long_scale from the thesis' work per job, max_width and break_scale fitted,
#: break_scale rounded to three decimals), frozen before the comparison ran: one regime per
#: session-start mechanism. The shipped profile ``"thesis"`` is ``FITTED["after_break"]``
#: applied to the default profile.
FITTED = {
    "after_break": ThesisRegime(
        long_scale=0.021711347637461447, max_width=1, gap_max=60.0, break_scale=0.470
    ),
    "scheduled": ThesisRegime(
        long_scale=0.021711347637461447, max_width=1, gap_max=60.0, break_scale=0.650
    ),
}

#: The thesis regime revisited (docs/results/creasy.md, part 5; issue 36): the breaks as drawn
#: (none shorter than the 20-minute session boundary), batches as wide as drawn, the "very
#: short" gaps kept; ``"uncompressed"``: runtimes in equal thirds with no long-job compression
#: (about 85,000 processor-seconds a job on 128 processors); ``"work matched"``: the long jobs
#: compressed to the thesis' work per job, as in :data:`FITTED`. Neither is fitted.
REVISITED = {
    "uncompressed": ThesisRegime(long_scale=1.0, max_width=None, gap_max=60.0, break_scale=1.0),
    "work matched": ThesisRegime(
        long_scale=FITTED["after_break"].long_scale, max_width=None, gap_max=60.0, break_scale=1.0
    ),
}
#: Clocked session starts (a sensitivity option, not the thesis' model) on
#: ``REVISITED["work matched"]``: the gap scale that gives EASY at 50 users the throughput of
#: the thesis' own session starts (``scenarios/creasy_study.py --part 5 --calibrate``), frozen
#: before the comparison ran.
CLOCKED_START_GAP_SCALE = 1.29
