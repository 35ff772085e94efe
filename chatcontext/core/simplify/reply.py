"""Reply context (BC3-02..07): which message a message answers, and the annotation that says so."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from chatcontext.core.frames import inert, quoting_frame
from chatcontext.core.notices import is_reply_context_embed
from chatcontext.core.simplify.authors import annotation_label
from chatcontext.core.simplify.base import NO_TEXT, PIN_TYPE, SimplifyContext, collapse_whitespace, media_suffix
from chatcontext.core.simplify.media import (
    VIDEO_TYPES,
    MediaBag,
    add_attachments,
    add_component_media,
    add_custom_emojis,
)
from chatcontext.core.types import DiscordMessage

_MESSAGE_LINK = re.compile(r"discord(?:app)?\.com/channels/(@me|\d+)/(\d+)/(\d+)")


def reply_target_id(message: DiscordMessage) -> str | None:
    """BC3-02/03: the referenced id, else the message linked by the bot's "Replying to …" embed.

    Forwards have no reply context; a reply-notice link into another channel gives none either.
    (The caller skips channels without message history.)
    """
    reference = message.reference
    if reference is not None and reference.type == "forward":
        return None
    if reference is not None and reference.message_id:
        return reference.message_id
    for embed in message.embeds:
        if not is_reply_context_embed(embed):
            continue
        link = _MESSAGE_LINK.search(f"{embed.url or ''}\n{embed.description or ''}")
        if link:
            return link.group(3) if link.group(2) == message.channel_id else None
    return None


def reply_summary(target: DiscordMessage) -> str:
    """BC3-05: the quoted text, whitespace-collapsed, with declared image/video counts."""
    text = inert(collapse_whitespace(target.content)) or NO_TEXT
    types = [(a.content_type or "").lower() for a in target.attachments]
    images = sum(t.startswith("image/") for t in types)
    videos = sum(t.startswith(VIDEO_TYPES) for t in types)
    return text + media_suffix(images, videos)


@dataclass
class ReplyContext:
    annotation: str
    media: MediaBag = field(default_factory=MediaBag)


def build_reply_context(message: DiscordMessage, ctx: SimplifyContext) -> ReplyContext | None:
    """BC3-04..07. A target by a blocked author gets no annotation and no media copy (BC3-04).

    Hardening: a target by a privacy-FULL author is treated the same way, so their text never reaches
    the prompt quoted inside someone else's entry (the reference quotes it).
    """
    target = ctx.reply_targets.get(message.id)
    if target is None or ctx.visibility.hides(target):
        return None
    reply_ref = ctx.id_map.register(message.id, "ref")
    target_ref = ctx.id_map.register(target.id, "ref")
    actor = annotation_label(message, ctx)
    author = annotation_label(target, ctx)
    summary = reply_summary(target)
    if message.type == PIN_TYPE:
        annotation = quoting_frame(
            f"{actor} pinned a previous message (ID: {target_ref}) by {author} saying: ", summary
        )
    else:
        annotation = quoting_frame(
            f"This message (ID: {reply_ref}) by {actor} is referring to a previous message "
            f"(ID: {target_ref}) by {author} saying: ",
            summary,
        )
    media = MediaBag(source_message_id=target.id)
    add_attachments(media, target.attachments)
    add_component_media(media, target.components, target.attachments)
    add_custom_emojis(media, target.content)
    return ReplyContext(annotation, media)
