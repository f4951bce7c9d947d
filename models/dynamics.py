"""Session dynamics: where users decide to continue or leave (users.md §3).

When the last-submitted job of a batch ends with response time r (in **minutes**), the user
continues the session with probability

    p_cont(r) = a / (b · r + 1),   a = 0.8, b = 0.05 by default

(one Bernoulli trial). Continue: think for a time from the profile's short think times
(0, 20 min]. Abort: take a break drawn from the profile's breaks (20 min, 8 h]; the next batch
starts a new session. The model and its constants come from the Site-Sim study, which fitted it
to the continue probabilities of real traces (see ``sitesim analyze``).
"""

from __future__ import annotations

import math

from sitesim.errors import require
from sitesim.workload.profile import WorkloadProfile

from .streams import Drawn, Streams, StreamTable, Transform, rounded

#: Defaults of p_cont(r) = a / (b r + 1).
PCONT_A, PCONT_B = 0.8, 0.05


def p_continue(response_minutes: float, a: float = PCONT_A, b: float = PCONT_B) -> float:
    """Probability to continue the session after a job that responded in ``response_minutes``."""
    return a / (b * response_minutes + 1.0)


def check_pcont(a: float, b: float) -> None:
    """Valid constants: 0 < a <= 1 and b >= 0."""
    require(math.isfinite(a) and 0 < a <= 1, f"p_cont a must be in (0, 1], got {a}")
    require(math.isfinite(b) and b >= 0, f"p_cont b must be >= 0, got {b}")


class SessionDynamics:
    """A complete user's continue-or-leave decisions and break lengths."""

    _uniform = Drawn("continue")
    #: ``break_length()`` gives the seconds of a break between sessions (the draws
    #: themselves: one Python call less per value).
    break_length = Drawn("break")

    def __init__(
        self,
        profile: WorkloadProfile,
        seed: int,
        user: int,
        a: float = PCONT_A,
        b: float = PCONT_B,
        *,
        streams: Streams | None = None,
    ) -> None:
        check_pcont(a, b)
        self.a, self.b = a, b
        self._streams = streams or StreamTable.alone(seed, user, self.transforms(profile))

    @staticmethod
    def transforms(profile: WorkloadProfile) -> dict[str, Transform]:
        """The maps from uniforms to values of the dynamics' streams (continue: uniforms)."""
        return {"break": rounded(profile.breaks.from_uniform)}

    def continues(self, response_seconds: float) -> bool:
        """One Bernoulli trial with p_cont of the response (converted to minutes here)."""
        return self._uniform() < p_continue(response_seconds / 60.0, self.a, self.b)
