"""Discord users: registration on first contact and their global privacy level."""

from __future__ import annotations

from django.db import transaction

from personas.actions.errors import ActionError
from personas.models import (
    DiscordUser,
    PrivacyLevel,
)


def set_privacy_level(user: DiscordUser, level: int) -> DiscordUser:
    """Set a user's global privacy level (data-model.md §2.4; semantics P-01..P-05)."""
    if level not in PrivacyLevel.values:
        raise ActionError(f"Unknown privacy level {level!r}; expected one of {PrivacyLevel.values}.")
    with transaction.atomic():
        DiscordUser.objects.filter(pk=user.pk).update(privacy_level=level)
        user.privacy_level = level
    return user


def register_user(user_disc_id: str, *, username: str, global_name: str | None) -> DiscordUser:
    """The user row of a Discord account, created on first contact; names are refreshed when they changed."""
    with transaction.atomic():
        user, created = DiscordUser.objects.get_or_create(
            user_disc_id=user_disc_id, defaults={"username": username[:100], "global_name": global_name}
        )
        if not created and (user.username, user.global_name) != (username[:100], global_name):
            user.username, user.global_name = username[:100], global_name
            user.save(update_fields=["username", "global_name", "updated_at"])
    return user
