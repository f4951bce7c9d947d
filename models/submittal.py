"""Job submittal: how a user submits jobs (users.md §2).

A user works in *batches*: the batch submits its first job, then each further job after an
inter-submission gap, without waiting for the earlier ones, and completes when its
**last-submitted** job ends. Between batches of a session the user thinks for a time drawn from
the profile's short think times, (0, 20 min]. A cap on the batch width (a workload transform of
the sensitivity studies) cuts wider batches; the draw itself is unchanged.
"""

from __future__ import annotations

from sitesim.workload.profile import WorkloadProfile

from .streams import Drawn, Streams, StreamTable, Transform, rounded


class Submittal:
    """A user's batch widths, inter-submission gaps and short think times (whole seconds).

    Attributes:
        gap: ``gap()`` gives the seconds between two submissions of a batch.
        think: ``think()`` gives the seconds of thinking between two batches of a session.
    """

    _width = Drawn("width")
    # (the draws themselves, not methods calling them: one Python call less per value)
    gap = Drawn("gap")
    think = Drawn("think")

    def __init__(
        self,
        profile: WorkloadProfile,
        seed: int,
        user: int,
        *,
        max_width: int | None = None,
        streams: Streams | None = None,
    ) -> None:
        self.max_width = max_width
        self._streams = streams or StreamTable.alone(seed, user, self.transforms(profile))

    @staticmethod
    def transforms(profile: WorkloadProfile) -> dict[str, Transform]:
        """The maps from uniforms to values of a submittal's streams."""
        return {
            "width": profile.batch_widths.from_uniform,
            "gap": rounded(profile.inter_submission.from_uniform),
            "think": rounded(profile.think_short.from_uniform),
        }

    def width(self) -> int:
        """Jobs in the next batch (at most ``max_width``: a workload transform)."""
        width = int(self._width())
        return width if self.max_width is None else min(width, self.max_width)
