"""The embed loop and the Components-V2 notice step of one message or forward snapshot (BC6-05/06).

Tomori-authored embeds with a target title become `[System: …]` notices; other people's embeds are
link previews. Only Tomori-authored messages (the bot user or a persona webhook) may produce notices
on either transport.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chatcontext.core.frames import system_frame
from chatcontext.core.notices import (
    ERROR_COLOR,
    TARGET_KINDS,
    classify_embed,
    classify_title,
    format_diagnostic_block,
    format_notice,
    read_component_notice,
)
from chatcontext.core.simplify.media import MediaBag, add_embed_image
from chatcontext.core.types import Embed

_PREVIEW_DESCRIPTION_LIMIT = 500


@dataclass
class EmbedOutcome:
    texts: list[str] = field(default_factory=list)
    processed_notice: bool = False


def link_preview_text(embed: Embed) -> str | None:
    """BC6-05(3): author, title, description (500 chars + `...`), fields — joined ` - `."""
    parts = [p for p in (embed.author_name, embed.title) if p]
    if embed.description:
        description = embed.description
        if len(description) > _PREVIEW_DESCRIPTION_LIMIT:
            description = description[:_PREVIEW_DESCRIPTION_LIMIT] + "..."
        parts.append(description)
    for f in embed.fields:
        if f.name and f.value:
            parts.append(f"{f.name}: {f.value}")
        elif f.name or f.value:
            parts.append(f.name or f.value)
    return system_frame(f"Link preview embed content: {' - '.join(parts)}") if parts else None


def process_embeds(
    embeds: Iterable[Embed],
    components: Iterable[Any],
    *,
    tomori_authored: bool,
    persona_nickname: str,
    self_debug: bool,
    bag: MediaBag,
) -> EmbedOutcome:
    outcome = EmbedOutcome()
    for embed in embeds:
        kind = classify_embed(embed)
        is_target = kind in TARGET_KINDS
        if tomori_authored:
            if is_target and embed.description:
                outcome.texts.append(format_notice(kind or "", embed.title, embed.description, persona_nickname))
                outcome.processed_notice = True
            elif self_debug and (embed.color == ERROR_COLOR or kind == "diagnostic"):
                outcome.texts.append(format_diagnostic_block(embed))
                outcome.processed_notice = True
            continue
        # Hardening of BC6-05(3): the reference skips a user's embed that carries a notice title;
        # here it is shown for what it is, a link preview, and never formatted as a notice.
        preview = link_preview_text(embed)
        if preview:
            outcome.texts.append(preview)
        image = embed.image or embed.thumbnail
        if image is not None:
            add_embed_image(bag, image)
    if tomori_authored:
        # BC6-06 (restricted to Tomori-authored containers, see is_tomori_authored).
        notice = read_component_notice(components)
        if notice is not None and notice.title and notice.description:
            kind = classify_title(notice.title)
            if kind in TARGET_KINDS:
                outcome.texts.append(format_notice(kind or "", notice.title, notice.description, persona_nickname))
                outcome.processed_notice = True
    return outcome
