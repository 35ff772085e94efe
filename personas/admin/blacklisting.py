"""Adding users to a server's personalization blacklist, or taking them off it, from their pages and
the users list, rather than by typing Discord ids into the blacklist's own form.

One page serves both: a user's ``<user>/blacklist/`` and the users list's action render the same two
forms, which offer only the servers the moderator moderates (a forged server id is a form error)
and go through ``personas.actions.add_to_blacklist`` / ``remove_from_blacklist``.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from personas import actions
from personas.admin.history import admin_actor
from personas.admin.navigation import Default, users_named
from personas.admin.scoping import request_principal
from personas.models import DiscordUser, PersonalizationBlacklist, Server
from personas.models.moderation import BLACKLIST_REASON_CHARS

OPT_OUT = (
    "The personalization blacklist is an opt-out, not a ban: on that server the personas still read "
    "and answer the user's messages, but use none of their memories, saved names or identity details. "
    "To stop a persona answering someone, block them (Persona user blocks)."
)


class AddToBlacklistForm(forms.Form):
    server = forms.ModelChoiceField(queryset=Server.objects.none(), empty_label=None, help_text=OPT_OUT)
    reason = forms.CharField(
        required=False,
        max_length=BLACKLIST_REASON_CHARS,
        widget=forms.TextInput(attrs={"size": 60}),
        help_text="For moderators: no persona reads it.",
    )


class RemoveFromBlacklistForm(forms.Form):
    server = forms.ModelChoiceField(
        queryset=Server.objects.none(),
        empty_label=None,
        help_text="The personas of this server use their memories and saved details again "
        "(unless their privacy level says otherwise).",
    )


FORMS: dict[str, type[forms.Form]] = {"add": AddToBlacklistForm, "remove": RemoveFromBlacklistForm}


def _apply(request: HttpRequest, users: list[DiscordUser], operation: str, data: dict[str, Any]) -> None:
    server, actor = data["server"], admin_actor(request)
    if operation == "add":
        for user in users:
            actions.add_to_blacklist(server, user.user_disc_id, data["reason"], actor=actor)
        messages.success(request, f"{users_named(users)}: on the personalization blacklist of {server}.")
        return
    removed = [u for u in users if actions.remove_from_blacklist(server, u.user_disc_id, actor=actor)]
    if removed:
        messages.success(request, f"{users_named(removed)}: off the personalization blacklist of {server}.")
    else:
        messages.warning(request, f"{users_named(users)}: not on the personalization blacklist of {server}.")


def blacklist_step(
    request: HttpRequest, users: list[DiscordUser], context: dict[str, Any], done: Default
) -> HttpResponse | Default:
    """Apply the posted form and answer ``done``, or show the forms (again, with their errors).
    ``context`` is the page's: the admin's, its title, where the forms post (``post_to``, with the
    ``hidden`` name/value pairs) and where Cancel goes (``back``)."""
    who = request_principal(request)
    if who is None:  # the admin lets only staff in; a session that lost it gets no forms
        raise PermissionDenied
    servers = who.scope(Server.objects.order_by("name", "server_id"))
    listed_on = PersonalizationBlacklist.objects.filter(user_disc_id__in=[u.user_disc_id for u in users])
    listed = servers.filter(pk__in=listed_on.values("server"))
    choices: dict[str, QuerySet[Server]] = {"add": servers, "remove": listed}
    operation = request.POST.get("operation")
    bound: dict[str, forms.Form] = {}
    if operation in FORMS and "apply" in request.POST:
        form = FORMS[operation](request.POST, auto_id=f"{operation}_%s")
        form.fields["server"].queryset = choices[operation]  # type: ignore[attr-defined]
        if form.is_valid():
            _apply(request, users, operation, form.cleaned_data)
            return done
        bound[operation] = form
    # Preselected: a server not yet listing them (add), one that lists them (remove).
    unlisted = servers.exclude(pk__in=listed_on.values("server"))
    initial = {"add": unlisted.first() or servers.first(), "remove": listed.first()}
    page_forms = {}
    for name, form_class in FORMS.items():
        # Both forms are on one page: their own id prefixes keep the inputs' ids apart.
        form = bound.get(name) or form_class(initial={"server": initial[name]}, auto_id=f"{name}_%s")
        form.fields["server"].queryset = choices[name]  # type: ignore[attr-defined]
        page_forms[name] = form
    entries = listed_on.filter(server__in=servers).select_related("server").order_by("server__name", "user_disc_id")
    names = {u.user_disc_id: str(u) for u in users}
    page = {
        **context,
        "users": users,
        "forms": [
            ("add", page_forms["add"], "Add to the personalization blacklist"),
            ("remove", page_forms["remove"] if listed.exists() else None, "Take off the personalization blacklist"),
        ],
        "entries": [(names[e.user_disc_id], e) for e in entries],
    }
    return TemplateResponse(request, "admin/personas/discorduser/blacklist.html", page)
