"""Configuration tables checked against declarative schemas, with sitesim's one-line errors.

A schema is a :class:`Table` (a `msgspec <https://jcristharif.com/msgspec/>`_ Struct that
refuses unknown keys) whose fields carry their types and ranges as annotations
(``count: Annotated[int, Meta(ge=1)]``); :func:`read` converts a mapping (a TOML file's
tables, a dict, keyword arguments) into it. A value of another type or out of range, an
unknown key or a missing one is one line, ``where: key: problem``, naming the allowed values,
which are rendered from the schema itself (a field's ``Meta(description=...)`` says them in
words where the types cannot: ``"be a time limit > 0"``). :func:`check_settings` checks the
fields of a frozen dataclass (a run configuration) against their annotations in one
conversion, :func:`check_value` one value, with messages ``name must be ALLOWED, got VALUE``.

The rules between fields (a partition that names a node type defined above it, a warm-up
shorter than the run) stay in code, after the conversion, raising :func:`problem`.
"""

from __future__ import annotations

import math
import re
import sys
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar

import msgspec
from msgspec import inspect

from sitesim.errors import ConfigError

#: The largest finite float: ``Meta(le=FINITE)`` refuses inf (msgspec takes no infinite bound).
FINITE = sys.float_info.max

T = TypeVar("T")
E = TypeVar("E", bound=ConfigError)


class Table(msgspec.Struct, forbid_unknown_fields=True):
    """A table of a configuration file: its fields are its keys, in the order the errors list
    them."""


def read(
    data: Any, schema: type[T], where: str, error: type[ConfigError] = ConfigError, key: str = ""
) -> T:
    """``data`` converted into ``schema``, every value checked (a bool is not a number; a
    whole number is a number).

    Args:
        data: a mapping of plain values (what ``tomllib`` or ``json`` give).
        schema: a :class:`Table` subclass.
        where: the file (or source) the errors name first.
        error: the exception to raise, a :class:`ConfigError`.
        key: the key of ``data`` in its file (``downtime``), for the errors.

    Raises:
        ConfigError: (``error``) ``where: key: problem`` with the allowed values.
    """
    try:
        return msgspec.convert(data, schema, strict=True)
    except msgspec.ValidationError as err:
        found, says = _explain(str(err), data, inspect.type_info(schema))
        raise problem(where, _join(key, found), says, error) from None


def problem(where: str, key: str, says: str, error: type[E]) -> E:
    """The error ``where: key: says`` (``where: says`` without a key)."""
    return error(f"{where}: {key}: {says}" if key else f"{where}: {says}")


def settings_schema(name: str, annotations: Mapping[str, Any]) -> type[Table]:
    """A :class:`Table` of the settings ``annotations`` names (:func:`check_settings`)."""
    return typing.cast(
        type[Table], msgspec.defstruct(name, list(annotations.items()), bases=(Table,))
    )


def check_settings(values: Mapping[str, Any], schema: type[Table]) -> dict[str, Any]:
    """``values`` checked against ``schema`` (:func:`settings_schema`) in one conversion: the
    values as its types hold them (``3`` -> ``3.0`` for a float).

    Raises:
        ConfigError: as :func:`check_value`, for the first bad value.
    """
    try:
        table = msgspec.convert(values, schema, strict=True)
        return {name: getattr(table, name) for name in values}
    except msgspec.ValidationError:  # (which, and why; or a whole float for a whole number)
        hints = typing.get_type_hints(schema, include_extras=True)
        return {name: check_value(name, value, hints[name]) for name, value in values.items()}


def check_value(name: str, value: Any, annotation: Any) -> Any:
    """``value`` checked against ``annotation`` (``Annotated[float, Meta(ge=0, le=1)]``), a
    whole float taken for a whole number; the value as the type holds it (``3`` -> ``3.0``
    for a float).

    Raises:
        ConfigError: ``name must be ALLOWED, got VALUE`` (the allowed values from the
            annotation).
    """
    try:
        return msgspec.convert(value, annotation, strict=True)
    except msgspec.ValidationError:
        info = inspect.type_info(annotation)
        plain = _plain(info)
        if isinstance(plain, inspect.IntType) and isinstance(value, float) and value.is_integer():
            return check_value(name, int(value), annotation)
        if isinstance(plain, inspect.FloatType):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigError(f"{name} must be a number, got {value!r}") from None
            value = float(value)  # (as the float it was taken for)
        choices = _choices(annotation)
        if choices:  # (none: an optional setting left unset)
            none = " or none" if isinstance(info, inspect.UnionType) else ""
            listed = ", ".join(map(str, choices))
            raise ConfigError(f"{name} must be one of {listed}{none}, got {value!r}") from None
        raise ConfigError(f"{name} {_must(info, value)}") from None


# -- the messages --------------------------------------------------------------------------------
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _explain(message: str, data: Any, info: inspect.Type) -> tuple[str, str]:
    """The key and the problem of msgspec's ``message`` (``Expected `int` >= 1 - at
    `$.nodes[0].count```), told from the schema ``info`` and the value in ``data``."""
    text, _, at = message.partition(" - at `")
    at = at.removesuffix("`")
    steps = [(m[1], int(m[2]) if m[2] and m[2] != "..." else m[2]) for m in _STEP.finditer(at)]
    path: list[str | int] = [name if name else index for name, index in steps]
    value, kind, key, hint = data, info, "", None
    for step in path:
        inner = _plain(kind)
        listed = _child(inner, step) if isinstance(step, int) else None
        if listed is not None and _is_scalar(_plain(listed)):
            break  # (a bad item of a list of values: the list is named, with what it holds)
        kind = _child(inner, step)
        value = _lookup(value, step)
        key = f"{key}[{step}]" if isinstance(step, int) else _join(key, str(step))
        if isinstance(inner, inspect.StructType):  # (its annotation: a choice's own order)
            hint = typing.get_type_hints(inner.cls, include_extras=True).get(str(step))
    field = re.match(r"Object (contains unknown|missing required) field `(.*)`$", text)
    if field is not None:
        struct = _plain(kind)
        assert isinstance(struct, inspect.StructType)
        keys = ", ".join(f.encode_name for f in struct.fields)
        if field[1] == "contains unknown":
            return _join(key, field[2]), f"unknown key; the keys here are {keys}"
        needed = next(f for f in struct.fields if f.encode_name == field[2])
        return _join(key, field[2]), f"missing; must {_allowed(needed.type)}"
    return key, _must(kind, value, hint)


def _must(kind: inspect.Type, value: Any, hint: Any = None) -> str:
    """``must be ALLOWED, got VALUE``, or for a choice ``VALUE is not one of A, B`` (in the
    order of its annotation ``hint``, if given)."""
    plain = _plain(kind)
    if isinstance(plain, inspect.LiteralType) and isinstance(value, str):
        return f"{value!r} is not one of {', '.join(map(str, _choices(hint) or plain.values))}"
    if isinstance(plain, inspect.IntType) and plain.ge is not None and plain.le is not None:
        if type(value) is int and value > plain.le:  # (an upper bound refuses absurd sizes)
            return f"{value:,} is absurd; at most {plain.le:,}"
        return f"must be a whole number >= {plain.ge}, got {value!r}"
    return f"must {_allowed(kind)}, got {value!r}"


def _choices(hint: Any) -> tuple[Any, ...]:
    """The values of the Literal in annotation ``hint``, in their order (msgspec sorts them)."""
    if typing.get_origin(hint) is Literal:
        return typing.get_args(hint)
    for inner in typing.get_args(hint):
        found = _choices(inner)
        if found:
            return found
    return ()


def _allowed(kind: inspect.Type) -> str:
    """What ``kind`` allows, as a predicate: ``be a whole number >= 1``."""
    if isinstance(kind, inspect.Metadata):
        described = (kind.extra_json_schema or {}).get("description")
        return str(described) if described else _allowed(kind.type)
    if isinstance(kind, inspect.UnionType):
        others = [t for t in kind.types if not isinstance(t, inspect.NoneType)]
        return " or ".join(_allowed(t) for t in others)
    if isinstance(kind, inspect.IntType):
        return f"be a whole number {_bounds(kind, whole=True)}".rstrip()
    if isinstance(kind, inspect.FloatType):
        return f"be {_bounds(kind, whole=False)}"
    if isinstance(kind, inspect.BoolType):
        return "be true or false"
    if isinstance(kind, inspect.StrType):
        return "be a non-empty string" if kind.min_length else "be text"
    if isinstance(kind, inspect.LiteralType):
        return f"be one of {', '.join(map(str, kind.values))}"
    if isinstance(kind, inspect.ListType | inspect.StructType | inspect.DictType):
        return "be a list" if isinstance(kind, inspect.ListType) else "be a table"
    return "be another value"


def _bounds(kind: inspect.IntType | inspect.FloatType, whole: bool) -> str:
    """``>= 1`` (a whole number), ``in [0, 1]``, ``in (0, inf)``."""
    low = kind.ge if kind.ge is not None else kind.gt
    high = kind.le if kind.le is not None else kind.lt
    if whole:  # (an upper bound refuses absurd sizes: said when a value passes it)
        return f">= {low}" if kind.ge is not None else f"> {low}" if low is not None else ""
    left = "[" if kind.ge is not None else "("
    right = "]" if kind.le is not None and kind.le < FINITE else ")"
    shown = "inf" if high is None or high >= FINITE else _number(high)
    return f"in {left}{_number(low) if low is not None else '-inf'}, {shown}{right}"


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _plain(kind: inspect.Type) -> inspect.Type:
    """``kind`` without its metadata, and without None if it may be None."""
    while True:
        if isinstance(kind, inspect.Metadata):
            kind = kind.type
            continue
        if isinstance(kind, inspect.UnionType):
            others = [t for t in kind.types if not isinstance(t, inspect.NoneType)]
            if len(others) == 1:
                kind = others[0]
                continue
        return kind


def _is_scalar(kind: inspect.Type) -> bool:
    return not isinstance(kind, inspect.ListType | inspect.StructType | inspect.DictType)


def _child(kind: inspect.Type, step: str | int) -> inspect.Type:
    """The type of field or item ``step`` of ``kind``."""
    if isinstance(kind, inspect.StructType):
        return next((f.type for f in kind.fields if f.encode_name == step), inspect.AnyType())
    if isinstance(kind, inspect.ListType):
        return kind.item_type
    if isinstance(kind, inspect.DictType):
        return kind.value_type
    if isinstance(kind, inspect.UnionType):  # (the member of that shape)
        for member in kind.types:
            wanted = inspect.ListType if isinstance(step, int) else inspect.StructType
            if isinstance(_plain(member), wanted):
                return _child(_plain(member), step)
    return inspect.AnyType()


def _lookup(value: Any, step: str | int) -> Any:
    if isinstance(step, int) and isinstance(value, list) and step < len(value):
        return value[step]
    if isinstance(value, Mapping):
        return value.get(step, math.nan) if step != "..." else value
    return value


def _join(key: str, name: str) -> str:
    return f"{key}.{name}" if key else name
