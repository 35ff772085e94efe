"""``manage.py add_moderator USERNAME SERVER``: make an account a moderator of one server in one step.

The same action as the admin's *Server moderators → Add* (``personas.actions.add_moderator``): the
account is created when missing, marked staff and given the server's moderator row; no Django model
permission is granted (moderator rows decide what a moderator sees). Running it again changes
nothing. A new account has no password: the command prints a one-time link where its owner
chooses one.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from personas import actions
from personas.access import set_password_link, set_password_link_lifetime
from personas.models import Server

LISTED_SERVERS = 10


def find_server(reference: str) -> Server:
    """The one server whose Discord id, internal id or name (any case) is ``reference``."""
    ref = reference.strip()
    if not ref:
        raise CommandError("SERVER is empty: give the server's Discord id, id or name.")
    match = Q(server_disc_id=ref) | Q(name__iexact=ref)
    if ref.isdigit():
        match |= Q(pk=int(ref))
    found = list(Server.objects.filter(match).order_by("pk")[:LISTED_SERVERS])
    if len(found) == 1:
        return found[0]
    if found:
        which = "; ".join(f"{s} (Discord id {s.server_disc_id}, id {s.pk})" for s in found)
        raise CommandError(f"'{ref}' matches more than one server: {which}. Name it by its Discord id.")
    known = Server.objects.order_by("name", "pk")[:LISTED_SERVERS]
    listing = "; ".join(f"{s} (Discord id {s.server_disc_id}, id {s.pk})" for s in known) or "there are none yet"
    raise CommandError(f"No server has the Discord id, id or name '{ref}'. Servers: {listing}.")


class Command(BaseCommand):
    help = (
        "Make USERNAME a moderator of SERVER: create the account if it does not exist (it then gets a "
        "one-time link to choose its password), give it staff status so it can sign in to the admin, and "
        "let it see and change that server only. No Django model permissions are granted. Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", help="the admin account's username (created when missing)")
        parser.add_argument(
            "server", help="the server: its Discord id, its id in the admin (/admin/personas/server/ID/), or its name"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        server = find_server(options["server"])
        try:
            actor = actions.Actor.system("manage.py add_moderator")
            grant = actions.add_moderator(options["username"], server, actor=actor)
        except actions.ActionError as exc:
            raise CommandError(str(exc)) from exc
        name = grant.account.get_username()
        if grant.created_account:
            self.stdout.write(f"Created the staff account '{name}'.")
        elif grant.made_staff:
            self.stdout.write(f"Gave the existing account '{name}' staff status.")
        where = f"{server} (Discord id {server.server_disc_id})"
        if grant.added:
            self.stdout.write(self.style.SUCCESS(f"'{name}' now moderates {where}."))
        else:
            self.stdout.write(f"'{name}' already moderates {where}; nothing changed.")
        if grant.account.is_superuser:
            self.stdout.write(f"'{name}' is a superuser and sees every server anyway.")
        own = grant.account.user_permissions.count() + grant.account.groups.count()
        if own:
            self.stdout.write(
                f"Note: '{name}' also has {own} permission(s) or group(s) of its own, which this command left as "
                "they are (a moderator needs none)."
            )
        if grant.needs_password:
            self.stdout.write(
                f"'{name}' has no password yet. Send them this link to choose one "
                f"(it works once, for {set_password_link_lifetime()}):"
            )
            self.stdout.write(f"    {set_password_link(grant.account)}")
        self.stdout.write(f"They sign in at {settings.PUBLIC_BASE_URL}/admin/")
        if settings.PUBLIC_BASE_URL == settings.PUBLIC_BASE_URL_DEFAULT:
            self.stdout.write(
                f"Note: PUBLIC_BASE_URL is not set, so these links assume {settings.PUBLIC_BASE_URL}; set it to the "
                "address moderators open (e.g. https://tomori.example.org) and run this command again for a new link."
            )
