"""Discord users: registration on first contact, their global privacy level, profile and naming preferences."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from personas.actions.actor import Actor, recording
from personas.actions.errors import ActionError
from personas.actions.memories import check_lineage
from personas.actions.versions import bump_user_rows
from personas.models import (
    PROFILE_FIELDS,
    DiscordUser,
    PrivacyLevel,
    UserPersonaNamingPreference,
)


def set_privacy_level(user: DiscordUser, level: int, *, actor: Actor) -> DiscordUser:
    """Set a user's global privacy level (data-model.md §2.4; semantics P-01..P-05)."""
    if level not in PrivacyLevel.values:
        raise ActionError(f"Unknown privacy level {level!r}; expected one of {PrivacyLevel.values}.")
    if user.privacy_level == level:
        return user  # nothing to write, and no version bump to empty every process's kept rows
    with recording(actor), transaction.atomic():
        # save(), not update(): the audit trail records the old and new level.
        user.privacy_level = level
        user.save(update_fields=["privacy_level", "updated_at"])
        bump_user_rows()
    return user


def set_impersonation_consent(user: DiscordUser, allowed: bool, *, actor: Actor) -> DiscordUser:
    """Whether personas may write messages as this user (``/impersonate``, issue 30 item 5); off
    until the user turns it on themselves."""
    if user.allow_impersonation == allowed:
        return user
    with recording(actor), transaction.atomic(durable=True):
        user.allow_impersonation = allowed
        user.save(update_fields=["allow_impersonation", "updated_at"])
    return user


def register_user(user_disc_id: str, *, username: str, global_name: str | None, actor: Actor) -> DiscordUser:
    """The user row of a Discord account, created on first contact; names are refreshed when they changed."""
    with recording(actor), transaction.atomic():
        user, created = DiscordUser.objects.get_or_create(
            user_disc_id=user_disc_id, defaults={"username": username[:100], "global_name": global_name}
        )
        renamed = not created and (user.username, user.global_name) != (username[:100], global_name)
        if renamed:
            user.username, user.global_name = username[:100], global_name
            user.save(update_fields=["username", "global_name", "updated_at"])
        if created or renamed:
            bump_user_rows()
    return user


# What a moderator edits on a user's page besides the privacy level (which has its own action):
# the profile the prompt shows, and the account's own preferences. Ids and names come from Discord.
EDITABLE_USER_FIELDS = frozenset(
    {
        *PROFILE_FIELDS,
        "language_pref",
        "registration_locale",
        "personal_dtm",
        "personal_deliberate_tool_mode",
        "shortterm_cache_crossserver_opt_in",
    }
)


def ensure_user(user_disc_id: str, *, username: str, actor: Actor) -> DiscordUser:
    """The user row of a Discord account, created if missing; an existing row is left as it is (a
    tool call knows a handle, not the account's current names)."""
    with recording(actor), transaction.atomic():
        user, created = DiscordUser.objects.get_or_create(
            user_disc_id=user_disc_id, defaults={"username": username[:100]}
        )
        if created:
            bump_user_rows()
    return user


def add_user(user: DiscordUser, *, actor: Actor) -> DiscordUser:
    """A user row a superuser typed in by hand (the bot registers everyone else)."""
    with recording(actor), transaction.atomic():
        user.save()
        bump_user_rows()
    return user


def delete_user(user: DiscordUser, *, actor: Actor) -> None:
    """Remove a user row and what cascades from it (a superuser's clean-up; forget-me keeps the row)."""
    with recording(actor), transaction.atomic():
        user.delete()
        bump_user_rows()


def update_profile(user: DiscordUser, values: Mapping[str, Any], *, actor: Actor) -> DiscordUser:
    """Change a user's profile fields (nickname, pronouns, appearance, ...) in one save, so the audit
    trail holds one entry with the old and new values. Names, ids and the privacy level are refused."""
    unknown = sorted(set(values) - EDITABLE_USER_FIELDS)
    if unknown:
        raise ActionError(f"Not a profile field: {', '.join(unknown)}.")
    if not values:
        return user
    with recording(actor), transaction.atomic():
        for name, value in values.items():
            setattr(user, name, value)
        user.full_clean(exclude=[f.name for f in DiscordUser._meta.concrete_fields if f.name not in values])
        user.save(update_fields=[*values, "updated_at"])
        bump_user_rows()
    return user


@dataclass(frozen=True)
class NewUser:
    user_disc_id: str
    username: str
    global_name: str | None


def register_users(users: Sequence[NewUser], *, language: str, actor: Actor) -> None:
    """H-04 registration of the participants of a turn in one insert; never sets a saved nickname.

    Existing rows are left as they are (``ignore_conflicts``, which also makes a concurrent
    registration of the same user harmless). No savepoint: the insert and the version bump are
    the only statements. A bulk insert writes no history rows: a user's audit trail starts at
    their first change. The bump comes after the insert, as in every action: the counter's row lock
    is taken last by all of them, so two registrations of the same newcomer cannot deadlock; it is
    needed because a process may keep "no row" for these ids (``chatcontext.personalization``).
    """
    if not users:
        return
    with recording(actor), transaction.atomic(savepoint=False):
        DiscordUser.objects.bulk_create(
            [
                DiscordUser(
                    user_disc_id=u.user_disc_id, username=u.username, global_name=u.global_name, language_pref=language
                )
                for u in users
            ],
            ignore_conflicts=True,
        )
        bump_user_rows()


def set_naming_preference(
    user: DiscordUser,
    lineage_id: int,
    *,
    nickname_override: str | None,
    prefix_override: str | None,
    suffix_override: str | None,
    actor: Actor,
) -> UserPersonaNamingPreference:
    """How the personas of one lineage name this user (H-09); one row per (user, lineage), replaced."""
    check_lineage(lineage_id)
    with recording(actor), transaction.atomic():
        preference, _ = UserPersonaNamingPreference.objects.update_or_create(
            user=user,
            persona_lineage_id=lineage_id,
            defaults={
                "nickname_override": nickname_override,
                "prefix_override": prefix_override,
                "suffix_override": suffix_override,
            },
        )
    return preference


def delete_naming_preference(preference: UserPersonaNamingPreference, *, actor: Actor) -> None:
    with recording(actor), transaction.atomic():
        UserPersonaNamingPreference.objects.filter(pk=preference.pk).delete()
