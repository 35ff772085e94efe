"""The server admin with each server's turns, tokens and cost (``usage``), read from prompt records."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from community.admin.usage import USAGE_COLUMNS, annotate_usage
from personas.admin.servers import ServerAdmin
from personas.models import Server


@admin.register(Server)
class CommunityServerAdmin(ServerAdmin):
    """personas' server pages, with the usage figures on the list."""

    def get_queryset(self, request: HttpRequest) -> QuerySet[Server]:
        return annotate_usage(super().get_queryset(request))

    def get_list_display(self, request: HttpRequest) -> list[Any]:
        # Beside the persona count, in view without scrolling.
        shown = list(super().get_list_display(request))
        at = shown.index("persona_total") + 1
        return [*shown[:at], *USAGE_COLUMNS, *shown[at:]]
