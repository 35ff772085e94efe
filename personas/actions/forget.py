"""Forget-me: everything the platform keeps about one Discord user, deleted in one transaction."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.dispatch import Signal

from personas.actions.actor import Actor, recording
from personas.actions.versions import bump_user_rows
from personas.forgetting import RecordsAbout
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

# Sent inside ``forget_user``'s transaction with ``user_disc_id``: an app that keeps people's messages
# in tables of its own (the playground's channels, bot.playground) deletes them there and returns
# how many messages it removed.
user_forgotten = Signal()


@dataclass(frozen=True)
class ForgetResult:
    """How many rows ``forget_user`` removed or cleared, by kind (counts only, no ids)."""

    personal_memories: int = 0
    server_memories: int = 0
    naming_preferences: int = 0
    reminders: int = 0
    voice_transcripts: int = 0
    prompt_records: int = 0
    channel_messages: int = 0
    member_snapshots: int = 0
    stat_counters: int = 0
    summaries: int = 0
    short_term_memories: int = 0
    profile_cleared: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def total(self) -> int:
        return sum(v for v in asdict(self).values() if isinstance(v, int) and not isinstance(v, bool))


def records_about(user_disc_id: str) -> RecordsAbout:
    """The prompt records about this user (chatcontext decides which: ``personas.forgetting``): what
    forget-me deletes."""
    return RecordsAbout(str(user_disc_id))


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


def forget_user(user_disc_id: str, *, actor: Actor) -> ForgetResult:
    """Delete everything the platform keeps about one Discord user, in one transaction.

    Removed: personal memories, server memories they created, the conversation summaries and
    short-term memories drawn from their messages, naming preferences, reminders that
    target them or that they created, their member snapshots and activity counters, every prompt
    record about them (``records_about``: their words, profile or memories are in its prompt or
    its snapshot, ``chatcontext.records.store.subject_user_ids``), the voice transcripts of messages
    those records show they authored, and their messages in the platform's own channels (the
    ``user_forgotten`` receivers). Their profile text (nickname, pronouns, appearance, ...) is cleared.

    Records are deleted whole, not redacted: a record is the exact prompt of a turn and the snapshot
    that replays it, and one with the user cut out would be neither. Records that hold only their
    id (a reactor, a member row without a server nickname, a privacy level) are not about them and
    are left untouched, so forgetting someone who never spoke costs the server none of its history.

    The audit trail loses the same: every history row of their user row, their memories and the
    server memories they taught, so no forgotten text survives as an old version.

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

        forgotten = records_about(user_disc_id).delete()
        counts["voice_transcripts"] = forgotten.voice_transcripts
        counts["prompt_records"] = forgotten.prompt_records
        if user is not None:
            _delete_history(user)
        answers = user_forgotten.send(sender=ForgetResult, user_disc_id=user_disc_id)
        counts["channel_messages"] = sum(n for _, n in answers if isinstance(n, int))
        if user is not None:
            # Last: the counter's row lock is shared by every user-row write, so it is held only
            # from here to the commit.
            bump_user_rows()
    return ForgetResult(**counts)


def preview_forget_user(user_disc_id: str, *, actor: Actor) -> ForgetResult:
    """What ``forget_user`` would delete now, with nothing deleted: it runs and its transaction is
    rolled back, so the preview counts exactly what forget-me removes (there is one definition of
    what goes). Uploaded files and cached transcripts are let go only on commit, so they stay too."""
    with transaction.atomic():
        result = forget_user(user_disc_id, actor=actor)
        transaction.set_rollback(True)
    return result
