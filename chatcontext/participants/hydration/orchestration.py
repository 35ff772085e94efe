"""Profile hydration (participants.md §3 H-01..H-22, §4 P-01..P-07).

``hydrate_participant_profiles`` is the imperative shell of phase 2: it reads everything it needs
through one ``HydrationDeps`` object in a constant number of batched reads (rows, privacy,
blacklist, registrations, memories, reminders, naming preferences — each one query for all
participants) plus targeted Discord reads per participant, then builds the profiles with pure
helpers. Privacy decisions are taken here, before rendering: the renderer only ever sees fields
that are allowed to be shown.

Fail closed (H-06): an unreadable blacklist entry counts as blacklisted, an unreadable privacy level
as FULL, for that participant only; every other optional read degrades to "no data".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chatcontext.participants.aliases import bridge_alias, user_aliases
from chatcontext.participants.loaders import BatchRead, HydrationDeps, ReminderQuery
from chatcontext.participants.mentions import MentionDirectory, MentionTarget, convert_mentions, extend_directory
from chatcontext.participants.model import (
    ActivePersonaScope,
    HiddenReason,
    HydratedParticipantProfile,
    ParticipantAlias,
    ParticipantKey,
    ParticipantProfileField,
    ParticipantSeed,
    PreparedParticipantContext,
    PublicPersonaProfile,
    make_alias,
)
from chatcontext.participants.naming import (
    NamingPreference,
    PersonaRelativeName,
    base_display_name,
    live_name,
    naming_line,
    persona_relative_name,
    primary_alias,
    saved_name_allowed,
)
from chatcontext.participants.presence import member_presence
from chatcontext.participants.render import BOT_STATUS_LINE, TASKS_HEADER, UNKNOWN_STATUS_LINE
from chatcontext.participants.timefmt import format_reminder, utc_label
from chatcontext.types import (
    Author,
    MemberInfo,
    MemoryRow,
    PersonaInfo,
    PrivacyLevel,
    ReminderRow,
    ServerConfig,
    SimplifiedMessage,
    UserRow,
)

logger = logging.getLogger(__name__)
T = TypeVar("T")

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

MENTIONABLE = "mentionable"
DEPENDENCIES = (
    "user_row_loads",
    "registrations",
    "blacklist_reads",
    "privacy_reads",
    "personal_memory_reads",
    "reminder_reads",
    "member_reads",
    "fallback_user_reads",
    "presence_reads",
    "naming_preference_reads",
)


@dataclass(frozen=True)
class RequestSnapshot:
    """Per-request triggerer state (data-model.md §2.20) used by the H-05 fast path and R-14."""

    triggerer_id: str | None = None
    triggerer_row: UserRow | None = None
    is_triggerer_blacklisted: bool = False
    triggerer_privacy_level: int = PrivacyLevel.MINIMAL
    preloaded_member: MemberInfo | None = None


@dataclass(frozen=True)
class MemoryEntry:
    """N-02: one visible personal memory (content already converted, H-14 step 5)."""

    memory_id: int
    owner_key: ParticipantKey
    content: str
    created_at_ms: int


@dataclass
class HydrationResult:
    """H-22 output, plus what the item builder needs to convert and project without reading again."""

    profiles: list[HydratedParticipantProfile]
    persona_task_lines: list[str]
    diagnostics: dict[str, Any]
    memory_entries: list[MemoryEntry] = field(default_factory=list)
    mention_directory: MentionDirectory = field(default_factory=MentionDirectory)


def build_conversation_corpus(history: Iterable[SimplifiedMessage], *, memory_tagging_enabled: bool) -> str | None:
    """H-14 step 4 corpus: sanitized contents joined by a space, lower-cased; None when tagging is off."""
    if not memory_tagging_enabled:
        return None
    return " ".join(m.content for m in history if m.content).lower()


# ------------------------------------------------------------------------------------------------
# Dependency calls with counting and failure handling
# ------------------------------------------------------------------------------------------------


@dataclass
class _Calls:
    """Counts per dependency (participants read) and per batched call; never ids (H-02, H-22)."""

    reads: dict[str, int] = field(default_factory=lambda: dict.fromkeys(DEPENDENCIES, 0))
    batches: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)

    def batch(self, name: str, count: int) -> None:
        self.reads[name] += count
        self.batches[name] = self.batches.get(name, 0) + 1

    def failed(self, name: str, count: int = 1) -> None:
        self.failures[name] = self.failures.get(name, 0) + count
        # The exception text may carry ids or names: log the dependency only (no exc_info).
        logger.warning("participant hydration read failed: %s", name)

    def guarded(self, name: str, count: int, read: Callable[[], T], fallback: T, *, failures: int | None = None) -> T:
        """One batched read of ``count`` participants: counted, and ``fallback`` when it raises (H-06:
        the caller's fallback says whether that fails closed). ``failures`` is what a raise counts,
        ``count`` unless given."""
        self.batch(name, count)
        try:
            return read()
        except Exception:
            self.failed(name, count if failures is None else failures)
            return fallback


def _fail_closed_read(
    calls: _Calls, name: str, ids: list[str], read: Callable[[list[str]], BatchRead[Any]]
) -> tuple[Mapping[str, Any], set[str]]:
    if not ids:
        return {}, set()
    result = calls.guarded(name, len(ids), lambda: read(ids), BatchRead[Any]({}, frozenset(ids)))
    if result.failed:
        calls.failed(name, len(result.failed))
    return result.values, set(result.failed)


# ------------------------------------------------------------------------------------------------
# Per-user state (the Discord users of §3.2)
# ------------------------------------------------------------------------------------------------


@dataclass
class _User:
    seed: ParticipantSeed
    disc_id: str
    row: UserRow
    member: MemberInfo | None
    fallback: Author | None
    privacy: int = PrivacyLevel.MINIMAL
    blacklisted: bool = False
    is_triggerer: bool = False
    is_impersonated: bool = False
    display_name: str = ""
    saved_name_use: bool = False
    naming: PersonaRelativeName | None = None  # set when H-09 ran

    @property
    def key(self) -> ParticipantKey:
        return self.seed.key

    @property
    def minimal(self) -> bool:
        return self.privacy == PrivacyLevel.MINIMAL


def _field(
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


def _clean_tags(tags: Iterable[str]) -> list[str]:
    return [t.strip() for t in tags if t and t.strip()]


def _appearance_line(label: str, tags: Iterable[str]) -> list[str]:
    cleaned = _clean_tags(tags)
    return [f"- {label}'s Physical Appearance: {', '.join(cleaned)}"] if cleaned else []


def _normalize_tag(tag: str) -> str:
    """H-14 step 2: strip leading and trailing quote characters."""
    return tag.strip().strip("\"'")


def memory_passes_tags(
    memory: MemoryRow, *, channel_name: str, channel_memory_enabled: bool, corpus: str | None
) -> bool:
    """H-14 steps 2–4: channel tags against the channel name, content tags against the corpus."""
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


def _memory_hidden_reason(user: _User, scope: ActivePersonaScope, personalization: bool) -> HiddenReason | None:
    """P-04/P-05 precedence: impersonation > blacklist > personalization_disabled > privacy."""
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


# ------------------------------------------------------------------------------------------------
# The hydration run
# ------------------------------------------------------------------------------------------------


class _Hydration:
    def __init__(
        self,
        prepared: PreparedParticipantContext,
        scope: ActivePersonaScope,
        *,
        deps: HydrationDeps,
        server: ServerConfig,
        active_persona: PersonaInfo | None,
        bot_name: str,
        channel_name: str,
        bot_user_id: str | None,
        now_ms: int,
        snapshot: RequestSnapshot,
        corpus: str | None,
        impersonated_identity_name: str | None,
        expand_attribute_macros: Callable[[str], str] | None,
        mention_directory: MentionDirectory | None,
    ) -> None:
        self.prepared = prepared
        self.scope = scope
        self.deps = deps
        self.server = server
        self.persona = active_persona
        self.bot_name = bot_name
        self.channel_name = channel_name
        self.bot_user_id = (bot_user_id or "").strip() or None
        self.now_ms = now_ms
        self.snapshot = snapshot
        self.corpus = corpus
        self.impersonated_name = (impersonated_identity_name or "").strip() or None
        self.expand = expand_attribute_macros
        self.personalization = server.personal_memories_enabled
        self.lineage = scope.lineage_id or 0
        self.calls = _Calls()
        self.directory = mention_directory if mention_directory is not None else MentionDirectory(self.bot_user_id)
        self.memory_entries: list[MemoryEntry] = []

    # -- loading (batched) ---------------------------------------------------------------------

    def _load_member(self, disc_id: str) -> MemberInfo | None:
        return self.calls.guarded("member_reads", 1, lambda: self.deps.load_member(disc_id), None)

    def _load_fallback(self, disc_id: str) -> Author | None:
        return self.calls.guarded("fallback_user_reads", 1, lambda: self.deps.load_fallback_user(disc_id), None)

    def load_users(self, seeds: Sequence[ParticipantSeed]) -> dict[ParticipantKey, _User]:
        """H-04/H-05/H-06 for every `discord_user` seed at once."""
        ids = [s.key.id for s in seeds]
        triggerer = self.snapshot.triggerer_id
        rows: dict[str, UserRow] = {}
        for disc_id in ids:
            preloaded = self.prepared.referenced_user_rows.get(disc_id)
            if isinstance(preloaded, UserRow):
                rows[disc_id] = preloaded
            elif disc_id == triggerer and self.snapshot.triggerer_row is not None:
                rows[disc_id] = self.snapshot.triggerer_row
        missing = [i for i in ids if i not in rows]
        if missing:
            rows.update(
                self.calls.guarded(
                    "user_row_loads", len(missing), lambda: self.deps.load_user_rows(missing), dict[str, UserRow]()
                )
            )

        members: dict[str, MemberInfo | None] = {}
        for disc_id in ids:
            if disc_id == triggerer and self.snapshot.preloaded_member is not None:
                members[disc_id] = self.snapshot.preloaded_member  # H-05: reused, no read
            else:
                members[disc_id] = self._load_member(disc_id)

        referenced = set(self.prepared.referenced_user_ids)
        to_register = [
            member
            for disc_id in ids
            if disc_id not in rows and disc_id not in referenced and (member := members[disc_id]) is not None
        ]
        if to_register:
            locale = self.server.preferred_locale or "en-US"
            register = lambda: self.deps.register_users(to_register, locale)  # noqa: E731
            rows.update(self.calls.guarded("registrations", len(to_register), register, dict[str, UserRow]()))

        users: dict[ParticipantKey, _User] = {}
        for seed in seeds:
            disc_id = seed.key.id
            row = rows.get(disc_id)
            if row is None:
                continue  # H-04: no row → no profile
            member = members[disc_id]
            fallback = self._load_fallback(disc_id) if member is None else None
            users[seed.key] = _User(
                seed=seed,
                disc_id=disc_id,
                row=row,
                member=member,
                fallback=fallback,
                is_triggerer=disc_id == triggerer,
                is_impersonated=self.scope.is_user_impersonation and disc_id == self.scope.impersonated_user_id,
            )
        self._load_privacy_and_blacklist(list(users.values()))
        return users

    def _load_privacy_and_blacklist(self, users: list[_User]) -> None:
        others = [u.disc_id for u in users if not u.is_triggerer]
        levels, privacy_failed = _fail_closed_read(self.calls, "privacy_reads", others, self.deps.load_privacy_levels)
        listed, blacklist_failed = _fail_closed_read(
            self.calls,
            "blacklist_reads",
            others,
            lambda ids: self.deps.load_blacklisted(self.server.server_id, ids),
        )
        for user in users:
            if user.is_triggerer:
                # H-05: the snapshot answers without reads.
                user.privacy = int(self.snapshot.triggerer_privacy_level)
                user.blacklisted = self.snapshot.is_triggerer_blacklisted
                continue
            level = levels.get(user.disc_id, PrivacyLevel.MINIMAL)  # P-01: no row reads as MINIMAL
            valid = isinstance(level, int) and level in tuple(PrivacyLevel)
            user.privacy = PrivacyLevel.FULL if user.disc_id in privacy_failed or not valid else int(level)
            user.blacklisted = user.disc_id in blacklist_failed or bool(listed.get(user.disc_id, False))

    def load_naming_preferences(self, users: Iterable[_User]) -> dict[tuple[int, int], NamingPreference]:
        pairs = [(u.row.user_id, self.lineage) for u in users if u.saved_name_use]
        if not pairs or not self.lineage:
            return {}
        read = lambda: self.deps.load_naming_preferences(pairs)  # noqa: E731
        return self.calls.guarded("naming_preference_reads", len(pairs), read, {})

    def load_memories(self, users: Iterable[_User]) -> dict[int, list[MemoryRow]]:
        wanted = [u.row.user_id for u in users if _memory_hidden_reason(u, self.scope, self.personalization) is None]
        if not wanted:
            return {}
        read = lambda: self.deps.load_personal_memories(wanted, self.lineage)  # noqa: E731
        loaded = self.calls.guarded("personal_memory_reads", len(wanted), read, None)
        if loaded is None:
            return {}
        allowed_lineages = {self.lineage, 0}
        allowed_users = set(wanted)
        # Defence in depth: whatever the loader returned, another lineage or user never passes.
        return {
            user_id: sorted(
                (m for m in rows if m.persona_lineage_id in allowed_lineages and m.user_id == user_id),
                key=lambda m: (m.created_at_ms, m.personal_memory_id),
                reverse=True,
            )
            for user_id, rows in loaded.items()
            if user_id in allowed_users
        }

    def self_tasks_wanted(self) -> bool:
        """H-21: not on impersonation turns, and only with a bot id and a persona id."""
        scope = self.scope
        return not scope.is_user_impersonation and self.bot_user_id is not None and scope.persona_id is not None

    def load_reminders(self, users: Iterable[_User]) -> tuple[dict[str, list[ReminderRow]], list[ReminderRow]]:
        """H-15 and H-21 in one read, each re-checked here against its rule."""
        human_ids = tuple(u.disc_id for u in users)
        bot_id = self.bot_user_id if self.self_tasks_wanted() else None
        persona_id = self.scope.persona_id
        if persona_id is None or not (human_ids or bot_id):
            return {}, []  # [DES] H-15: without a persona id no reminder is shown
        query = ReminderQuery(
            server_id=self.server.server_id,
            human_ids=human_ids,
            persona_id=persona_id,
            include_unassigned=self.scope.is_main_persona,
            bot_user_id=bot_id,
            now_ms=self.now_ms,
        )
        count = len(human_ids) + (1 if bot_id else 0)
        rows = self.calls.guarded("reminder_reads", count, lambda: self.deps.load_reminders(query), None, failures=1)
        if rows is None:
            return {}, []
        wanted_humans = set(human_ids)
        human: dict[str, list[ReminderRow]] = {}
        tasks: list[ReminderRow] = []
        for row in sorted(rows, key=lambda r: (r.reminder_time_ms, r.reminder_id or 0)):
            if row.reminder_time_ms <= self.now_ms:
                continue
            if bot_id is not None and row.user_discord_id == bot_id:
                if row.self_reminder and row.persona_id == persona_id:
                    tasks.append(row)
            elif row.user_discord_id in wanted_humans and (
                row.persona_id == persona_id or (row.persona_id is None and self.scope.is_main_persona)
            ):
                human.setdefault(row.user_discord_id, []).append(row)
        return human, tasks

    # -- identity ------------------------------------------------------------------------------

    def resolve_identity(self, user: _User, preferences: Mapping[tuple[int, int], NamingPreference]) -> None:
        """H-07..H-09 display name and naming of one user (``saved_name_use`` already set, P-02)."""
        if self.scope.is_user_impersonation:
            user.display_name = (self.impersonated_name if user.is_impersonated else None) or base_display_name(
                discord_id=user.disc_id,
                row=user.row,
                member=user.member,
                fallback_user=user.fallback,
                saved_name_use=user.saved_name_use,
            )
            return
        user.naming = persona_relative_name(
            row=user.row,
            live=live_name(user.member, user.fallback, user.disc_id),
            persona=self.persona,
            preference=preferences.get((user.row.user_id, self.lineage)),
            personalized=user.saved_name_use,
        )
        user.display_name = user.naming.formatted

    def user_aliases(self, user: _User) -> list[ParticipantAlias]:
        """H-10: seed aliases + D-06 (saved nickname exposed per P-02) + impersonated identity + H-09."""
        member, fallback = user.member, user.fallback
        return [
            *user.seed.aliases,
            *user_aliases(
                user.key,
                saved_nickname=user.row.user_nickname,
                guild_display_name=member.display_name if member else None,
                guild_nickname=member.nickname if member else None,
                global_name=(member.global_name if member else None) or (fallback.global_name if fallback else None),
                username=(member.username if member else None) or (fallback.username if fallback else None),
                discord_id=user.disc_id,
                expose_saved_nickname=user.saved_name_use,
                impersonated_identity=self.impersonated_name if user.is_impersonated else None,
                effective_nickname=user.naming.nickname if user.naming else None,
                formatted_name=user.naming.formatted if user.naming else None,
            ),
        ]

    def register_mention_targets(self, users: Iterable[_User]) -> None:
        """R-14/P-07: a participant's `<@id>` may show the saved nickname only with saved-name use."""
        for user in users:
            member, fallback = user.member, user.fallback
            self.directory.users[user.disc_id] = MentionTarget(
                saved_nickname=(user.row.user_nickname or "").strip() or None if user.saved_name_use else None,
                server_nickname=(member.nickname if member else None) or None,
                username=(member.username if member else None)
                or (fallback.username if fallback else None)
                or user.row.username
                or None,
            )
        snap = self.snapshot
        if snap.triggerer_id and snap.triggerer_id not in self.directory.users and snap.triggerer_row is not None:
            allowed = saved_name_allowed(
                personalization_enabled=self.personalization,
                blacklisted=snap.is_triggerer_blacklisted,
                privacy_level=snap.triggerer_privacy_level,
            )
            member = snap.preloaded_member
            self.directory.users[snap.triggerer_id] = MentionTarget(
                saved_nickname=(snap.triggerer_row.user_nickname or "").strip() or None if allowed else None,
                server_nickname=(member.nickname if member else None) or None,
                username=(member.username if member else None) or snap.triggerer_row.username or None,
            )

    def convert(self, text: str, user_name: str, bot_name: str) -> str:
        return convert_mentions(text, user_name, bot_name, self.personalization, directory=self.directory)

    # -- fields --------------------------------------------------------------------------------

    def user_fields(
        self, user: _User, memories: Sequence[MemoryRow], reminders: Sequence[ReminderRow]
    ) -> list[ParticipantProfileField]:
        key, row, scope = user.key, user.row, self.scope
        imp = scope.is_user_impersonation
        fields: list[ParticipantProfileField] = []

        # physical_appearance [SEED]: MINIMAL only (blacklist and personalization do not hide it).
        appearance_hidden: HiddenReason | None = "impersonation" if imp else None if user.minimal else "privacy"
        fields.append(
            _field(
                key,
                "physical_appearance",
                _appearance_line(user.display_name, row.physical_appearance_tags),
                appearance_hidden,
            )
        )

        naming_hidden: HiddenReason | None = None
        if imp:
            naming_hidden = "impersonation"
        elif not user.saved_name_use:
            naming_hidden = "blacklist" if user.blacklisted else "privacy"
            if not self.personalization:
                naming_hidden = "personalization_disabled"
        line = naming_line(self.bot_name, user.naming) if user.naming else None
        fields.append(_field(key, "naming", [line] if line else [], naming_hidden))

        identity_exposed = user.minimal and not user.blacklisted and self.personalization
        identity = [
            f"- {label}: {value.strip()}"
            for label, value in (("Gender Identity", row.gender_identity), ("Pronouns", row.pronouns))
            if value and value.strip()
        ]
        fields.append(_field(key, "identity", identity, None if identity_exposed else "privacy"))

        timezone = (
            [f"- {user.display_name}'s timezone: {utc_label(row.timezone_offset)}"]
            if row.timezone_offset is not None
            else []
        )
        fields.append(_field(key, "timezone", timezone, "impersonation" if imp else None))

        fields.append(self.presence_field(user))

        roles = _roles_line(user.member, self.server.server_disc_id) if user.member else []
        fields.append(_field(key, "roles", roles, None if user.minimal else "privacy"))

        memory_hidden = _memory_hidden_reason(user, scope, self.personalization)
        memory_texts: list[str] = []
        if memory_hidden is None:
            for memory in memories:
                if not memory_passes_tags(
                    memory,
                    channel_name=self.channel_name,
                    channel_memory_enabled=self.server.channel_memory_enabled,
                    corpus=self.corpus,
                ):
                    continue
                content = self.convert(memory.content, user.display_name, self.bot_name)
                memory_texts.append(_memory_entry_text(memory, content))
                self.memory_entries.append(MemoryEntry(memory.personal_memory_id, key, content, memory.created_at_ms))
        fields.append(
            _field(
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
                server_offset_hours=self.server.timezone_offset,
            )
            for r in reminders
        ]
        fields.append(_field(key, "human_reminders", ["- Reminders:", *reminder_lines] if reminder_lines else [], None))
        return fields

    def presence_field(self, user: _User) -> ParticipantProfileField:
        """H-12 presence: exposed only at MINIMAL; a raised error hides it as `optional_failure`."""
        if not user.minimal:
            return _field(user.key, "presence", [], "privacy")
        read = lambda: member_presence(  # noqa: E731
            user.member,
            is_dm=self.server.is_dm,
            guild_available=self.deps.guild_available,
            presence_intent=self.deps.presence_intent,
            now_ms=self.now_ms,
        )
        outcome = self.calls.guarded("presence_reads", 1, read, None)
        if outcome is None:
            return _field(user.key, "presence", [], "optional_failure")
        if outcome.text is None:
            return _field(user.key, "presence", [], "missing_data")
        return _field(user.key, "presence", [f"- Status: {outcome.text}"], None)

    # -- other participant kinds ----------------------------------------------------------------

    def bot_profile(self, seed: ParticipantSeed) -> HydratedParticipantProfile:
        """H-16: the active identity."""
        imp = self.scope.is_user_impersonation
        tags = self.persona.physical_appearance_tags if self.persona else ()
        return HydratedParticipantProfile(
            key=seed.key,
            reasons=set(seed.reasons),
            display_name=self.bot_name,
            aliases=[],
            primary_alias=None,
            mentionable=False,
            is_bot=True,
            resolvable_target_id=None,
            fields=[
                _field(
                    seed.key,
                    "physical_appearance",
                    _appearance_line(self.bot_name, tags),
                    "impersonation" if imp else None,
                ),
                _field(seed.key, "status", [BOT_STATUS_LINE], None),
            ],
        )

    def matrix_profile(self, seed: ParticipantSeed) -> HydratedParticipantProfile | None:
        """H-17."""
        display = (self.prepared.matrix_users.get(seed.key.id) or seed.source_display_name or "").strip()
        if not display:
            return None
        aliases = list(seed.aliases) or bridge_alias(seed.key.id, display)
        return HydratedParticipantProfile(
            key=seed.key,
            reasons=set(seed.reasons),
            display_name=display,
            aliases=aliases,
            primary_alias=display,
            mentionable=False,
            is_bot=False,
            resolvable_target_id=seed.key.id,
            fields=[_field(seed.key, "status", [UNKNOWN_STATUS_LINE], None)],
        )

    def synthetic_profile(self, seed: ParticipantSeed) -> HydratedParticipantProfile | None:
        """H-18: historical persona or webhook (no fields, no handle, no target)."""
        synthetic = self.prepared.synthetic_users
        if seed.key.kind == "persona":
            entry = synthetic.get(f"persona:{seed.key.id}") or synthetic.get(seed.key.id) or {}
        else:
            entry = synthetic.get(seed.key.id) or {}
        display = (seed.source_display_name or entry.get("display_name") or "").strip()
        if not display:
            return None
        return HydratedParticipantProfile(
            key=seed.key,
            reasons=set(seed.reasons),
            display_name=display,
            aliases=list(seed.aliases),
            primary_alias=None,
            mentionable=False,
            is_bot=False,
            resolvable_target_id=None,
        )

    def apply_public_profiles(
        self, profiles: list[HydratedParticipantProfile], seeds: Mapping[ParticipantKey, ParticipantSeed]
    ) -> None:
        """H-19: public persona fields merge by persona key; otherwise a public-only profile is appended."""
        imp = self.scope.is_user_impersonation
        by_key = {p.key: p for p in profiles}
        for public in self.prepared.public_persona_profiles:
            if public.persona_id == self.scope.persona_id:
                continue
            key = ParticipantKey.persona(public.persona_id)
            attributes = self.public_attributes(public)
            tags = [] if imp else _clean_tags(public.image_appearance_tags)
            if not attributes and not tags:
                continue
            existing = by_key.get(key)
            label = existing.display_name if existing else public.persona_name
            hidden: HiddenReason | None = "impersonation" if imp else None
            appearance = _field(key, "physical_appearance", _appearance_line(label, tags), hidden)
            attribute_field = _field(
                key,
                "persona_public_attributes",
                [f"- Known Information about {label}:", *(f"  - {a}" for a in attributes)] if attributes else [],
                None,
            )
            if existing is not None:
                replaced = {"physical_appearance", "persona_public_attributes"}
                kept = [f for f in existing.fields if f.kind not in replaced]
                existing.fields = [*kept, appearance, attribute_field]
                continue
            seed = seeds.get(key)
            alias = make_alias(
                key,
                public.persona_name,
                "persona_nickname",
                {"output_mention", "tool_target", "copied_identity"},
                "visible",
                10,
                public.persona_name,
            )
            profile = HydratedParticipantProfile(
                key=key,
                reasons=set(seed.reasons) if seed else {"persona_trigger_reference"},
                display_name=public.persona_name,
                aliases=[alias] if alias else [],
                primary_alias=public.persona_name,
                mentionable=False,
                is_bot=False,
                resolvable_target_id=key.serialized,
                fields=[appearance, _field(key, "status", [UNKNOWN_STATUS_LINE], None), attribute_field],
            )
            profiles.append(profile)
            by_key[key] = profile

    def public_attributes(self, public: PublicPersonaProfile) -> list[str]:
        out: list[str] = []
        for attribute in public.attributes:
            text = attribute.strip()
            if not text:
                continue
            if self.expand is not None:
                text = self.expand(text)
            text = self.convert(text, "User", public.persona_name).strip()
            if text:
                out.append(text)
        return out

    def task_lines(self, tasks: Sequence[ReminderRow]) -> list[str]:
        """H-21: header then `- {reminder}` with the destination channel when set."""
        if not tasks:
            return []
        lines = [TASKS_HEADER]
        for task in tasks:
            line = "- " + format_reminder(
                reminder_id=task.reminder_id,
                purpose=task.reminder_purpose,
                reminder_time_ms=task.reminder_time_ms,
                repetition_interval_hours=task.repetition_interval_hours,
                server_offset_hours=self.server.timezone_offset,
            )
            if task.channel_disc_id:
                line += f" (destination: <#{task.channel_disc_id}>)"
            lines.append(line)
        return lines

    # -- orchestration ---------------------------------------------------------------------------

    def run(self, seeds: Sequence[ParticipantSeed]) -> HydrationResult:
        user_seeds = [s for s in seeds if s.key.kind == "discord_user"]
        users = self.load_users(user_seeds)
        for user in users.values():
            user.saved_name_use = saved_name_allowed(
                personalization_enabled=self.personalization, blacklisted=user.blacklisted, privacy_level=user.privacy
            )
        # H-09 is skipped on impersonation turns, so their preferences are never read.
        preferences = {} if self.scope.is_user_impersonation else self.load_naming_preferences(users.values())
        for user in users.values():
            self.resolve_identity(user, preferences)
        memories = self.load_memories(users.values())
        reminders, tasks = self.load_reminders(users.values())

        self.register_mention_targets(users.values())
        texts = [m.content for rows in memories.values() for m in rows]
        texts += [a for p in self.prepared.public_persona_profiles for a in p.attributes]
        extend_directory(self.directory, texts, self.deps)

        profiles: list[HydratedParticipantProfile] = []
        has_bot = False
        for seed in seeds:
            kind = seed.key.kind
            if kind == "discord_user":
                found = users.get(seed.key)
                if found is not None:
                    profiles.append(self.user_profile(found, memories, reminders))
            elif kind == "bot" or (kind == "persona" and "active_identity" in seed.reasons):
                if not has_bot:
                    profiles.append(self.bot_profile(seed))
                    has_bot = True
            elif kind == "matrix_user":
                matrix = self.matrix_profile(seed)
                if matrix is not None:
                    profiles.append(matrix)
            elif kind == "webhook" or (kind == "persona" and "historical_persona" in seed.reasons):
                synthetic = self.synthetic_profile(seed)
                if synthetic is not None:
                    profiles.append(synthetic)
        self.apply_public_profiles(profiles, {s.key: s for s in seeds})
        return HydrationResult(
            profiles=profiles,
            persona_task_lines=self.task_lines(tasks),
            diagnostics={
                "profile_count": len(profiles),
                "external_calls": dict(self.calls.reads),
                "dependency_calls": dict(self.calls.batches),
                "read_failures": dict(self.calls.failures),
                # H-22 lists enricher outcomes; extension enrichers are deferred (H-20), so there
                # are none, and the key stays for the stored diagnostics' shape.
                "enrichers": {},
            },
            memory_entries=sorted(self.memory_entries, key=lambda e: (e.created_at_ms, e.memory_id), reverse=True),
            mention_directory=self.directory,
        )

    def user_profile(
        self, user: _User, memories: Mapping[int, list[MemoryRow]], reminders: Mapping[str, list[ReminderRow]]
    ) -> HydratedParticipantProfile:
        return HydratedParticipantProfile(
            key=user.key,
            reasons=set(user.seed.reasons),
            display_name=user.display_name,
            aliases=self.user_aliases(user),
            primary_alias=primary_alias(user.member, user.fallback, user.disc_id),
            mentionable=MENTIONABLE in user.seed.capabilities,
            is_bot=False,
            resolvable_target_id=user.disc_id,
            fields=self.user_fields(user, memories.get(user.row.user_id, []), reminders.get(user.disc_id, [])),
            timezone_offset=user.row.timezone_offset,
        )


def hydrate_participant_profiles(
    prepared: PreparedParticipantContext,
    scope: ActivePersonaScope,
    *,
    deps: HydrationDeps,
    server: ServerConfig,
    channel_name: str,
    bot_user_id: str | None,
    now_ms: int,
    request_snapshot: RequestSnapshot | None = None,
    active_persona: PersonaInfo | None = None,
    bot_name: str | None = None,
    conversation_corpus: str | None = None,
    impersonated_identity_name: str | None = None,
    expand_attribute_macros: Callable[[str], str] | None = None,
    mention_directory: MentionDirectory | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> HydrationResult:
    """H-01..H-22: profiles in seed order (public-only personas last), persona task lines, diagnostics.

    ``bot_name`` defaults to the active persona's nickname. ``conversation_corpus`` comes from
    ``build_conversation_corpus`` (None when memory tagging is off). ``expand_attribute_macros`` is
    the tool layer's macro resolver for public attributes (H-19). ``mention_directory`` is the turn's
    one directory (R-14): the participants are registered in it with the names P-02 allows, so every
    later conversion of the turn names them alike; None gives the run a directory of its own.
    ``clock`` only measures the duration reported in the diagnostics.
    """
    started = clock()
    seeds = prepared.discovery_plan.seeds
    keys = [s.key for s in seeds]
    if len(set(keys)) != len(keys):
        raise ValueError("participant seeds must have unique keys")  # H-03
    name = (bot_name or (active_persona.persona_nickname if active_persona else "") or "").strip() or "Tomori"
    run = _Hydration(
        prepared,
        scope,
        deps=deps,
        server=server,
        active_persona=active_persona,
        bot_name=name,
        channel_name=channel_name,
        bot_user_id=bot_user_id,
        now_ms=now_ms,
        snapshot=request_snapshot or RequestSnapshot(),
        corpus=conversation_corpus if server.memory_tagging_enabled else None,
        impersonated_identity_name=impersonated_identity_name,
        expand_attribute_macros=expand_attribute_macros,
        mention_directory=mention_directory,
    )
    if not seeds:
        result = HydrationResult([], [], {"profile_count": 0, "external_calls": dict(run.calls.reads)})
    else:
        result = run.run(seeds)
    result.diagnostics["duration_ms"] = round((clock() - started) * 1000, 3)
    return result
