"""Columns another app adds to the server list (issue 16: turns, tokens and cost per server).

personas imports nothing of the apps built on it (the import rule), so an app whose tables hold
per-server figures registers them here from its own admin module: an annotation of the list's
query — one query for the whole page, whatever the number of rows — and the display callables
that read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from personas.models import Server


@dataclass(frozen=True)
class ServerColumns:
    annotate: Callable[[QuerySet[Server]], QuerySet[Server]]
    columns: tuple[Callable[[Server], Any], ...]


_registered: list[ServerColumns] = []


def register_server_columns(extra: ServerColumns) -> None:
    _registered.append(extra)


def annotate_servers(queryset: QuerySet[Server]) -> QuerySet[Server]:
    for extra in _registered:
        queryset = extra.annotate(queryset)
    return queryset


def server_columns() -> list[Callable[[Server], Any]]:
    return [column for extra in _registered for column in extra.columns]
