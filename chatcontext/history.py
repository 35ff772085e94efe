"""History of one persona turn: fetch, slice, filter, simplify and merge (build-context.md §2–§5, §11).

`build_history` is the imperative shell of the history half of the stage. It does all of its I/O
first — the channel window, reply targets and forward chains, reactor names (one per-turn budget),
the database rows (one batched query per kind, `load_history_rows`), cached members and voice
transcripts — and then runs the pure simplify/merge loop. The number of SQL queries does not depend
on the number of messages.

Privacy is enforced here: a privacy-FULL author's messages are skipped before anything else looks
at them, and a blocked author's run becomes one notice (BC2-10). Neither reaches
`simplified_messages` in any form (see the hardening notes in `chatcontext.core.simplify`).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace

from chatcontext import repository
from chatcontext.core.config import StageConfig
from chatcontext.core.frames import system_frame
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.merge import HistoryMerger
from chatcontext.core.notices import marker_kind
from chatcontext.core.participants.model import typed_persona_id
from chatcontext.core.simplify import SimplifyContext, Visibility, simplify_message
from chatcontext.core.simplify.authors import is_tomori_authored
from chatcontext.core.simplify.base import DEBUG_PREFIX
from chatcontext.core.simplify.forwards import is_forward, resolve_forward_chain, snapshot_is_empty
from chatcontext.core.simplify.reactions import shown_reactions
from chatcontext.core.simplify.reply import reply_target_id
from chatcontext.core.transcripts import TranscriptCache
from chatcontext.core.transport import ChatTransport, TransportError
from chatcontext.core.types import (
    Author,
    BlockRow,
    ChatTurn,
    DiscordMessage,
    ForwardSnapshot,
    MemberInfo,
    PersonaInfo,
    SimplifiedMessage,
    UserRow,
)
from chatcontext.core.voice_prehydration import Transcriber, prehydrate_transcripts, voice_chat_mode
from chatcontext.personalization import UserReadSource

logger = logging.getLogger(__name__)

DEFAULT_FETCH_LIMIT = 80
MIN_FETCH_LIMIT = 20
MAX_FETCH_LIMIT = 100
BLOCK_NOTICE_PREFIX = "synthetic-user-block-"
_HOUR_MS = 3_600_000


def normalize_fetch_limit(value: object) -> int:
    """BC2-01: a non-number or NaN → 80; otherwise truncated and clamped to [20, 100]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or math.isnan(value):
        return DEFAULT_FETCH_LIMIT
    if math.isinf(value):
        return MAX_FETCH_LIMIT if value > 0 else MIN_FETCH_LIMIT
    return min(MAX_FETCH_LIMIT, max(MIN_FETCH_LIMIT, math.trunc(value)))


@dataclass
class HistoryResult:
    simplified_messages: list[SimplifiedMessage]
    # visible_raw_messages (BC2-09): the sliced window minus blocked and privacy-FULL authors.
    raw_messages: list[DiscordMessage]
    user_ids: list[str]
    synthetic_users: dict[str, dict[str, str]] = field(default_factory=dict)
    matrix_users: dict[str, str] = field(default_factory=dict)
    active_blocks: list[BlockRow] = field(default_factory=list)
    block_notice_count: int = 0
    # One entry per left-out message for moderators: {message_id, author_id, reason}; never text.
    exclusions: list[dict[str, str]] = field(default_factory=list)
    # BC2-07a: the first message of the window after the step, the next turn's anchor.
    window_anchor_id: str | None = None
    reaction_api_calls: int = 0
    voice_transcriptions: int = 0


@dataclass
class HistoryRows:
    """The database rows the history needs, one batched query per kind."""

    user_rows: dict[str, UserRow] = field(default_factory=dict)
    blacklisted: set[str] = field(default_factory=set)
    active_blocks: list[BlockRow] = field(default_factory=list)
    sprite_labels: dict[str, tuple[int, str]] = field(default_factory=dict)
    # Rows of reactors known up front (`Reaction.users`), read with `user_rows` in one query but kept
    # apart so the history only learns their privacy level, as with reactors fetched later (BC3-08).
    reactor_rows: dict[str, UserRow] = field(default_factory=dict)


@dataclass(frozen=True)
class HistoryInputs:
    """What the caller hands the history instead of it reading them: ``rows`` (turn snapshots,
    tests; None, the live bot: ``load_history_rows`` reads them in one batch per kind, user rows and
    blacklist entries through ``users``), ``privacy_levels`` over the rows' own (a user without
    either is MINIMAL), the webhooks that relay an impersonated user (webhook id → user id) and
    tables already rendered (message id → text)."""

    rows: HistoryRows | None = None
    privacy_levels: Mapping[str, int] | None = None
    impersonation_relays: Mapping[str, str] | None = None
    rendered_tables: Mapping[str, str] | None = None


@dataclass
class References:
    """What the messages of the window point at, resolved through the transport (BC3-03/04, BC3-12)."""

    reply_targets: dict[str, DiscordMessage] = field(default_factory=dict)
    forward_chains: dict[str, tuple[ForwardSnapshot, ...] | None] = field(default_factory=dict)
    forward_origin_authors: dict[str, Author] = field(default_factory=dict)

    def messages(self) -> list[DiscordMessage]:
        return list(self.reply_targets.values())

    def author_ids(self) -> set[str]:
        """Authors named only through references: origins and re-fetched forward snapshots."""
        ids = {a.id for a in self.forward_origin_authors.values()}
        for chain in self.forward_chains.values():
            ids.update(s.author.id for s in chain or () if s.author is not None)
        return ids


# ---------------------------------------------------------------------------------------------
# Fetch and slice (BC2-02..06)
# ---------------------------------------------------------------------------------------------


def fetch_window(turn: ChatTurn, transport: ChatTransport, limit: int) -> list[DiscordMessage]:
    """BC2-02/03: the latest `limit` messages oldest → newest; a queued admission message outside the
    window is appended at the end; without message history the trigger message alone."""
    admission = turn.incoming.message
    if not transport.supports_history:
        return [admission]
    try:
        window = list(reversed(transport.fetch_history(limit)))
    except TransportError:
        logger.warning("history fetch failed; using the trigger message only")
        return [admission]
    if turn.incoming.is_from_queue and all(m.id != admission.id for m in window):
        window.append(admission)
    return window


def window_size(limit: int, step: int, *, anchored: bool) -> int:
    """BC2-07a: messages fetched. With a remembered anchor the window holds between ``limit - step // 2``
    and ``limit + step // 2`` messages (the server's limit on average), else exactly ``limit``."""
    return limit + step // 2 if anchored else limit


def step_window(
    window: list[DiscordMessage], anchor_id: str | None, *, size: int, step: int
) -> tuple[list[DiscordMessage], list[DiscordMessage]]:
    """BC2-07a: (window, stepped-out messages). The window starts at the remembered anchor while it is
    still fetched, so consecutive prompts share their history; once the anchor has slid out of a full
    window of ``size`` messages, the ``step`` oldest go at once and the new first message is the next
    anchor. Without an anchor (a first turn, a replay) or a step, nothing is dropped."""
    if anchor_id is None or step <= 0:
        return window, []
    for index, message in enumerate(window):
        if message.id == anchor_id:
            return window[index:], window[:index]
    if len(window) < size:
        return window, []
    cut = min(step, len(window) - 1)
    return window[cut:], window[:cut]


def find_marker(
    window: list[DiscordMessage], bot_user_id: str, personas: tuple[PersonaInfo, ...]
) -> tuple[int, str] | None:
    """BC2-04: newest → oldest, embeds in order; the first reset/compact-refresh embed wins.

    Only Tomori-authored messages carry markers (hardening, see `is_tomori_authored`).
    """
    for index in range(len(window) - 1, -1, -1):
        message = window[index]
        if not message.embeds or not is_tomori_authored(message, bot_user_id, personas):
            continue
        for embed in message.embeds:
            kind = marker_kind(embed)
            if kind is not None:
                return index, kind
    return None


def slice_at_marker(
    window: list[DiscordMessage], bot_user_id: str, personas: tuple[PersonaInfo, ...]
) -> tuple[list[DiscordMessage], list[DiscordMessage]]:
    """BC2-05: (history, cut-off messages). `reset` starts after the marker, `compact_refresh` at it."""
    marker = find_marker(window, bot_user_id, personas)
    if marker is None:
        return window, []
    index, kind = marker
    start = index + 1 if kind == "reset" else index
    return window[start:], window[:start]


# ---------------------------------------------------------------------------------------------
# Transport prefetch (all Discord reads of the simplify loop)
# ---------------------------------------------------------------------------------------------


def prefetch_references(
    messages: Iterable[DiscordMessage], transport: ChatTransport, config: StageConfig
) -> References:
    known: dict[str, DiscordMessage | None] = {}

    def lookup(message_id: str) -> DiscordMessage | None:
        if message_id not in known:
            found = transport.get_cached_message(message_id)
            if found is None:
                try:
                    found = transport.fetch_message(message_id)
                except TransportError:
                    logger.info("referenced message unavailable")
            known[message_id] = found
        return known[message_id]

    refs = References()
    for message in messages:
        target_id = reply_target_id(message) if transport.supports_history else None
        if target_id:
            target = lookup(target_id)
            if target is not None:
                refs.reply_targets[message.id] = target
        if is_forward(message):
            # The forward whose snapshots are shown: this one, or the end of its chain. Their words are
            # its origin's, and the origin's author decides whether they may be shown (hardening).
            shown = message
            if all(snapshot_is_empty(s) for s in message.message_snapshots):
                chain = resolve_forward_chain(message, lookup, config.forward_chain_max_depth)
                refs.forward_chains[message.id] = chain.message_snapshots if chain is not None else None
                shown = chain or message
            origin_id = shown.reference.message_id if shown.reference else None
            origin = transport.get_cached_message(origin_id) if origin_id else None
            if origin is not None:
                refs.forward_origin_authors[message.id] = origin.author
    return refs


def prefetch_reaction_users(
    messages: Iterable[DiscordMessage], transport: ChatTransport, config: StageConfig
) -> tuple[dict[str, list[list[Author] | None]], int]:
    """BC3-08/09: reactor names for the shown reactions, in message order, under one per-turn call
    budget; a call is spent even when it fails (then counts only)."""
    if not config.reaction_context_enabled:
        return {}, 0
    per_reaction = config.reaction_max_users_per_reaction
    calls = 0
    fetched: dict[str, list[list[Author] | None]] = {}
    for message in messages:
        shown, _hidden = shown_reactions(message, config)
        users: list[list[Author] | None] = []
        for reaction in shown:
            if per_reaction <= 0 or calls >= config.reaction_max_api_calls_per_turn:
                users.append(None)
                continue
            calls += 1
            try:
                users.append(transport.fetch_reaction_users(message, reaction, per_reaction))
            except TransportError:
                logger.info("reaction users unavailable")
                users.append(None)
        if users:
            fetched[message.id] = users
    return fetched, calls


def known_reactor_ids(messages: Iterable[DiscordMessage], config: StageConfig) -> set[str]:
    """Ids of the reactors a transport already carries in `Reaction.users` (snapshots, playground), so
    their rows join the first user-row read; live reactors are fetched later (BC3-08)."""
    if not config.reaction_context_enabled:
        return set()
    per_reaction = max(0, config.reaction_max_users_per_reaction)
    ids: set[str] = set()
    for message in messages:
        shown, _hidden = shown_reactions(message, config)
        for reaction in shown:
            ids.update((reaction.users or ())[:per_reaction])
    return ids


# ---------------------------------------------------------------------------------------------
# Database rows (one batched query per kind)
# ---------------------------------------------------------------------------------------------


def referenced_user_ids(messages: Iterable[DiscordMessage], relays: Mapping[str, str]) -> set[str]:
    ids: set[str] = set()
    for message in messages:
        ids.add(message.author.id)
        if message.webhook_id and message.webhook_id in relays:
            ids.add(relays[message.webhook_id])
        ids.update(s.author.id for s in message.message_snapshots if s.author is not None)
    return ids


def load_history_rows(
    turn: ChatTurn,
    messages: list[DiscordMessage],
    now_ms: int,
    *,
    extra_user_ids: Iterable[str] = (),
    reactor_ids: Iterable[str] = (),
    impersonation_relays: Mapping[str, str] | None = None,
    users: UserReadSource | None = None,
) -> HistoryRows:
    """Users, blacklist, active blocks and sprite labels for `messages` (window + referenced ones);
    the rows of `reactor_ids` come from the same user-row query, kept in `reactor_rows`."""
    user_ids = referenced_user_ids(messages, impersonation_relays or {}) | set(extra_user_ids)
    persona = turn.persona
    blocks_apply = not turn.is_dm_channel and persona.server_id is not None and isinstance(persona.persona_id, int)
    read = (users or UserReadSource(turn.server.server_id)).load(user_ids | set(reactor_ids))
    # BC2-07: blocks only in a guild, for a persona with both ids.
    persona_rows = repository.load_blocks_and_sprite_labels(
        persona.server_id if blocks_apply else None,
        persona.persona_id if blocks_apply else None,
        now_ms,
        (m.id for m in messages if m.webhook_id),
    )
    return HistoryRows(
        user_rows={uid: row for uid, row in read.rows.items() if uid in user_ids},
        reactor_rows={uid: row for uid, row in read.rows.items() if uid not in user_ids},
        blacklisted=read.blacklisted & user_ids,
        active_blocks=persona_rows.active_blocks,
        sprite_labels=persona_rows.sprite_labels,
    )


# ---------------------------------------------------------------------------------------------
# The loop (BC2-10..13)
# ---------------------------------------------------------------------------------------------


def block_label(message: DiscordMessage, comparable_id: str, ctx: SimplifyContext) -> str:
    """BC2-11: saved nickname; else (non-webhook) member display name → global name → username;
    else (webhook) the impersonated user's mention."""
    nickname = ctx.saved_nickname(comparable_id)
    if nickname:
        return nickname
    if not message.webhook_id:
        author = message.author
        name = ctx.member_display_name(message) or author.global_name or author.username
        if name:
            return name
    return f"<@{comparable_id}>"


def block_notice(
    message: DiscordMessage, comparable_id: str, label: str, block: BlockRow, now_ms: int
) -> SimplifiedMessage:
    """BC2-11: the one entry that stands for a run of a blocked author's messages."""
    hours = max(1, math.ceil((block.expires_at_ms - now_ms) / _HOUR_MS))
    unit = "hour" if hours == 1 else "hours"
    return SimplifiedMessage(
        id=f"{BLOCK_NOTICE_PREFIX}{message.id}",
        author_id=comparable_id,
        author_name="System",
        content=system_frame(
            f"{label} sent a message but is currently blocked by you for {hours} more {unit}. "
            "Use `unblock_user` to unblock if needed"
        ),
        created_at=message.created_timestamp,
    )


def _exclusion(message: DiscordMessage, reason: str) -> dict[str, str]:
    return {"message_id": message.id, "author_id": message.author.id, "reason": reason}


def _debug_author_ids(
    turn: ChatTurn, messages: Iterable[DiscordMessage], members: Mapping[str, MemberInfo]
) -> frozenset[str]:
    """`$:` is honoured only with self-debug on, for authors who may manage the server (BC3-01)."""
    if not turn.persona.self_debug_enabled:
        return frozenset()
    return frozenset(
        m.author.id
        for m in messages
        if m.content.startswith(DEBUG_PREFIX) and (member := members.get(m.author.id)) and member.can_manage_server
    )


def build_history(
    turn: ChatTurn,
    transport: ChatTransport,
    id_map: MessageIdMap,
    *,
    config: StageConfig,
    transcripts: TranscriptCache,
    transcriber: Transcriber | None = None,
    given: HistoryInputs = HistoryInputs(),
    users: UserReadSource | None = None,
) -> HistoryResult:
    """Build the simplified history of one persona turn (build-context.md §2–§5, §11), reading what
    ``given`` does not hold (``users``: uncached when not given)."""
    persona = turn.persona
    now_ms = turn.now_ms
    bot_user_id = turn.bot_user.id
    relays = given.impersonation_relays or {}
    exclusions: list[dict[str, str]] = []

    limit = normalize_fetch_limit(turn.server.message_fetch_limit)
    step = min(config.history_window_step, limit)
    size = window_size(limit, step, anchored=turn.history_anchor_id is not None)
    window, stepped = step_window(fetch_window(turn, transport, size), turn.history_anchor_id, size=size, step=step)
    exclusions.extend(_exclusion(m, "history_step") for m in stepped)
    sliced, cut = slice_at_marker(window, bot_user_id, turn.all_personas)
    exclusions.extend(_exclusion(m, "reset_marker") for m in cut)
    refs = prefetch_references(sliced, transport, config)

    loaded = given.rows is None
    known_reactors = known_reactor_ids(sliced, config) if loaded else set()
    if given.rows is None:
        rows = load_history_rows(
            turn,
            [*sliced, *refs.messages()],
            now_ms,
            extra_user_ids=refs.author_ids(),
            reactor_ids=known_reactors,
            impersonation_relays=relays,
            users=users,
        )
    else:
        rows = given.rows
    levels = dict(given.privacy_levels) if given.privacy_levels is not None else {}
    for uid, row in rows.user_rows.items():
        levels.setdefault(uid, row.privacy_level)
    blocks = {b.user_disc_id: b for b in rows.active_blocks if b.block_type == "block"}
    visibility = Visibility(levels, frozenset(blocks), relays)

    # BC2-09 (+ BC11-03 hardening: FULL authors are left out as well).
    visible_raw = [m for m in sliced if not visibility.hides(m)]
    reaction_users, reaction_calls = prefetch_reaction_users(visible_raw, transport, config)
    if loaded:
        reactors = {u.id for users in reaction_users.values() for us in users if us for u in us}
        # Only reactors the transport did not carry up front cost a (single) further query.
        missing = reactors - set(rows.user_rows) - known_reactors
        reactor_rows = {**rows.reactor_rows, **repository.load_user_rows(missing)}
        for uid in reactors - set(rows.user_rows):
            if (reactor_row := reactor_rows.get(uid)) is not None:
                levels.setdefault(uid, reactor_row.privacy_level)
        visibility = replace(visibility, privacy_levels=levels)

    authors = {m.author.id for m in [*visible_raw, *refs.messages()] if not m.webhook_id}
    members = {uid: member for uid in sorted(authors) if (member := transport.get_cached_member(uid)) is not None}

    known = dict(
        transcripts.get_many(
            [m.id for m in visible_raw], now_ms=now_ms, ttl_minutes=config.voice_transcript_cache_ttl_minutes
        )
    )
    chat_mode = voice_chat_mode(turn.server.voice_transcript_chat_mode)
    stt_calls = 0
    if transcriber is not None and not chat_mode:
        stt_calls = prehydrate_transcripts(
            visible_raw, known, cache=transcripts, transcriber=transcriber, now_ms=now_ms
        )

    ctx = SimplifyContext(
        persona=persona,
        main_persona=turn.main_persona,
        personas=turn.all_personas,
        bot_user_id=bot_user_id,
        server_name=turn.server.name,
        id_map=id_map,
        config=config,
        visibility=visibility,
        user_rows=rows.user_rows,
        blacklisted=frozenset(rows.blacklisted),
        personalization_enabled=turn.server.personal_memories_enabled,
        sprite_labels=rows.sprite_labels,
        transcripts=known,
        rendered_tables=given.rendered_tables or {},
        members=members,
        debug_author_ids=_debug_author_ids(turn, visible_raw, members),
        voice_chat_mode=chat_mode,
        reply_targets=refs.reply_targets,
        forward_chains=refs.forward_chains,
        forward_origin_authors=refs.forward_origin_authors,
        reaction_users=reaction_users,
    )
    result = _run_loop(turn, sliced, ctx, blocks, rows.active_blocks, exclusions, reaction_calls, stt_calls)
    result.window_anchor_id = window[0].id if window else None
    return result


def _run_loop(
    turn: ChatTurn,
    sliced: list[DiscordMessage],
    ctx: SimplifyContext,
    blocks: Mapping[str, BlockRow],
    active_blocks: list[BlockRow],
    exclusions: list[dict[str, str]],
    reaction_calls: int,
    stt_calls: int,
) -> HistoryResult:
    """BC2-10..13: privacy skip, block notices, simplify, merge; then the visible user ids."""
    merger = HistoryMerger(
        time_awareness_enabled=turn.server.time_awareness_enabled,
        timezone_offset_hours=turn.server.timezone_offset,
    )
    synthetic_users: dict[str, dict[str, str]] = {}
    matrix_users: dict[str, str] = {}
    user_ids: dict[str, None] = {}
    matrix_relay_ids: set[str] = set()
    last_blocked: str | None = None
    notices = 0
    for message in sliced:
        if ctx.visibility.is_full(message.author.id):
            exclusions.append(_exclusion(message, "privacy_full"))
            continue
        comparable = ctx.visibility.comparable_id(message)
        if comparable in blocks:
            exclusions.append(_exclusion(message, "blocked"))
            if last_blocked != comparable:
                label = block_label(message, comparable, ctx)
                merger.add_notice(block_notice(message, comparable, label, blocks[comparable], turn.now_ms))
                notices += 1
                last_blocked = comparable
            continue
        outcome = simplify_message(message, ctx)
        identity = outcome.identity
        if identity.synthetic_user is not None:
            synthetic_users[identity.synthetic_user[0]] = identity.synthetic_user[1]
        if identity.matrix_user is not None:
            matrix_users[identity.matrix_user[0]] = identity.matrix_user[1]
            matrix_relay_ids.add(identity.author_id)
        if outcome.entry is None:
            exclusions.append(_exclusion(message, "dropped_empty"))
            continue
        last_blocked = None
        # A re-attributed entry (BC3-21 system notices) is the system's, not its author's.
        user_ids.setdefault(
            identity.participant_id if outcome.entry.author_id == identity.author_id else outcome.entry.author_id
        )
        merger.add(outcome.entry, outcome.is_debug)

    # BC2-13 with participants.md U-6 [DES]: system ids (`system-embed`, `system-user-join:*`) and
    # Matrix relay webhook ids have no profile and are left out; persona webhooks take part as
    # `persona:N` (U-4).
    visible = [
        uid for uid in user_ids if (uid.isdigit() or typed_persona_id(uid) is not None) and uid not in matrix_relay_ids
    ]
    if not turn.incoming.is_user_impersonation and turn.bot_user.id not in visible:
        visible.append(turn.bot_user.id)
    return HistoryResult(
        simplified_messages=merger.entries,
        raw_messages=[m for m in sliced if not ctx.visibility.hides(m)],
        user_ids=visible,
        synthetic_users=synthetic_users,
        matrix_users=matrix_users,
        active_blocks=active_blocks,
        block_notice_count=notices,
        exclusions=exclusions,
        reaction_api_calls=reaction_calls,
        voice_transcriptions=stt_calls,
    )
