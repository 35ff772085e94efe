"""The profile fields of a Discord user (H-11..H-15) and the privacy decisions behind them
(P-03..P-06): a field the renderer receives is already exposed or hidden with its reason."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chatcontext.core.participants.model import (
    ActivePersonaScope,
    HiddenReason,
    ParticipantKey,
    ParticipantProfileField,
)
from chatcontext.core.participants.naming import naming_line
from chatcontext.core.participants.presence import member_presence
from chatcontext.core.participants.timefmt import format_reminder, utc_label
from chatcontext.core.types import MemberInfo, MemoryRow, ReminderRow
from chatcontext.participants.hydration.identity import convert
from chatcontext.participants.hydration.state import HydrationRun, MemoryEntry, UserState

# H-11: the core kinds and their orders; hydration produces no other kind (H-20).
CORE_FIELD_ORDERS: dict[str, int] = {
    "physical_appearance": 10,
    "naming": 12,
    "identity": 15,
    "timezone": 20,
    "status": 30,
    "presence": 30,
    "roles": 40,
    "personal_memories": 50,
    "human_reminders": 60,
    "persona_public_attributes": 70,
}


def profile_field(
    owner: ParticipantKey, kind: str, lines: Sequence[str], hidden: HiddenReason | None
) -> ParticipantProfileField:
    """H-11: ``hidden`` is the reason the field is not exposed (None = exposed); an exposed field
    without lines is hidden as `missing_data`."""
    order = CORE_FIELD_ORDERS[kind]
    if hidden is not None:
        return ParticipantProfileField(owner, kind, order, False, hidden)
    if not lines:
        return ParticipantProfileField(owner, kind, order, False, "missing_data")
    return ParticipantProfileField(owner, kind, order, True, "visible", tuple(lines))


def clean_tags(tags: Iterable[str]) -> list[str]:
    return [t.strip() for t in tags if t and t.strip()]


def appearance_line(label: str, tags: Iterable[str]) -> list[str]:
    cleaned = clean_tags(tags)
    return [f"- {label}'s Physical Appearance: {', '.join(cleaned)}"] if cleaned else []


def _normalize_tag(tag: str) -> str:
    """H-14 step 2: strip leading and trailing quote characters."""
    return tag.strip().strip("\"'")


def memory_passes_tags(
    memory: MemoryRow, *, channel_name: str, channel_memory_enabled: bool, corpus: str | None
) -> bool:
    """H-14 steps 2–4: channel tags against the channel name, content tags against the corpus."""
    if not memory.tags or (not channel_memory_enabled and corpus is None):
        return True  # neither check applies (the defaults): no tag needs normalizing
    tags = [_normalize_tag(t) for t in memory.tags]
    channel_tags = [t[1:] for t in tags if t.startswith("#")]
    content_tags = [t for t in tags if t and not t.startswith("#")]
    current = channel_name.lstrip("#").lower()
    if channel_memory_enabled and channel_tags and not any(t.lower() == current for t in channel_tags):
        return False
    return not (corpus is not None and content_tags and not any(t.lower() in corpus for t in content_tags))


def _memory_entry_text(memory: MemoryRow, content: str) -> str:
    """H-14 step 5: `ID:{id} [tags: a, b] content` (raw tags)."""
    tags = f"[tags: {', '.join(memory.tags)}] " if memory.tags else ""
    return f"ID:{memory.personal_memory_id} {tags}{content}"


def memory_hidden_reason(user: UserState, scope: ActivePersonaScope, personalization: bool) -> HiddenReason | None:
    """P-04/P-05 precedence: impersonation > blacklist > personalization_disabled > privacy. The
    memory read asks the same question, so a hidden field's memories are never read."""
    if scope.is_user_impersonation and not user.is_impersonated:
        return "impersonation"
    if user.blacklisted:
        return "blacklist"
    if not personalization:
        return "personalization_disabled"
    if not user.minimal:
        return "privacy"
    return None


def _roles_line(member: MemberInfo, guild_id: str) -> list[str]:
    """H-13: role names by position descending, `@everyone` excluded."""
    roles = [r for r in member.roles if r.id != guild_id and r.name != "@everyone"]
    names = [r.name for r in sorted(roles, key=lambda r: -r.position)]
    return [f"- Server Roles: {', '.join(names)}"] if names else []


def user_fields(
    run: HydrationRun, user: UserState, memories: Sequence[MemoryRow], reminders: Sequence[ReminderRow]
) -> list[ParticipantProfileField]:
    """H-11..H-15: one field per core kind of a user, each exposed or hidden with the reason
    P-03..P-06 give."""
    key, row, scope = user.key, user.row, run.scope
    imp = scope.is_user_impersonation
    fields: list[ParticipantProfileField] = []

    # physical_appearance [SEED]: MINIMAL only (blacklist and personalization do not hide it).
    appearance_hidden: HiddenReason | None = "impersonation" if imp else None if user.minimal else "privacy"
    fields.append(
        profile_field(
            key,
            "physical_appearance",
            appearance_line(user.display_name, row.physical_appearance_tags),
            appearance_hidden,
        )
    )

    naming_hidden: HiddenReason | None = None
    if imp:
        naming_hidden = "impersonation"
    elif not user.saved_name_use:
        naming_hidden = "blacklist" if user.blacklisted else "privacy"
        if not run.personalization:
            naming_hidden = "personalization_disabled"
    line = naming_line(run.bot_name, user.naming) if user.naming else None
    fields.append(profile_field(key, "naming", [line] if line else [], naming_hidden))

    identity_exposed = user.minimal and not user.blacklisted and run.personalization
    identity = [
        f"- {label}: {value.strip()}"
        for label, value in (("Gender Identity", row.gender_identity), ("Pronouns", row.pronouns))
        if value and value.strip()
    ]
    fields.append(profile_field(key, "identity", identity, None if identity_exposed else "privacy"))

    timezone = (
        [f"- {user.display_name}'s timezone: {utc_label(row.timezone_offset)}"]
        if row.timezone_offset is not None
        else []
    )
    fields.append(profile_field(key, "timezone", timezone, "impersonation" if imp else None))

    fields.append(presence_field(run, user))

    roles = _roles_line(user.member, run.server.server_disc_id) if user.member else []
    fields.append(profile_field(key, "roles", roles, None if user.minimal else "privacy"))

    memory_hidden = memory_hidden_reason(user, scope, run.personalization)
    memory_texts: list[str] = []
    if memory_hidden is None:
        for memory in memories:
            if not memory_passes_tags(
                memory,
                channel_name=run.channel_name,
                channel_memory_enabled=run.server.channel_memory_enabled,
                corpus=run.corpus,
            ):
                continue
            content = convert(run, memory.content, user.display_name, run.bot_name)
            memory_texts.append(_memory_entry_text(memory, content))
            run.memory_entries.append(MemoryEntry(memory.personal_memory_id, key, content, memory.created_at_ms))
    fields.append(
        profile_field(
            key,
            "personal_memories",
            [f"- Memories: {'; '.join(memory_texts)}"] if memory_texts else [],
            memory_hidden,
        )
    )

    reminder_lines = [
        "  - "
        + format_reminder(
            reminder_id=r.reminder_id,
            purpose=r.reminder_purpose,
            reminder_time_ms=r.reminder_time_ms,
            repetition_interval_hours=r.repetition_interval_hours,
            server_offset_hours=run.server.timezone_offset,
        )
        for r in reminders
    ]
    fields.append(
        profile_field(key, "human_reminders", ["- Reminders:", *reminder_lines] if reminder_lines else [], None)
    )
    return fields


def presence_field(run: HydrationRun, user: UserState) -> ParticipantProfileField:
    """H-12 presence: exposed only at MINIMAL; a raised error hides it as `optional_failure`."""
    if not user.minimal:
        return profile_field(user.key, "presence", [], "privacy")
    read = lambda: member_presence(  # noqa: E731
        user.member,
        is_dm=run.server.is_dm,
        guild_available=run.deps.guild_available,
        presence_intent=run.deps.presence_intent,
        now_ms=run.now_ms,
    )
    outcome = run.calls.guarded("presence_reads", 1, read, None)
    if outcome is None:
        return profile_field(user.key, "presence", [], "optional_failure")
    if outcome.text is None:
        return profile_field(user.key, "presence", [], "missing_data")
    return profile_field(user.key, "presence", [f"- Status: {outcome.text}"], None)
