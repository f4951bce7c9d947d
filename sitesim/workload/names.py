"""Names numbered in a stable order: users, accounts, partitions, queues.

SWF holds numbers, not names. A conversion numbers each kind of name 1, 2, 3, ... in the order
of its first job (jobs in submit order, ties by the log's own order), so the same log always
gives the same numbers, and nothing in the SWF file names a person. Partition and queue names
are not personal: the SWF header lists them (``; Partition: 1 normal``). Users and accounts
are written only to the mapping file, and only when one is asked for; :class:`UserNumbers`
reads its users back (to number a ``sacctmgr`` listing's users as the trace's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sitesim.errors import ConfigError
from sitesim.output import to_json

#: Names that mean "not known": numbered -1, as SWF's unknown.
UNKNOWN_NAMES = ("", "(null)", "None", "Unknown")


def number_names(names: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Each name's number (1 for the first name met, 2 for the next new one, ...; -1 for an
    unknown name), and the names in number order.

    Args:
        names: an array of strings, in job order.
    """
    distinct, inverse = np.unique(names, return_inverse=True)
    return number_codes(inverse.reshape(-1), [str(name) for name in distinct.tolist()])


def number_codes(codes: np.ndarray, distinct: list[str]) -> tuple[np.ndarray, list[str]]:
    """:func:`number_names` of names given as codes into ``distinct`` (``distinct[codes]``)."""
    if not len(codes):
        return np.empty(0, dtype=np.int64), []
    used, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    unknown = np.isin(np.array([distinct[c] for c in used.tolist()], dtype=object),
                      UNKNOWN_NAMES)  # fmt: skip
    order = np.argsort(np.where(unknown, len(codes), first), kind="stable")
    rank = np.empty(len(used), dtype=np.int64)
    rank[order] = np.arange(1, len(used) + 1)
    rank[unknown] = -1
    known = [distinct[int(used[k])] for k in order if not unknown[k]]
    return rank[inverse.reshape(-1)], known


def header_lines(kind: str, names: list[str]) -> list[str]:
    """SWF header lines naming the numbers of one kind: ``; Partition: 1 normal``."""
    return [f"; {kind}: {number} {name}" for number, name in enumerate(names, start=1)]


def mapping_json(maps: dict[str, list[str]]) -> str:
    """The mapping file: for each kind, name -> number (JSON)."""
    return to_json(
        {kind: {name: k for k, name in enumerate(names, start=1)} for kind, names in maps.items()}
    )


@dataclass(frozen=True)
class UserNumbers:
    """The numbers a conversion gave a log's users: the ``users`` table of its mapping file.

    Attributes:
        where: the mapping file (for messages).
        numbers: user name -> number (the trace's user field).
    """

    where: str
    numbers: dict[str, int]

    @classmethod
    def load(cls, path: str | Path) -> UserNumbers:
        """Read the ``users`` of a mapping file (``sitesim convert --mapping``).

        Raises:
            ConfigError: unreadable, not JSON, no ``users`` table of names to distinct whole
                numbers >= 1: ``file: problem``.
        """
        where = str(path)
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as err:
            raise ConfigError(f"{where}: cannot read: {err.strerror or err}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ConfigError(f"{where}: not a mapping file (JSON): {err}") from None
        users = data.get("users") if isinstance(data, dict) else None
        if not isinstance(users, dict) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 1 for n in users.values()
        ):
            raise ConfigError(
                f"{where}: users: no table of user name -> number (the mapping file that "
                "sitesim convert --mapping writes of a sacct or PBS log)"
            )
        if len(set(users.values())) != len(users):
            raise ConfigError(f"{where}: users: two names have one number")
        return cls(where, dict(users))
