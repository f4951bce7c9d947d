"""Slurm's association tree: accounts with shares under ``root``, users under accounts.

Fairshare (:mod:`sitesim.slurm.fairshare`) reads it: each account holds raw shares among its
siblings, each user raw shares within its account. A user belongs to one account in sitesim
(its default account: a job names no account); a user listed under several accounts needs a
default, as in Slurm (``sacctmgr`` refuses none either).

Three ways to get one:

- :meth:`Associations.flat`: every user its own account with one share (the default; what a
  site without an association file gets). Users not listed in a tree are added this way.
- :meth:`Associations.blocks`: a population of accounts by blocks of users, ``"2x10,8x2"``:
  two accounts of ten users then eight of two, users numbered 1, 2, ... in that order (a few
  heavy accounts and many light ones, each account one share).
- :meth:`Associations.named`: accounts by name, a mapping: ``{"physics": 10, "chemistry":
  4}`` (ten users then four, numbered 1, 2, ... in that order), a list of user ids, or an
  account's table of the TOML file below (``{"shares": 2, "users": 10}``).
- :meth:`Associations.load`: a TOML file::

      [accounts.physics]
      shares = 40            # raw shares among its siblings (default 1)
      parent = "science"     # default "root"
      users = [1, 2, 3]      # users with one share each

      [accounts.science]
      shares = 60

      [users.7]              # a user given shares, or listed in several accounts
      account = "physics"
      shares = 2

  (sacctmgr's own output is read by :mod:`sitesim.slurm.conf`.)
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sitesim.errors import ConfigError

ROOT = "root"


class AssociationError(ConfigError):
    """A bad association tree: the message names the file (or source), the key and why."""


#: One account row: ``(name, parent, raw shares)``; parent None means ``root``.
AccountRow = tuple[str, str | None, float]
#: One user row: ``(user id, account, raw shares, default)``: ``default`` marks the user's
#: default account when it is listed under several.
UserRow = tuple[int, str, float, bool]


@dataclass(frozen=True)
class Associations:
    """An association tree, validated.

    Attributes:
        accounts: account name -> ``(parent, raw shares)``; ``root`` is implied (not listed).
        users: user id -> ``(account, raw shares)``.
    """

    accounts: Mapping[str, tuple[str, float]]
    users: Mapping[int, tuple[str, float]]

    @classmethod
    def build(
        cls, accounts: Iterable[AccountRow], users: Iterable[UserRow], where: str
    ) -> Associations:
        """A tree from rows, checked: no account twice, every parent known, no cycle, shares
        >= 0, every user's account known, a user under several accounts has one default.

        Raises:
            AssociationError: ``where: key: problem``.
        """
        tree: dict[str, tuple[str, float]] = {}
        for name, parent, shares in accounts:
            key = f"account {name}"
            if not name or name == ROOT:
                raise AssociationError(f"{where}: {key}: {ROOT!r} is implied; name accounts")
            if name in tree:
                raise AssociationError(f"{where}: {key}: listed twice")
            tree[name] = (parent or ROOT, _shares(shares, where, key))
        for name, (parent, _) in tree.items():
            seen = [name]
            while parent != ROOT:
                if parent not in tree:
                    raise AssociationError(
                        f"{where}: account {seen[-1]}: parent {parent!r} is no account"
                    )
                if parent in seen:
                    cycle = " -> ".join([*seen[seen.index(parent) :], parent])
                    raise AssociationError(f"{where}: account {name}: a cycle: {cycle}")
                seen.append(parent)
                parent = tree[parent][0]
        rows: dict[int, list[tuple[str, float, bool]]] = {}
        for user, account, shares, default in users:
            key = f"user {user}"
            if isinstance(user, bool) or not isinstance(user, int) or user < 0:
                raise AssociationError(f"{where}: {key}: a user is a whole number >= 0")
            if account not in tree:
                raise AssociationError(f"{where}: {key}: account {account!r} is not defined")
            rows.setdefault(user, []).append((account, _shares(shares, where, key), default))
        members: dict[int, tuple[str, float]] = {}
        for user, choices in rows.items():
            if len(choices) > 1:
                defaults = [c for c in choices if c[2]]
                if len(defaults) != 1:
                    accounts_of = ", ".join(sorted(c[0] for c in choices))
                    raise AssociationError(
                        f"{where}: user {user}: in accounts {accounts_of} with "
                        f"{'no' if not defaults else 'more than one'} default account (sitesim "
                        "charges a user's jobs to its default account)"
                    )
                choices = defaults
            members[user] = choices[0][:2]
        return cls(tree, members)

    @classmethod
    def flat(cls, users: Iterable[int] = ()) -> Associations:
        """Every user its own account (named ``u<id>``) with one share: Slurm's fairshare
        between users with no account structure."""
        accounts = {f"u{user}": (ROOT, 1.0) for user in users}
        return cls(accounts, {user: (f"u{user}", 1.0) for user in users})

    @classmethod
    def blocks(cls, spec: str) -> Associations:
        """Accounts by blocks of users: ``"2x10,8x2"`` is two accounts of ten users, then
        eight of two; accounts ``a1``, ``a2``, ... one share each; users 1, 2, ... in order.

        Raises:
            AssociationError: a spec not of that form.
        """
        accounts: dict[str, tuple[str, float]] = {}
        users: dict[int, tuple[str, float]] = {}
        for part in spec.split(","):
            found = re.fullmatch(r"\s*(\d+)\s*x\s*(\d+)\s*", part)
            if found is None or not int(found[1]) or not int(found[2]):
                raise AssociationError(
                    f"accounts {spec!r}: {part.strip()!r} is not COUNTxUSERS (e.g. 2x10,8x2: "
                    "two accounts of ten users, eight of two; counts >= 1)"
                )
            for _ in range(int(found[1])):
                name = f"a{len(accounts) + 1}"
                accounts[name] = (ROOT, 1.0)
                for _ in range(int(found[2])):
                    users[len(users) + 1] = (name, 1.0)
        return cls(accounts, users)

    @classmethod
    def named(cls, accounts: Mapping[str, Any], where: str = "accounts") -> Associations:
        """Accounts by name: each maps to a number of users (numbered 1, 2, ... in the
        mapping's order, as :meth:`blocks` numbers them), a list of user ids, or an account
        table of the TOML file (``shares``, ``parent``, ``users``: a number or a list).

        Raises:
            AssociationError: ``where: key: problem``.
        """
        tables: dict[str, Any] = {}
        numbered = 0
        for name, value in accounts.items():
            table = dict(value) if isinstance(value, Mapping) else {"users": value}
            users = table.get("users", [])
            if isinstance(users, int) and not isinstance(users, bool):
                if users < 1:
                    raise AssociationError(
                        f"{where}: {name}: a number of users must be >= 1, got {users}"
                    )
                table["users"] = list(range(numbered + 1, numbered + users + 1))
                numbered += users
            elif not isinstance(users, list):
                raise AssociationError(
                    f"{where}: {name}: a number of users, a list of user ids, or a table "
                    f"(shares, parent, users), got {value!r}"
                )
            tables[str(name)] = table
        return cls.from_dict({"accounts": tables}, where)

    @classmethod
    def load(cls, path: str | Path) -> Associations:
        """Read a TOML association file (see the module docstring).

        Raises:
            AssociationError: unreadable, not TOML, or a bad tree (naming the key).
        """
        where = str(path)
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as err:
            raise AssociationError(f"{where}: cannot read: {err.strerror or err}") from None
        except tomllib.TOMLDecodeError as err:
            raise AssociationError(f"{where}: not TOML: {err}") from None
        return cls.from_dict(data, where)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str) -> Associations:
        """A tree from the TOML file's tables (see :meth:`load`)."""
        unknown = sorted(set(data) - {"accounts", "users"})
        if unknown:
            raise AssociationError(f"{where}: {unknown[0]}: unknown key; keys: accounts, users")
        account_rows: list[AccountRow] = []
        user_rows: list[UserRow] = []
        listed: dict[int, Mapping[str, Any]] = {}
        for key, raw in _tables(data, "users", where).items():
            if not key.isdigit():
                raise AssociationError(f"{where}: users.{key}: a user is a whole number >= 0")
            _keys(raw, f"users.{key}", ("account", "shares", "default"), where)
            listed[int(key)] = raw
        for name, table in _tables(data, "accounts", where).items():
            _keys(table, f"accounts.{name}", ("shares", "parent", "users"), where)
            account_rows.append((name, table.get("parent"), table.get("shares", 1)))
            members = table.get("users", [])
            if not isinstance(members, list):
                raise AssociationError(f"{where}: accounts.{name}.users: a list of user ids")
            for user in members:
                extra = listed.get(user, {}) if isinstance(user, int) else {}
                default = extra.get("default") == name
                user_rows.append((user, name, extra.get("shares", 1), default))
        for user, table in listed.items():
            account = table.get("account")
            if account is not None:
                default = table.get("default", account) == account
                user_rows.append((user, account, table.get("shares", 1), default))
        return cls.build(account_rows, user_rows, where)

    def with_users(self, users: Iterable[int]) -> Associations:
        """This tree with every user of ``users`` not in it added as its own account (named
        as :meth:`account_of` says) under root with one share."""
        missing = [user for user in users if user not in self.users]
        if not missing:
            return self
        accounts = dict(self.accounts)
        members = dict(self.users)
        for user in missing:
            name = own_account(user, accounts)
            accounts[name] = (ROOT, 1.0)
            members[user] = (name, 1.0)
        return Associations(accounts, members)

    def account_of(self, user: int) -> str:
        """The account a user's jobs are charged to (if not listed, its own: ``u<id>``, with
        ``_`` appended while the tree already has an account of that name)."""
        found = self.users.get(user)
        return found[0] if found is not None else own_account(user, self.accounts)


def own_account(user: int, accounts: Mapping[str, Any]) -> str:
    """The name of the account of its own a user not in a tree gets: ``u<id>``, with ``_``
    appended while ``accounts`` already has one of that name."""
    name = f"u{user}"
    while name in accounts:
        name += "_"
    return name


def _shares(value: Any, where: str, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value >= 0:
        raise AssociationError(f"{where}: {key}: shares must be a number >= 0, got {value!r}")
    return float(value)


def _tables(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    tables = data.get(key, {})
    if not isinstance(tables, Mapping) or not all(isinstance(t, Mapping) for t in tables.values()):
        raise AssociationError(f"{where}: {key}: must be tables [{key}.NAME]")
    return tables


def _keys(table: Mapping[str, Any], key: str, allowed: tuple[str, ...], where: str) -> None:
    for name in table:
        if name not in allowed:
            raise AssociationError(
                f"{where}: {key}.{name}: unknown key; the keys here are {', '.join(allowed)}"
            )
