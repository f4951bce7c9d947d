"""The schemas of configuration tables (sitesim.schema): msgspec's errors as sitesim's one line,
``where: key: problem`` with the allowed values taken from the schema."""

from __future__ import annotations

from typing import Annotated, Literal

import pytest
from msgspec import Meta

from sitesim.errors import ConfigError
from sitesim.schema import FINITE, Table, check_value, read


class Row(Table):
    name: Annotated[str, Meta(min_length=1)]
    count: Annotated[int, Meta(ge=1, le=1000)]
    share: Annotated[float, Meta(ge=0, le=1)] = 0.0
    kind: Literal["small", "large", "huge"] = "small"
    ids: Annotated[list[Annotated[int, Meta(ge=0)]], Meta(description="list ids >= 0")] = []  # noqa: RUF012
    where: Annotated[str | int | list[str | int], Meta(description="list places")] | None = None


class File(Table):
    rows: Annotated[list[Row], Meta(min_length=1, description="be one or more [[rows]]")]


@pytest.mark.parametrize(
    ("rows", "says"),
    [
        ([{"name": "a", "count": 0}], "rows[0].count: must be a whole number >= 1, got 0"),
        ([{"name": "a", "count": True}], "rows[0].count: must be a whole number >= 1, got True"),
        ([{"name": "a", "count": 5000}], "rows[0].count: 5,000 is absurd; at most 1,000"),
        ([{"name": "", "count": 1}], "rows[0].name: must be a non-empty string, got ''"),
        ([{"name": "a", "count": 1, "share": 2}], "rows[0].share: must be in [0, 1], got 2"),
        ([{"name": "a", "count": 1, "kind": "tiny"}],
         "rows[0].kind: 'tiny' is not one of small, large, huge"),  # (in the annotation's order)
        ([{"name": "a", "count": 1, "ids": [1, -1]}],
         "rows[0].ids: must list ids >= 0, got [1, -1]"),
        ([{"name": "a", "count": 1, "where": [True]}],
         "rows[0].where: must list places, got [True]"),
        ([{"name": "a", "count": 1, "colour": 3}],
         "rows[0].colour: unknown key; the keys here are name, count, share, kind, ids, where"),
        ([{"name": "a"}], "rows[0].count: missing; must be a whole number >= 1"),
        ({"name": "a"}, "rows: must be one or more [[rows]], got {'name': 'a'}"),
        ([], "rows: must be one or more [[rows]], got []"),
    ],
)  # fmt: skip
def test_an_error_names_the_key_and_the_allowed_values(rows, says):
    with pytest.raises(ConfigError) as caught:
        read({"rows": rows}, File, "f.toml")
    assert str(caught.value) == f"f.toml: {says}"


def test_a_setting_is_checked_against_its_annotation():
    positive = Annotated[float, Meta(gt=0, le=FINITE)]
    assert check_value("days", 3, positive) == 3.0 and isinstance(
        check_value("d", 3, positive), float
    )
    assert check_value("users", 4.0, Annotated[int, Meta(ge=1)]) == 4  # (a whole float)
    for value, says in [
        (float("inf"), "days must be in (0, inf), got inf"),
        (0, "days must be in (0, inf), got 0.0"),
        ("3", "days must be a number, got '3'"),
        (True, "days must be a number, got True"),
    ]:
        with pytest.raises(ConfigError, match=f"^{says.replace('(', '.').replace(')', '.')}$"):
            check_value("days", value, positive)
    with pytest.raises(ConfigError, match=r"^decay must be one of linear, step or none, got 'x'$"):
        check_value("decay", "x", Literal["linear", "step"] | None)
