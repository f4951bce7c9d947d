"""Run configurations: one frozen, validated record that fully describes a run.

Two kinds share a base, :class:`RunConfig`:

- :class:`SiteConfig`, a site-level (closed) run: simulated users in the loop;
- :class:`ReplayConfig`, an open replay of an SWF trace.

A configuration is built once (by the CLI, a sweep or a script), saved in ``results.json`` with
every result, and loaded again (:meth:`RunConfig.from_dict`) to reproduce the run byte for byte
(``sitesim rerun``). Every field is checked at construction; a bad value raises
:class:`~sitesim.errors.ConfigError` naming the field and the allowed range. The workload files
a run reads are named with their sha256, and a rerun refuses a file that has changed.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal, Self, TypedDict, cast

from msgspec import Meta

from sitesim.errors import ConfigError
from sitesim.import_paths import is_import_path, load
from sitesim.models.augment import GENERATORS
from sitesim.models.cycles import CycleShares
from sitesim.models.dynamics import PCONT_A, PCONT_B, check_pcont
from sitesim.models.synthetic import CONFIGURATIONS, LARGEST, MAX_LOAD, SyntheticWorkload
from sitesim.models.users import SESSION_STARTS, USER_KINDS, SessionStarts, UserKind, UserModel
from sitesim.models.utility import Decay, LeeSnavely
from sitesim.models.workpool import EstimateModel
from sitesim.platform.description import Platform
from sitesim.runs.platforms import BUILTIN_PLATFORMS, read_platform
from sitesim.schedulers import (
    REGISTRY,
    Scheduler,
    canonical_name,
    create,
    label,
    parameters,
    stored_params,
)
from sitesim.schema import FINITE, Table, check_settings, check_value, settings_schema
from sitesim.workload.activity import ThinkDefinition

#: ``profile`` of a site-level run that uses the profile shipped with sitesim.
DEFAULT_PROFILE = "default"
#: Default warm-up of site-level runs (days): one week, one full weekly cycle.
WARMUP_DAYS = 7.0
#: How long after the horizon a platform's outages go on, in seconds (the machine drains
#: meanwhile).
DRAIN_OUTAGES = 60 * 86_400.0


# The ranges of the settings, as annotations of the fields (sitesim.schema.check_value).
_Count = Annotated[int, Meta(ge=1)]
_Index = Annotated[int, Meta(ge=0)]
_Positive = Annotated[float, Meta(gt=0, le=FINITE)]
_NonNegative = Annotated[float, Meta(ge=0, le=FINITE)]
_Fraction = Annotated[float, Meta(ge=0, le=1)]
_Sha256 = Annotated[str, Meta(pattern="^[0-9a-f]{64}$", description="be 64 lowercase hex digits")]
_SCALES = (0.001, 1000.0)  # (ReplayConfig.SCALE_RANGE)
_REPLAY_LOAD = 4.0  # (ReplayConfig.MAX_LOAD)


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{name} must be a non-empty string, got {value!r}")
    return value


def _platform(value: Any) -> str | Platform:
    """The ``platform`` setting: a file or shipped name (text or a path), a Platform, or its
    tables as a mapping (built into a Platform here)."""
    if isinstance(value, Platform):
        return value
    if isinstance(value, Mapping):
        return Platform.from_dict(value, where="platform")
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value:
        raise ConfigError(
            "platform must be a platform file, the name of a shipped one "
            f"({', '.join(BUILTIN_PLATFORMS)}), a Platform or its tables, got {value!r}"
        )
    return value


def takes_parameters(scheduler: Any) -> set[str]:
    """The parameters scheduler ``scheduler`` (a name) takes; none when it names no scheduler
    (the configuration built with it says why)."""
    try:
        return parameters(scheduler) if isinstance(scheduler, str) else set()
    except ConfigError:
        return set()


#: Per kind of configuration, the schema of the settings checked against their annotations.
_SCHEMAS: dict[type, type[Table]] = {}

#: What the ``platform`` setting takes (:class:`RunConfig`).
PlatformSetting = str | os.PathLike[str] | Platform | Mapping[str, Any] | None


class RunSettings(TypedDict, total=False):
    """The settings of every run that :func:`sitesim.simulate` and :func:`sitesim.replay` take
    as keyword arguments beside their own (each a field of :class:`RunConfig`; the scheduler's
    parameters go in ``scheduler_params``)."""

    scheduler_params: Mapping[str, Any]
    cancel_expired: bool
    platform: PlatformSetting
    platform_sha256: str | None


class SiteSettings(RunSettings, total=False):
    """The :class:`SiteConfig` settings :func:`sitesim.simulate` takes as keyword arguments,
    besides those it names (``tests/unit/test_config.py`` checks that, together, they are every
    field)."""

    synthetic_config: int
    load: float
    profile_sha256: str | None
    estimates: str
    correlated: bool
    pcont_a: float
    pcont_b: float
    day_share: float
    weekday_share: float
    shift_max_min: float
    runtime_scale: float
    max_batch_width: int | None
    session_starts: str
    start_gap_scale: float
    utility: bool
    utility_levels: int
    deadline_factor: float
    utility_decay: Decay | None
    deadline_wait_min: float | None


class ReplaySettings(RunSettings, total=False):
    """The :class:`ReplayConfig` settings :func:`sitesim.replay` takes as keyword arguments,
    besides those it names."""

    seed: int
    feedback: bool
    think: ThinkDefinition
    threshold_min: float
    uncertainty: float
    wealth_gini: float
    start_job: int
    stop_job: int | None
    utility: str | None
    deadline_factor: float
    utility_decay: Decay | None


@dataclass(frozen=True, kw_only=True)
class RunConfig:
    """What every run has: a scheduler, a root seed and the strictness of the site boundary.

    Attributes:
        scheduler: a registered scheduler name (``EASY``, ``CREASY``, ...; case-insensitive), or
            the import path of a scheduler class of one's own (``mypkg.sched:FairEASY``; its
            module is imported to check it).
        scheduler_params: its parameters, e.g. ``{"alpha": 3000}`` for CREASY: those of the
            class's ``__init__``.
        seed: root seed of every random stream, an integer >= 0.
        strict: an impossible job stops the run instead of being skipped and counted.
        cancel_expired: cancel a waiting job once its stated utility function can no longer
            earn anything (it would end after its deadline even if started now).
        platform: a platform file (TOML: nodes, partitions, downtime; or a ``slurm.conf``), the
            name of a shipped one (``curie``), a :class:`~sitesim.platform.description.Platform`,
            or its tables as a mapping (what the TOML file holds; a Platform is stored so in
            ``results.json``); None: ``procs`` processors. With a platform, ``procs`` is set
            from it (a replay: every core; a site-level run: the default partition's cores,
            the machine the user models draw jobs for).
        platform_sha256: the platform file's sha256 (filled in when the run reads it; a rerun
            checks it); none for a platform given as an object or a mapping.
    """

    #: ``"site"`` or ``"replay"``: which subclass (stored as the ``mode`` key of a dict).
    mode: ClassVar[str] = ""
    #: Settings stored only when set (results.json files written before they existed still
    #: match their configurations).
    OPTIONAL_SETTINGS: ClassVar[tuple[str, ...]] = ("platform", "platform_sha256")
    #: Settings checked by code of their own (:meth:`__post_init__`); every other is checked
    #: against its annotation, which states its type and range.
    OWN_CHECKS: ClassVar[tuple[str, ...]] = ("scheduler", "scheduler_params", "platform")

    scheduler: str = "EASY"
    scheduler_params: dict[str, Any] = field(default_factory=dict)
    seed: _Index = 1
    strict: bool = False
    cancel_expired: bool = False
    platform: str | Platform | None = None
    platform_sha256: _Sha256 | None = None

    def __post_init__(self) -> None:
        name = canonical_name(_text("scheduler", self.scheduler))
        if not isinstance(self.scheduler_params, Mapping):
            raise ConfigError(
                f"scheduler_params must be a table of values, got {self.scheduler_params!r}"
            )
        params = {}
        for key, value in sorted(self.scheduler_params.items()):
            if isinstance(value, bool) or not isinstance(value, int | float | str | Mapping):
                raise ConfigError(
                    f"scheduler parameter {key} must be a number, text or a table, got {value!r}"
                )
            params[str(key)] = value
        self._set("scheduler", name)
        # every parameter resolved (defaults included); raises ConfigError naming a parameter
        # the scheduler does not take, or a bad value
        scheduler = create(name, **params)
        if not scheduler.describable:
            raise ConfigError(
                f"scheduler {name}: {', '.join(params)} cannot be set in a configuration "
                "(a function is needed; build the scheduler object in Python)"
            )
        self._set("scheduler_params", stored_params(name, scheduler, params))
        schema = self._schema()
        given = {name: getattr(self, name) for name in schema.__struct_fields__}
        for name, value in check_settings(given, schema).items():
            self._set(name, value)
        if self.platform is not None:
            self._set("platform", _platform(self.platform))
            self.make_platform()  # (a bad file fails here, naming the key)
            if isinstance(self.platform, Platform) and self.platform_sha256 is not None:
                raise ConfigError(
                    "platform_sha256 names a platform file's bytes; this platform is given as "
                    "an object (leave platform_sha256 out)"
                )

    @classmethod
    def _schema(cls) -> type[Table]:
        """The schema of the settings checked against their annotations (all but
        :attr:`OWN_CHECKS`)."""
        found = _SCHEMAS.get(cls)
        if found is None:
            hints = typing.get_type_hints(cls, include_extras=True)
            own = set(cls.OWN_CHECKS)
            checked = {name: hints[name] for name in cls.settings() if name not in own}
            found = _SCHEMAS[cls] = settings_schema(cls.__name__ + "Settings", checked)
        return found

    def make_platform(self) -> Platform | None:
        """The platform this run uses (None: ``procs`` processors).

        Raises:
            ConfigError: the file is not a valid platform, or changed since the run (its
                sha256 differs from ``platform_sha256``).
        """
        if self.platform is None or isinstance(self.platform, Platform):
            return self.platform
        platform, sha256 = read_platform(self.platform)
        if self.platform_sha256 is not None and self.platform_sha256 != sha256:
            raise ConfigError(
                f"platform {self.platform} has changed since the run: its sha256 is {sha256}, "
                f"the run used {self.platform_sha256}"
            )
        return platform

    def with_platform_sha256(self) -> Self:
        """This configuration with its platform file's sha256 filled in."""
        if not isinstance(self.platform, str):
            return self
        return dataclasses.replace(self, platform_sha256=read_platform(self.platform)[1])

    @property
    def platform_name(self) -> str | None:
        """The platform in a message: its file (or shipped name), or a Platform's name."""
        if isinstance(self.platform, Platform):
            return self.platform.name or "platform"
        return self.platform

    def with_seed(self, seed: int) -> Self:
        """A copy with another root seed, checked; the other settings are not checked again
        (what the replications of a sweep's run share, built once)."""
        twin = copy.copy(self)
        twin._set("seed", check_value("seed", seed, _Index))
        return twin

    def _set(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)

    # -- building what the run needs ---------------------------------------------------------
    def make_scheduler(self) -> Scheduler:
        """A fresh scheduler of this configuration, seeded by the run's seed."""
        scheduler = create(self.scheduler, **self.scheduler_params)
        scheduler.use_seed(self.seed)
        return scheduler

    @property
    def label(self) -> str:
        """The scheduler with its parameters, e.g. ``CREASY alpha=3000``."""
        return label(self.scheduler, self.scheduler_params)

    # -- changing and storing ----------------------------------------------------------------
    @classmethod
    def settings(cls) -> tuple[str, ...]:
        """The names of the fields, in order."""
        return tuple(f.name for f in dataclasses.fields(cls))

    def replace(self, **changes: Any) -> Self:
        """A copy with some settings changed, validated.

        A setting that is not a field but a parameter of the (new) scheduler, such as
        ``alpha``, goes into ``scheduler_params``.
        """
        fields = set(self.settings())
        direct = {key: value for key, value in changes.items() if key in fields}
        params = dict(direct.pop("scheduler_params", self.scheduler_params))
        takes = takes_parameters(direct.get("scheduler", self.scheduler))
        if "scheduler" in direct:  # keep only the parameters the new scheduler takes
            params = {key: value for key, value in params.items() if key in takes}
        for key, value in changes.items():
            if key in fields:
                continue
            if key not in takes and not any(key in parameters(name) for name in REGISTRY):
                raise ConfigError(
                    f"unknown setting {key!r} of a {self.mode} run; settings are "
                    f"{', '.join(self.settings())} and scheduler parameters"
                )
            params[key] = value
        return dataclasses.replace(self, scheduler_params=params, **direct)

    def headline(self) -> dict[str, Any]:
        """What names the run in a table: its users (site-level) or its trace (replay)."""
        raise NotImplementedError

    def submitted_by(self, workload: dict[str, Any]) -> str:
        """What submitted the jobs, in a line (an output trace's header notes it);
        ``workload``: the facts of the run's workload (``SiteResult.workload``)."""
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data, ``mode`` first (what ``results.json`` stores); the
        :attr:`OPTIONAL_SETTINGS` only when set."""
        data = {"mode": self.mode, **{name: getattr(self, name) for name in self.settings()}}
        if isinstance(self.platform, Platform):
            data["platform"] = self.platform.to_dict()
        for name in self.OPTIONAL_SETTINGS:
            if data[name] is None:
                del data[name]
        return data

    @staticmethod
    def from_dict(data: Mapping[str, Any], where: str = "configuration") -> RunConfig:
        """A configuration from :meth:`to_dict` output; errors name ``where``."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"{where}: expected a table of settings, got {data!r}")
        kinds = {cls.mode: cls for cls in (SiteConfig, ReplayConfig)}
        mode = data.get("mode", "site")
        cls = kinds.get(mode)
        if cls is None:
            raise ConfigError(f"{where}: mode must be 'site' or 'replay', got {mode!r}")
        settings = {key: value for key, value in data.items() if key != "mode"}
        unknown = sorted(set(settings) - set(cls.settings()))
        if unknown:
            raise ConfigError(
                f"{where}: unknown setting {', '.join(unknown)} for a {mode} run "
                f"(settings: {', '.join(cls.settings())})"
            )
        missing = [
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING
            and f.default_factory is dataclasses.MISSING
            and f.name not in settings
        ]
        if missing:
            raise ConfigError(f"{where}: a {mode} run needs {', '.join(missing)}")
        try:
            return cls(**settings)
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None


@dataclass(frozen=True, kw_only=True)
class SiteConfig(RunConfig):
    """A site-level run: ``users`` simulated users on ``procs`` processors for ``days`` days.

    Attributes:
        users: number of users (ids 1..users); with the synthetic model, how many users its
            jobs are spread over (10 in experiment 5).
        model: ``"complete"`` (session dynamics and activity cycles) or ``"static"`` users, or
            ``"synthetic"``: the Poisson workload of experiment 5 (Stoica & Pothen,
            :mod:`sitesim.models.synthetic`). It draws nothing from the profile (the run
            still records its sha256), and takes of the workload settings below only
            ``estimates`` (exact or factor:F); the session settings do not apply to it, the
            others it refuses. It needs ``procs`` >= 64. Or the import path of a user factory
            of one's own (``mypkg.users:population``): ``factory(uid, profile, procs, seed)``
            returns user ``uid``; it draws its own jobs, so it refuses every setting of
            :attr:`MODEL_SETTINGS` other than its default.
        synthetic_config: the synthetic model's configuration, 1..5 (the rows of experiment
            5's table: each class's mean service time and share of the arrivals).
        load: the synthetic model's target offered load in (0, 1.5]: the arrival rate λ is
            chosen so that λ · E[size · service] / procs is this (the summary's
            ``offered_load`` measures what the run offered).
        procs: machine size.
        days: horizon; users submit until then, then the machine drains.
        warmup_days: days at the start left out of the metrics.
        profile: workload profile JSON file, or ``"default"`` for the shipped one.
        profile_sha256: the profile's sha256 (filled in when the run reads it; a rerun checks it).
        estimates: ``exact``, ``ratio`` (the profile's request ratios) or ``factor:F``.
        correlated: draw runtimes conditioned on the size class.
        pcont_a, pcont_b: p_cont(r) = a / (b r + 1), r in minutes.
        day_share, weekday_share: shares of day and weekday workers.
        shift_max_min: the largest personal shift of a worker's window, minutes.
        runtime_scale: a workload transform: every runtime is multiplied by it (estimates
            follow), "what if our jobs were ten times shorter?".
        max_batch_width: a workload transform: batches are at most this wide (None: as drawn).
        session_starts: ``after_break`` (the thesis' model and the spec's: a break after a
            session's last job; the default), or a sensitivity option that is not the thesis'
            model: ``scheduled`` (a break after the session's first submission) or ``clocked``
            (a session starts at each window opening and then every ``start_gap_scale`` × a
            break, whatever the sessions already open do).
        start_gap_scale: ``clocked`` only: the breaks between session starts are multiplied
            by it.
        utility: every job carries a Lee & Snavely utility function (utility.md §2), with a
            priority level drawn uniformly from ``utility_levels``, the deadline factor
            ``deadline_factor``, a decay type (``utility_decay``, None for a third each), and
            a wait drawn from the profile's recorded waits (or ``deadline_wait_min`` minutes).
    """

    mode: ClassVar[str] = "site"
    #: Settings only the synthetic model reads. Other runs store them only when they are set
    #: (not at their defaults), so results.json files written before they existed still match
    #: their configurations (a sweep resumes).
    SYNTHETIC_SETTINGS: ClassVar[tuple[str, ...]] = ("synthetic_config", "load")
    #: Settings added later, stored only when set, for the same reason.
    LATER_SETTINGS: ClassVar[tuple[str, ...]] = ("session_starts", "start_gap_scale")
    #: Settings of the built-in user models (:meth:`user_model`); a user factory draws its own
    #: jobs and refuses them.
    OWN_CHECKS = (
        *RunConfig.OWN_CHECKS, "model", "synthetic_config", "profile", "estimates",
        "session_starts",
    )  # fmt: skip
    MODEL_SETTINGS: ClassVar[tuple[str, ...]] = (
        "synthetic_config", "load", "estimates", "correlated", "pcont_a", "pcont_b",
        "day_share", "weekday_share", "shift_max_min", "runtime_scale", "max_batch_width",
        "session_starts", "start_gap_scale", "utility", "utility_levels", "deadline_factor",
        "utility_decay", "deadline_wait_min",
    )  # fmt: skip

    users: _Count = 50
    model: str = "complete"
    synthetic_config: int = 1
    load: Annotated[float, Meta(gt=0, le=MAX_LOAD)] = 0.5
    procs: _Count = 128
    days: _Positive = 182.0
    warmup_days: _NonNegative = WARMUP_DAYS
    profile: str = DEFAULT_PROFILE
    profile_sha256: _Sha256 | None = None
    estimates: str = "exact"
    correlated: bool = False
    pcont_a: Annotated[float, Meta(gt=0, le=1)] = PCONT_A
    pcont_b: _NonNegative = PCONT_B
    day_share: _Fraction = 0.7
    weekday_share: _Fraction = 0.8
    shift_max_min: Annotated[float, Meta(ge=0, le=720)] = 60.0
    runtime_scale: _Positive = 1.0
    max_batch_width: _Count | None = None
    session_starts: str = "after_break"
    start_gap_scale: _Positive = 1.0
    utility: bool = False
    utility_levels: _Count = 4
    deadline_factor: _Positive = 2.0
    utility_decay: Decay | None = None
    deadline_wait_min: _NonNegative | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        factory = is_import_path(self.model)
        if not factory and self.model not in USER_KINDS:
            raise ConfigError(
                f"model must be 'complete', 'static' or 'synthetic', got {self.model!r} (or the "
                "import path of a user factory, module:function)"
            )
        choices = tuple(CONFIGURATIONS)
        config = self.synthetic_config
        if isinstance(config, bool) or config not in choices:
            raise ConfigError(
                f"synthetic_config must be one of {', '.join(map(str, choices))}, got {config!r}"
            )
        self._set("synthetic_config", int(config))
        platform = self.make_platform()
        if platform is not None:  # the machine the user models draw jobs for
            part = platform.partitions[platform.default]
            self._set("procs", int(platform.cores[list(part.nodes)].sum()))
        if self.model == "synthetic" and self.procs < LARGEST:
            raise ConfigError(
                f"procs must be >= {LARGEST} with the synthetic model (its largest jobs need "
                f"{LARGEST} processors), got {self.procs}"
            )
        if not self.warmup_days < self.days:
            raise ConfigError(
                f"warmup_days must be in [0, {self.days:g}) (shorter than the run), "
                f"got {self.warmup_days:g}"
            )
        self._set("profile", _text("profile", str(self.profile)))
        self._set("estimates", str(EstimateModel.parse(_text("estimates", self.estimates))))
        check_pcont(self.pcont_a, self.pcont_b)
        if self.session_starts not in SESSION_STARTS:
            raise ConfigError(
                f"session_starts must be one of {', '.join(SESSION_STARTS)}, "
                f"got {self.session_starts!r}"
            )
        if self.start_gap_scale != 1.0 and self.session_starts != "clocked":
            raise ConfigError(
                f"start_gap_scale applies to session_starts = 'clocked' only, got "
                f"{self.start_gap_scale:g} with {self.session_starts!r}"
            )
        if factory:
            if not callable(load(self.model, "user factory")):
                raise ConfigError(f"user factory {self.model} is not callable")
            self.refuse_model_settings(f"the user factory {self.model}")
        else:
            self.user_model()  # the combination: settings the synthetic model refuses

    def refuse_model_settings(self, what: str) -> None:
        """Refuse a setting of :attr:`MODEL_SETTINGS` set to other than its default: ``what``
        (a user factory) draws its own jobs and would silently ignore it."""
        for f in dataclasses.fields(self):
            if f.name in self.MODEL_SETTINGS and getattr(self, f.name) != f.default:
                raise ConfigError(
                    f"{f.name} is a setting of the built-in user models, not of {what} (it "
                    f"draws its own jobs): leave it at {f.default!r}, got {getattr(self, f.name)!r}"
                )

    def headline(self) -> dict[str, Any]:
        return {"users": self.users}

    def submitted_by(self, workload: dict[str, Any]) -> str:
        if self.model == "synthetic":
            return (
                f"synthetic workload of experiment 5, configuration {self.synthetic_config}, "
                f"offered load {self.load:g}, spread over {self.users} users for "
                f"{self.days:g} days; estimates={self.estimates}"
            )
        settings = ", ".join(
            f"{name}={getattr(self, name)}"
            for name in ("estimates", "correlated", "pcont_a", "pcont_b", "day_share",
                         "weekday_share", "shift_max_min", "runtime_scale", "max_batch_width",
                         "session_starts")
        )  # fmt: skip
        return (
            f"{self.users} {self.model} users for {self.days:g} days, profile "
            f"{self.profile}; {settings}"
        )

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain data, ``mode`` first; a run of another model leaves out the
        :attr:`SYNTHETIC_SETTINGS` at their defaults, and every run the :attr:`LATER_SETTINGS`
        at theirs (:meth:`from_dict` restores them)."""
        data = super().to_dict()
        defaults = {f.name: f.default for f in dataclasses.fields(self)}
        optional = self.LATER_SETTINGS
        if self.model != "synthetic":
            optional += self.SYNTHETIC_SETTINGS
        for name in optional:
            if data[name] == defaults[name]:
                del data[name]
        return data

    def user_model(self) -> UserModel:
        """The user model these settings describe.

        Raises:
            ConfigError: the run's users come from a user factory, not a :class:`UserModel`.
        """
        if self.model not in USER_KINDS:
            raise ConfigError(f"the users of this run come from the user factory {self.model}")
        return UserModel(
            kind=cast(UserKind, self.model),
            pcont_a=self.pcont_a,
            pcont_b=self.pcont_b,
            cycles=CycleShares(
                day=self.day_share,
                weekday=self.weekday_share,
                max_shift_minutes=self.shift_max_min,
            ),
            estimates=EstimateModel.parse(self.estimates),
            correlated=self.correlated,
            runtime_scale=self.runtime_scale,
            max_batch_width=self.max_batch_width,
            session_starts=cast(SessionStarts, self.session_starts),
            start_gap_scale=self.start_gap_scale,
            utility=(
                LeeSnavely(
                    levels=self.utility_levels,
                    factor=self.deadline_factor,
                    decay=self.utility_decay,
                )
                if self.utility
                else None
            ),
            deadline_wait=None if self.deadline_wait_min is None else 60 * self.deadline_wait_min,
            synthetic=SyntheticWorkload(self.synthetic_config, self.load),
        )

    @staticmethod
    def model_settings(model: UserModel) -> dict[str, Any]:
        """The settings of a :class:`UserModel` (the inverse of :meth:`user_model`)."""
        return {
            "model": model.kind,
            "synthetic_config": model.synthetic.configuration,
            "load": model.synthetic.offered_load,
            "pcont_a": model.pcont_a,
            "pcont_b": model.pcont_b,
            "day_share": model.cycles.day,
            "weekday_share": model.cycles.weekday,
            "shift_max_min": model.cycles.max_shift_minutes,
            "estimates": str(model.estimates),
            "correlated": model.correlated,
            "runtime_scale": model.runtime_scale,
            "max_batch_width": model.max_batch_width,
            "session_starts": model.session_starts,
            "start_gap_scale": model.start_gap_scale,
            "utility": model.utility is not None,
            **(
                {
                    "utility_levels": model.utility.levels,
                    "deadline_factor": model.utility.factor,
                    "utility_decay": model.utility.decay,
                }
                if model.utility is not None
                else {}
            ),
            "deadline_wait_min": None if model.deadline_wait is None else model.deadline_wait / 60,
        }


@dataclass(frozen=True, kw_only=True)
class ReplayConfig(RunConfig):
    """An open replay of an SWF trace.

    Attributes:
        trace: the SWF file (``.swf`` or ``.swf.gz``).
        trace_sha256: its sha256 (filled in when the run reads it; a rerun checks it).
        procs: machine size (None: the trace header's MaxProcs, else MaxNodes).
        load: scale inter-arrival times to this offered load, in (0, :attr:`MAX_LOAD`]
            (exclusive with ``scale``); the factor it takes must lie in :attr:`SCALE_RANGE`.
        scale: multiply inter-arrival times by this factor, in :attr:`SCALE_RANGE` (< 1 raises
            the load).
        estimates: ``trace`` (requested times) or ``exact`` (the actual runtimes).
        warmup_days: days after the first submission left out of the metrics.
        feedback: keep the users' dependencies: a dependent job is submitted after the
            simulated end of the job it depends on (:mod:`sitesim.models.feedback`).
        think: how a feedback replay infers dependencies when the trace has no field 17:
            ``last``, ``max`` or ``arrival`` (users.md); only with ``feedback``.
        threshold_min: the session threshold of that inference, minutes; only with
            ``feedback``.
        uncertainty: user uncertainty k in [0, 1]: stated start values drawn around the true
            ones' percentiles (utility.md §5); 0 states the truth.
        wealth_gini: wealth inequity k in [0, 1]: round(k · users) users state values about 0.
        start_job, stop_job: replay only the job lines ``start_job`` (0-based) up to, not
            including, ``stop_job`` (None: to the end).
        utility: give every job a synthetic utility function before the run, drawn from the
            run's seed as ``sitesim utility augment`` would (``lee-snavely``, or a kind of the
            robustness study: ``linear``, ``convex``, ``flat``, ``mix``); None keeps the
            trace's own (extended SWF) functions, if any.
        deadline_factor: the Lee & Snavely deadline factor of those functions.
        utility_decay: their decay type (None: a third each).
    """

    mode: ClassVar[str] = "replay"
    #: The factors inter-arrival times may be scaled by: compressed at most 1000 times (a day of
    #: arrivals then takes 86 s, less than most jobs run) or stretched at most 1000 times
    #: (docs/background/decisions.md#trace-replay).
    SCALE_RANGE: ClassVar[tuple[float, float]] = _SCALES
    #: The highest offered load ``load`` may ask for: beyond it most of the work is still
    #: waiting when the last job arrives, and the metrics measure the backlog's drain.
    MAX_LOAD: ClassVar[float] = _REPLAY_LOAD
    #: Settings of a feedback replay only: without ``feedback`` they keep their defaults.
    FEEDBACK_SETTINGS: ClassVar[tuple[str, ...]] = ("think", "threshold_min")

    OWN_CHECKS = (*RunConfig.OWN_CHECKS, "trace", "estimates", "utility")

    trace: str
    trace_sha256: _Sha256 | None = None
    procs: _Count | None = None
    load: Annotated[float, Meta(gt=0, le=_REPLAY_LOAD)] | None = None
    scale: Annotated[float, Meta(ge=_SCALES[0], le=_SCALES[1])] | None = None
    estimates: Literal["trace", "exact"] = "trace"
    warmup_days: _NonNegative = 0.0
    feedback: bool = False
    think: ThinkDefinition = "last"
    threshold_min: _Positive = 20.0
    uncertainty: _Fraction = 0.0
    wealth_gini: _Fraction = 0.0
    start_job: _Index = 0
    stop_job: _Index | None = None
    utility: str | None = None
    deadline_factor: _Positive = 2.0
    utility_decay: Decay | None = None

    def headline(self) -> dict[str, Any]:
        return {"trace": self.trace}

    def submitted_by(self, workload: dict[str, Any]) -> str:
        return (
            f"open trace replay of {self.trace} (scale factor "
            f"{workload.get('scale_factor', 1.0):.6g}, estimates {self.estimates})"
        )

    def __post_init__(self) -> None:
        super().__post_init__()
        self._set("trace", _text("trace", str(self.trace)))
        platform = self.make_platform()
        if platform is not None:
            self._set("procs", platform.total_cores)
        if self.load is not None and self.scale is not None:
            raise ConfigError("give either load or scale, not both")
        if self.estimates not in ("trace", "exact"):
            raise ConfigError(
                f"estimates of a replay must be 'trace' or 'exact', got {self.estimates!r}"
            )
        for setting in dataclasses.fields(self) if not self.feedback else ():
            value = getattr(self, setting.name)
            if setting.name in self.FEEDBACK_SETTINGS and value != setting.default:
                raise ConfigError(
                    f"{setting.name} applies to feedback replays only (feedback = true), "
                    f"got {setting.name} = {value!r} without feedback"
                )
        if self.stop_job is not None and self.stop_job <= self.start_job:
            raise ConfigError(
                f"stop_job must be a whole number >= {self.start_job + 1} (after start_job), "
                f"got {self.stop_job}"
            )
        if self.utility not in (None, *GENERATORS):
            raise ConfigError(
                f"utility must be one of {', '.join(GENERATORS)} or none, got {self.utility!r}"
            )
