"""Tail directives (build-context.md §8): collection, the emoji penalty and their placement.

BC8-15 [SEED] priority, lowest → highest recency: emoji penalty (before the latest dialogue pair) <
combined stop/reasoning/manual/continuation directives < queued-reply directive < uncensor directive
< manual-prefill model message (always last). Every tail item is a `user` item tagged
`dialogue_history` without a `message_id` (BC8-14), except the prefill, which is a `model` item.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chatcontext.core.builder import BuilderOutput
from chatcontext.core.config import StageConfig
from chatcontext.core.frames import system_frame
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.simplify.authors import match_persona_name, strip_bridge_prefix
from chatcontext.core.simplify.base import collapse_whitespace
from chatcontext.core.simplify.media import VIDEO_TYPES
from chatcontext.core.types import (
    ChatTurn,
    ContextItem,
    ContextItemTag,
    DiscordMessage,
    PersonaInfo,
    SimplifiedMessage,
    TextPart,
)

STOP_DIRECTIVE = "The user has requested you to stop your current generation."
SYSTEM_EMBED_MARKER = "[System: The following content came from a system-produced embed]"
QUEUED_PREVIEW_MAX = 280
KAYRA_ERATO_CODENAMES = frozenset({"kayra-v1", "llama-3-erato-v1"})

_SYSTEM_PREFIX = re.compile(r"^\[System:\s*", re.IGNORECASE)
_EMOJI_TAG = re.compile(r"<a?:([A-Za-z0-9_~]+):\d+>")
_EMOJI_TOKEN = re.compile(r":[A-Za-z0-9_~]+:")


def normalize_directive(text: str) -> str:
    """BC8-13: trim; drop a leading `[System:` (and the closing `]`); then strip one `[...]` pair."""
    trimmed = text.strip()
    if not trimmed:
        return ""
    if _SYSTEM_PREFIX.match(trimmed):
        trimmed = _SYSTEM_PREFIX.sub("", trimmed, count=1)
        if trimmed.endswith("]"):
            trimmed = trimmed[:-1].strip()
    if trimmed.startswith("[") and trimmed.endswith("]"):
        trimmed = trimmed[1:-1].strip()
    return trimmed


def _directive_item(text: str) -> ContextItem:
    return ContextItem(role="user", parts=[TextPart(text)], metadata_tag=ContextItemTag.DIALOGUE_HISTORY)


def combined_directive_item(directives: Sequence[str]) -> ContextItem | None:
    """`[System: {d1}\\n\\n{d2}…]` of the non-blank normalized directives, or None."""
    normalized = [d for d in (normalize_directive(text) for text in directives) if d]
    if not normalized:
        return None
    joined = "\n\n".join(normalized)
    return _directive_item(system_frame(joined))


# ---------------------------------------------------------------------------------------------
# Emoji penalty (BC8-11)
# ---------------------------------------------------------------------------------------------


def count_custom_emojis(text: str) -> int:
    """Distinct `:name:` tokens after rewriting `<a?:name:digits>` to `:name:`.

    [QUIRK] BC8-11: the reference counts the `:30:` of a clock time such as `12:30:45`; tokens made
    only of digits are not emoji names, so they are not counted here.
    """
    rewritten = _EMOJI_TAG.sub(r":\1:", text)
    return len({token for token in _EMOJI_TOKEN.findall(rewritten) if not token[1:-1].isdigit()})


def emoji_penalty_directive(
    items: Sequence[ContextItem], speaker_label: str | None, *, enabled: bool, lookback: int, threshold: int
) -> str | None:
    """BC8-11: over the last `lookback` model dialogue items; triggers when the sum exceeds threshold."""
    if not enabled or lookback <= 0:
        return None
    model_items = [i for i in items if i.role == "model" and i.metadata_tag == ContextItemTag.DIALOGUE_HISTORY]
    recent = model_items[-lookback:]
    total = sum(count_custom_emojis(" ".join(p.text for p in i.parts if isinstance(p, TextPart))) for i in recent)
    if total <= threshold:
        return None
    label = (speaker_label or "").strip()
    subject = f"{label} has" if label else "You have"
    return (
        f"{subject} been using emojis too frequently in recent messages. Respond to this message without "
        "using any emojis to maintain natural conversation flow."
    )


# ---------------------------------------------------------------------------------------------
# Queued-reply directive (BC8-07, BC8-08) and the sprite label (BC8-10)
# ---------------------------------------------------------------------------------------------


def queued_reply_target_name(turn: ChatTurn) -> str:
    """BC8-07: who wrote the queued message, named the way the persona knows them."""
    name = turn.triggerer.nickname
    incoming = turn.incoming
    if not incoming.is_from_queue:
        return name
    message = incoming.message
    if message.author.id == turn.bot_user.id:
        main = turn.main_persona or next((p for p in turn.all_personas if not p.is_alter), None)
        return (main or turn.persona).persona_nickname or name
    if message.webhook_id:
        match = match_persona_name(message.author.username, tuple(turn.all_personas))
        if match is not None:
            return match.persona.persona_nickname
    return name


def attachment_summary(message: DiscordMessage) -> str | None:
    """`2 images, 1 video, 1 sticker, 3 files` (zero parts omitted); audio and untyped files are files."""
    images = videos = files = 0
    for attachment in message.attachments:
        content_type = (attachment.content_type or "").lower()
        if content_type.startswith("image/"):
            images += 1
        elif content_type.startswith(VIDEO_TYPES):
            videos += 1
        else:
            files += 1
    counts = (("image", images), ("video", videos), ("sticker", len(message.stickers)), ("file", files))
    parts = [f"{n} {noun}{'' if n == 1 else 's'}" for noun, n in counts if n]
    return ", ".join(parts) or None


def queued_reply_directive(
    message: DiscordMessage,
    target_name: str,
    persona_nickname: str | None,
    id_map: MessageIdMap,
    *,
    allow_sprite_label: bool,
    default_botname: str = "Tomori",
) -> str:
    """BC8-08. Registers the queued message as `ref` (after history and builder ids, BC5-04)."""
    target = collapse_whitespace(strip_bridge_prefix(target_name)) or "User"
    persona = (collapse_whitespace(strip_bridge_prefix(persona_nickname or "")) or default_botname).replace('"', "'")
    preview = collapse_whitespace(message.clean_content or message.content or "")
    if len(preview) > QUEUED_PREVIEW_MAX:
        preview = preview[: QUEUED_PREVIEW_MAX - 3] + "..."
    preview = preview.replace('"', "'")
    text = f"Create a reply as {persona} to {target}'s message from earlier (ID: {id_map.register(message.id, 'ref')})"
    summary = attachment_summary(message)
    if summary:
        text += f", which has {summary} attached"
    if preview:
        text += f' saying: "{preview}"'
    opening = f'Start your next reply with "{persona}:"'
    if allow_sprite_label:
        opening += f', or with "{persona} ({{sprite label}}):" if you are using a sprite'
    return f"{text}. {opening}"


def allow_sprite_label(persona: PersonaInfo, is_user_impersonation: bool) -> bool:
    """BC8-10: not impersonating, the persona has an id and at least one sprite."""
    return not is_user_impersonation and persona.persona_id is not None and bool(persona.sprite_names)


# ---------------------------------------------------------------------------------------------
# Tail context and placement (BC8-01..BC8-15)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TailContext:
    """The turn facts tail directives read, flattened so the placement logic is easy to test."""

    persona_nickname: str
    default_botname: str = "Tomori"
    llm_provider: str = ""
    llm_codename: str = ""
    is_stop_response: bool = False
    reasoning_query: str | None = None
    manual_system_prompt: str | None = None
    manual_prefill: str | None = None
    is_manually_triggered: bool = False
    is_scene_turn: bool = False
    is_user_impersonation: bool = False
    has_reminder_recipient: bool = False
    is_self_reminder: bool = False
    queued_message: DiscordMessage | None = None
    queued_target_name: str = "User"
    allow_sprite_label: bool = False
    emoji_penalty_enabled: bool = True
    emoji_penalty_lookback: int = 3
    emoji_penalty_threshold: int = 1

    @classmethod
    def from_turn(cls, turn: ChatTurn, *, config: StageConfig, persona: PersonaInfo | None = None) -> TailContext:
        """``persona`` is the effective persona (BC9-11); defaults to the turn's persona."""
        incoming = turn.incoming
        persona = persona or turn.persona
        return cls(
            persona_nickname=persona.persona_nickname,
            default_botname=config.default_botname,
            llm_provider=persona.llm_provider,
            llm_codename=persona.llm_codename,
            is_stop_response=bool(incoming.is_stop_response),
            reasoning_query=incoming.reasoning_query,
            manual_system_prompt=incoming.manual_system_prompt,
            manual_prefill=incoming.manual_prefill,
            is_manually_triggered=bool(incoming.is_manually_triggered),
            is_scene_turn=incoming.scene_turn is not None,
            is_user_impersonation=incoming.is_user_impersonation,
            has_reminder_recipient=bool(incoming.reminder_recipient_id),
            is_self_reminder=bool(incoming.reminder_data and incoming.reminder_data.self_reminder),
            queued_message=incoming.message if incoming.is_from_queue else None,
            queued_target_name=queued_reply_target_name(turn),
            allow_sprite_label=allow_sprite_label(persona, incoming.is_user_impersonation),
            emoji_penalty_enabled=config.emoji_penalty_enabled,
            emoji_penalty_lookback=config.emoji_penalty_lookback,
            emoji_penalty_threshold=config.emoji_penalty_threshold,
        )

    @property
    def prefill(self) -> str:
        return (self.manual_prefill or "").strip()

    @property
    def bot_name(self) -> str:
        return self.persona_nickname or self.default_botname or "Tomori"


def continuation_directive(ctx: TailContext, history: Sequence[SimplifiedMessage]) -> str | None:
    """BC8-06: on manual triggers, continue the persona's own last message or honour the prefill."""
    if (
        not ctx.is_manually_triggered
        or ctx.is_scene_turn
        or ctx.is_user_impersonation
        or ctx.reasoning_query
        or ctx.has_reminder_recipient
        or ctx.is_self_reminder
        or not history
    ):
        return None
    last = history[-1]
    from_selected = (
        last.author_type == "persona"
        and bool(ctx.persona_nickname)
        and (last.persona_name or "").casefold() == ctx.persona_nickname.casefold()
    )
    is_embed = SYSTEM_EMBED_MARKER in (last.content or "")
    kayra_erato = ctx.llm_provider == "novelai" and ctx.llm_codename in KAYRA_ERATO_CODENAMES
    use_prefill = bool(ctx.prefill) and not kayra_erato
    if not ((from_selected and not is_embed) or use_prefill):
        return None
    if not use_prefill:
        return "[Continue your last message without repeating it]"
    opening = f'"{ctx.bot_name}: {ctx.prefill}". Continue directly after it without repeating the prefix.'
    if from_selected and not is_embed:
        return f"[Continue your last message without repeating it. Begin exactly with: {opening}]"
    return f"[Begin your next reply with: {opening}]"


def _dialogue_indices(items: Sequence[ContextItem]) -> list[int]:
    return [i for i, item in enumerate(items) if item.metadata_tag == ContextItemTag.DIALOGUE_HISTORY]


def insert_before_latest_dialogue_pair(items: list[ContextItem], item: ContextItem) -> None:
    """BC8-12(a): before the earlier of the last two user/model dialogue items; none → append."""
    found = [i for i in _dialogue_indices(items) if items[i].role in ("user", "model")][-2:]
    if found:
        items.insert(found[0], item)
    else:
        items.append(item)


def insert_at_dialogue_depth(items: list[ContextItem], item: ContextItem, depth: int) -> None:
    """BC8-12(b,c): depth ≤ 0 → append; else before the depth-th dialogue item counted from the end
    (any role, tail items included); fewer → before the earliest; none → append."""
    indices = _dialogue_indices(items)
    if depth <= 0 or not indices:
        items.append(item)
        return
    items.insert(indices[-min(depth, len(indices))], item)


def apply_tail_directives(
    items: Sequence[ContextItem],
    output: BuilderOutput,
    ctx: TailContext,
    *,
    history: Sequence[SimplifiedMessage],
    id_map: MessageIdMap,
    injected_items: Sequence[ContextItem] = (),
) -> list[ContextItem]:
    """BC8-01..BC8-15 over `items` (the builder's items); returns a new list."""
    result = [*items, *injected_items]
    lower = list(output.lower_priority_tail_directives)
    tail = list(output.tail_directives)
    penalty = emoji_penalty_directive(
        result,
        None if ctx.is_user_impersonation else ctx.persona_nickname,
        enabled=ctx.emoji_penalty_enabled,
        lookback=ctx.emoji_penalty_lookback,
        threshold=ctx.emoji_penalty_threshold,
    )
    if penalty:
        lower.append(penalty)
    if ctx.is_stop_response:
        tail.append(STOP_DIRECTIVE)
    if ctx.reasoning_query:
        tail.append(f'The user has activated reasoning mode with the following query: "{ctx.reasoning_query}".')
    if ctx.manual_system_prompt and ctx.manual_system_prompt.strip():
        tail.append(normalize_directive(ctx.manual_system_prompt))
    continuation = continuation_directive(ctx, history)
    if continuation:
        tail.append(continuation)
    queued = None
    if ctx.queued_message is not None and not ctx.is_stop_response and not ctx.is_scene_turn:
        queued = queued_reply_directive(
            ctx.queued_message,
            ctx.queued_target_name,
            ctx.persona_nickname,
            id_map,
            allow_sprite_label=ctx.allow_sprite_label,
            default_botname=ctx.default_botname,
        )

    lower_item = combined_directive_item(lower)
    if lower_item is not None:
        insert_before_latest_dialogue_pair(result, lower_item)
    if output.memory_injection_depth >= 0:
        for memory_item in output.memory_injection_items:
            insert_at_dialogue_depth(result, memory_item, output.memory_injection_depth)
    if output.nudge_item is not None:
        insert_at_dialogue_depth(result, output.nudge_item, output.nudge_injection_depth)
    tail_item = combined_directive_item(tail)
    if tail_item is not None:
        result.append(tail_item)
    for directive in (queued, output.uncensor_directive):
        single = combined_directive_item([directive or ""])
        if single is not None:
            result.append(single)
    if ctx.prefill:
        result.append(
            ContextItem(
                role="model",
                parts=[TextPart(f"{ctx.persona_nickname}: {ctx.prefill}")],
                metadata_tag=ContextItemTag.DIALOGUE_HISTORY,
            )
        )
    return result
