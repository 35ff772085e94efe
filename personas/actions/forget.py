"""Forget-me's personas part: the user's memories, preferences, reminders, member rows, counters and
profile text, and their audit trail. The whole of forget-me, with the prompt records and voice
transcripts about them and their playground messages, is ``community.forget.forget_user``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet

from personas.actions.actor import Actor, recording
from personas.actions.versions import bump_user_rows
from personas.models import (
    PROFILE_FIELDS,
    ConversationSummary,
    DiscordUser,
    PersonalMemory,
    Reminder,
    ServerMember,
    ServerMemory,
    ShortTermMemory,
    StatCounter,
    UserPersonaNamingPreference,
)


@dataclass(frozen=True)
class ForgottenRows:
    """How many of personas' rows ``forget_user_rows`` removed or cleared, by kind (counts only, no ids)."""

    personal_memories: int = 0
    server_memories: int = 0
    naming_preferences: int = 0
    reminders: int = 0
    member_snapshots: int = 0
    stat_counters: int = 0
    summaries: int = 0
    short_term_memories: int = 0
    profile_cleared: bool = False


def _delete(queryset: QuerySet[Any]) -> int:
    """Rows of the queryset's own model deleted (cascaded rows of other models are not counted)."""
    return queryset.delete()[1].get(queryset.model._meta.label, 0)


# Each profile field back to its empty value: no text, and a list field an empty list.
_PROFILE_CLEARED: dict[str, Any] = {name: [] if name == "physical_appearance_tags" else None for name in PROFILE_FIELDS}


def _delete_history(user: DiscordUser) -> None:
    """The audit trail's copies of what was just deleted or cleared: every version of the user's row
    (their profile text), of their memories and of the server memories they taught. Deleting the
    memories above wrote one more version each, so this runs after them."""
    PersonalMemory.history.filter(user_id=user.pk).delete()
    ServerMemory.history.filter(user_id=user.pk).delete()
    DiscordUser.history.filter(user_id=user.pk).delete()


def _drew_on(model: type[ConversationSummary | ShortTermMemory], user_disc_id: str) -> QuerySet[Any]:
    """Rows whose ``author_disc_ids`` name the user: the JSON list's text holds the quoted id (ids are
    digits, so the quoted form matches that id only), a test both databases answer alike."""
    return model.objects.filter(author_disc_ids__icontains=f'"{user_disc_id}"')


def forget_user_rows(user_disc_id: str, *, actor: Actor) -> ForgottenRows:
    """Delete what personas keeps about one Discord user, in the caller's transaction (forget-me's,
    ``community.forget.forget_user``, which documents what forget-me deletes and keeps).

    Removed: personal memories, server memories they created, the conversation summaries and
    short-term memories drawn from their messages, naming preferences, reminders that target them
    or that they created, their member snapshots and activity counters; their profile text
    (nickname, pronouns, appearance, ...) is cleared. The audit trail loses the same: every history
    row of their user row, their memories, the server memories they taught and the short-term
    memories drawn from them, so no forgotten text survives as an old version.

    Kept on purpose: the user row with its privacy level (deleting it would reset a FULL user to the
    MINIMAL default and put their messages back into prompts), and moderators' own blacklist and
    block entries and those entries' history (moderation decisions, which hold no text of the user).
    """
    user_disc_id = str(user_disc_id).strip()
    with recording(actor), transaction.atomic():
        user = DiscordUser.objects.select_for_update().filter(user_disc_id=user_disc_id).first()
        counts: dict[str, Any] = {}
        if user is not None:
            counts["personal_memories"] = _delete(PersonalMemory.objects.filter(user=user))
            counts["server_memories"] = _delete(ServerMemory.objects.filter(user=user))
            counts["naming_preferences"] = _delete(UserPersonaNamingPreference.objects.filter(user=user))
            counts["stat_counters"] = _delete(StatCounter.objects.filter(user=user))
            DiscordUser.objects.filter(pk=user.pk).update(**_PROFILE_CLEARED)
            counts["profile_cleared"] = True
            reminders = Reminder.objects.filter(Q(user_discord_id=user_disc_id) | Q(created_by_user=user))
        else:
            reminders = Reminder.objects.filter(user_discord_id=user_disc_id)
        counts["reminders"] = _delete(reminders)
        counts["member_snapshots"] = _delete(ServerMember.objects.filter(user_disc_id=user_disc_id))
        counts["summaries"] = _delete(_drew_on(ConversationSummary, user_disc_id))
        notes = _drew_on(ShortTermMemory, user_disc_id)
        note_ids = list(notes.values_list("pk", flat=True))
        counts["short_term_memories"] = _delete(notes)
        # The note's old versions hold the same words.
        ShortTermMemory.history.filter(id__in=note_ids).delete()
        if user is not None:
            _delete_history(user)
            # Last: the counter's row lock is shared by every user-row write, so it is held only
            # from here to the commit.
            bump_user_rows()
    return ForgottenRows(**counts)
