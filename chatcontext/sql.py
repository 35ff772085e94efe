"""Hand-written SQL for the Build Context stage's hot reads (issue 9).

Building and compiling an ORM query, then running Django's per-row converters, cost 0.5–1.5 ms per
read on the benchmark machine: about 35 of a turn's 80 ms at 200 participants, against 5 ms for the
SQL itself. The stage's reads are simple and fixed, so they are written here once, against the
models' own table and column names (a renamed field fails at the first read, not silently), run on
the connection the database router picks for the model (the replay scratch database included), and
return the driver's tuples. Callers convert the few columns whose driver value differs between
SQLite and PostgreSQL with ``string_list`` (JSON text) and ``bool``; datetime columns are read as
``epoch_us`` integers.

Only reads live here; writes keep the ORM and its signals.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from functools import cache, lru_cache
from typing import Any

from django.db import connections, models, router


def _quote(name: str) -> str:
    # ANSI quoting, which SQLite and PostgreSQL share.
    return f'"{name}"'


class Names:
    """Quoted SQL names of one model: ``names.table``, ``names["field"]`` (a field name or, for a
    foreign key, its ``_id`` attribute name) and ``names.columns(*fields)``."""

    def __init__(self, model: type[models.Model]) -> None:
        self.table = _quote(model._meta.db_table)
        self._columns: dict[str, str] = {}
        for field in model._meta.concrete_fields:
            if field.column:
                self._columns[field.name] = self._columns[field.attname] = _quote(field.column)

    def __getitem__(self, field: str) -> str:
        return self._columns[field]

    def columns(self, *fields: str, alias: str = "") -> str:
        prefix = f"{alias}." if alias else ""
        return ", ".join(prefix + self._columns[f] for f in fields)


@cache
def names(model: type[models.Model]) -> Names:
    return Names(model)


def placeholders(values: Sequence[Any]) -> str:
    """``%s, %s, …`` for a short ``IN (…)`` list of constants; callers never pass an empty one."""
    return ", ".join(["%s"] * len(values))


def vendor(model: type[models.Model]) -> str:
    return connections[router.db_for_read(model)].vendor


def any_of(model: type[models.Model], column: str, values: Sequence[Any]) -> tuple[str, Any]:
    """The condition "``column`` is one of ``values``" on ``model``'s read database, with its one
    parameter: a PostgreSQL array, or a JSON list that SQLite's ``json_each`` unpacks. One parameter
    rather than one per value: psycopg parses a statement of more than 50 parameters afresh on every
    execution and quotes each value, and Django's SQLite cursor rewrites every placeholder; with the
    turn's id lists of a few hundred ids that was about a third of each read's time."""
    if vendor(model) == "postgresql":
        return f"{column} = ANY(%s)", list(values)
    return f"{column} IN (SELECT value FROM json_each(%s))", json.dumps(list(values))


def fetch(model: type[models.Model], sql: str, params: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Run one SELECT on ``model``'s read database. Datetime parameters are adapted the way the ORM
    adapts them (SQLite stores naive UTC text), so comparisons mean the same as in ORM queries."""
    connection = connections[router.db_for_read(model)]
    adapt = connection.ops.adapt_datetimefield_value
    bound = [adapt(p) if isinstance(p, datetime) else p for p in params]
    with connection.cursor() as cursor:
        cursor.execute(sql, bound)
        return cursor.fetchall()


def select_in(
    model: type[models.Model], columns: Sequence[str], field: str, values: Sequence[Any]
) -> list[tuple[Any, ...]]:
    """``columns`` of ``model``'s rows whose ``field`` is one of ``values``."""
    n = names(model)
    condition, param = any_of(model, n[field], values)
    return fetch(model, f"SELECT {n.columns(*columns)} FROM {n.table} WHERE {condition}", [param])


def select_server_rows(model: type[models.Model], columns: Sequence[str], server_id: int) -> list[tuple[Any, ...]]:
    """``columns`` of one server's rows of ``model``, in creation order."""
    n = names(model)
    return fetch(
        model, f"SELECT {n.columns(*columns)} FROM {n.table} WHERE {n['server']} = %s ORDER BY {n['id']}", [server_id]
    )


def string_list(value: Any) -> tuple[str, ...] | None:
    """A JSON list-of-strings column (tags) as a tuple, or None when the value is not a list."""
    return _decoded_string_list(value) if isinstance(value, str) else _as_string_list(value)


def _as_string_list(value: Any) -> tuple[str, ...] | None:
    return tuple(str(v) for v in value) if isinstance(value, list) else None


# Tag lists repeat across rows and turns (`[]` above all), and decoding them was a tenth of a
# memory read.
@lru_cache(maxsize=4096)
def _decoded_string_list(text: str) -> tuple[str, ...] | None:
    return _as_string_list(json.loads(text))


def epoch_us(model: type[models.Model], column: str) -> str:
    """SQL for the datetime ``column`` of ``model`` as whole microseconds since the epoch, so the
    driver hands over an int: psycopg converts a timestamp through Django's loader, written in Python,
    and a turn reads hundreds of them (memories). On SQLite the column holds Django's naive UTC text
    ``YYYY-MM-DD HH:MM:SS[.ffffff]``."""
    if vendor(model) == "postgresql":
        return f"FLOOR(EXTRACT(EPOCH FROM {column}) * 1000000)::bigint"
    # The seconds of the first 19 characters only: SQLite rounds a fraction to milliseconds, so
    # strftime over `…:00.999500` gives the next second.
    seconds = f"CAST(strftime('%%s', SUBSTR({column}, 1, 19)) AS INTEGER)"
    return f"({seconds} * 1000000 + CAST(SUBSTR({column}, 21, 6) AS INTEGER))"


def us_to_ms(microseconds: int) -> int:
    """An ``epoch_us`` value in the stage's whole milliseconds (``repository.datetime_to_ms``)."""
    return microseconds // 1000
