"""`simplify_message`: one Discord message → one history entry, or None (build-context.md §3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chatcontext.core.frames import system_frame
from chatcontext.core.simplify.authors import AuthorIdentity, is_tomori_authored, resolve_author, strip_trigger_mentions
from chatcontext.core.simplify.base import SimplifyContext, base_content, is_debug_message, is_join
from chatcontext.core.simplify.embeds import process_embeds
from chatcontext.core.simplify.forwards import build_forward_context
from chatcontext.core.simplify.media import (
    MediaBag,
    add_attachments,
    add_component_media,
    add_custom_emojis,
    add_stickers,
    add_youtube,
    is_audio_attachment,
)
from chatcontext.core.simplify.reactions import reaction_annotation
from chatcontext.core.simplify.reply import build_reply_context
from chatcontext.core.types import Attachment, DiscordMessage, SimplifiedMessage

SYSTEM_EMBED_AUTHOR = "system-embed"
JOIN_AUTHOR_PREFIX = "system-user-join:"


@dataclass(frozen=True)
class SimplifyOutcome:
    entry: SimplifiedMessage | None
    is_debug: bool
    identity: AuthorIdentity


def _file_hints(message: DiscordMessage, others: list[Attachment], ctx: SimplifyContext) -> list[str]:
    """BC3-18: hints for attachments that are not images/videos: audio (transcript or not) and files."""
    hints: list[str] = []
    transcript_used = False
    for attachment in others:
        if is_audio_attachment(attachment):
            if ctx.voice_chat_mode:
                continue
            cached = ctx.transcripts.get(message.id)
            # The cache holds one transcript per message, made from its first audio attachment
            # (BC11-01), so only one attachment carries it; further audio files read as untranscribed.
            if cached is not None and cached.source == "user_stt" and not transcript_used:
                transcript_used = True
                hints.append(f"[System: This was sent as a voice message.]\n{cached.transcript}")
            else:
                hints.append(
                    system_frame(f"An audio file named `{attachment.name}` was sent here but was not transcribed.")
                )
        else:
            media_id = ctx.id_map.register(message.id, "media")
            hints.append(
                system_frame(
                    f"A file named `{attachment.name}` is attached (message ID: {media_id}). "
                    "Use `read_file` with this message ID to read its contents, only if needed."
                )
            )
    return hints


def simplify_message(message: DiscordMessage, ctx: SimplifyContext) -> SimplifyOutcome:
    is_debug = is_debug_message(message, ctx)
    identity = resolve_author(message, ctx, is_debug=is_debug)
    content = base_content(message, ctx, is_debug)
    # BC3-11: Tomori-authored = the bot user or a persona-typed author.
    if content and not (message.author.id == ctx.bot_user_id or identity.is_persona):
        content = strip_trigger_mentions(content, ctx.personas)

    reply = build_reply_context(message, ctx)
    reactions = reaction_annotation(message, ctx.reaction_users.get(message.id, ()), ctx)
    forward = build_forward_context(message, identity.author_name, ctx)

    local = MediaBag()
    notices = process_embeds(
        message.embeds,
        message.components,
        tomori_authored=is_tomori_authored(message, ctx.bot_user_id, ctx.personas),
        persona_nickname=ctx.persona.persona_nickname,
        self_debug=ctx.self_debug_enabled,
        bag=local,
    )
    hints: list[str] = []
    table = ctx.rendered_tables.get(message.id)
    if table is not None:
        # BC3-17: the table image is replaced by its text; no media for it.
        hints.append(f"[System: This was sent as a rendered markdown table image.]\n{table}")
    else:
        others = add_attachments(local, message.attachments)
        add_component_media(local, message.components, message.attachments)
        hints.extend(_file_hints(message, others, ctx))
    add_stickers(local, message.stickers)
    add_custom_emojis(local, message.content)
    add_youtube(local, message.content)

    text = "\n".join(
        part for part in (forward.text, reply.annotation if reply else None, content, reactions, *notices.texts) if part
    )
    if hints:
        text = " ".join([text, *hints]) if text else " ".join(hints)

    # BC3-21: system notices and joins are re-attributed; `identity` keeps the side records.
    final = identity
    if notices.processed_notice:
        final = AuthorIdentity(author_id=SYSTEM_EMBED_AUTHOR, author_name="System")
    elif is_join(message):
        final = AuthorIdentity(author_id=f"{JOIN_AUTHOR_PREFIX}{message.id}", author_name="System")

    reply_media = reply.media if reply else MediaBag()
    images = [*reply_media.images, *forward.media.images, *local.images]
    videos = [*reply_media.videos, *forward.media.videos, *local.videos]
    if not text and not images and not videos:
        return SimplifyOutcome(None, is_debug, identity)

    # BC3-23 / BC3-14a: remote sources and their kind.
    sources = ([reply_media.source_message_id or ""] if len(reply_media) else []) + forward.source_ids
    kind: Literal["reply", "forwarded"] | None = None
    if len(local):
        source_ids: list[str] | None = list(dict.fromkeys([message.id, *sources]))
    else:
        source_ids = sources or None
        if forward.source_ids:
            kind = "forwarded"
        elif sources:
            # [QUIRK] BC3-14a: the reference lets the forward step erase the reply kind; reply media
            # keeps `reply` here (a message is never both a reply and a forward, BC3-02).
            kind = "reply"
    entry = SimplifiedMessage(
        id=message.id,
        author_id=final.author_id,
        author_name=final.author_name,
        author_type=final.author_type,
        persona_name=final.persona_name,
        author_persona_id=final.persona_id,
        author_persona_lineage_id=final.persona_lineage_id,
        content=text or None,
        created_at=message.created_timestamp,
        media_source_message_ids=source_ids,
        remote_media_source_kind=kind,
        image_attachments=images,
        video_attachments=videos,
    )
    return SimplifyOutcome(entry, is_debug, identity)
