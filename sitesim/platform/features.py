"""A job's node constraint: the features its nodes must have (Slurm's ``--constraint``).

Nodes have features (``Feature=`` on a ``NodeName`` line of ``slurm.conf``, ``features`` of a
platform file's node type); a job's constraint, as ``sacct`` prints it in ``Constraints``,
names the features its nodes must have: ``a100``, ``a100&bigmem`` (both), ``a100|v100``
(either), parentheses to group, and ``[a100|v100]`` (Slurm's *matching OR*: every node of the
job the same one), read here as a plain OR: sitesim lets a job's nodes differ. Feature counts
(``a100*2``) are refused.

:func:`parse_constraint` reads the text; :func:`constraint_mask` gives the nodes of a platform
that satisfy it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from sitesim.platform.description import Platform

#: A parsed constraint: a feature name, or ``("&" | "|", [parts])``.
Constraint = str | tuple[str, list["Constraint"]]

_TOKEN = re.compile(r"\s*(?:([A-Za-z0-9_.:\-]+)|([&|()\[\]])|(\S))")
#: The characters of a feature name.
FEATURE_CHARS = "letters, digits, _ . : -"


def parse_constraint(text: str) -> Constraint:
    """The constraint ``text`` writes (see the module docstring).

    Raises:
        ValueError: not a constraint sitesim reads, saying why.
    """
    tokens: list[str] = []
    for match in _TOKEN.finditer(text.strip()):
        name, op, other = match.groups()
        if other is not None:
            if other == "*":
                raise ValueError(f"{text!r}: feature counts (a100*2) are not modelled")
            raise ValueError(
                f"{text!r}: {other!r} is not in a constraint (features: {FEATURE_CHARS}; "
                "operators & | ( ) [ ])"
            )
        tokens.append(name or op)
    if not tokens:
        raise ValueError("an empty constraint")
    parser = _Parser(tokens, text)
    found = parser.alternatives()
    if parser.at < len(tokens):
        raise ValueError(f"{text!r}: unexpected {tokens[parser.at]!r}")
    return found


class _Parser:
    """Recursive descent: alternatives := all ('|' all)*; all := one ('&' one)*; one :=
    NAME | '(' alternatives ')' | '[' alternatives ']'."""

    def __init__(self, tokens: list[str], text: str) -> None:
        self.tokens, self.text, self.at = tokens, text, 0

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def alternatives(self) -> Constraint:
        parts = [self.every()]
        while self._peek() == "|":
            self.at += 1
            parts.append(self.every())
        return parts[0] if len(parts) == 1 else ("|", parts)

    def every(self) -> Constraint:
        parts = [self.one()]
        while self._peek() == "&":
            self.at += 1
            parts.append(self.one())
        return parts[0] if len(parts) == 1 else ("&", parts)

    def one(self) -> Constraint:
        token = self._peek()
        if token is None:
            raise ValueError(f"{self.text!r}: ends where a feature is expected")
        self.at += 1
        if token in ("(", "["):
            inside = self.alternatives()
            close = ")" if token == "(" else "]"
            if self._peek() != close:
                raise ValueError(f"{self.text!r}: {token!r} is not closed")
            self.at += 1
            return inside
        if token in "&|)]":
            raise ValueError(f"{self.text!r}: {token!r} where a feature is expected")
        return token


def constraint_features(constraint: Constraint) -> list[str]:
    """The features a constraint names, in order, each once."""
    if isinstance(constraint, str):
        return [constraint]
    found: dict[str, None] = {}
    for part in constraint[1]:
        found.update(dict.fromkeys(constraint_features(part)))
    return list(found)


def constraint_mask(constraint: Constraint, platform: Platform) -> np.ndarray:
    """A mask over the platform's nodes: True on those that satisfy ``constraint``."""
    if isinstance(constraint, str):
        return platform.with_feature(constraint)
    op, parts = constraint
    masks = [constraint_mask(part, platform) for part in parts]
    combine = np.logical_and if op == "&" else np.logical_or
    out = masks[0]
    for mask in masks[1:]:
        out = combine(out, mask)
    return out


def unknown_features(text: str, platform: Platform) -> list[str]:
    """The features constraint ``text`` names that no node of ``platform`` has.

    Raises:
        ValueError: ``text`` is not a constraint (:func:`parse_constraint`).
    """
    known = set(platform.features)
    return [f for f in constraint_features(parse_constraint(text)) if f not in known]
