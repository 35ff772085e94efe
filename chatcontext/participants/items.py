"""The participant contributor's context items (participants.md R-01, R-14, R-15, X-01, X-03, N-01).

``build_participant_context_items`` runs phase 2 for one persona turn: hydrate (I/O through the
dependency object), render (pure), convert mentions (pure, after the directory learnt the ids of the
rendered texts) and wrap the three texts as context items. The builder places the profile item in
the participants slot (R-16/R-17) and the two `placement="tail"` items in the tail slot (R-18).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from chatcontext.core.participants.mentions import MentionDirectory, convert_mentions, extend_directory
from chatcontext.core.participants.model import HydratedParticipantProfile, PreparedParticipantContext
from chatcontext.core.participants.render import RenderClock, render_participant_prompt, visible_field
from chatcontext.core.participants.target_index import TargetIndexCodec, build_target_index, conversation_users
from chatcontext.core.participants.timefmt import format_clock, time_of_day_phrase, utc_label
from chatcontext.core.types import ContextItem, ContextItemTag, ServerMemoryRow, TextPart
from chatcontext.participants.hydration import HydrationResult, ParticipantTurn, hydrate_participant_profiles
from chatcontext.participants.loaders import HydrationDeps
from chatcontext.participants.projection import build_memory_projection

JSONDict = dict[str, Any]


@dataclass
class ParticipantItems:
    """R-01: up to three items plus the metadata they carry (also returned for direct use)."""

    profile: ContextItem | None = None
    presence: ContextItem | None = None
    current_context: ContextItem | None = None
    target_index: JSONDict = field(default_factory=lambda: {"targets": [], "persona_catalog_complete": False})
    conversation_users: list[JSONDict] = field(default_factory=list)
    memory_projection: JSONDict | None = None
    diagnostics: dict[str, Any] = field(default_factory=dict)
    # The lineage's server memories when hydration read them with the personal ones (one statement),
    # else None: the builder's caller reads them itself.
    server_memories: list[ServerMemoryRow] | None = None

    @property
    def items(self) -> list[ContextItem]:
        return [i for i in (self.profile, self.presence, self.current_context) if i is not None]


def render_clock(profiles: list[HydratedParticipantProfile], *, now_ms: int, server_offset: float) -> RenderClock:
    """Clock strings for R-10..R-12, computed outside the pure renderer (R-02)."""
    local_times = {
        p.key: f"{format_clock(now_ms, p.timezone_offset)} ({utc_label(p.timezone_offset)})"
        for p in profiles
        if p.timezone_offset is not None and visible_field(p, "timezone") is not None
    }
    return RenderClock(
        current_time=format_clock(now_ms, server_offset),
        timezone_label=utc_label(server_offset),
        time_of_day_phrase=time_of_day_phrase(now_ms, server_offset),
        local_times=local_times,
    )


def _item(text: str, tag: ContextItemTag, *, tail: bool = False) -> ContextItem:
    return ContextItem(role="user", parts=[TextPart(text)], metadata_tag=tag, placement="tail" if tail else "inline")


def build_participant_context_items(
    prepared: PreparedParticipantContext,
    turn: ParticipantTurn,
    *,
    deps: HydrationDeps,
    conversation_corpus: str | None = None,
    expand_attribute_macros: Callable[[str], str] | None = None,
    codec: TargetIndexCodec | None = None,
    mention_directory: MentionDirectory | None = None,
) -> ParticipantItems:
    """R-01: profile (above history), presence and current context (tail) for one persona turn.

    No seeds → no items at all (H-03). The presence item is omitted when no profile has a visible
    status line; the profile and current-context items are always emitted otherwise.
    ``mention_directory``: the turn's one directory, which hydration fills (R-14, P-07).
    """
    if not prepared.discovery_plan.seeds:
        return ParticipantItems(diagnostics={"hydration": {"profile_count": 0}, "item_count": 0})
    name, server, triggerer = turn.persona_name, turn.server, turn.triggerer
    hydrated: HydrationResult = hydrate_participant_profiles(
        prepared,
        turn,
        deps=deps,
        conversation_corpus=conversation_corpus,
        expand_attribute_macros=expand_attribute_macros,
        mention_directory=mention_directory,
    )
    profiles = hydrated.profiles
    index = build_target_index(profiles)
    rendered = render_participant_prompt(
        profiles,
        hydrated.persona_task_lines,
        render_clock(profiles, now_ms=turn.now_ms, server_offset=server.timezone_offset),
        bot_name=name,
        is_impersonation=turn.scope.is_user_impersonation,
        is_dm=server.is_dm,
        channel_name=turn.channel_name,
        channel_id=turn.channel_id,
    )

    # render → convert, every text of every item.
    texts = [rendered.profile_text, rendered.current_context_text]
    if rendered.presence_text is not None:
        texts.append(rendered.presence_text)
    directory = hydrated.mention_directory
    extend_directory(directory, texts, deps)

    def convert(text: str) -> str:
        return convert_mentions(
            text,
            triggerer.nickname if triggerer else None,
            name,
            server.personal_memories_enabled,
            directory=directory,
            triggerer_formatted_name=triggerer.formatted if triggerer else None,
            triggerer_address_term=triggerer.address_term if triggerer else None,
        )

    index_json = (codec or TargetIndexCodec()).to_json(index)
    users = conversation_users(index)
    projection = build_memory_projection(
        hydrated.memory_entries, profile_text_without_memories=convert(rendered.profile_text_without_memories)
    )
    profile = _item(convert(rendered.profile_text), ContextItemTag.KNOWLEDGE_USERS_IN_CONVERSATION)
    profile.participant_target_index = index_json
    profile.conversation_users = users
    profile.memory_projection = projection
    presence = (
        _item(convert(rendered.presence_text), ContextItemTag.KNOWLEDGE_USER_STATUS, tail=True)
        if rendered.presence_text is not None
        else None
    )
    current = _item(convert(rendered.current_context_text), ContextItemTag.KNOWLEDGE_CURRENT_CONTEXT, tail=True)
    result = ParticipantItems(
        profile=profile,
        presence=presence,
        current_context=current,
        target_index=index_json,
        conversation_users=users,
        memory_projection=projection,
        server_memories=hydrated.server_memories,
    )
    result.diagnostics = {"hydration": hydrated.diagnostics, "item_count": len(result.items)}
    return result
