"""A tiny site told as it happens: each user's submissions, waits, job ends, decisions, think
times, breaks and window closings, one line each, in the order the event loop meets them.

For teaching (docs/lab.ipynb): a :class:`Narrator` watches a site and the users given to it,
without changing what they do (it wraps the site's ``submit`` and ``completion`` and the
users' draws; every draw is made exactly as without it, so a narrated run is the same run).
Together with :meth:`sitesim.engine.site.Site.advance` a lecturer can step through a few
hours of four users on 16 processors and look at the queue in between::

    site = Site(16, EASY())
    narrator = Narrator(site)
    for uid in range(1, 5):
        site.add_user(narrator.user(UserModel().user(uid, default_profile(), 16, seed=3)))
    for hour in range(8, 12):
        site.advance(hour * 3600)
        print(narrator.status())
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from simpy.events import Event

from sitesim.engine.job import Job
from sitesim.engine.site import Site, User


def clock(t: float) -> str:
    """Simulated seconds as day and time of day: ``Mon 07:30:00`` (time 0 is a Monday)."""
    day, rest = divmod(int(t), 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    weekday = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")[day % 7]
    return f"d{day} {weekday} {hours:02d}:{minutes:02d}:{seconds:02d}"


class Narrator:
    """Tells what the users of ``site`` do, one line each, through ``say``.

    Lines: ``submits job K (S processors, R s)``, ``waits for job K``, ``job K ended,
    response ...``, ``continues the session (p_cont ...)`` or ``leaves the session (p_cont
    ...)``, ``thinks ... s``, ``takes a break of ... h``, and for a complete user whose job
    ends outside its window ``window closed: session over, back at ...`` (the window rule).

    Attributes:
        lines: every line told so far.
    """

    def __init__(self, site: Site, say: Callable[[str], None] | None = print) -> None:
        self.site = site
        self.say = say
        self.lines: list[str] = []
        self._users: dict[int, Any] = {}
        submit, completion = site.submit, site.completion

        def submitted(job: Job) -> bool:
            accepted = submit(job)
            if accepted and job.user in self._users:
                procs = "processor" if job.size == 1 else "processors"
                self.tell(job.user, f"submits job {job.id} ({job.size} {procs}, {job.runtime:g} s)")
            return accepted

        def waited(job: Job) -> Event:
            event = completion(job)
            if job.user in self._users:
                self.tell(job.user, f"waits for job {job.id}")
                event.callbacks.append(lambda _: self._ended(job))
            return event

        setattr(site, "submit", submitted)  # noqa: B010 - (shadows the method on this site)
        setattr(site, "completion", waited)  # noqa: B010

    def tell(self, user: int, what: str) -> None:
        """One line: the clock, the user, what happened."""
        line = f"{clock(self.site.now)}  user {user}: {what}"
        self.lines.append(line)
        if self.say is not None:
            self.say(line)

    def user(self, user: User) -> User:
        """``user``, narrated (the same object, its draws wrapped)."""
        uid = int(getattr(user, "id"))  # noqa: B009 - (a User need not declare it)
        self._users[uid] = user
        submittal = getattr(user, "submittal", None)
        if submittal is not None:
            think = submittal.think

            def thinking() -> float:
                seconds = think()
                self.tell(uid, f"thinks {seconds:g} s")
                return float(seconds)

            submittal.think = thinking
        dynamics = getattr(user, "dynamics", None)
        if dynamics is not None:
            decide, pause = dynamics.continues, dynamics.break_length

            def continues(response: float) -> bool:
                stays = bool(decide(response))
                p = dynamics.a / (dynamics.b * response / 60.0 + 1.0)
                what = "continues the session" if stays else "leaves the session"
                self.tell(uid, f"{what} (p_cont {p:.2f})")
                return stays

            def break_length() -> float:
                seconds = pause()
                self.tell(uid, f"takes a break of {seconds / 3600:.2f} h")
                return float(seconds)

            dynamics.continues, dynamics.break_length = continues, break_length
        return user

    def _ended(self, job: Job) -> None:
        self.tell(job.user, f"job {job.id} ended, response {job.response / 60:.1f} min")
        cycle = getattr(self._users[job.user], "cycle", None)
        if cycle is not None and not cycle.in_window(self.site.now):
            back = clock(cycle.next_open(self.site.now))
            self.tell(job.user, f"window closed: session over, back at {back}")

    def status(self) -> str:
        """The site now: the clock, the waiting jobs (id:user) and the running ones."""
        site = self.site
        waiting = " ".join(f"{j.id}:{j.user}" for j in site.scheduler.queue) or "-"
        running = " ".join(f"{j.id}:{j.user}" for j in site.jobs if j is not None
                           and j.start <= site.now and not j.end <= site.now) or "-"  # fmt: skip
        return f"{clock(site.now)}  waiting [{waiting}]  running [{running}]"
