"""The Build Context stage: one persona turn → the exact prompt items the model sees (build-context.md).

``build_turn_context`` is the imperative shell that runs the stage in the order of BC1-01. Every
Discord read goes through the ``ChatTransport``; every database read is one batched loader call per
kind of row, so the number of SQL queries of a turn does not grow with messages or participants.
The pure middle lives in the modules it calls (history/simplify/merge, participants, builder,
directives). Each numbered step below is one function; ``TurnRequest`` carries the call's inputs to
every step and ``TurnState`` what steps 2–10 produced to the builder, the tail and the result.

    2  streaming context (BC9-01..04)          7  deliberate-tool gating (BC9-07..09)
    3  fast regeneration (BC9-10)              8  effective persona (BC9-11)
    4  persona assets (BC7-08)                 9  participant preparation, request scope (§10)
    5  history (§2–§5, §11) + reminder (BC7-01) 10 history naming projection (BC7-07)
    6  impersonation identity (BC7-03)         11 builder;  12 tail directives (§8), catalogue (BC8-16)

Diagnostics are counts only (BC10-04): no ids, aliases, names or text. The exclusion log (who was
left out of the prompt and why) names messages and users by id for moderators but never carries
the excluded text.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from chatcontext import repository
from chatcontext.assets import PersonaAssets, load_persona_assets
from chatcontext.core import short_term_memory as stm
from chatcontext.core.builder import BuilderInputs, BuilderOutput, MediaConfig, attach_persona_catalog, build_context
from chatcontext.core.config import StageConfig
from chatcontext.core.directives import TailContext, apply_tail_directives
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.impersonation import ImpersonationIdentity, resolve_impersonation
from chatcontext.core.lorebook import scan_lorebook
from chatcontext.core.participants.mentions import MentionDirectory, convert_mentions, extend_directory
from chatcontext.core.participants.model import ActivePersonaScope, PreparationInput, PreparedParticipantContext
from chatcontext.core.participants.naming import history_persona_mention_labels, history_user_labels
from chatcontext.core.participants.target_index import TargetIndexCodec, TurnTargets, collect_target_index
from chatcontext.core.regeneration import ChannelRecorders
from chatcontext.core.reminder_injection import build_forced_mentions, build_reminder_entry, reminder_applies
from chatcontext.core.streaming_context import (
    DeliberateToolConfig,
    EffectivePersona,
    ToolIntentTexts,
    deliberate_mode_active,
    effective_persona,
    gate_deliberate_tools,
    init_streaming_context,
)
from chatcontext.core.transcripts import TranscriptCache
from chatcontext.core.transport import ChatTransport, TransportError
from chatcontext.core.types import (
    ChatTurn,
    ChatTurnContext,
    ContextItem,
    JSONDict,
    LockedTurn,
    PersonaInfo,
    PrivacyLevel,
    SimplifiedMessage,
    StreamingContext,
    UserRow,
)
from chatcontext.core.voice_prehydration import Transcriber
from chatcontext.history import HistoryResult, build_history, normalize_fetch_limit
from chatcontext.participants.candidates import CandidateQuery, CandidateRow, load_candidate_rows
from chatcontext.participants.discovery import member_directory_for
from chatcontext.participants.hydration import (
    ParticipantTurn,
    RequestSnapshot,
    TurnUserReads,
    build_conversation_corpus,
)
from chatcontext.participants.items import ParticipantItems, build_participant_context_items
from chatcontext.participants.loaders import DatabaseHydrationDeps, HydrationDeps
from chatcontext.participants.prepare import prepare_participant_context
from chatcontext.participants.scope import ParticipantRequestScope, request_scope_for
from chatcontext.personalization import PersonalizationCache, UserReadSource
from chatcontext.stage_settings import stage_config

ScopeRegistry = Callable[[LockedTurn], ParticipantRequestScope]
Clock = Callable[[], float]

_USER_MENTION = re.compile(r"<@!?(\d+)>")
# R-14 placeholders. Message bodies keep them literal (the builder resolves identity macros only in
# platform-authored text), so the mention step the builder applies must leave them alone.
_PLACEHOLDER = re.compile(r"(\{\{?\s*(?:bot|char|user_formatted|user_term|user)\s*\}?\})", re.IGNORECASE)

# Fast regeneration (BC9-06/10): the recorder of each channel's latest regenerable turn, in this process.
FAST_REGENERATION = ChannelRecorders()


def _elapsed_ms(clock: Clock, started: float) -> float:
    return round((clock() - started) * 1000, 3)


def recipient_names(transport: ChatTransport, user_id: str | None) -> list[str]:
    """BC7-02: the reminder recipient's handles (display name, global name, username), one targeted read."""
    if not user_id or not user_id.isdigit():
        return []
    try:
        member = transport.get_cached_member(user_id) or transport.fetch_member(user_id)
    except TransportError:
        return []
    if member is None:
        return []
    names = (member.display_name or member.nickname, member.global_name, member.username)
    return list(dict.fromkeys(n.strip() for n in names if n and n.strip()))


def turn_mention_directory(turn: ChatTurn, transport: ChatTransport) -> MentionDirectory:
    """The one mention directory of a turn (R-14): participant hydration registers everyone it
    hydrates with the names P-02 allows, and the builder's texts resolve through the same directory,
    so a person has one name in the whole prompt (P-07)."""
    bot_member = transport.get_cached_member(turn.bot_user.id)
    return MentionDirectory(
        bot_user_id=turn.bot_user.id,
        bot_display_name=bot_member.effective_display_name if bot_member else None,
    )


def mention_converter(
    turn: ChatTurn,
    persona: PersonaInfo,
    directory: MentionDirectory,
    deps: HydrationDeps,
    texts: Iterable[str],
) -> Callable[[str], str]:
    """The mention step of R-14 for builder texts (`<@id>`, `<#id>`, `<@&id>`, channel links →
    names), with placeholders left as written, through the turn's directory. Users who are not
    hydrated participants get live names only: the fail-closed reading of P-07. Discord reads only,
    no SQL."""
    extend_directory(directory, texts, deps)
    personalization = turn.server.personal_memories_enabled

    def convert(text: str) -> str:
        pieces = _PLACEHOLDER.split(text)
        return "".join(
            piece
            if i % 2
            else convert_mentions(
                piece, turn.triggerer.nickname, persona.persona_nickname, personalization, directory=directory
            )
            for i, piece in enumerate(pieces)
        )

    return convert


def _user_entry_ids(entries: Sequence[SimplifiedMessage]) -> list[str]:
    return list(dict.fromkeys(e.author_id for e in entries if e.author_type == "user" and e.author_id.isdigit()))


def _persona_mention_ids(entries: Sequence[SimplifiedMessage]) -> list[str]:
    ids: dict[str, None] = {}
    for entry in entries:
        if entry.author_persona_lineage_id is not None:
            for match in _USER_MENTION.finditer(entry.content or ""):
                ids.setdefault(match.group(1))
    return list(ids)


def impersonation_identity(
    turn: ChatTurn, persona: PersonaInfo, transport: ChatTransport, live_names: dict[str, str], users: UserReadSource
) -> ImpersonationIdentity | None:
    """BC7-03: the impersonated user's row and blacklist entry (one read) and name; the history naming projection's
    label for that user, if any, wins."""
    incoming = turn.incoming
    user_id = incoming.impersonated_user_id
    if not incoming.is_user_impersonation or not user_id:
        return None
    read = users.load([user_id])
    row, blacklisted = read.rows.get(user_id), read.blacklisted
    member = transport.get_cached_member(user_id)
    labels = history_user_labels(
        [row] if row else [],
        persona=persona,
        personalization_enabled=turn.server.personal_memories_enabled,
        blacklisted=blacklisted,
        live_names=live_names,
    )
    return resolve_impersonation(incoming, user_row=row, member=member, history_user_labels=labels)


def participant_exclusions(
    prepared: PreparedParticipantContext,
    rows: dict[str, UserRow],
    blacklisted: set[str],
    *,
    personalization_enabled: bool,
) -> list[JSONDict]:
    """Participant-level entries of the exclusion log (P-03..P-06): whose profile details the
    prompt leaves out, and why. Ids only, never the withheld data."""
    entries: list[JSONDict] = []
    for seed in prepared.discovery_plan.seeds:
        if seed.key.kind != "discord_user":
            continue
        user_id = seed.key.id
        row = rows.get(user_id) or prepared.referenced_user_rows.get(user_id)
        level = row.privacy_level if row is not None else PrivacyLevel.MINIMAL
        if level == PrivacyLevel.FULL:
            entries.append({"user_id": user_id, "reason": "privacy_full", "scope": "profile"})
        elif level == PrivacyLevel.PARTIAL:
            entries.append({"user_id": user_id, "reason": "privacy_partial", "scope": "profile"})
        if user_id in blacklisted:
            entries.append({"user_id": user_id, "reason": "blacklisted", "scope": "profile"})
        elif not personalization_enabled and level != PrivacyLevel.FULL:
            entries.append({"user_id": user_id, "reason": "personalization_disabled", "scope": "profile"})
    return entries


def history_diagnostics(history: HistoryResult, entries: Sequence[SimplifiedMessage]) -> JSONDict:
    reasons = Counter(str(e.get("reason")) for e in history.exclusions)
    return {
        "entry_count": len(entries),
        "visible_message_count": len(history.raw_messages),
        "merged_message_count": sum(len(e.combined_message_ids or []) for e in entries),
        "block_notice_count": history.block_notice_count,
        "excluded_message_counts": dict(sorted(reasons.items())),
        "visible_user_count": len(history.user_ids),
        "synthetic_user_count": len(history.synthetic_users),
        "matrix_user_count": len(history.matrix_users),
        "reaction_api_calls": history.reaction_api_calls,
        "voice_transcriptions": history.voice_transcriptions,
    }


def context_diagnostics(items: Sequence[ContextItem]) -> JSONDict:
    tags = Counter(item.metadata_tag.value if item.metadata_tag else "untagged" for item in items)
    return {
        "item_count": len(items),
        "items_by_tag": dict(sorted(tags.items())),
        "media_descriptor_count": sum(len(item.media_descriptors or []) for item in items),
        "character_count": sum(len(item.text) for item in items),
    }


def participant_diagnostics(prepared: PreparedParticipantContext, items: ParticipantItems) -> JSONDict:
    """BC10-04 (D-36, H-22): discovery and hydration counts. The hydration duration is measured by
    the stage clock instead, so replays stay byte-identical."""
    hydration = {k: v for k, v in items.diagnostics.get("hydration", {}).items() if k != "duration_ms"}
    return {**prepared.diagnostics, "hydration": hydration, "item_count": items.diagnostics.get("item_count", 0)}


@dataclass(frozen=True)
class TurnRequest:
    """What ``build_turn_context`` was called with, defaults applied: every step reads from it."""

    turn: ChatTurn
    transport: ChatTransport
    transcripts: TranscriptCache
    transcriber: Transcriber | None
    scopes: ScopeRegistry
    config: StageConfig
    deps: HydrationDeps
    users: UserReadSource
    clock: Clock


@dataclass(frozen=True)
class TurnHistory:
    """Step 5's result: the history, its entries with the reminder entry, and the cached live names
    of the entries' users (BC7-03, BC7-07 read them)."""

    result: HistoryResult
    entries: list[SimplifiedMessage]
    live_names: dict[str, str]


@dataclass(frozen=True)
class HistoryNaming:
    """Step 10's result: the rows and blacklist of everyone the prompt may name, and their labels."""

    rows: dict[str, UserRow]
    blacklisted: set[str]
    user_labels: dict[str, str]
    mention_labels: dict[str, str]
    reads: TurnUserReads


@dataclass(frozen=True)
class TurnParticipants:
    """Steps 9–10 and the participant items, with the turn's mention directory and target-index
    codec, which the builder and the persona catalogue share (R-14, BC8-16)."""

    prepared: PreparedParticipantContext
    naming: HistoryNaming
    items: ParticipantItems
    mentions: MentionDirectory
    codec: TargetIndexCodec


@dataclass(frozen=True)
class TurnState:
    """Everything steps 2–10 produced, which the builder, the tail and the result read."""

    id_map: MessageIdMap
    streaming: StreamingContext
    assets: PersonaAssets
    history: TurnHistory
    impersonation: ImpersonationIdentity | None
    effective: EffectivePersona
    participants: TurnParticipants

    @property
    def persona(self) -> PersonaInfo:
        return self.effective.persona


def _streaming_context(req: TurnRequest, id_map: MessageIdMap) -> StreamingContext:
    """Step 2, BC9-01..04 over the turn's one id map (BC5-03), with the reminder recipient's forced
    mentions (BC7-02)."""
    turn, incoming = req.turn, req.turn.incoming
    forced = build_forced_mentions(
        turn.forced_mentions,
        incoming,
        recipient_names(req.transport, incoming.reminder_recipient_id) if reminder_applies(incoming) else [],
    )
    return init_streaming_context(turn, message_id_map=id_map, forced_mentions=forced)


def _persona_assets(req: TurnRequest) -> PersonaAssets:
    """Step 4, BC7-08: the persona's emojis and stickers and whether the channel is an RP channel."""
    turn = req.turn
    return load_persona_assets(
        server=turn.server,
        persona=turn.persona,
        channel_id=turn.locked_turn.channel_id,
        now_ms=turn.now_ms,
        config=req.config,
        thread_parent_id=turn.thread_parent_id,
        guild_available=req.transport.guild_available,
    )


def _history(req: TurnRequest, id_map: MessageIdMap) -> tuple[HistoryResult, list[SimplifiedMessage]]:
    """Step 5, §2–§5 and §11 (fetch, privacy and blocks, simplify, merge, reference ids), then the
    reminder entry after the merge loop (BC2-13, BC7-01)."""
    turn = req.turn
    history = build_history(
        turn,
        req.transport,
        id_map,
        config=req.config,
        transcripts=req.transcripts,
        transcriber=req.transcriber,
        users=req.users,
    )
    entries = list(history.simplified_messages)
    reminder = build_reminder_entry(turn.incoming, turn.bot_user.id, turn.now_ms)
    if reminder is not None:
        entries.append(reminder)
    return history, entries


def _live_names(req: TurnRequest, entries: Sequence[SimplifiedMessage]) -> dict[str, str]:
    """The cached member names of the entries' users: no reads (BC7-03, BC7-07)."""
    return {
        uid: member.effective_display_name
        for uid in _user_entry_ids(entries)
        if (member := req.transport.get_cached_member(uid)) is not None
    }


def _gate_tools(req: TurnRequest, history: HistoryResult, streaming: StreamingContext) -> None:
    """Step 7, BC9-07..09. The mode's server settings are a deferred feature, so only a user's
    personal `on` activates it."""
    turn, incoming = req.turn, req.turn.incoming
    end_turn = list(streaming.end_turn_after_tools or ())
    if _upkeep_wanted(req, history, streaming):
        # BC9-12, the intent wrapper: due upkeep is an intent of its own, on a copy of the caller's
        # list, so the streaming context keeps only what the caller supplied.
        end_turn.append(stm.TOOL_NAME)
    gating = gate_deliberate_tools(
        config=DeliberateToolConfig(),
        personal_mode=turn.user_row.personal_deliberate_tool_mode if turn.user_row else None,
        texts=ToolIntentTexts(
            message_content=incoming.message.content,
            reminder_purpose=incoming.reminder_data.reminder_purpose
            if reminder_applies(incoming) and incoming.reminder_data
            else None,
            recent_texts=[m.content for m in history.raw_messages if m.id != incoming.message.id],
        ),
        disable_all_tools=streaming.disable_all_tools,
        end_turn_after_tools=end_turn,
    )
    streaming.disable_all_tools = gating.disable_all_tools
    streaming.deliberate_tool_allowed_names = gating.allowed_names


def _upkeep_wanted(req: TurnRequest, history: HistoryResult, streaming: StreamingContext) -> bool:
    """BC9-12: deliberate mode is on, tools are not explicitly off, and the note's upkeep is due. The
    reference asks before the stage runs; the due test needs the history, so it is asked here, before
    the gating that reads it (the result is the same: the gating sees the tool as an intent)."""
    turn = req.turn
    personal_mode = turn.user_row.personal_deliberate_tool_mode if turn.user_row else None
    active = deliberate_mode_active(personal_mode, DeliberateToolConfig().server_mode)
    explicitly_off = streaming.disable_all_tools or turn.incoming.is_user_impersonation
    return active and not explicitly_off and stm.upkeep_due(turn.short_term_memory, history.simplified_messages)


def _prepare_participants(
    req: TurnRequest, history: TurnHistory, persona: PersonaInfo
) -> tuple[PreparedParticipantContext, list[list[CandidateRow]]]:
    """Step 9, BC10-01..03: participant preparation with the locked turn's request scope, and the
    candidate rows D-16 read on the turn's server (one list per read; none when the request scope
    had the discovery already), which step 10 hands to the turn's user reads."""
    turn, server = req.turn, req.turn.server
    reads: list[list[CandidateRow]] = []

    def read(query: CandidateQuery) -> list[CandidateRow]:
        candidates = load_candidate_rows(query)
        if query.server_id is not None and query.server_id == req.users.server_id:
            reads.append(candidates)
        return candidates

    prepared = prepare_participant_context(
        PreparationInput(
            guild_id=server.server_disc_id,
            simplified_history=history.entries,
            personas=list(turn.all_personas),
            active_persona=persona,
            visible_user_ids=list(history.result.user_ids),
            synthetic_users=history.result.synthetic_users,
            matrix_users=history.result.matrix_users,
            responder_persona_ids=list(turn.locked_turn.triggered_persona_ids),
            server_id=server.server_id,
            bot_user_id=turn.bot_user.id,
            is_user_impersonation=turn.incoming.is_user_impersonation,
        ),
        request_scope=req.scopes(turn.locked_turn),
        candidate_source=read,
        member_directory=member_directory_for(req.transport),
        now_ms=turn.now_ms,
        clock=req.clock,
    )
    return prepared, reads


def _remember_candidates(users: UserReadSource, candidates: Sequence[CandidateRow]) -> None:
    """D-16's user rows and blacklist entries, which the turn's later reads of the same users (step
    10, hydration) then take from ``users`` instead of reading them again."""
    rows = {c.row.user_disc_id: c.row for c in candidates}
    listed = {c.row.user_disc_id for c in candidates if c.blacklisted}
    users.remember(rows, repository.UserReads(rows, listed, {}))


def _history_naming(
    req: TurnRequest,
    history: TurnHistory,
    prepared: PreparedParticipantContext,
    candidate_reads: Sequence[Sequence[CandidateRow]],
    persona: PersonaInfo,
) -> HistoryNaming:
    """Step 10, BC7-07: the history naming projection, one read of rows, blacklist entries and naming
    preferences for everyone the prompt may name (P-02 decides whose saved names show) beyond those
    step 9's ``candidate_reads`` brought."""
    turn, server, entries = req.turn, req.turn.server, history.entries
    for candidates in candidate_reads:
        _remember_candidates(req.users, candidates)
    named_ids = list(
        dict.fromkeys([*_user_entry_ids(entries), *_persona_mention_ids(entries), *prepared.referenced_user_ids])
    )
    lineages = {p.persona_lineage_id for p in turn.all_personas}
    read = req.users.load(named_ids, naming_lineages=lineages)
    rows, blacklisted, preferences = read.rows, read.blacklisted, read.preferences
    pairs = frozenset((r.user_id, lineage) for r in rows.values() for lineage in lineages)
    personalization = server.personal_memories_enabled
    user_labels = history_user_labels(
        rows.values(),
        persona=persona,
        personalization_enabled=personalization,
        blacklisted=blacklisted,
        naming_preferences=preferences,
        live_names=history.live_names,
    )
    # Only mentions inside persona-authored entries are relabelled (BC7-07), so only their users need
    # a label per persona.
    persona_mentioned = set(_persona_mention_ids(entries))
    mention_labels = history_persona_mention_labels(
        [row for row in rows.values() if row.user_disc_id in persona_mentioned],
        personas=turn.all_personas,
        personalization_enabled=personalization,
        blacklisted=blacklisted,
        naming_preferences=preferences,
        live_names=history.live_names,
    )
    reads = TurnUserReads(frozenset(named_ids), rows, frozenset(blacklisted), pairs, preferences)
    return HistoryNaming(rows, blacklisted, user_labels, mention_labels, reads)


def _participant_items(
    req: TurnRequest,
    history: TurnHistory,
    prepared: PreparedParticipantContext,
    naming: HistoryNaming,
    effective: EffectivePersona,
    impersonation: ImpersonationIdentity | None,
) -> TurnParticipants:
    """Phase 2 of the participants (H-01..H-22, R-01..R-15, X-01..X-08) for the effective persona,
    with the triggerer's request snapshot (H-05) and the turn's one mention directory (R-14)."""
    turn, incoming, server, persona = req.turn, req.turn.incoming, req.turn.server, effective.persona
    triggerer_id = incoming.message.author.id
    codec = TargetIndexCodec()
    mentions = turn_mention_directory(turn, req.transport)
    items = build_participant_context_items(
        prepared,
        ParticipantTurn(
            scope=ActivePersonaScope(
                persona_id=persona.persona_id,
                lineage_id=persona.persona_lineage_id,
                is_main_persona=not persona.is_alter,
                is_user_impersonation=incoming.is_user_impersonation,
                impersonated_user_id=incoming.impersonated_user_id,
            ),
            server=effective.server,
            channel_name=turn.channel_name,
            channel_id=turn.locked_turn.channel_id,
            bot_user_id=turn.bot_user.id,
            now_ms=turn.now_ms,
            active_persona=persona,
            request_snapshot=RequestSnapshot(
                triggerer_id=triggerer_id,
                triggerer_row=turn.user_row,
                is_triggerer_blacklisted=triggerer_id in naming.blacklisted,
                triggerer_privacy_level=turn.user_row.privacy_level if turn.user_row else PrivacyLevel.MINIMAL,
                preloaded_member=req.transport.get_cached_member(triggerer_id),
                turn_reads=naming.reads,
            ),
            impersonated_identity_name=impersonation.nickname if impersonation else None,
            triggerer=turn.triggerer,
        ),
        deps=req.deps,
        conversation_corpus=build_conversation_corpus(
            history.entries, memory_tagging_enabled=server.memory_tagging_enabled
        ),
        codec=codec,
        mention_directory=mentions,
    )
    return TurnParticipants(prepared, naming, items, mentions, codec)


def _build_prompt(req: TurnRequest, state: TurnState) -> BuilderOutput:
    """Step 11, the inner builder (§6–§7) with the lineage's server memories (read with the personal
    ones when hydration read those, else on their own) and builder texts converted through the turn's
    mention directory (R-14)."""
    turn, server, persona = req.turn, req.turn.server, state.persona
    history, participants = state.history, state.participants
    server_memories = participants.items.server_memories
    if server_memories is None:
        server_memories = (
            repository.load_server_memories(server.server_id, persona.persona_lineage_id)
            if server.server_id is not None
            else []
        )
    builder_texts = [
        *(e.content or "" for e in history.entries),
        server.description or "",
        turn.channel_description or "",
        *(f"<@{block.user_disc_id}>" for block in history.result.active_blocks),
    ]
    items = participants.items
    return build_context(
        BuilderInputs(
            persona=persona,
            server=state.effective.server,
            channel_name=turn.channel_name,
            history=history.entries,
            message_id_map=state.id_map,
            all_personas=turn.all_personas,
            channel_description=turn.channel_description,
            triggerer_name=turn.triggerer.nickname,
            server_memories=server_memories,
            active_blocks=history.result.active_blocks,
            emojis=state.assets.emojis,
            stickers=state.assets.stickers,
            participant_profile_item=items.profile,
            participant_tail_items=[i for i in (items.presence, items.current_context) if i],
            history_user_labels=participants.naming.user_labels,
            history_persona_mention_labels=participants.naming.mention_labels,
            media=MediaConfig(
                image_message_limit=req.config.media_image_message_limit,
                fetch_limit=normalize_fetch_limit(server.message_fetch_limit),
            ),
            impersonation=state.impersonation,
            preset=persona.preset,
            explicit_long_term_memory_intent=state.streaming.explicit_long_term_memory_intent,
            short_term_memory=turn.short_term_memory,
            short_term_memory_nudge=_nudge_wanted(turn, state),
            convert_mentions=mention_converter(turn, persona, participants.mentions, req.deps, builder_texts),
            world_info=scan_lorebook(persona.lorebook, history.entries),
        )
    )


def _nudge_wanted(turn: ChatTurn, state: TurnState) -> bool:
    """BC8-12c: upkeep is due (the surface offers the tool) and the gating left the tool in."""
    streaming = state.streaming
    allowed = streaming.deliberate_tool_allowed_names
    gated_in = not streaming.disable_all_tools and (allowed is None or stm.TOOL_NAME in allowed)
    return gated_in and stm.upkeep_due(turn.short_term_memory, state.history.entries)


def _tail(req: TurnRequest, state: TurnState, output: BuilderOutput) -> tuple[list[ContextItem], TurnTargets]:
    """Step 12, injected items and tail directives (§8), then the persona mention catalogue (BC8-16)
    and the turn's participant target index (X-06), the turn's one computation of it."""
    turn = req.turn
    items = apply_tail_directives(
        output.items,
        output,
        TailContext.from_turn(turn, config=req.config, persona=state.persona),
        history=state.history.entries,
        id_map=state.id_map,
        injected_items=turn.incoming.injected_context_items or (),
    )
    codec = state.participants.codec
    items = attach_persona_catalog(items, turn.all_personas, codec)
    index, fallback_users = collect_target_index(items, codec)
    return items, TurnTargets(index, tuple(fallback_users))


def build_turn_context(
    turn: ChatTurn,
    transport: ChatTransport,
    *,
    transcripts: TranscriptCache,
    transcriber: Transcriber | None = None,
    request_scope_registry: ScopeRegistry | None = None,
    config: StageConfig | None = None,
    personalization: PersonalizationCache | None = None,
    clock: Clock = time.perf_counter,
) -> ChatTurnContext:
    """Assemble one persona turn (BC1-01, BC1-02: each persona turn runs the whole stage with its
    own id map, blocks and tail directives; only participant discovery is shared, through the
    request scope of the locked-turn *object*).

    ``personalization`` keeps user rows and blacklist entries between turns, checked against the
    personalization versions (``chatcontext.personalization``); without it every turn reads them.
    ``clock`` only measures the durations reported in the diagnostics; replays pass a constant
    clock so their output is byte-identical.
    """
    req = TurnRequest(
        turn=turn,
        transport=transport,
        transcripts=transcripts,
        transcriber=transcriber,
        scopes=request_scope_registry or request_scope_for,
        config=config or stage_config(),
        deps=DatabaseHydrationDeps(transport),
        users=UserReadSource(turn.server.server_id, personalization),
        clock=clock,
    )
    started = clock()
    durations: dict[str, float] = {}

    id_map = MessageIdMap()
    streaming = _streaming_context(req, id_map)  # 2
    recorder = FAST_REGENERATION.start(turn, streaming)  # 3
    assets = _persona_assets(req)  # 4
    step = clock()
    history_result, entries = _history(req, id_map)  # 5
    durations["history_ms"] = _elapsed_ms(clock, step)
    history = TurnHistory(history_result, entries, _live_names(req, entries))
    impersonation = impersonation_identity(turn, turn.persona, transport, history.live_names, req.users)  # 6
    _gate_tools(req, history_result, streaming)  # 7
    effective = effective_persona(  # 8
        turn.persona, turn.server, is_rp_channel=assets.is_rp_channel, disable_all_tools=streaming.disable_all_tools
    )
    step = clock()
    prepared, candidate_reads = _prepare_participants(req, history, effective.persona)  # 9
    naming = _history_naming(req, history, prepared, candidate_reads, effective.persona)  # 10
    participants = _participant_items(req, history, prepared, naming, effective, impersonation)
    durations["participants_ms"] = _elapsed_ms(clock, step)
    state = TurnState(id_map, streaming, assets, history, impersonation, effective, participants)
    output = _build_prompt(req, state)  # 11
    items, targets = _tail(req, state, output)  # 12
    durations["total_ms"] = _elapsed_ms(clock, started)
    ctx = _turn_context(req, state, items, targets, durations)
    ctx.fast_regeneration_recorder = recorder
    return ctx


def _turn_context(
    req: TurnRequest,
    state: TurnState,
    items: list[ContextItem],
    targets: TurnTargets,
    durations: dict[str, float],
) -> ChatTurnContext:
    """The stage's output with its count-only diagnostics (BC10-04) and the exclusion log."""
    history, participants = state.history, state.participants
    diagnostics: JSONDict = {
        "history": history_diagnostics(history.result, history.entries),
        "participants": participant_diagnostics(participants.prepared, participants.items),
        "context": context_diagnostics(items),
        "message_id_map_size": len(state.id_map),
        "durations": durations,
    }
    exclusions = [
        *history.result.exclusions,
        *participant_exclusions(
            participants.prepared,
            participants.naming.rows,
            participants.naming.blacklisted,
            personalization_enabled=req.turn.server.personal_memories_enabled,
        ),
    ]
    return ChatTurnContext(
        turn=req.turn,
        current_persona=state.persona,
        context_items=items,
        simplified_messages=history.entries,
        streaming_context=state.streaming,
        message_id_map=state.id_map,
        targets=targets,
        emoji_strings=list(state.assets.emoji_strings),
        loaded_emojis=state.assets.emojis,
        loaded_stickers=state.assets.stickers,
        participant_target_index=participants.codec.to_json(targets.index),
        diagnostics=diagnostics,
        exclusions=exclusions,
        history_anchor_id=history.result.window_anchor_id,
    )
