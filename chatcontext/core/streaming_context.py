"""StreamingContext, explicit long-term-memory intent, deliberate-tool gating and the effective
persona (build-context.md §9).

Fast regeneration (BC9-06, BC9-10) is ``chatcontext.core.regeneration``. `end_turn_after_tools` is only
what the caller's overrides supply; the short-term-memory intent wrapper (BC9-12,
`chatcontext.pipeline`) adds its tool to a copy it hands to the gating, never to this field.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from chatcontext.core.simplify.base import collapse_whitespace
from chatcontext.core.types import ChatTurn, JSONDict, PersonaInfo, ReplyNoticeState, ServerConfig, StreamingContext

# BC9-05: plain substrings of the NFKC-normalised, lower-cased text (no word boundaries, so
# `remembered`, `notebook` and `denote` match; only the ASCII apostrophe counts in "don't forget").
_LTM_INTENT_PHRASES = (
    "remember",
    "don't forget",
    "note",
    "commit to memory",
    "for future conversations",
    "for future reference",
    "覚えておいて",
    "覚えといて",
    "これを覚えて",
    "これ覚えて",
    "それを覚えて",
    "それ覚えて",
    "忘れないで",
    "今後のために覚えて",
    "後で使えるように覚えて",
)


def explicit_long_term_memory_intent(text: str | None) -> bool:
    """BC9-05."""
    if not text or not text.strip():
        return False
    normalized = collapse_whitespace(unicodedata.normalize("NFKC", text).lower())
    return any(phrase in normalized for phrase in _LTM_INTENT_PHRASES)


_STREAMING_FIELDS = {f.name for f in dataclasses.fields(StreamingContext)}


def init_streaming_context(
    turn: ChatTurn, *, message_id_map: Any, forced_mentions: list[JSONDict] | None
) -> StreamingContext:
    """BC9-01..04: initial flags, manual overrides (shallow, override keys win), the recomputed
    `suppress_user_errors`, and `reply_notice_state` for every queued turn (main persona or alter)."""
    incoming = turn.incoming
    context = StreamingContext(
        explicit_long_term_memory_intent=explicit_long_term_memory_intent(incoming.message.content),
        force_reason=incoming.force_reason,
        is_manually_triggered=incoming.is_manually_triggered,
        suppress_user_errors=not turn.should_surface_user_errors,
        text_credential_source=turn.text_credential_source,
        disable_all_tools=incoming.is_user_impersonation,
        nai_continuation_prefill=incoming.nai_continuation_prefill,
        empty_response_retry_count=incoming.retry_count,
        message_id_map=message_id_map,
        triggerer_user_id=turn.user_row.user_id if turn.user_row else None,
        forced_mentions=forced_mentions,
    )
    overrides = incoming.manual_streaming_context_overrides or {}
    # Unknown override keys have no field to land on; they are ignored rather than failing a turn.
    known = {key: value for key, value in overrides.items() if key in _STREAMING_FIELDS}
    if isinstance(known.get("reply_notice_state"), Mapping):
        known["reply_notice_state"] = ReplyNoticeState(**known["reply_notice_state"])
    context = dataclasses.replace(context, **known)
    context.suppress_user_errors = (not turn.should_surface_user_errors) or overrides.get(
        "suppress_user_errors"
    ) is True
    if incoming.is_from_queue:
        context.reply_notice_state = ReplyNoticeState(attempted=False, sent=False)
    return context


# ---------------------------------------------------------------------------------------------
# Deliberate-tool gating (BC9-07..09), in a minimal form: a small built-in intent catalogue plus
# the server's literal trigger words, matched on the trigger message (and, when the mode is active,
# on the last few visible messages).
# ---------------------------------------------------------------------------------------------

DEFAULT_TOOL_CONTEXT_TURNS = 4
MAX_TOOL_CONTEXT_TURNS = 10
URL_FETCH_TOOL = "fetch_url"
VOICE_TOOL = "generate_voice_message"
TASK_TOOL = "create_task"

_BUILT_IN_INTENTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("web_search", re.compile(r"\b(search|web\s*search|look\s+up|google|latest|news)\b", re.IGNORECASE)),
    (
        URL_FETCH_TOOL,
        re.compile(
            r"https?://\S+.*\b(read|summari[sz]e|open|fetch|check)\b"
            r"|\b(read|summari[sz]e|open|fetch|check)\b.*https?://\S+",
            re.IGNORECASE,
        ),
    ),
    (
        "create_long_term_memory",
        re.compile(r"\b(remember|save\s+(this|that|it)|store\s+(this|that|it))\b", re.IGNORECASE),
    ),
    (TASK_TOOL, re.compile(r"\b(remind|set\s+(a\s+)?(reminder|timer|alarm))\b", re.IGNORECASE)),
    (VOICE_TOOL, re.compile(r"\b(voice|audio|spoken)\s+message\b", re.IGNORECASE)),
    ("generate_image", re.compile(r"\b(generate|draw|make|create)\b.*\b(image|picture|drawing)\b", re.IGNORECASE)),
)
_REMINDER_VOICE = re.compile(r"\b(voice|audio|speech|say\s+(it|this)\s+out\s+loud|spoken)\b", re.IGNORECASE)


@dataclass(frozen=True)
class DeliberateToolConfig:
    """Server settings of deliberate tool mode; all off by default (no settings field stores them yet)."""

    server_mode: bool = False
    # tool name → literal trigger phrases (case-insensitive, whitespace-compacted)
    triggers: Mapping[str, Sequence[str]] = field(default_factory=dict)
    context_turns: int | None = None


@dataclass(frozen=True)
class ToolIntentMatch:
    tool_name: str
    trigger: str
    source: str  # built-in | custom | recent | reminder | follow-up | url-fetcher


@dataclass(frozen=True)
class ToolGating:
    active: bool
    context_turns: int
    disable_all_tools: bool
    allowed_names: list[str] | None
    match_by_tool_name: dict[str, ToolIntentMatch]


def deliberate_mode_active(personal_mode: str | None, server_mode: bool) -> bool:
    """BC9-07: the user's personal mode `on`/`off` wins over the server flag."""
    if personal_mode == "on":
        return True
    if personal_mode == "off":
        return False
    return server_mode


def context_turns(configured: int | None) -> int:
    """BC9-08: clamped to [0, MAX_TOOL_CONTEXT_TURNS]; unset → the default."""
    if configured is None:
        return DEFAULT_TOOL_CONTEXT_TURNS
    return min(max(int(configured), 0), MAX_TOOL_CONTEXT_TURNS)


def _normalize_trigger(trigger: str) -> str:
    return collapse_whitespace(trigger).lower()


def match_tool_intents(text: str, triggers: Mapping[str, Sequence[str]], source: str = "") -> list[ToolIntentMatch]:
    """Built-in intent patterns, then the server's literal triggers, in catalogue order."""
    if not text.strip():
        return []
    matches: list[ToolIntentMatch] = []
    for tool_name, pattern in _BUILT_IN_INTENTS:
        found = pattern.search(text)
        if found:
            matches.append(ToolIntentMatch(tool_name, found.group(0).strip().lower(), source or "built-in"))
    compact = _normalize_trigger(text)
    for tool_name, phrases in triggers.items():
        for phrase in phrases:
            normalized = _normalize_trigger(phrase)
            if normalized and normalized in compact:
                matches.append(ToolIntentMatch(tool_name, normalized, source or "custom"))
    return matches


@dataclass(frozen=True)
class ToolIntentTexts:
    """The texts of a turn that BC9-07..09 look for tool intents in.

    ``reminder_purpose`` is set only when a reminder applies (BC7-01 condition); ``recent_texts`` are
    the visible messages before the trigger, oldest first (their last `context_turns` are scanned when
    the mode is active).
    """

    message_content: str
    reminder_purpose: str | None = None
    recent_texts: Sequence[str] = ()


def gate_deliberate_tools(
    *,
    config: DeliberateToolConfig,
    personal_mode: str | None,
    texts: ToolIntentTexts,
    disable_all_tools: bool,
    follow_up_names: Sequence[str] = (),
    end_turn_after_tools: Sequence[str] = (),
    url_fetch_tool_names: Sequence[str] = (),
) -> ToolGating:
    """BC9-07..09. ``follow_up_names`` are recent tool affordances the shell found in history."""
    active = deliberate_mode_active(personal_mode, config.server_mode)
    turns = context_turns(config.context_turns)
    message_content, reminder_purpose, recent_texts = texts.message_content, texts.reminder_purpose, texts.recent_texts
    intent_text = message_content + (f"\n{reminder_purpose}" if reminder_purpose is not None else "")
    matches = match_tool_intents(intent_text, config.triggers)
    if any(m.tool_name == URL_FETCH_TOOL for m in matches):
        matches += [ToolIntentMatch(name, "URL fetch request", "url-fetcher") for name in url_fetch_tool_names]
    matches += [ToolIntentMatch(name, "follow-up", "follow-up") for name in follow_up_names]
    matches += [ToolIntentMatch(name, "end turn", "end-turn") for name in end_turn_after_tools]
    if active and turns:
        for text in recent_texts[-turns:]:
            matches += match_tool_intents(text, config.triggers, source="recent")
    if reminder_purpose is not None:
        if _REMINDER_VOICE.search(reminder_purpose):
            matches.append(ToolIntentMatch(VOICE_TOOL, "reminder voice request", "reminder"))
        # A triggered reminder must not schedule itself again from its own purpose text.
        first_task = next((i for i, m in enumerate(matches) if m.tool_name == TASK_TOOL), None)
        if first_task is not None:
            del matches[first_task]
    match_by_tool_name: dict[str, ToolIntentMatch] = {}
    for match in matches:
        match_by_tool_name.setdefault(match.tool_name, match)
    allowed = list(match_by_tool_name)
    has_intent = bool(allowed) or bool(end_turn_after_tools)
    allowed_names: list[str] | None = None
    if active and not disable_all_tools and not has_intent:
        disable_all_tools = True
    elif active and not disable_all_tools and allowed:
        allowed_names = allowed
    return ToolGating(active, turns, disable_all_tools, allowed_names, match_by_tool_name)


@dataclass(frozen=True)
class EffectivePersona:
    """BC9-11: the persona and server config the rest of the turn reads (the turn keeps the originals)."""

    persona: PersonaInfo
    server: ServerConfig


def effective_persona(
    persona: PersonaInfo, server: ServerConfig, *, is_rp_channel: bool, disable_all_tools: bool
) -> EffectivePersona:
    """BC9-11: RP channels switch emoji and sticker usage off; disabled tools clear `has_tools`."""
    if is_rp_channel:
        server = dataclasses.replace(server, emoji_usage_enabled=False, sticker_usage_enabled=False)
    if disable_all_tools and persona.has_tools:
        persona = dataclasses.replace(persona, has_tools=False)
    return EffectivePersona(persona=persona, server=server)
