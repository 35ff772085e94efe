"""Database reads of the Build Context stage, batched: one query per kind of row, never per user.

These loaders and the participant loaders are the only place the stage touches the database. The
per-turn reads are plain SQL through ``chatcontext.sql`` (the ORM's query building cost more than the
queries, issue 9); the per-server ones (``load_server``, ``load_personas``) keep the ORM. Each returns
value objects from ``chatcontext.core.types`` so the pure middle never sees a model instance.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from django.db import connections, router

from chatcontext import sql
from chatcontext.core.participants.naming import NamingPreference
from chatcontext.core.preset import Preset
from chatcontext.core.types import (
    BlockRow,
    CardFields,
    EmojiRow,
    LoreEntryInfo,
    PersonaAttributeInfo,
    PersonaInfo,
    ServerConfig,
    ServerMemoryRow,
    StickerRow,
    UserRow,
)
from personas import models as m
from personas.values.sampling import Sampling

T = TypeVar("T")


def ms_to_datetime(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=UTC)


def datetime_to_ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def server_config(server: m.Server) -> ServerConfig:
    s = server.settings
    return ServerConfig(
        server_id=server.server_id,
        server_disc_id=server.server_disc_id,
        name=server.name,
        description=server.description or None,
        is_dm=server.is_dm_channel,
        message_fetch_limit=s.message_fetch_limit,
        timezone_offset=float(s.timezone_offset),
        memory_tagging_enabled=s.memory_tagging_enabled,
        channel_memory_enabled=s.channel_memory_enabled,
        personal_memories_enabled=s.personal_memories_enabled,
        emoji_usage_enabled=s.emoji_usage_enabled,
        sticker_usage_enabled=s.sticker_usage_enabled,
        time_awareness_enabled=s.time_awareness_enabled,
        user_blocking_enabled=s.user_blocking_enabled,
        deliberate_trigger_mode=s.deliberate_trigger_mode,
        always_reply_enabled=s.always_reply_enabled,
        prompt_command_enabled=s.prompt_snapshot_enabled,
        rp_channel_ids=tuple(str(c) for c in s.rp_channel_ids or ()),
        voice_transcript_chat_mode=s.voice_transcript_chat_mode,
        uncensor_injection_enabled=s.uncensor_injection_enabled,
        uncensor_unicode_space_enabled=s.uncensor_unicode_space_enabled,
        preferred_locale=server.registration_locale or "en-US",
    )


def load_server(server_disc_id: str) -> ServerConfig | None:
    server = m.Server.objects.select_related("settings").filter(server_disc_id=server_disc_id).first()
    return server_config(server) if server else None


def resolve_single_owner_triggers(personas: list[PersonaInfo]) -> list[PersonaInfo]:
    """Trigger words are single-owner (data-model.md §2.7): the main persona keeps all of its
    words; alters, in ascending persona id, keep only words no earlier persona owns
    (case-insensitive)."""
    from dataclasses import replace

    ordered = sorted(personas, key=lambda p: (p.is_alter, p.persona_id or 0))
    owned: set[str] = set()
    resolved: dict[int | None, PersonaInfo] = {}
    for persona in ordered:
        kept = tuple(w for w in persona.trigger_words if w.strip().lower() not in owned)
        owned.update(w.strip().lower() for w in persona.trigger_words)
        resolved[persona.persona_id] = replace(persona, trigger_words=kept)
    return [resolved[p.persona_id] for p in personas]


def lore_entry_info(row: m.LorebookEntry) -> LoreEntryInfo:
    """An entry with its book's scan depth and budget and SillyTavern's defaults applied."""
    book = row.lorebook
    return LoreEntryInfo(
        book_id=book.pk,
        uid=row.uid,
        content=row.content,
        keys=tuple(str(k) for k in row.keys or ()),
        secondary_keys=tuple(str(k) for k in row.secondary_keys or ()),
        comment=row.comment,
        selective=row.selective,
        selective_logic=row.selective_logic,  # type: ignore[arg-type]
        constant=row.constant,
        insertion_order=row.insertion_order,
        position=row.position,  # type: ignore[arg-type]
        depth=row.depth,
        scan_depth=book.scan_depth if row.scan_depth is None else row.scan_depth,
        case_sensitive=bool(row.case_sensitive),
        match_whole_words=row.match_whole_words is not False,
        token_budget=book.token_budget,
    )


def load_lorebooks(server_id: int) -> list[tuple[int | None, LoreEntryInfo]]:
    """The enabled entries of a server's books, each with the persona its book is for (None: every one)."""
    rows = (
        m.LorebookEntry.objects.filter(lorebook__server_id=server_id, enabled=True)
        .select_related("lorebook")
        .order_by("lorebook_id", "insertion_order", "uid")
    )
    return [(row.lorebook.persona_id, lore_entry_info(row)) for row in rows]


def persona_info(
    persona: m.Persona, *, webhook_id: str | None = None, lorebook: Sequence[LoreEntryInfo] = ()
) -> PersonaInfo:
    return PersonaInfo(
        persona_id=persona.persona_id,
        persona_nickname=persona.persona_nickname,
        persona_lineage_id=persona.persona_lineage_id,
        is_alter=persona.is_alter,
        server_id=persona.server_id,
        trigger_words=tuple(str(w) for w in persona.trigger_words or ()),
        persona_prompt=persona.persona_prompt,
        physical_appearance_tags=tuple(str(t) for t in persona.physical_appearance_tags or ()),
        attributes=tuple(
            PersonaAttributeInfo(text=a.attribute_text, is_public=a.is_public) for a in persona.attributes.all()
        ),
        naming_prefixes=dict(persona.naming_prefixes or {}),
        naming_suffixes=dict(persona.naming_suffixes or {}),
        naming_address_terms=dict(persona.naming_address_terms or {}),
        webhook_id=webhook_id,
        webhook_avatar_url=persona.webhook_avatar_url,
        sample_dialogue=tuple(persona.sample_dialogue or ()),
        self_debug_enabled=persona.self_debug_enabled,
        sprite_names=tuple(sorted({s.sprite_name for s in persona.sprite_messages.all()})),
        preset=_related(persona, "preset", lambda row: Preset.from_json(row.nodes)),
        sampling=_related(persona, "sampling", lambda row: row.value()) or Sampling(),
        lorebook=tuple(lorebook),
        card=_related(persona, "card", card_fields),
    )


def card_fields(row: m.PersonaCard) -> CardFields:
    """The card's columns of the same names."""
    return CardFields(**{f.name: getattr(row, f.name) for f in dataclasses.fields(CardFields)})


def _related(persona: m.Persona, name: str, read: Callable[[Any], T]) -> T | None:
    """A persona's optional one-to-one row (its preset, its sampling, its card) through ``read``, None without one."""
    try:
        return read(getattr(persona, name))
    except ObjectDoesNotExist:
        return None


def load_personas(server_id: int) -> list[PersonaInfo]:
    """Every persona of the server in catalog order (main first, then alters by id)."""
    personas = (
        m.Persona.objects.filter(server_id=server_id)
        .select_related("preset", "sampling", "card")
        .defer("card__avatar")  # the card's picture is served for webhooks, never read by a turn
        .prefetch_related("attributes", "sprite_messages")
        .order_by("is_alter", "persona_id")
    )
    entries = load_lorebooks(server_id)
    return resolve_single_owner_triggers(
        [persona_info(p, lorebook=[e for owner, e in entries if owner in (None, p.persona_id)]) for p in personas]
    )


def user_row(user: m.DiscordUser) -> UserRow:
    return UserRow(
        user_id=user.user_id,
        user_disc_id=user.user_disc_id,
        username=user.username,
        global_name=user.global_name,
        language_pref=user.language_pref,
        privacy_level=user.privacy_level,
        user_nickname=user.user_nickname,
        prefix_override=user.prefix_override,
        suffix_override=user.suffix_override,
        addressing_style=user.addressing_style,
        gender_identity=user.gender_identity,
        pronouns=user.pronouns,
        timezone_offset=user.timezone_offset,
        physical_appearance_tags=tuple(str(t) for t in user.physical_appearance_tags or ()),
        nai_char_ref_url=user.nai_char_ref_url,
        impersonation_prompt=user.impersonation_prompt,
        personal_dtm=user.personal_dtm,
        personal_deliberate_tool_mode=user.personal_deliberate_tool_mode,
        shortterm_cache_crossserver_opt_in=user.shortterm_cache_crossserver_opt_in,
    )


# `UserRow` fields are named after their `DiscordUser` columns.
USER_ROW_COLUMNS = tuple(f.name for f in dataclasses.fields(UserRow))
_TAGS = USER_ROW_COLUMNS.index("physical_appearance_tags")
_OPT_IN = USER_ROW_COLUMNS.index("shortterm_cache_crossserver_opt_in")


def user_row_from_values(values: Sequence[Any]) -> UserRow:
    """``user_row`` for a row of ``USER_ROW_COLUMNS`` as the driver returns it: a turn reads hundreds
    of user rows, and building model instances for them cost more than the queries themselves."""
    fields = list(values[: len(USER_ROW_COLUMNS)])
    fields[_TAGS] = sql.string_list(fields[_TAGS]) or ()
    fields[_OPT_IN] = bool(fields[_OPT_IN])  # SQLite returns 0/1
    return UserRow(*fields)


def load_user_rows(disc_ids: Iterable[str]) -> dict[str, UserRow]:
    ids = sorted(set(disc_ids))
    if not ids:
        return {}
    rows = sql.select_in(m.DiscordUser, USER_ROW_COLUMNS, "user_disc_id", ids)
    return {row.user_disc_id: row for row in map(user_row_from_values, rows)}


def load_blacklisted(server_id: int | None, disc_ids: Iterable[str]) -> set[str]:
    ids = sorted(set(disc_ids))
    if server_id is None or not ids:
        return set()
    b = sql.names(m.PersonalizationBlacklist)
    listed, listed_ids = sql.any_of(m.PersonalizationBlacklist, b["user_disc_id"], ids)
    rows = sql.fetch(
        m.PersonalizationBlacklist,
        f"SELECT {b['user_disc_id']} FROM {b.table} WHERE {b['server']} = %s AND {listed}",
        [server_id, listed_ids],
    )
    return {disc_id for (disc_id,) in rows}


@dataclass(frozen=True)
class UserReads:
    """User rows, the blacklisted ids among those asked for, and naming preferences per (user id,
    lineage)."""

    rows: dict[str, UserRow]
    blacklisted: set[str]
    preferences: dict[tuple[int, int], NamingPreference]


NAMING_OVERRIDES = ("nickname_override", "prefix_override", "suffix_override")


def load_user_rows_and_blacklist(
    server_id: int | None, disc_ids: Iterable[str], *, naming_lineages: Iterable[int] = ()
) -> UserReads:
    """``load_user_rows``, ``load_blacklisted`` and the users' naming preferences of
    ``naming_lineages`` (data-model §2.10) in one statement: each round trip costs a turn on
    PostgreSQL about as much as the read itself. The second branch keeps the blacklisted ids that
    have no user row, which ``load_blacklisted`` reports too."""
    ids = sorted(set(disc_ids))
    lineages = sorted(set(naming_lineages))
    if not ids:
        return UserReads({}, set(), {})
    u, b, n = sql.names(m.DiscordUser), sql.names(m.PersonalizationBlacklist), sql.names(m.UserPersonaNamingPreference)
    params: list[Any] = []
    listed = "FALSE"
    if server_id is not None:
        listed = (
            f"EXISTS (SELECT 1 FROM {b.table} b "
            f"WHERE b.{b['server']} = %s AND b.{b['user_disc_id']} = u.{u['user_disc_id']})"
        )
        params.append(server_id)
    preference_columns, join = ", ".join(["NULL"] * (1 + len(NAMING_OVERRIDES))), ""
    if lineages:
        preference_columns = n.columns("persona_lineage_id", *NAMING_OVERRIDES, alias="n")
        of_lineages, lineage_param = sql.any_of(m.UserPersonaNamingPreference, f"n.{n['persona_lineage_id']}", lineages)
        join = f"LEFT JOIN {n.table} n ON n.{n['user']} = u.{u['user_id']} AND {of_lineages} "
        params.append(lineage_param)
    of_ids, ids_param = sql.any_of(m.DiscordUser, f"u.{u['user_disc_id']}", ids)
    query = (
        f"SELECT u.{u['user_disc_id']}, {listed}, {u.columns(*USER_ROW_COLUMNS, alias='u')}, {preference_columns} "
        f"FROM {u.table} u {join}WHERE {of_ids}"
    )
    params.append(ids_param)
    if server_id is not None:
        nulls = ", ".join(["NULL"] * (len(USER_ROW_COLUMNS) + 1 + len(NAMING_OVERRIDES)))
        of_listed_ids, _ = sql.any_of(m.PersonalizationBlacklist, f"b.{b['user_disc_id']}", ids)
        query += (
            f" UNION ALL SELECT b.{b['user_disc_id']}, TRUE, {nulls} FROM {b.table} b "
            f"WHERE b.{b['server']} = %s AND {of_listed_ids} "
            f"AND NOT EXISTS (SELECT 1 FROM {u.table} u WHERE u.{u['user_disc_id']} = b.{b['user_disc_id']})"
        )
        params += [server_id, ids_param]
    reads = UserReads({}, set(), {})
    width = len(USER_ROW_COLUMNS)
    for disc_id, is_listed, *values in sql.fetch(m.DiscordUser, query, params):
        if is_listed:
            reads.blacklisted.add(disc_id)
        user_values, (lineage, *overrides) = values[:width], values[width:]
        if user_values[0] is None:
            continue  # a blacklist entry without a user row
        row = reads.rows.get(disc_id) or user_row_from_values(user_values)
        reads.rows[disc_id] = row
        if lineage is not None:
            reads.preferences[(row.user_id, lineage)] = NamingPreference(row.user_id, lineage, *overrides)
    return reads


def load_naming_preferences(
    user_ids: Iterable[int], lineages: Iterable[int]
) -> dict[tuple[int, int], NamingPreference]:
    """Data-model §2.10: the naming preferences of ``user_ids`` towards ``lineages``, in one read."""
    users, wanted = sorted(set(user_ids)), sorted(set(lineages))
    if not users or not wanted:
        return {}
    n = sql.names(m.UserPersonaNamingPreference)
    of_users, users_param = sql.any_of(m.UserPersonaNamingPreference, n["user"], users)
    of_lineages, lineages_param = sql.any_of(m.UserPersonaNamingPreference, n["persona_lineage_id"], wanted)
    rows = sql.fetch(
        m.UserPersonaNamingPreference,
        f"SELECT {n.columns('user', 'persona_lineage_id', *NAMING_OVERRIDES)} FROM {n.table} "
        f"WHERE {of_users} AND {of_lineages}",
        [users_param, lineages_param],
    )
    return {
        (user_id, lineage): NamingPreference(user_id, lineage, nickname, prefix, suffix)
        for user_id, lineage, nickname, prefix, suffix in rows
    }


@dataclass(frozen=True)
class PersonalizationVersions:
    """The counters of ``personas.models.versions`` for one server's turn (0 when never bumped)."""

    user_rows: int
    server: int


def load_personalization_versions(server_id: int) -> PersonalizationVersions:
    v = sql.names(m.PersonalizationVersion)
    rows = sql.fetch(
        m.PersonalizationVersion,
        f"SELECT {v['scope']}, {v['version']} FROM {v.table} WHERE {v['scope']} IN (%s, %s)",
        [m.USER_ROWS_SCOPE, server_id],
    )
    found = dict(rows)
    return PersonalizationVersions(user_rows=found.get(m.USER_ROWS_SCOPE, 0), server=found.get(server_id, 0))


def reads_are_committed() -> bool:
    """Whether this thread's reads of user rows see committed rows only: outside a transaction,
    where no uncommitted write of its own can be among them."""
    return not connections[router.db_for_read(m.DiscordUser)].in_atomic_block


@dataclass(frozen=True)
class BlocksAndSprites:
    """Active block and mute rows of one persona (BC2-07) and the sprite labels of persona messages:
    message id → (persona id, sprite name)."""

    active_blocks: list[BlockRow]
    sprite_labels: dict[str, tuple[int, str]]


def load_blocks_and_sprite_labels(
    server_id: int | None, persona_id: int | None, now_ms: int, message_ids: Iterable[str]
) -> BlocksAndSprites:
    """The persona's active blocks (none without both ids: DMs, unsaved personas) and the sprite
    labels of ``message_ids`` in one statement, as ``load_emojis_and_stickers`` does: a round trip
    costs a turn on PostgreSQL about as much as the read itself. Blocks come in creation order."""
    ids = sorted(set(message_ids))
    b, s = sql.names(m.PersonaUserBlock), sql.names(m.PersonaSpriteMessage)
    branches: list[str] = []
    params: list[Any] = []
    if server_id is not None and persona_id is not None:
        branches.append(
            f"SELECT 0, {b['id']}, {b.columns('user_disc_id', 'persona', 'block_type', 'reason')}, "
            f"{sql.epoch_us(m.PersonaUserBlock, b['expires_at'])} "
            f"FROM {b.table} WHERE {b['server']} = %s AND {b['persona']} = %s AND {b['expires_at']} > %s"
        )
        params += [server_id, persona_id, ms_to_datetime(now_ms)]
    if ids:
        labelled, ids_param = sql.any_of(m.PersonaSpriteMessage, s["message_disc_id"], ids)
        branches.append(
            f"SELECT 1, NULL, {s.columns('message_disc_id', 'persona', 'sprite_name')}, NULL, NULL "
            f"FROM {s.table} WHERE {labelled}"
        )
        params.append(ids_param)
    read = BlocksAndSprites([], {})
    if not branches:
        return read
    rows = sql.fetch(m.PersonaUserBlock, " UNION ALL ".join(branches) + " ORDER BY 1, 2", params)
    for kind, _id, disc_id, persona, text, reason, expires_at in rows:
        if kind:
            read.sprite_labels[disc_id] = (persona, text)
        else:
            read.active_blocks.append(BlockRow(disc_id, text, sql.us_to_ms(expires_at), persona, reason))
    return read


def load_emojis_and_stickers(server_id: int) -> tuple[list[EmojiRow], list[StickerRow]]:
    """One server's emoji and sticker rows, each kind in creation order, in one statement (a round
    trip costs a turn about as much as the read itself on PostgreSQL)."""
    e, s = sql.names(m.ServerEmoji), sql.names(m.ServerSticker)
    rows = sql.fetch(
        m.ServerEmoji,
        f"SELECT 0, {e['id']}, {e.columns('emoji_disc_id', 'emoji_name', 'is_animated', 'emoji_desc')} "
        f"FROM {e.table} WHERE {e['server']} = %s "
        f"UNION ALL SELECT 1, {s['id']}, {s.columns('sticker_disc_id', 'sticker_name')}, FALSE, {s['sticker_desc']} "
        f"FROM {s.table} WHERE {s['server']} = %s ORDER BY 1, 2",
        [server_id, server_id],
    )
    emojis = [
        EmojiRow(disc_id, name, bool(animated), desc) for kind, _, disc_id, name, animated, desc in rows if not kind
    ]
    stickers = [StickerRow(disc_id, name, desc) for kind, _, disc_id, name, _animated, desc in rows if kind]
    return emojis, stickers


# Both kinds of memory are read as (kind, id, user id, lineage, content, tags, created_at as
# ``sql.epoch_us``), newest first, so a turn reads the server memories alone or with the personal ones in one statement
# (``DatabaseHydrationDeps.load_memories``), ordered alike.
MEMORY_ORDER = " ORDER BY 7 DESC, 2 DESC"


def server_memory_branch(server_id: int, lineage_id: int) -> tuple[str, list[Any]]:
    """The SELECT of one server's memories of a lineage plus lineage 0 (global), and its parameters."""
    s = sql.names(m.ServerMemory)
    return (
        f"SELECT 1, {s['id']}, NULL, {s.columns('persona_lineage_id', 'content', 'tags')}, "
        f"{sql.epoch_us(m.ServerMemory, s['created_at'])} "
        f"FROM {s.table} WHERE {s['server']} = %s AND {s['persona_lineage_id']} IN (%s, 0)",
        [server_id, lineage_id],
    )


def server_memory_row(values: Sequence[Any]) -> ServerMemoryRow:
    """A row of ``server_memory_branch`` as a value."""
    _kind, _id, _user, lineage, content, tags, created_at = values
    return ServerMemoryRow(
        persona_lineage_id=lineage,
        content=content,
        tags=sql.string_list(tags) or (),
        created_at_ms=sql.us_to_ms(created_at),
    )


def load_server_memories(server_id: int, lineage_id: int) -> list[ServerMemoryRow]:
    """Server memories of the lineage plus lineage-0 (global) ones, newest first."""
    query, params = server_memory_branch(server_id, lineage_id)
    return [server_memory_row(values) for values in sql.fetch(m.ServerMemory, query + MEMORY_ORDER, params)]
