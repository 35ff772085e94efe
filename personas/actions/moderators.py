"""Who moderates a server: adding a moderator in one step."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Field

from personas.actions.actor import Actor, recording
from personas.actions.errors import ModeratorAccountRefused
from personas.models import (
    Server,
    ServerModerator,
)


@dataclass(frozen=True)
class ModeratorGrant:
    """What ``add_moderator`` did, for the admin message and the command's output."""

    account: Any
    moderator: ServerModerator
    created_account: bool
    made_staff: bool
    added: bool  # False: the account already moderated the server

    @property
    def needs_password(self) -> bool:
        """A new account (or one still without a password) signs in only after choosing one."""
        return not self.account.has_usable_password()


def check_moderator_username(username: str) -> str:
    """The account name ``add_moderator`` would use, or a refusal a superuser can act on."""
    User = get_user_model()
    name = username.strip()
    field = User._meta.get_field(User.USERNAME_FIELD)
    assert isinstance(field, Field)  # the username is a column, never a relation
    try:
        field.clean(name, None)
    except ValidationError as exc:
        raise ModeratorAccountRefused(f"'{name}' is not a valid account name: {' '.join(exc.messages)}") from exc
    account = User._default_manager.filter(**{User.USERNAME_FIELD: name}).first()
    if account is not None and not account.is_active:
        raise ModeratorAccountRefused(
            f"The account '{name}' is deactivated; reactivate it under Users first if they should sign in again."
        )
    return name


def add_moderator(username: str, server: Server, *, actor: Actor) -> ModeratorGrant:
    """Make ``username`` a moderator of ``server`` in one step (issue 16): the account is created when
    there is none (without a password: the caller hands out a set-password link), marked staff so it
    can sign in to the admin, and given the server's moderator row. Idempotent.

    No model permission or group is granted: what a moderator may see and change is decided per
    server by the moderator rows (``personas.admin.scoping``, ``personas.access``), not by Django's
    permission tables, so staff status and the row are all a moderator needs. Permissions an existing
    account already has are left as they are.
    """
    name = check_moderator_username(username)
    User = get_user_model()
    with recording(actor), transaction.atomic():
        account = User._default_manager.select_for_update().filter(**{User.USERNAME_FIELD: name}).first()
        created_account = account is None
        made_staff = False
        if account is None:
            account = User._default_manager.create_user(**{User.USERNAME_FIELD: name}, is_staff=True)
        elif not account.is_staff:
            account.is_staff = made_staff = True
            account.save(update_fields=["is_staff"])
        moderator, added = ServerModerator.objects.get_or_create(server=server, user=account)
    return ModeratorGrant(
        account=account, moderator=moderator, created_account=created_account, made_staff=made_staff, added=added
    )
