"""What a persona writes by itself, through a tool call (issue 15): memories it learns, reminders it
sets, and their edits. Each is one transaction and keeps every rule of the moderator's actions
(``personas.actions``: limits, lineage) plus the rules of a persona acting on its own:

- **Who it may write about** (``subject_refusal``): nobody privacy-FULL, nobody the server
  blacklists, nobody this persona mutes or blocks — for memories and reminders alike. A memory
  needs more (P-05): the user is MINIMAL and the server's personal memories are on.
- **Where** (``tool_lineage``): the persona's own lineage; lineage 0 only when asked and the server
  allows global memories from tools. Edits touch only rows of the persona's own lineage (or 0 when
  allowed) that its turn could show: a server memory of its own server, a personal memory about one
  of the people of the turn. A global memory is read in every server, so without that a turn here
  could rewrite what a persona of another server knows about someone who never came here.
- **When**: memories only with self teaching on; a reminder between now and a year from now.

A refusal is a ``ToolWriteRefused`` whose message names nobody and quotes nothing, so the model
can be told it and relay it.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from personas import actions
from personas.actions.actor import Actor, recording
from personas.models import (
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    ServerMemory,
    ServerSettings,
)
from personas.models.reminders import validate_reminder_purpose_length
from personas.provenance import NO_PROVENANCE, Provenance

MAX_REMINDER_AHEAD = timedelta(days=365)
# A repetition longer than the furthest a reminder may be set ahead would never be seen to repeat.
MAX_REPEAT_HOURS = MAX_REMINDER_AHEAD // timedelta(hours=1)


class ToolWriteRefused(actions.ActionError):
    """A write a persona asked for and may not make; the message is safe to show the model."""


def _settings(persona: Persona) -> ServerSettings:
    return ServerSettings.objects.get_or_create(server_id=persona.server_id)[0]


def subject_refusal(persona: Persona, user_disc_id: str, *, now: datetime | None = None) -> str | None:
    """Why ``persona`` may write nothing about this user, or None when it may."""
    privacy = DiscordUser.objects.filter(user_disc_id=user_disc_id).values_list("privacy_level", flat=True).first()
    if privacy == PrivacyLevel.FULL:
        return "This person has asked not to be remembered or processed; nothing was saved."
    if PersonalizationBlacklist.objects.filter(server_id=persona.server_id, user_disc_id=user_disc_id).exists():
        return "This server does not keep personal data about this person; nothing was saved."
    blocks = PersonaUserBlock.objects.filter(
        server_id=persona.server_id, persona=persona, user_disc_id=user_disc_id, expires_at__gt=now or timezone.now()
    )
    if blocks.exists():
        return "You have muted or blocked this person; nothing was saved about them."
    return None


def _refuse_subject(persona: Persona, user_disc_id: str) -> None:
    reason = subject_refusal(persona, user_disc_id)
    if reason is not None:
        raise ToolWriteRefused(reason)


def tool_lineage(persona: Persona, settings: ServerSettings, *, global_scope: bool) -> int:
    if global_scope:
        if not settings.global_memories_enabled:
            raise ToolWriteRefused("Global memories are turned off on this server; save it for yourself instead.")
        return GLOBAL_LINEAGE_ID
    return actions.persona_memory_lineage(persona)


def _writable_lineages(persona: Persona, settings: ServerSettings) -> list[int]:
    own = actions.persona_memory_lineage(persona)
    return [own, GLOBAL_LINEAGE_ID] if settings.global_memories_enabled else [own]


def _check_self_teaching(settings: ServerSettings) -> None:
    if not settings.self_teaching_enabled:
        raise ToolWriteRefused("Self teaching is turned off on this server; memories cannot be saved.")


def learn_about_user(
    persona: Persona,
    user_disc_id: str,
    content: str,
    tags: Iterable[str] = (),
    *,
    username: str = "",
    global_scope: bool = False,
    provenance: Provenance = NO_PROVENANCE,
    actor: Actor,
) -> PersonalMemory:
    """A personal memory about ``user_disc_id``, refused for anyone the persona may not remember."""
    with transaction.atomic():
        settings = _settings(persona)
        _check_self_teaching(settings)
        _refuse_subject(persona, user_disc_id)
        if not settings.personal_memories_enabled:
            raise ToolWriteRefused("Personal memories are turned off on this server; nothing was saved.")
        user = actions.ensure_user(user_disc_id, username=username, actor=actor)
        if user.privacy_level != PrivacyLevel.MINIMAL:
            raise ToolWriteRefused("This person's privacy setting keeps personal memories out; nothing was saved.")
        lineage = tool_lineage(persona, settings, global_scope=global_scope)
        return actions.add_personal_memory(user, lineage, content, tags, provenance=provenance, actor=actor)


def learn_about_server(
    persona: Persona,
    content: str,
    tags: Iterable[str] = (),
    *,
    taught_by_disc_id: str | None = None,
    global_scope: bool = False,
    provenance: Provenance = NO_PROVENANCE,
    actor: Actor,
) -> ServerMemory:
    """A server memory the persona learned; ``taught_by_disc_id`` (the triggerer) is attribution."""
    with transaction.atomic():
        settings = _settings(persona)
        _check_self_teaching(settings)
        lineage = tool_lineage(persona, settings, global_scope=global_scope)
        teacher = None
        if taught_by_disc_id is not None and subject_refusal(persona, taught_by_disc_id) is None:
            teacher = DiscordUser.objects.filter(user_disc_id=taught_by_disc_id).first()
        return actions.add_server_memory(
            persona.server, lineage, content, tags, persona=persona, user=teacher, provenance=provenance, actor=actor
        )


def _own_memory(persona: Persona, kind: str, memory_id: int, people: Collection[str]) -> PersonalMemory | ServerMemory:
    settings = _settings(persona)
    _check_self_teaching(settings)
    lineages = _writable_lineages(persona, settings)
    memory: PersonalMemory | ServerMemory | None
    if kind == "personal":
        memory = (
            PersonalMemory.objects.select_related("user")
            .filter(pk=memory_id, persona_lineage_id__in=lineages, user__user_disc_id__in=sorted(set(people)))
            .first()
        )
        if memory is not None:
            _refuse_subject(persona, memory.user.user_disc_id)
    else:
        memory = ServerMemory.objects.filter(
            pk=memory_id, server_id=persona.server_id, persona_lineage_id__in=lineages
        ).first()
    if memory is None:
        # The same answer for a memory of someone not here as for no memory: ids leak nothing.
        raise ToolWriteRefused("No memory of yours has that id.")
    return memory


def update_memory(
    persona: Persona, kind: str, memory_id: int, content: str, *, people: Collection[str], actor: Actor
) -> PersonalMemory | ServerMemory:
    """Edit the text of a memory of the persona's own lineage (``kind``: ``personal`` or ``server``).
    ``people``: the Discord ids of the people of the turn (its participants), the only ones whose
    personal memories it may change."""
    with transaction.atomic():
        memory = _own_memory(persona, kind, memory_id, people)
        if isinstance(memory, PersonalMemory):
            return actions.update_personal_memory(memory, content=content, actor=actor)
        return actions.update_server_memory(memory, content=content, actor=actor)


def forget_memory(
    persona: Persona, kind: str, memory_id: int, *, people: Collection[str], actor: Actor
) -> PersonalMemory | ServerMemory:
    """Delete a memory of the persona's own lineage (``people`` as for ``update_memory``); returns the
    row as it was."""
    with transaction.atomic():
        memory = _own_memory(persona, kind, memory_id, people)
        if isinstance(memory, PersonalMemory):
            actions.delete_personal_memory(memory, actor=actor)
        else:
            actions.delete_server_memory(memory, actor=actor)
        return memory


@dataclass(frozen=True)
class ReminderRequest:
    """The reminder a persona's tool asks for: whom (``target_disc_id``; the bot's own id: a self-task
    of the persona), of what, when, how often, and the name the reminder keeps for them."""

    target_disc_id: str
    purpose: str
    at: datetime
    repeat_hours: int | None = None
    target_nickname: str = ""


def set_reminder(
    persona: Persona,
    request: ReminderRequest,
    *,
    channel_disc_id: str,
    bot_user_disc_id: str,
    created_by_disc_id: str | None = None,
    provenance: Provenance = NO_PROVENANCE,
    actor: Actor,
    now: datetime | None = None,
) -> Reminder:
    """The reminder ``request`` asks for, in ``channel_disc_id``."""
    now = now or timezone.now()
    target_disc_id, at, repeat_hours = request.target_disc_id, request.at, request.repeat_hours
    text = request.purpose.strip()
    if not text:
        raise ToolWriteRefused("A reminder needs a purpose.")
    try:
        validate_reminder_purpose_length(text)
    except ValidationError as exc:
        raise ToolWriteRefused(exc.messages[0]) from exc
    if at <= now:
        raise ToolWriteRefused("That time has already passed; pick a time in the future.")
    if at > now + MAX_REMINDER_AHEAD:
        raise ToolWriteRefused("Reminders can be set at most a year ahead.")
    if repeat_hours is not None and repeat_hours < 1:
        raise ToolWriteRefused("A repeating reminder repeats every hour at the most often.")
    if repeat_hours is not None and repeat_hours > MAX_REPEAT_HOURS:
        raise ToolWriteRefused(f"A repeating reminder repeats at least once a year (every {MAX_REPEAT_HOURS} hours).")
    self_task = target_disc_id == bot_user_disc_id
    with recording(actor), transaction.atomic():
        if not self_task:
            _refuse_subject(persona, target_disc_id)
        creator = DiscordUser.objects.filter(user_disc_id=created_by_disc_id).first() if created_by_disc_id else None
        return Reminder.objects.create(
            server_id=persona.server_id,
            channel_disc_id=channel_disc_id,
            user_discord_id=target_disc_id,
            user_nickname="" if self_task else request.target_nickname[:100],
            reminder_purpose=text,
            reminder_time=at,
            repetition_interval_hours=repeat_hours,
            self_reminder=self_task,
            persona=persona,
            created_by_user=creator,
            **provenance.fields(),
        )


def cancel_reminder(persona: Persona, reminder_id: int, *, actor: Actor) -> Reminder:
    """Cancel a reminder of this server that this persona speaks (the main persona also speaks the
    unassigned ones)."""
    with transaction.atomic():
        rows = Reminder.objects.filter(pk=reminder_id, server_id=persona.server_id)
        reminder = rows.filter(persona=persona).first()
        if reminder is None and not persona.is_alter:
            reminder = rows.filter(persona__isnull=True).first()
        if reminder is None:
            raise ToolWriteRefused("No reminder of yours has that id.")
        try:
            return actions.cancel_reminder(reminder, actor=actor)
        except actions.ReminderNotCancellable as exc:
            raise ToolWriteRefused("That reminder has already fired; it cannot be cancelled.") from exc
