"""Exceptions sitesim raises for bad input.

Every error message is one line a user can act on: it names the file, line and field of a
malformed SWF line, or the parameter and its allowed range.
"""

from __future__ import annotations


class SitesimError(Exception):
    """Base class of every error sitesim raises on purpose."""


class SWFFormatError(SitesimError):
    """A malformed SWF line: the message reads ``file:line: field N (name): problem``."""


class InvalidJobError(SitesimError):
    """A job the machine cannot run (too large, unknown runtime, ...) in strict mode."""


class SchedulerError(SitesimError):
    """A scheduler broke its contract: started a job that was not waiting or does not fit, or
    left jobs waiting on an idle machine after the last submission. The message names it."""


class JobStateError(SitesimError, RuntimeError):
    """An illegal change to a job: a state transition it cannot make (starting a job that is
    not waiting), or a change to what it asked for after it was submitted. Always a bug in a
    scheduler or a user model, never bad input; the message names the time and the job."""


class ConfigError(SitesimError, ValueError):
    """A bad parameter: the message names the parameter and the allowed range."""


def require(condition: bool, message: str) -> None:
    """Raise :class:`ConfigError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise ConfigError(message)
