"""Every mutation a moderator, the API, a slash command or a task makes to personalization data.

Zulip-style actions: one function per intent, each one database transaction, so the admin, the API
and the bot cannot drift apart in how they enforce limits (data-model.md §2.11, §3) or what
"forget me" deletes. Callers pass model instances or snowflake strings; nothing here reads a request.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Max, Q, QuerySet
from django.dispatch import Signal

from personas.forgetting import RecordsAbout
from personas.models import (
    FIRST_LINEAGE_ID,
    GLOBAL_LINEAGE_ID,
    PROFILE_FIELDS,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PrivacyLevel,
    Reminder,
    Server,
    ServerMember,
    ServerMemory,
    ServerModerator,
    StatCounter,
    UserPersonaNamingPreference,
)

# Sent inside ``forget_user``'s transaction with ``user_disc_id``: an app that keeps people's messages
# in tables of its own (the playground's channels, bot.playground) deletes them there and returns
# how many messages it removed.
user_forgotten = Signal()

_Memory = TypeVar("_Memory", PersonalMemory, ServerMemory)


class ActionError(ValueError):
    """A mutation the rules refuse; the message is safe to show to a moderator (no user text).

    ``field`` names the argument (and model field) the refusal is about, so a form can show it
    next to that field; None when it is about the whole write.
    """

    field: str | None = None


class InvalidLineage(ActionError):
    field = "persona_lineage_id"


class MemoryTooLong(ActionError):
    field = "content"


class MemoryLimitReached(ActionError):
    pass


class ReminderNotCancellable(ActionError):
    pass


class ReminderNotRetryable(ActionError):
    pass


def set_privacy_level(user: DiscordUser, level: int) -> DiscordUser:
    """Set a user's global privacy level (data-model.md §2.4; semantics P-01..P-05)."""
    if level not in PrivacyLevel.values:
        raise ActionError(f"Unknown privacy level {level!r}; expected one of {PrivacyLevel.values}.")
    with transaction.atomic():
        DiscordUser.objects.filter(pk=user.pk).update(privacy_level=level)
        user.privacy_level = level
    return user


def persona_memory_lineage(persona: Persona) -> int:
    """The lineage a memory written on a persona's behalf goes to.

    A persona holding lineage 0 (or anything below 10000) is a failed migration, and memory writes
    must refuse it rather than silently write global memories (data-model.md §2.9).
    """
    if persona.persona_lineage_id is None or persona.persona_lineage_id < FIRST_LINEAGE_ID:
        raise InvalidLineage("This persona has no valid lineage id; memory writes are refused.")
    return persona.persona_lineage_id


def _check_lineage(lineage_id: int, server: Server | None = None) -> None:
    """A memory is written to lineage 0 (global) or to a lineage a persona holds now (data-model.md §2.9).

    The registry (``PersonaLineage``) is not the test: a persona may carry a lineage id it was given
    rather than drew, and a lineage whose personas were all deleted keeps its memories for a
    re-import but is read by no prompt, so a new memory there would be stored and never used.
    With ``server`` (server memories, read only by that server's personas) the persona must be
    one of that server's.
    """
    # 1..9999 are never drawn; negative ids are nothing.
    if lineage_id != GLOBAL_LINEAGE_ID and lineage_id < FIRST_LINEAGE_ID:
        raise InvalidLineage(f"Lineage {lineage_id} is neither 0 (global) nor a drawn lineage id (>= 10000).")
    if lineage_id == GLOBAL_LINEAGE_ID:
        return
    holders = Persona.objects.filter(persona_lineage_id=lineage_id)
    if server is not None and not holders.filter(server=server).exists():
        raise InvalidLineage(f"Lineage {lineage_id} is not the lineage of a persona of this server (nor 0, global).")
    if server is None and not holders.exists():
        raise InvalidLineage(f"Lineage {lineage_id} is not held by any persona (nor 0, global).")


def _clean_content(content: str) -> str:
    text = content.strip()
    if not text:
        raise ActionError("A memory cannot be empty.")
    limit = settings.TOMORI["MAX_MEMORY_LENGTH"]
    if len(text) > limit:
        raise MemoryTooLong(f"A memory holds at most {limit} characters (this one has {len(text)}).")
    return text


def _clean_tags(tags: Iterable[str]) -> list[str]:
    cleaned: list[str] = []
    for tag in tags:
        value = str(tag).strip()
        if value and value not in cleaned:
            cleaned.append(value)
    return cleaned


def _visible_memory_count(user: DiscordUser, lineage_id: int) -> int:
    """Rows a persona of ``lineage_id`` sees for this user: its own lineage plus the global rows.

    For a global write the fullest lineage is what a new global row would overflow, so the count is
    the global rows plus the largest per-lineage count (data-model.md §2.11).
    """
    rows = PersonalMemory.objects.filter(user=user)
    if lineage_id != GLOBAL_LINEAGE_ID:
        return rows.filter(persona_lineage_id__in=[lineage_id, GLOBAL_LINEAGE_ID]).count()
    global_count = rows.filter(persona_lineage_id=GLOBAL_LINEAGE_ID).count()
    fullest = (
        rows.exclude(persona_lineage_id=GLOBAL_LINEAGE_ID)
        .values("persona_lineage_id")
        .annotate(n=Count("pk"))
        .aggregate(m=Max("n"))["m"]
    )
    return global_count + (fullest or 0)


def _lock(row: DiscordUser | Server) -> None:
    # Serializes concurrent memory writes for one user (or server) so two writers cannot both pass
    # the limit check.
    type(row).objects.select_for_update().filter(pk=row.pk).values_list("pk", flat=True).first()


def check_new_personal_memory(user: DiscordUser, lineage_id: int, content: str) -> str:
    """The cleaned text of a memory that may be added, or ActionError saying why not.

    Forms call it to show the refusal next to the field; ``add_personal_memory`` calls it again
    under the user lock, where the answer is final.
    """
    _check_lineage(lineage_id)
    text = _clean_content(content)
    limit = settings.TOMORI["MAX_PERSONAL_MEMORIES"]
    if _visible_memory_count(user, lineage_id) >= limit:
        raise MemoryLimitReached(f"This user already has {limit} memories visible to lineage {lineage_id}.")
    return text


def add_personal_memory(user: DiscordUser, lineage_id: int, content: str, tags: Iterable[str] = ()) -> PersonalMemory:
    """Store a memory about ``user`` in ``lineage_id`` (0 = every persona of every server).

    Enforces MAX_MEMORY_LENGTH per memory and MAX_PERSONAL_MEMORIES per (user, lineage), counting
    lineage-0 rows (data-model.md §2.11, §3).
    """
    with transaction.atomic():
        _lock(user)
        text = check_new_personal_memory(user, lineage_id, content)
        return PersonalMemory.objects.create(
            user=user, persona_lineage_id=lineage_id, content=text, tags=_clean_tags(tags)
        )


def update_personal_memory(
    memory: PersonalMemory, *, content: str | None = None, tags: Iterable[str] | None = None
) -> PersonalMemory:
    """Edit a memory's text or tags in place; its lineage and owner never change (that is a new memory)."""
    return _update_memory(memory, content, tags)


def _update_memory(memory: _Memory, content: str | None, tags: Iterable[str] | None) -> _Memory:
    with transaction.atomic():
        if content is not None:
            memory.content = _clean_content(content)
        if tags is not None:
            memory.tags = _clean_tags(tags)
        memory.save(update_fields=["content", "tags", "updated_at"])
    return memory


def delete_personal_memory(memory: PersonalMemory) -> None:
    with transaction.atomic():
        PersonalMemory.objects.filter(pk=memory.pk).delete()


def check_new_server_memory(server: Server, lineage_id: int, content: str) -> str:
    """The cleaned text of a server memory that may be added, or ActionError saying why not
    (``check_new_personal_memory``'s counterpart: forms call it, ``add_server_memory`` decides)."""
    _check_lineage(lineage_id, server)
    text = _clean_content(content)
    limit = settings.TOMORI["MAX_SERVER_MEMORIES"]
    if ServerMemory.objects.filter(server=server, persona_lineage_id=lineage_id).count() >= limit:
        raise MemoryLimitReached(f"This server already has {limit} memories in lineage {lineage_id}.")
    return text


def add_server_memory(
    server: Server,
    lineage_id: int,
    content: str,
    tags: Iterable[str] = (),
    *,
    persona: Persona | None = None,
    user: DiscordUser | None = None,
) -> ServerMemory:
    """Store a memory of ``server`` for the personas of ``lineage_id`` (0 = every persona of the server).

    Enforces MAX_MEMORY_LENGTH and MAX_SERVER_MEMORIES per (server, lineage) (data-model.md §2.12);
    ``persona`` and ``user`` are attribution only (who learned it, who taught it).
    """
    with transaction.atomic():
        _lock(server)
        text = check_new_server_memory(server, lineage_id, content)
        return ServerMemory.objects.create(
            server=server,
            persona_lineage_id=lineage_id,
            content=text,
            tags=_clean_tags(tags),
            persona=persona,
            user=user,
        )


def update_server_memory(
    memory: ServerMemory, *, content: str | None = None, tags: Iterable[str] | None = None
) -> ServerMemory:
    """Edit a server memory's text or tags; its server and lineage never change (that is a new memory)."""
    return _update_memory(memory, content, tags)


def add_to_blacklist(server: Server, user_disc_id: str, reason: str = "") -> PersonalizationBlacklist:
    """Stop a server from using a user's memories and saved names (P-02, P-05, P-06). Idempotent."""
    with transaction.atomic():
        entry, created = PersonalizationBlacklist.objects.get_or_create(
            server=server, user_disc_id=user_disc_id, defaults={"reason": reason}
        )
        if not created and reason and entry.reason != reason:
            entry.reason = reason
            entry.save(update_fields=["reason"])
    return entry


def remove_from_blacklist(server: Server, user_disc_id: str) -> bool:
    """True when an entry was removed."""
    with transaction.atomic():
        deleted, _ = PersonalizationBlacklist.objects.filter(server=server, user_disc_id=user_disc_id).delete()
    return deleted > 0


def cancel_reminder(reminder: Reminder) -> Reminder:
    """Cancel a pending, failed or in-flight reminder or self-task; fired ones are history.

    A claimed occurrence is then not posted (the bot's ``accept_delivery`` refuses it); one the bot
    already took may still be posted, and its confirmation leaves the row cancelled.
    """
    with transaction.atomic():
        # Locked so a dispatcher that is firing this very reminder cannot overwrite the cancellation.
        current = Reminder.objects.select_for_update().get(pk=reminder.pk)
        if current.status == Reminder.Status.CANCELLED:
            return current
        if current.status not in Reminder.OPEN_STATUSES:
            raise ReminderNotCancellable(f"Reminder {current.pk} has status {current.status}; it cannot be cancelled.")
        current.status = Reminder.Status.CANCELLED
        current.next_attempt_at = None
        current.save(update_fields=["status", "next_attempt_at", "updated_at"])
    return current


def retry_reminder(reminder: Reminder) -> Reminder:
    """Put a failed reminder back to pending with a fresh count of attempts; it is due at once when
    its time has passed (a missed occurrence is delivered late, not skipped)."""
    with transaction.atomic():
        current = Reminder.objects.select_for_update().get(pk=reminder.pk)
        if current.status != Reminder.Status.FAILED:
            raise ReminderNotRetryable(f"Reminder {current.pk} has status {current.status}; only failed ones retry.")
        current.status = Reminder.Status.PENDING
        current.delivery_retry_count = 0
        current.next_attempt_at = None
        current.last_error = ""
        current.save(update_fields=["status", "delivery_retry_count", "next_attempt_at", "last_error", "updated_at"])
    return current


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
    profile_cleared: bool = False

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def total(self) -> int:
        return sum(v for v in asdict(self).values() if isinstance(v, int) and not isinstance(v, bool))


def records_about(user_disc_id: str) -> RecordsAbout:
    """The prompt records about this user (chatcontext decides which: ``personas.forgetting``). What
    forget-me deletes, and what its confirmation counts beforehand."""
    return RecordsAbout(str(user_disc_id))


def _delete(queryset: QuerySet[Any]) -> int:
    """Rows of the queryset's own model deleted (cascaded rows of other models are not counted)."""
    return queryset.delete()[1].get(queryset.model._meta.label, 0)


# Each profile field back to its empty value: no text, and a list field an empty list.
_PROFILE_CLEARED: dict[str, Any] = {name: [] if name == "physical_appearance_tags" else None for name in PROFILE_FIELDS}


def forget_user(user_disc_id: str) -> ForgetResult:
    """Delete everything the platform keeps about one Discord user, in one transaction.

    Removed: personal memories, server memories they created, naming preferences, reminders that
    target them or that they created, their member snapshots and activity counters, every prompt
    record about them (``records_about``: their words, profile or memories are in its prompt or
    its snapshot, ``chatcontext.records.store.subject_user_ids``), the voice transcripts of messages
    those records show they authored, and their messages in the platform's own channels (the
    ``user_forgotten`` receivers). Their profile text (nickname, pronouns, appearance, ...) is cleared.

    Records are deleted whole, not redacted: a record is the exact prompt of a turn and the snapshot
    that replays it, and one with the user cut out would be neither. Records that hold only their
    id (a reactor, a member row without a server nickname, a privacy level) are not about them and
    are left untouched, so forgetting someone who never spoke costs the server none of its history.

    Kept on purpose: the user row with its privacy level (deleting it would reset a FULL user to the
    MINIMAL default and put their messages back into prompts), and moderators' own blacklist and
    block entries (moderation decisions, which hold no text of the user).
    """
    user_disc_id = str(user_disc_id).strip()
    with transaction.atomic():
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

        forgotten = records_about(user_disc_id).delete()
        counts["voice_transcripts"] = forgotten.voice_transcripts
        counts["prompt_records"] = forgotten.prompt_records
        answers = user_forgotten.send(sender=ForgetResult, user_disc_id=user_disc_id)
        counts["channel_messages"] = sum(n for _, n in answers if isinstance(n, int))
    return ForgetResult(**counts)


def preview_forget_user(user_disc_id: str) -> ForgetResult:
    """What ``forget_user`` would delete now, with nothing deleted: it runs and its transaction is
    rolled back, so the preview counts exactly what forget-me removes (there is one definition of
    what goes). Uploaded files and cached transcripts are let go only on commit, so they stay too."""
    with transaction.atomic():
        result = forget_user(user_disc_id)
        transaction.set_rollback(True)
    return result


def register_server(
    server_disc_id: str,
    *,
    name: str,
    is_dm: bool,
    locale: str | None,
    main_persona_nickname: str,
) -> Server:
    """The server row of a guild (or DM channel) the bot hears from, created on first contact with
    its settings and a main persona named ``main_persona_nickname`` (triggered by that name).
    Idempotent: an existing server is returned unchanged."""
    with transaction.atomic():
        server, created = Server.objects.get_or_create(
            server_disc_id=server_disc_id,
            defaults={"name": name[:100], "is_dm_channel": is_dm, "registration_locale": locale},
        )
        if created or not Persona.objects.filter(server=server, is_alter=False).exists():
            Persona.objects.create(
                server=server, persona_nickname=main_persona_nickname, trigger_words=[main_persona_nickname.lower()]
            )
    return server


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


def delete_personal_memories(user: DiscordUser, lineage_ids: Iterable[int]) -> int:
    """Delete all of a user's memories in the given lineages (a member's "forget all"); returns the count."""
    with transaction.atomic():
        return _delete(PersonalMemory.objects.filter(user=user, persona_lineage_id__in=sorted(set(lineage_ids))))


# --- moderators --------------------------------------------------------------------------------


class ModeratorAccountRefused(ActionError):
    field = "username"


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


def add_moderator(username: str, server: Server) -> ModeratorGrant:
    """Make ``username`` a moderator of ``server`` in one step (issue 16): the account is created when
    there is none (without a password: the caller hands out a set-password link), marked staff so it
    can sign in to the admin, and given the server's moderator row. Idempotent.

    No model permission or group is granted: what a moderator may see and change is decided per
    server by the moderator rows (``personas.admin_scoping``, ``personas.access``), not by Django's
    permission tables, so staff status and the row are all a moderator needs. Permissions an existing
    account already has are left as they are.
    """
    name = check_moderator_username(username)
    User = get_user_model()
    with transaction.atomic():
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
