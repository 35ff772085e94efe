"""The user view of the admin: what the personas know about one user, on the reader's servers, and
its JSON download — both from ``community.export.build_user_export``, so the page, the download,
the API and ``/privacy export`` say the same thing.

A moderator sees the servers they moderate and nothing of any other (the user page itself is a 404
for a user their servers do not know); global memories are shown because they reach those servers'
prompts, read-only for moderators (no single server's moderators own them, ``moderated_lineages``).
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin import AdminSite
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, URLPattern, path, reverse
from django.utils.http import urlencode

from community.export import EVERY_PERSONA, build_user_export, export_file
from personas.admin.blacklisting import blacklist_step
from personas.admin.navigation import return_url, with_next
from personas.admin.scoping import moderated_lineages, request_principal
from personas.models import GLOBAL_LINEAGE_ID, DiscordUser, PrivacyLevel


def reader_scope(request: HttpRequest) -> frozenset[int] | None:
    """The reader's servers; None for a superuser (every server)."""
    who = request_principal(request)
    return who.server_ids if who is not None else frozenset()


def export_download(user: DiscordUser, export: dict[str, Any]) -> HttpResponse:
    filename, body = export_file(user, export)
    response = HttpResponse(body, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _url(site: AdminSite, name: str, *args: Any) -> str | None:
    try:
        return reverse(f"admin:{name}", args=args, current_app=site.name)
    except NoReverseMatch:  # a model whose admin is not registered on this site
        return None


def _back_here(site: AdminSite, here: str, name: str, *args: Any) -> str | None:
    """A link that returns to ``here`` once its page is done."""
    url = _url(site, name, *args)
    return with_next(url, here) if url is not None else None


def _lineage_label(lineage: dict[str, Any]) -> str:
    if lineage["read_by_every_persona"]:
        return f"Global (lineage 0): {EVERY_PERSONA} reads these"
    holders = ", ".join(f"{p['persona']} ({p['server']})" for p in lineage["read_by"]) or "no persona now"
    return f"Lineage {lineage['lineage_id']}: {holders}"


def page_context(site: AdminSite, request: HttpRequest, user: DiscordUser, export: dict[str, Any]) -> dict[str, Any]:
    """The export with the links a reader follows from it (memories they may edit, reminders, records)."""
    servers = {s["server_id"]: s["name"] for s in export["servers"]}
    editable = moderated_lineages(request)  # None: every lineage (superuser)
    here = request.get_full_path()
    memories = [
        {
            "label": _lineage_label(lineage),
            "read_only": editable is not None and lineage["lineage_id"] not in editable,
            "rows": [
                {
                    **m,
                    "url": _back_here(site, here, "personas_personalmemory_change", m["personal_memory_id"]),
                    "delete_url": _back_here(site, here, "personas_personalmemory_delete", m["personal_memory_id"]),
                }
                for m in lineage["memories"]
            ],
        }
        for lineage in export["memories"]
    ]

    def linked(rows: list[dict[str, Any]], name: str, key: str = "id") -> list[dict[str, Any]]:
        return [
            {**r, "server": servers.get(r["server_id"], r["server_id"]), "url": _url(site, name, r[key])} for r in rows
        ]

    changelist = _url(site, "personas_discorduser_changelist")
    return {
        "export": export,
        "memories": memories,
        "global_read_only": editable is not None,
        "reminders": linked(export["reminders"], "personas_reminder_change", "reminder_id"),
        "blocks": linked(export["persona_blocks"], "personas_personauserblock_change"),
        "blacklist": linked(export["blacklist"], "personas_personalizationblacklist_change"),
        "records": linked(export["prompt_records"], "chatcontext_promptrecord_change"),
        "records_search": f"{_url(site, 'chatcontext_promptrecord_changelist')}?{urlencode({'q': user.user_disc_id})}",
        "servers": [{**s, "url": _url(site, "personas_server_change", s["server_id"])} for s in export["servers"]],
        "changelist": changelist,
        "change_url": _url(site, "personas_discorduser_change", user.pk),
        "export_url": _url(site, "personas_discorduser_export", user.pk),
        # The current level preselected: Change without a choice must change nothing.
        "privacy_actions": [
            (f"set_privacy_{level.name.lower()}", level.label, level == export["privacy"]["level"])
            for level in PrivacyLevel
        ],
        "here": here,
        "blacklist_url": _back_here(site, here, "personas_discorduser_blacklist", user.pk),
        "action_checkbox_name": ACTION_CHECKBOX_NAME,
        "global_lineage": GLOBAL_LINEAGE_ID,
    }


class UserViewAdminMixin:
    """Adds ``<user>/known/`` (the page), ``<user>/export/`` (its JSON) and ``<user>/blacklist/`` (its
    blacklist forms) to the Discord user admin."""

    admin_site: AdminSite

    def get_urls(self) -> list[URLPattern]:
        own = [
            path(
                "<path:object_id>/known/",
                self.admin_site.admin_view(self.known_view),
                name="personas_discorduser_known",
            ),
            path(
                "<path:object_id>/blacklist/",
                self.admin_site.admin_view(self.blacklist_view),
                name="personas_discorduser_blacklist",
            ),
            path(
                "<path:object_id>/export/",
                self.admin_site.admin_view(self.export_view),
                name="personas_discorduser_export",
            ),
        ]
        return own + super().get_urls()  # type: ignore[misc]

    def _user(self, request: HttpRequest, object_id: str) -> DiscordUser:
        user: DiscordUser = self.get_object(request, object_id)  # type: ignore[attr-defined]  # 404 outside scope
        return user

    def known_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        user = self._user(request, object_id)
        export = build_user_export(user, reader_scope(request))
        context = {
            **self.admin_site.each_context(request),
            "opts": DiscordUser._meta,
            "original": user,
            "title": f"What the personas know about {user}",
            "has_forget_permission": self.has_forget_permission(request),  # type: ignore[attr-defined]
            "has_blacklist_permission": self.has_blacklist_permission(request),  # type: ignore[attr-defined]
            "can_change": self.has_change_permission(request, user),  # type: ignore[attr-defined]
            **page_context(self.admin_site, request, user, export),
        }
        return TemplateResponse(request, "admin/personas/discorduser/known.html", context)

    def blacklist_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        user = self._user(request, object_id)
        if not self.has_blacklist_permission(request):  # type: ignore[attr-defined]
            raise PermissionDenied
        known = reverse("admin:personas_discorduser_known", args=[user.pk], current_app=self.admin_site.name)
        back = return_url(request) or known
        context = {
            **self.admin_site.each_context(request),
            "opts": DiscordUser._meta,
            "title": f"Personalization blacklist: {user}",
            "post_to": with_next(request.path, back),
            "hidden": [],
            "back": back,
        }
        return blacklist_step(request, [user], context, HttpResponseRedirect(back))

    def export_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        user = self._user(request, object_id)
        return export_download(user, build_user_export(user, reader_scope(request)))
