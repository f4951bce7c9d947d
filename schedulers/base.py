"""The scheduler contract every policy follows (its home is :mod:`sitesim.engine.scheduler`;
the resources a pass decides against, :mod:`sitesim.engine.resources`).

A policy subclasses :class:`Scheduler` and implements ``select(now, resources)``; see
docs/howto/own-scheduler.md.
"""

from sitesim.engine.profile import shadow_time
from sitesim.engine.resources import Resources, Running
from sitesim.engine.scheduler import Observer, Scheduler, scheduler_label

__all__ = ["Observer", "Resources", "Running", "Scheduler", "scheduler_label", "shadow_time"]
