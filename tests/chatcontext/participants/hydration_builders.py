"""Test doubles and builders for hydration and rendering (participants.md §3–§7, §8 common fixture).

``FakeDeps`` is an in-memory ``HydrationDeps`` that records which ids each batched read was asked
for and can fail per participant (H-06). ``FakeTransport`` drives the real
``DatabaseHydrationDeps`` in database-backed tests.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from chatcontext.core.participants.model import (
    ActivePersonaScope,
    ParticipantAlias,
    ParticipantDiscoveryPlan,
    ParticipantKey,
    ParticipantSeed,
    PreparedParticipantContext,
    PublicPersonaProfile,
)
from chatcontext.core.participants.naming import NamingPreference
from chatcontext.core.types import (
    Author,
    MemberInfo,
    MemoryRow,
    PersonaInfo,
    ReminderRow,
    ServerConfig,
    ServerMemoryRow,
    SimplifiedMessage,
    TriggererName,
    UserRow,
)
from chatcontext.participants.hydration import ParticipantTurn, RequestSnapshot
from chatcontext.participants.items import ParticipantItems, build_participant_context_items
from chatcontext.participants.loaders import BatchRead, LineageMemories, MemoryQuery, ReminderQuery
from chatcontext.participants.prepare import prepare_participant_context
from tests.chatcontext.participants.builders import (
    BO,
    CHANNEL,
    NOW_MS,
    A,
    B,
    E,
    FakeCandidateSource,
    FakeMemberDirectory,
    G,
    alice_member,
    alice_row,
    bob_member,
    bob_row,
    erin_member,
    erin_row,
    preparation_input,
    tomori,
    world_members,
    world_rows,
)

HOUR_MS = 3_600_000


def ms(iso: str) -> int:
    """`2026-05-21T09:00` (UTC) → epoch milliseconds."""
    return int(datetime.fromisoformat(iso).replace(tzinfo=UTC).timestamp() * 1000)


def server(**changes: object) -> ServerConfig:
    """§8: offset 9, personalization on, tagging and channel memory off."""
    base = ServerConfig(server_id=1, server_disc_id=G, name="Guild", timezone_offset=9.0)
    return replace(base, **changes)  # type: ignore[arg-type]


def scope_for(persona: PersonaInfo, *, impersonated: str | None = None) -> ActivePersonaScope:
    return ActivePersonaScope(
        persona_id=persona.persona_id,
        lineage_id=persona.persona_lineage_id,
        is_main_persona=not persona.is_alter,
        is_user_impersonation=impersonated is not None,
        impersonated_user_id=impersonated,
    )


def user_seed(disc_id: str, *reasons: str, mentionable: bool = True) -> ParticipantSeed:
    return ParticipantSeed(
        ParticipantKey.discord_user(disc_id),
        set(reasons or ("visible_author",)),
        capabilities={"mentionable"} if mentionable else set(),
    )


def bot_seed() -> ParticipantSeed:
    return ParticipantSeed(ParticipantKey.bot(B), {"active_identity"})


def matrix_seed(matrix_id: str, aliases: Sequence[ParticipantAlias] = ()) -> ParticipantSeed:
    return ParticipantSeed(ParticipantKey.matrix_user(matrix_id), {"bridge_presence"}, list(aliases))


def public_profile(persona: PersonaInfo) -> PublicPersonaProfile:
    assert persona.persona_id is not None
    return PublicPersonaProfile(
        persona.persona_id,
        persona.persona_nickname,
        tuple(a.text for a in persona.attributes if a.is_public),
        tuple(t for t in persona.physical_appearance_tags if t.strip()),
    )


def prepared(
    seeds: Sequence[ParticipantSeed],
    *,
    matrix_users: dict[str, str] | None = None,
    synthetic_users: dict[str, dict[str, str]] | None = None,
    public: Sequence[PublicPersonaProfile] = (),
    referenced_rows: dict[str, UserRow] | None = None,
) -> PreparedParticipantContext:
    return PreparedParticipantContext(
        discovery_plan=ParticipantDiscoveryPlan(seeds=list(seeds)),
        matrix_users=matrix_users or {},
        synthetic_users=synthetic_users or {},
        public_persona_profiles=list(public),
        referenced_user_rows=dict(referenced_rows or {}),
        referenced_user_ids=list(referenced_rows or {}),
        diagnostics={},
    )


def memory(
    memory_id: int, user_id: int, content: str, *, lineage: int = 0, tags: Sequence[str] = (), created: int = 0
) -> MemoryRow:
    return MemoryRow(memory_id, user_id, lineage, content, tuple(tags), created or memory_id)


def reminder(
    reminder_id: int | None,
    target: str,
    purpose: str,
    *,
    at_ms: int = NOW_MS + HOUR_MS,
    persona_id: int | None = 1,
    self_reminder: bool = False,
    channel: str = "",
    repeat: int | None = None,
) -> ReminderRow:
    return ReminderRow(reminder_id, target, purpose, at_ms, channel, persona_id, self_reminder, repeat)


@dataclass
class FakeDeps:
    """In-memory ``HydrationDeps`` with the batched contract of ``DatabaseHydrationDeps``."""

    rows: dict[str, UserRow] = field(default_factory=dict)
    members: dict[str, MemberInfo] = field(default_factory=dict)
    plain_users: dict[str, Author] = field(default_factory=dict)
    privacy_failures: set[str] = field(default_factory=set)
    blacklisted: set[str] = field(default_factory=set)
    blacklist_failures: set[str] = field(default_factory=set)
    memories: list[MemoryRow] = field(default_factory=list)
    server_memories: list[ServerMemoryRow] = field(default_factory=list)
    memory_read_fails: bool = False
    reminders: list[ReminderRow] = field(default_factory=list)
    naming: dict[tuple[int, int], NamingPreference] = field(default_factory=dict)
    channels: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    guild_available: bool = True
    presence_intent: bool = True
    # Returns memories of every lineage, to prove hydration's own lineage guard.
    leak_all_lineages: bool = False
    calls: Counter[str] = field(default_factory=Counter)
    asked: dict[str, list[str]] = field(default_factory=dict)
    registered: list[str] = field(default_factory=list)

    def _ask(self, name: str, ids: Iterable[object]) -> None:
        self.calls[name] += 1
        self.asked.setdefault(name, []).extend(str(i) for i in ids)

    def load_user_rows(self, disc_ids: Sequence[str]) -> dict[str, UserRow]:
        self._ask("load_user_rows", disc_ids)
        return {i: self.rows[i] for i in disc_ids if i in self.rows}

    def register_users(self, members: Sequence[MemberInfo], language: str) -> dict[str, UserRow]:
        self._ask("register_users", [m.user_disc_id for m in members])
        out = {}
        for offset, member in enumerate(members):
            row = UserRow(900 + len(self.rows) + offset, member.user_disc_id, username=member.username)
            self.rows[member.user_disc_id] = row
            self.registered.append(member.user_disc_id)
            out[member.user_disc_id] = row
        return out

    def load_privacy_levels(self, disc_ids: Sequence[str]) -> BatchRead[int]:
        self._ask("load_privacy_levels", disc_ids)
        values = {i: self.rows[i].privacy_level for i in disc_ids if i in self.rows}
        return BatchRead(values, frozenset(set(disc_ids) & self.privacy_failures))

    def load_blacklisted(self, server_id: int | None, disc_ids: Sequence[str]) -> BatchRead[bool]:
        self._ask("load_blacklisted", disc_ids)
        values = {i: True for i in disc_ids if i in self.blacklisted}
        return BatchRead(values, frozenset(set(disc_ids) & self.blacklist_failures))

    def load_memories(self, query: MemoryQuery) -> LineageMemories:
        self._ask("load_memories", query.user_ids)
        if self.memory_read_fails:
            raise RuntimeError("memory read failed")
        lineages = {query.lineage_id, 0}
        out: dict[int, list[MemoryRow]] = {}
        for row in sorted(self.memories, key=lambda m: (m.created_at_ms, m.personal_memory_id), reverse=True):
            lineage_ok = self.leak_all_lineages or row.persona_lineage_id in lineages
            if row.user_id in query.user_ids and lineage_ok:
                out.setdefault(row.user_id, []).append(row)
        if query.server_id is None:
            return LineageMemories(out)
        server = [m for m in self.server_memories if self.leak_all_lineages or m.persona_lineage_id in lineages]
        return LineageMemories(out, server)

    def load_reminders(self, query: ReminderQuery) -> list[ReminderRow]:
        self._ask("load_reminders", [*query.human_ids, *([query.bot_user_id] if query.bot_user_id else [])])
        return [r for r in self.reminders if r.reminder_time_ms > query.now_ms]

    def load_naming_preferences(self, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], NamingPreference]:
        self._ask("load_naming_preferences", pairs)
        return {p: self.naming[p] for p in pairs if p in self.naming}

    def load_member(self, disc_id: str) -> MemberInfo | None:
        self._ask("load_member", [disc_id])
        return self.members.get(disc_id)

    def load_fallback_user(self, disc_id: str) -> Author | None:
        self._ask("load_fallback_user", [disc_id])
        return self.plain_users.get(disc_id)

    def channel_label(self, channel_id: str) -> str | None:
        return self.channels.get(channel_id)

    def role_name(self, role_id: str) -> str | None:
        return self.roles.get(role_id)


def world_deps(**changes: object) -> FakeDeps:
    """Alice, Bob and Erin with rows and members (§8 common fixture)."""
    deps = FakeDeps(
        rows={A: alice_row(), BO: bob_row(), E: erin_row()},
        members={A: alice_member(), BO: bob_member(), E: erin_member()},
        channels={CHANNEL: "#general"},
    )
    for name, value in changes.items():
        setattr(deps, name, value)
    return deps


def alice_snapshot(**changes: object) -> RequestSnapshot:
    """Alice is the triggerer of the common fixture (H-05)."""
    base = RequestSnapshot(triggerer_id=A, triggerer_row=alice_row(), preloaded_member=alice_member())
    return replace(base, **changes)  # type: ignore[arg-type]


def participant_turn(
    persona: PersonaInfo | None = None,
    *,
    impersonated: str | None = None,
    snapshot: RequestSnapshot | None = None,
    srv: ServerConfig | None = None,
    now_ms: int = NOW_MS,
    triggerer_name: str | None = None,
    impersonated_identity_name: str | None = None,
) -> ParticipantTurn:
    """A persona turn of the common fixture: Tomori (or ``persona``) active in #general."""
    active = persona or tomori()
    return ParticipantTurn(
        scope=scope_for(active, impersonated=impersonated),
        server=srv or server(),
        channel_name="general",
        channel_id=CHANNEL,
        bot_user_id=B,
        now_ms=now_ms,
        active_persona=active,
        request_snapshot=snapshot if snapshot is not None else RequestSnapshot(),
        impersonated_identity_name=impersonated_identity_name,
        triggerer=TriggererName(triggerer_name, triggerer_name) if triggerer_name is not None else None,
    )


def build(
    prep: PreparedParticipantContext,
    deps: FakeDeps,
    *,
    persona: PersonaInfo | None = None,
    impersonated: str | None = None,
    snapshot: RequestSnapshot | None = None,
    srv: ServerConfig | None = None,
    now_ms: int = NOW_MS,
    triggerer_name: str = "Ally",
    impersonated_identity_name: str | None = None,
    **kwargs: object,
) -> ParticipantItems:
    """One persona turn of the common fixture (Tomori active, Alice triggering, #general)."""
    if snapshot is None:
        snapshot = alice_snapshot(triggerer_row=deps.rows.get(A), preloaded_member=deps.members.get(A))
    turn = participant_turn(
        persona,
        impersonated=impersonated,
        snapshot=snapshot,
        srv=srv,
        now_ms=now_ms,
        triggerer_name=triggerer_name,
        impersonated_identity_name=impersonated_identity_name,
    )
    return build_participant_context_items(prep, turn, deps=deps, **kwargs)  # type: ignore[arg-type]


def all_item_text(items: ParticipantItems) -> str:
    """Every text and every metadata value the items carry, for leak checks."""
    import json

    parts = [i.text for i in items.items]
    parts.append(json.dumps(items.target_index))
    parts.append(json.dumps(items.conversation_users))
    parts.append(json.dumps(items.memory_projection))
    return "\n".join(parts)


def discover(history: list[SimplifiedMessage], **kwargs: object) -> PreparedParticipantContext:
    """Phase 1 over the §8 world (rows, cached members) for scenarios that start from history."""
    return prepare_participant_context(
        preparation_input(history, **kwargs),  # type: ignore[arg-type]
        candidate_source=FakeCandidateSource(world_rows()),
        member_directory=FakeMemberDirectory.of(world_members()),
        now_ms=NOW_MS,
    )


@dataclass
class FakeTransport:
    """The Discord half of ``DatabaseHydrationDeps``: cached members, targeted fetches, labels."""

    cached: dict[str, MemberInfo] = field(default_factory=dict)
    fetchable: dict[str, MemberInfo] = field(default_factory=dict)
    channels: dict[str, str] = field(default_factory=dict)
    guild_available: bool = True
    presence_intent: bool = True
    fetches: list[str] = field(default_factory=list)

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        return self.cached.get(user_id)

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        self.fetches.append(user_id)
        return self.fetchable.get(user_id)

    def fetch_user(self, user_id: str) -> Author | None:
        return None

    def channel_label(self, channel_id: str) -> str | None:
        return self.channels.get(channel_id)

    def role_name(self, role_id: str) -> str | None:
        return None
