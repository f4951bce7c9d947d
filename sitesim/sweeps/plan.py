"""Planning a sweep: factors × seeds → the runs, each with its folder name and configuration;
sweep files.

A factor is any :class:`~sitesim.runs.config.RunConfig` setting or scheduler parameter, with a list
of levels. The ``scheduler`` factor takes names (registered, or the import path of a class of
one's own) and scheduler objects; the ``model`` factor of site-level runs takes the built-in
kinds and user factories (functions, or their import paths). A level a configuration can name
becomes part of each run's configuration; an object that it cannot (a scheduler object that is
not registered, a function no import path names) travels with the run beside it.
"""

from __future__ import annotations

import itertools
import math
import os
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitesim.errors import ConfigError, SitesimError
from sitesim.import_paths import is_import_path, path_of
from sitesim.models.users import UserModel
from sitesim.output import file_name
from sitesim.platform.description import Platform
from sitesim.runs.budget import check_plan
from sitesim.runs.config import RunConfig, SiteConfig, takes_parameters
from sitesim.runs.platforms import BUILTIN_PLATFORMS
from sitesim.schedulers import REGISTRY, Scheduler, parameters, registered
from sitesim.workload.profile import BUILTIN_PROFILES

#: Settings that name a file: relative paths in a sweep file are relative to its folder.
FILE_SETTINGS = ("profile", "trace", "platform")
#: The names of shipped files each of them takes instead of a path.
SHIPPED_FILES: dict[str, Collection[str]] = {
    "profile": BUILTIN_PROFILES,
    "trace": (),
    "platform": BUILTIN_PLATFORMS,
}
#: The keys of a sweep file.
FILE_KEYS = ("base", "factors", "seeds", "baseline", "out")
#: The most runs a sweep plans unless told more (:meth:`SweepPlan.check_size`; ``sitesim sweep
#: --max-runs``): a bigger plan is more likely a slip (a million seeds for a thousand) than a
#: study, and planning alone would take minutes.
MAX_RUNS = 10_000
#: A user factory: ``factory(uid, profile, procs, seed)`` returns user ``uid``.
UserFactory = Callable[..., Any]


@dataclass(frozen=True)
class PlannedRun:
    """One run of a sweep: its folder name, the factor levels it takes, its seed, its
    configuration. A factor that does not apply to the run's scheduler (``alpha`` for EASY)
    is left out of ``factors``.

    Attributes:
        name: the run's folder name.
        factors: the levels it takes, as text where the level is an object (a scheduler
            object's label, a user factory's import path or name).
        seed: its root seed.
        config: its configuration: every setting a configuration can describe.
        scheduler: a scheduler object to run (a fresh copy of it) instead of the one the
            configuration names; None when the configuration names it.
        users: a user factory to draw the users instead of the configuration's model.
    """

    name: str
    factors: dict[str, Any]
    seed: int
    config: RunConfig
    scheduler: Scheduler | None = None
    users: UserFactory | None = None

    @property
    def custom(self) -> dict[str, Any] | None:
        """What a run with pieces its configuration cannot describe is, as plain data (what a
        resumed sweep compares), or None when its configuration describes it."""
        described = self.users is None and (self.scheduler is None or registered(self.scheduler))
        if described:
            return None
        overridden = set() if self.users is None else set(SiteConfig.MODEL_SETTINGS) | {"model"}
        if self.scheduler is not None and not registered(self.scheduler):
            overridden |= {"scheduler", "scheduler_params"}
        settings = {k: v for k, v in self.config.to_dict().items() if k not in overridden}
        custom: dict[str, Any] = {"settings": settings}
        if self.scheduler is not None:
            kind = type(self.scheduler)
            custom["scheduler"] = f"{kind.__module__}:{kind.__qualname__}"
            custom["scheduler_params"] = self.scheduler.params()
        if self.users is not None:
            custom["users"] = _function_name(self.users)
        return custom


@dataclass(frozen=True)
class SweepPlan:
    """A base configuration, factors with their levels, and the seeds to replicate with.

    Attributes:
        base: the settings every run shares.
        factors: setting name -> levels, in order (the grid is their product).
        seeds: root seeds; every combination runs once per seed.
        baseline: the scheduler competitive ratios are measured against (utility.md §3), a
            level of the ``scheduler`` factor; None computes none.
        out: the output folder a sweep file names (None: none named).
    """

    base: RunConfig
    factors: dict[str, list[Any]] = field(default_factory=dict)
    seeds: tuple[int, ...] = (1,)
    baseline: str | None = "EASY"
    out: Path | None = None

    def __post_init__(self) -> None:
        if not self.seeds or any(not isinstance(s, int) or s < 0 for s in self.seeds):
            raise ConfigError(f"seeds must be whole numbers >= 0, got {list(self.seeds)!r}")
        if len(set(self.seeds)) != len(self.seeds):
            raise ConfigError(f"seeds must differ, got {list(self.seeds)!r}")
        if "seed" in self.factors:
            raise ConfigError("give replications as seeds, not as a factor 'seed'")
        if self.baseline is not None and (not isinstance(self.baseline, str) or not self.baseline):
            raise ConfigError(f"baseline must be a scheduler name or none, got {self.baseline!r}")
        if self.out is not None:
            object.__setattr__(self, "out", Path(self.out))
        settings = set(self.base.settings())
        takes = self.scheduler_parameters()
        for name, levels in self.factors.items():
            if name not in settings and name not in takes:
                raise ConfigError(
                    f"factor {name!r} is not a setting of a {self.base.mode} run "
                    f"({', '.join(sorted(settings))}) nor a scheduler parameter"
                )
            if not isinstance(levels, list) or not levels:
                raise ConfigError(f"factor {name!r} needs a list of levels, got {levels!r}")
            _check_distinct(name, levels)

    def scheduler_parameters(self) -> set[str]:
        """The parameters of every registered scheduler and of those the plan names."""
        named = [self.base.scheduler, *self.factors.get("scheduler", ())]
        # (a path that cannot be imported says why here; an unknown name, in its run)
        takes = (parameters(n) if is_import_path(n) else takes_parameters(n) for n in named)
        return set().union(*(parameters(name) for name in REGISTRY), *takes)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, max_runs: int = MAX_RUNS) -> SweepPlan:
        """A plan from a TOML sweep file, with the output folder it names (:attr:`out`).

        The file has a ``[base]`` table of settings (``mode = "replay"`` for replays), a
        ``[factors]`` table of lists (at least one), ``seeds`` (a count n for seeds 1..n, or a
        list), optionally ``baseline`` (a scheduler name, or false for no competitive ratios)
        and ``out`` (the output folder). Files named in it are relative to its folder. A count
        of seeds that makes more than ``max_runs`` runs is refused before the seeds are listed.
        """
        where = os.fspath(path)
        try:
            data = tomllib.loads(Path(where).read_text())
        except OSError as err:
            raise SitesimError(f"{where}: cannot read: {err.strerror or err}") from None
        except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
            raise ConfigError(f"{where}: not a valid TOML sweep file: {err}") from None
        if not data:
            raise ConfigError(
                f"{where}: the sweep file is empty; it needs a [factors] table of levels "
                "(and [base] settings, seeds): see sitesim sweep --help"
            )
        unknown = sorted(set(data) - set(FILE_KEYS))
        if unknown:
            raise ConfigError(
                f"{where}: unknown key {', '.join(unknown)} (a sweep file has "
                f"{', '.join(FILE_KEYS[:-1])} and {FILE_KEYS[-1]})"
            )
        folder = Path(where).parent
        base = _relative_to(dict(_table(data, "base", where)), folder)
        try:
            config = RunConfig.from_dict(base, "base")
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
        factors = {
            name: [_relative_to({name: v}, folder)[name] for v in levels]
            if isinstance(levels, list)
            else levels
            for name, levels in _table(data, "factors", where).items()
        }
        seeds = data.get("seeds", 1)
        if isinstance(seeds, int) and not isinstance(seeds, bool):
            if seeds < 1:
                raise ConfigError(f"{where}: seeds must be a count >= 1 or a list, got {seeds}")
            levels = (len(v) for v in factors.values() if isinstance(v, list))
            try:
                _check_size(math.prod(levels), seeds, max_runs)
            except ConfigError as err:
                raise ConfigError(f"{where}: {err}") from None
            seeds = list(range(1, seeds + 1))
        if not isinstance(seeds, list):
            raise ConfigError(f"{where}: seeds must be a count >= 1 or a list, got {seeds!r}")
        if not factors:
            raise ConfigError(
                f"{where}: [factors] is empty or missing: give at least one setting with a list "
                "of levels (users = [10, 20]); to replicate one configuration, give it one level"
            )
        baseline = data.get("baseline", "EASY")
        out = data.get("out")
        try:
            return cls(
                config,
                factors,
                tuple(seeds),
                baseline=None if baseline is False else baseline,
                out=None if out is None else folder / str(out),
            )
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None

    def runs(self) -> list[PlannedRun]:
        """Every run, in order: the product of the factor levels (first factor outermost),
        then the seeds. Runs that differ only in factors that do not apply are one run."""
        runs: dict[str, PlannedRun] = {}
        names = list(self.factors)
        for levels in itertools.product(*(self.factors[name] for name in names)):
            combination = dict(zip(names, levels, strict=True))
            changes, labels, scheduler, users = self._settings_of(combination)
            first: RunConfig | None = None  # (built and checked once; the seeds copy it)
            for seed in self.seeds:
                name = run_name(labels, seed)
                if name in runs:
                    known = runs[name]
                    same = known.scheduler is scheduler and known.users is users
                    if known.factors != labels or not same:
                        raise ConfigError(f"two runs of the sweep would share the folder {name}")
                    continue
                if first is None:
                    try:
                        config = first = self.base.replace(**changes, seed=seed)
                        if users is not None and isinstance(config, SiteConfig):
                            config.refuse_model_settings(
                                f"the user factory {_function_name(users)}"
                            )
                    except ConfigError as err:
                        raise ConfigError(f"run {name}: {err}") from None
                else:
                    config = first.with_seed(seed)
                runs[name] = PlannedRun(name, labels, seed, config, scheduler, users)
        return list(runs.values())

    @property
    def size(self) -> int:
        """The runs of the grid: the product of the factors' numbers of levels, times the
        seeds, counted without expanding the plan (:meth:`runs` may give fewer: runs that
        differ only in a factor that does not apply are one)."""
        return math.prod(len(levels) for levels in self.factors.values()) * len(self.seeds)

    def check_size(self, max_runs: int = MAX_RUNS) -> None:
        """Refuse a plan of more than ``max_runs`` runs (:attr:`size`), or of more than the
        memory could plan, before it is expanded.

        Raises:
            ConfigError: naming the number of runs and the limit.
        """
        _check_size(self.size // len(self.seeds), len(self.seeds), max_runs)

    def _settings_of(
        self, combination: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any], Scheduler | None, UserFactory | None]:
        """What a combination of levels makes of a run: the settings it changes, its levels
        as text (left out where they do not apply), its scheduler object and user factory."""
        settings = set(self.base.settings())
        scheduler = combination.get("scheduler", self.base.scheduler)
        obj = scheduler if isinstance(scheduler, Scheduler) else None
        takes = set() if obj is not None else takes_parameters(scheduler)
        changes = {
            name: level for name, level in combination.items() if name in settings or name in takes
        }
        labels = dict(changes)
        if obj is not None:
            labels["scheduler"] = obj.label
            del changes["scheduler"]
            if registered(obj):
                changes.update(scheduler=obj.name, scheduler_params=obj.params())
        users = changes.get("model")
        if isinstance(users, UserModel):
            raise ConfigError(
                "a UserModel cannot be a level of the factor model: give its settings as "
                "factors (estimates, pcont_a, ...), or a user factory"
            )
        if callable(users):
            labels["model"] = path_of(users) or _function_name(users)
            if path_of(users) is not None:
                changes["model"] = path_of(users)  # named: the configuration describes it
            else:
                del changes["model"]
                return changes, labels, obj, users
        return changes, labels, obj, None


def _check_size(combinations: int, seeds: int, max_runs: int) -> None:
    """Refuse ``combinations`` of factor levels x ``seeds`` runs when more than ``max_runs``,
    or more than the memory could plan (:func:`sitesim.runs.budget.check_plan`)."""
    if combinations * seeds > max_runs:
        raise ConfigError(
            f"the sweep plans {combinations * seeds:,} runs (factor levels x seeds: "
            f"{combinations:,} x {seeds:,}), more than the limit of {max_runs:,}; if you mean "
            "it, raise the limit (sitesim sweep --max-runs N; max_runs=N in Python)"
        )
    check_plan(combinations * seeds)


def _function_name(function: Any) -> str:
    return path_of(function) or getattr(function, "__qualname__", None) or repr(function)


def _check_distinct(name: str, levels: list[Any]) -> None:
    """Refuse a level given twice (a scheduler name in two cases counts as the same)."""
    seen: dict[Any, Any] = {}
    for level in levels:
        key = level
        if isinstance(level, str) and name == "scheduler" and level.upper() in REGISTRY:
            key = level.upper()
        elif isinstance(level, list):
            key = ("list", *level)
        try:
            hash(key)
        except TypeError:
            key = ("object", id(level))
        if key in seen:
            same = "" if repr(seen[key]) == repr(level) else f" (the same as {seen[key]!r})"
            raise ConfigError(f"factor {name!r} has the level {level!r} twice{same}")
        seen[key] = level


def _table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    table = data.get(key, {})
    if not isinstance(table, Mapping):
        raise ConfigError(f"{where}: [{key}] must be a table, got {table!r}")
    return table


def _relative_to(settings: dict[str, Any], folder: Path) -> dict[str, Any]:
    """Settings with file paths made relative to ``folder`` (the sweep file's)."""
    for key in FILE_SETTINGS:
        value = settings.get(key)
        if (
            isinstance(value, str)
            and value not in SHIPPED_FILES[key]
            and not Path(value).is_absolute()
        ):
            settings[key] = os.path.normpath(folder / value)
    return settings


def run_name(factors: Mapping[str, Any], seed: int) -> str:
    """The folder name of a run: ``name=level`` pairs, then the seed (``users=20,seed=3``)."""
    parts = [f"{name}={level_label(name, level)}" for name, level in factors.items()]
    return ",".join([*parts, f"seed={seed}"])


def level_label(name: str, level: Any) -> str:
    """A level of factor ``name`` as the run folders name it (``bf_resolution=1``: ``1``; a
    file by its name; SLURM's accounts as ``physics.4+chemistry.2``): one text per level."""
    if isinstance(level, Platform):
        level = level.name or "platform"
    elif isinstance(level, Mapping) and name == "platform":  # (its tables: by their name)
        level = level.get("name") or "platform"
    elif isinstance(level, Mapping):  # (SLURM's accounts by name: physics:4+chemistry:2)
        level = "+".join(f"{key}:{level_label(name, value)}" for key, value in level.items())
    if name in FILE_SETTINGS:
        level = Path(str(level)).name
    if isinstance(level, float) and level.is_integer():
        level = int(level)
    text = str(level) if not isinstance(level, list | tuple) else "-".join(map(str, level))
    return file_name(text)
