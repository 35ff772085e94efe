"""Forwarded messages (BC3-12..14): the forwarded content as `[System: … forwarded a message …]` blocks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from chatcontext.core.frames import inert, quoting_frame, system_frame
from chatcontext.core.simplify.authors import bot_user_label
from chatcontext.core.simplify.base import NO_TEXT, SimplifyContext, collapse_whitespace, media_suffix
from chatcontext.core.simplify.embeds import process_embeds
from chatcontext.core.simplify.media import MediaBag, add_attachments, add_component_media, add_custom_emojis
from chatcontext.core.types import DiscordMessage, ForwardSnapshot


def is_forward(message: DiscordMessage) -> bool:
    return message.reference is not None and message.reference.type == "forward" and bool(message.message_snapshots)


def snapshot_is_empty(snapshot: ForwardSnapshot) -> bool:
    return not (snapshot.content or snapshot.attachments or snapshot.embeds or snapshot.stickers or snapshot.components)


def resolve_forward_chain(
    message: DiscordMessage, fetch: Callable[[str], DiscordMessage | None], max_depth: int
) -> DiscordMessage | None:
    """BC3-12: a forward of a forward arrives with empty snapshots; re-fetch the forwarded message and
    use its snapshots, up to `max_depth` hops. Returns the forward whose snapshots are used (their
    words are its origin's), None when unresolved (unreadable, not a forward, exhausted)."""
    current = message
    snapshots = message.message_snapshots
    hops = 0
    while all(snapshot_is_empty(s) for s in snapshots):
        reference = current.reference
        if hops >= max_depth or reference is None or reference.type != "forward" or not reference.message_id:
            return None
        fetched = fetch(reference.message_id)
        if fetched is None:
            return None
        hops += 1
        current, snapshots = fetched, fetched.message_snapshots
    return current


@dataclass
class ForwardContext:
    text: str | None = None
    media: MediaBag = field(default_factory=MediaBag)
    source_ids: list[str] = field(default_factory=list)


def _snapshot_author(snapshot: ForwardSnapshot, ctx: SimplifyContext) -> str:
    author = snapshot.author
    if author is None:
        return "Unknown user"
    if author.id == ctx.bot_user_id:
        return bot_user_label(ctx)
    return snapshot.member_display_name or author.global_name or author.username or "Unknown user"


def _snapshot_hidden(message: DiscordMessage, snapshot: ForwardSnapshot, ctx: SimplifyContext) -> bool:
    """Hardening: a snapshot by a privacy-FULL or blocked author is left out entirely (the reference
    shows it). The author comes from the snapshot, else from the cached origin message; Discord omits
    both for cross-channel forwards, and then nothing can be checked."""
    author = snapshot.author or ctx.forward_origin_authors.get(message.id)
    return author is not None and ctx.visibility.is_hidden_author(author.id)


def build_forward_context(message: DiscordMessage, forwarder: str, ctx: SimplifyContext) -> ForwardContext:
    if not is_forward(message):
        return ForwardContext()
    if message.id in ctx.forward_chains:
        snapshots = ctx.forward_chains[message.id]
    elif all(snapshot_is_empty(s) for s in message.message_snapshots):
        snapshots = None
    else:
        snapshots = message.message_snapshots
    if snapshots is None:
        return ForwardContext(
            text=system_frame(
                f"{forwarder} forwarded a message that was itself a forward. Discord does not include the original "
                "message's contents in a nested forward, so its text and any attached media cannot be seen."
            )
        )
    result = ForwardContext(media=MediaBag(source_message_id=message.id))
    blocks: list[str] = []
    for snapshot in snapshots:
        if _snapshot_hidden(message, snapshot, ctx):
            continue
        media = MediaBag(source_message_id=message.id)
        add_attachments(media, snapshot.attachments)
        add_component_media(media, snapshot.components, snapshot.attachments)
        add_custom_emojis(media, snapshot.content)
        notices = process_embeds(
            snapshot.embeds,
            snapshot.components,
            tomori_authored=snapshot.author is not None and snapshot.author.id == ctx.bot_user_id,
            persona_nickname=ctx.persona.persona_nickname,
            self_debug=ctx.self_debug_enabled,
            bag=media,
        )
        # The bot's notices were framed by the platform (BC3-14); the author's own text is a quotation.
        text = "\n".join(notices.texts) if notices.texts else inert(snapshot.content.strip())
        source = f"<#{snapshot.channel_id}>" if snapshot.channel_id else "another channel"
        suffix = media_suffix(len(media.images), len(media.videos))
        blocks.append(
            quoting_frame(
                f"{forwarder} forwarded a message by {_snapshot_author(snapshot, ctx)} from {source} saying: ",
                f"{collapse_whitespace(text) or NO_TEXT}{suffix}",
            )
        )
        if len(media):
            ctx.id_map.register(message.id, "media")
            if message.id not in result.source_ids:
                result.source_ids.append(message.id)
            result.media.extend(media)
    result.text = "\n".join(blocks) or None
    return result
