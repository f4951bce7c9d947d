"""sitesim: site-level simulation of parallel-computer job schedulers.

Users, sessions, batches of jobs and the machine are SimPy processes and resources; schedulers
are processes woken by job arrivals and terminations. Open (trace replay) and closed
(users in the loop) evaluations run on the same engine.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("sitesim")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = ["__version__"]
