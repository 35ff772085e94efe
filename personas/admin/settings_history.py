"""A server's settings history (issue 16, item 3): the settings are an inline of the server page and
have no change page, so no history page of their own; this one lists every version of them, newest
first, with what changed, who changed it and through what. Scoped as the server page: a moderator
gets a 404 for a server they do not moderate. The LLM key is not in the history table at all."""

from __future__ import annotations

from typing import Any

from django.contrib.admin import AdminSite
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from personas.models import Server, ServerSettings

# A page, not an archive: the latest versions are what a moderator looks for.
SHOWN_VERSIONS = 200


def settings_versions(server: Server) -> list[dict[str, Any]]:
    """The server's settings versions, newest first, each with the fields it changed from the one before."""
    versions = list(
        ServerSettings.history.filter(server_id=server.pk)
        .select_related("history_user")
        .order_by("-history_date", "-history_id")[: SHOWN_VERSIONS + 1]
    )
    rows = []
    for newer, older in zip(versions[:SHOWN_VERSIONS], [*versions[1:], None], strict=False):
        changes = [] if older is None else newer.diff_against(older).changes
        rows.append(
            {
                "version": newer,
                "kind": {"+": "created", "~": "changed", "-": "deleted"}.get(newer.history_type, newer.history_type),
                "changes": [(change.field, change.old, change.new) for change in changes],
            }
        )
    return rows


class SettingsHistoryMixin:
    """Adds ``<server>/settings-history/`` to the server admin and a link to it on the server page."""

    admin_site: AdminSite

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "<path:object_id>/settings-history/",
                self.admin_site.admin_view(self.settings_history_view),
                name="personas_server_settings_history",
            )
        ]
        return own + super().get_urls()  # type: ignore[misc]

    def settings_history_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        server = self.get_object(request, object_id)  # type: ignore[attr-defined]  # None outside scope
        if server is None:
            raise Http404("No such server.")
        context = {
            **self.admin_site.each_context(request),
            "opts": Server._meta,
            "original": server,
            "title": f"Settings history of {server.name}",
            "rows": settings_versions(server),
            "shown": SHOWN_VERSIONS,
        }
        return TemplateResponse(request, "admin/personas/server/settings_history.html", context)

    def settings_history(self, obj: Server) -> str:
        if obj.pk is None:
            return "Saved settings keep their history from then on."
        url = reverse("admin:personas_server_settings_history", args=[obj.pk])
        return format_html('<a href="{}">Every change to this server\'s settings, with who made it</a>', url)

    settings_history.short_description = "settings history"  # type: ignore[attr-defined]
