"""Hydration dependencies (participants.md H-02), batched: one query per kind of row for the whole turn.

``HydrationDeps`` is the replaceable seam hydration reads through. Every SQL read takes all
participants at once, so hydrating 2 or 200 participants costs the same number of queries; Discord
reads (members, plain users, channel and role names) go through the transport, one targeted call
per id (cached member first), never the full member list.

Failure semantics are the caller's (H-06): a batched privacy or blacklist read reports unreadable ids
in ``BatchRead.failed`` (or raises, which fails every requested id) and hydration then treats those
participants — and only those — as FULL / blacklisted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from chatcontext import sql
from chatcontext.core.participants.naming import NamingPreference
from chatcontext.core.transport import ChatTransport
from chatcontext.core.types import Author, MemberInfo, MemoryRow, ReminderRow, ServerMemoryRow, UserRow
from chatcontext.repository import (
    MEMORY_ORDER,
    load_blacklisted,
    load_naming_preferences,
    load_user_rows,
    ms_to_datetime,
    server_memory_branch,
    server_memory_row,
)
from personas import actions
from personas import models as m

T = TypeVar("T")


@dataclass(frozen=True)
class BatchRead(Generic[T]):
    """Values of a batched read; ids in ``failed`` could not be read (absent ids simply have no row)."""

    values: Mapping[str, T] = field(default_factory=dict)
    failed: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ReminderQuery:
    """One read for H-15 (human reminders) and H-21 (persona self-tasks) together.

    ``bot_user_id`` is None when self-tasks are not wanted (impersonation, unknown bot id). A
    ``persona_id`` of None loads nothing ([DES] H-15: the reference would return every reminder).
    """

    server_id: int | None
    human_ids: tuple[str, ...]
    persona_id: int | None
    include_unassigned: bool
    bot_user_id: str | None
    now_ms: int


@dataclass(frozen=True)
class MemoryQuery:
    """One read for H-14 step 1 (the users' personal memories of the lineage and lineage 0) and, with
    a ``server_id``, the same lineages' server memories, which the builder lists (build-context.md
    §1.1): both are per-lineage reads of one turn, and a round trip costs it on PostgreSQL about as
    much as the read itself."""

    user_ids: tuple[int, ...]
    lineage_id: int
    server_id: int | None = None


@dataclass(frozen=True)
class LineageMemories:
    """Personal memories per user id, newest first, and the server memories (None: not asked for)."""

    personal: Mapping[int, list[MemoryRow]] = field(default_factory=dict)
    server: list[ServerMemoryRow] | None = None


class HydrationDeps(Protocol):
    """H-02 dependency object. Each method is one batched read (SQL) or one targeted Discord read."""

    @property
    def guild_available(self) -> bool: ...

    @property
    def presence_intent(self) -> bool: ...

    def load_user_rows(self, disc_ids: Sequence[str]) -> dict[str, UserRow]: ...

    def register_users(self, members: Sequence[MemberInfo], language: str) -> dict[str, UserRow]: ...

    def load_privacy_levels(self, disc_ids: Sequence[str]) -> BatchRead[int]: ...

    def load_blacklisted(self, server_id: int | None, disc_ids: Sequence[str]) -> BatchRead[bool]: ...

    def load_memories(self, query: MemoryQuery) -> LineageMemories: ...

    def load_reminders(self, query: ReminderQuery) -> list[ReminderRow]: ...

    def load_naming_preferences(self, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], NamingPreference]: ...

    def load_member(self, disc_id: str) -> MemberInfo | None: ...

    def load_fallback_user(self, disc_id: str) -> Author | None: ...

    def channel_label(self, channel_id: str) -> str | None: ...

    def role_name(self, role_id: str) -> str | None: ...


_MEMORY_COLUMNS = ("user", "persona_lineage_id", "content", "tags")
_REMINDER_COLUMNS = ("channel_disc_id", "persona", "self_reminder", "repetition_interval_hours", "created_by_user")


def _memory_row(
    memory_id: int, user_id: int, lineage: int, content: object, raw_tags: object, created_us: int
) -> MemoryRow | None:
    tags = sql.string_list(raw_tags)
    if tags is None or not isinstance(content, str):
        return None  # data-model §2.11: invalid rows are skipped
    return MemoryRow(memory_id, user_id, lineage, content, tags, sql.us_to_ms(created_us))


def _reminder_row(values: tuple[Any, ...]) -> ReminderRow:
    reminder_id, target, purpose, when, channel, persona_id, is_self, repeat, creator = values
    return ReminderRow(
        reminder_id, target, purpose, sql.us_to_ms(when), channel, persona_id, bool(is_self), repeat, creator
    )


def _ids(values: Iterable[str]) -> list[str]:
    return sorted(set(values))


class DatabaseHydrationDeps:
    """The production ``HydrationDeps``: plain SQL (``chatcontext.sql``) for rows, the ORM for registrations,
    the chat transport for Discord."""

    def __init__(self, transport: ChatTransport) -> None:
        self._transport = transport

    @property
    def guild_available(self) -> bool:
        return self._transport.guild_available

    @property
    def presence_intent(self) -> bool:
        return self._transport.presence_intent

    def load_user_rows(self, disc_ids: Sequence[str]) -> dict[str, UserRow]:
        return load_user_rows(disc_ids)

    def register_users(self, members: Sequence[MemberInfo], language: str) -> dict[str, UserRow]:
        """H-04 registration (``personas.actions.register_users``: one insert) plus one read-back, which
        returns whichever row won a concurrent registration."""
        if not members:
            return {}
        actions.register_users(
            [
                actions.NewUser(
                    member.user_disc_id, member.username or member.effective_display_name, member.global_name
                )
                for member in members
            ],
            language=language,
            actor=actions.Actor.system("participant registration (H-04)"),
        )
        return self.load_user_rows([member.user_disc_id for member in members])

    def load_privacy_levels(self, disc_ids: Sequence[str]) -> BatchRead[int]:
        ids = _ids(disc_ids)
        if not ids:
            return BatchRead()
        rows = sql.select_in(m.DiscordUser, ("user_disc_id", "privacy_level"), "user_disc_id", ids)
        return BatchRead(dict(rows))

    def load_blacklisted(self, server_id: int | None, disc_ids: Sequence[str]) -> BatchRead[bool]:
        ids = _ids(disc_ids)
        if server_id is None or not ids:
            return BatchRead()
        return BatchRead(dict.fromkeys(load_blacklisted(server_id, ids), True))

    def load_memories(self, query: MemoryQuery) -> LineageMemories:
        """H-14 step 1 for every user at once (lineage rows plus lineage 0, newest first), with the
        server memories in the same statement when asked for."""
        ids = sorted(set(query.user_ids))
        branches: list[str] = []
        params: list[Any] = []
        if ids:
            lineages = sorted({query.lineage_id, 0})
            p = sql.names(m.PersonalMemory)
            of_users, users_param = sql.any_of(m.PersonalMemory, p["user"], ids)
            branches.append(
                f"SELECT 0, {p['personal_memory_id']}, {p.columns(*_MEMORY_COLUMNS)}, "
                f"{sql.epoch_us(m.PersonalMemory, p['created_at'])} FROM {p.table} "
                f"WHERE {of_users} AND {p['persona_lineage_id']} IN ({sql.placeholders(lineages)})"
            )
            params += [users_param, *lineages]
        if query.server_id is not None:
            server_branch, server_params = server_memory_branch(query.server_id, query.lineage_id)
            branches.append(server_branch)
            params += server_params
        if not branches:
            return LineageMemories()
        personal: dict[int, list[MemoryRow]] = {}
        server: list[ServerMemoryRow] = []
        for values in sql.fetch(m.PersonalMemory, " UNION ALL ".join(branches) + MEMORY_ORDER, params):
            if values[0]:
                server.append(server_memory_row(values))
            elif (row := _memory_row(*values[1:])) is not None:
                personal.setdefault(row.user_id, []).append(row)
        return LineageMemories(personal, server if query.server_id is not None else None)

    def load_reminders(self, query: ReminderQuery) -> list[ReminderRow]:
        """H-15 and H-21 in one read: pending rows of this server for the humans and the bot."""
        if query.server_id is None or query.persona_id is None or not (query.human_ids or query.bot_user_id):
            return []
        r = sql.names(m.Reminder)
        wanted: list[str] = []
        params: list[Any] = [query.server_id, m.Reminder.Status.PENDING.value, ms_to_datetime(query.now_ms)]
        humans = _ids(query.human_ids)
        if humans:
            assigned = f"{r['persona']} = %s" + (f" OR {r['persona']} IS NULL" if query.include_unassigned else "")
            of_humans, humans_param = sql.any_of(m.Reminder, r["user_discord_id"], humans)
            wanted.append(f"({of_humans} AND ({assigned}))")
            params += [humans_param, query.persona_id]
        if query.bot_user_id:
            wanted.append(f"({r['user_discord_id']} = %s AND {r['self_reminder']} = %s AND {r['persona']} = %s)")
            params += [query.bot_user_id, True, query.persona_id]
        rows = sql.fetch(
            m.Reminder,
            f"SELECT {r.columns('reminder_id', 'user_discord_id', 'reminder_purpose')}, "
            f"{sql.epoch_us(m.Reminder, r['reminder_time'])}, {r.columns(*_REMINDER_COLUMNS)} FROM {r.table} "
            f"WHERE {r['server']} = %s AND {r['status']} = %s AND {r['reminder_time']} > %s "
            f"AND ({' OR '.join(wanted)}) ORDER BY {r['reminder_time']}, {r['reminder_id']}",
            params,
        )
        return [_reminder_row(values) for values in rows]

    def load_naming_preferences(self, pairs: Sequence[tuple[int, int]]) -> dict[tuple[int, int], NamingPreference]:
        """Data-model §2.10: every (user, lineage) pair of the turn in one read."""
        wanted = set(pairs)
        found = load_naming_preferences({u for u, _ in wanted}, {lineage for _, lineage in wanted})
        return {pair: preference for pair, preference in found.items() if pair in wanted}

    def load_member(self, disc_id: str) -> MemberInfo | None:
        """D-18/H-04: the cached member, else one targeted fetch of that id."""
        cached = self._transport.get_cached_member(disc_id)
        return cached if cached is not None else self._transport.fetch_member(disc_id)

    def load_fallback_user(self, disc_id: str) -> Author | None:
        return self._transport.fetch_user(disc_id)

    def channel_label(self, channel_id: str) -> str | None:
        return self._transport.channel_label(channel_id)

    def role_name(self, role_id: str) -> str | None:
        return self._transport.role_name(role_id)
