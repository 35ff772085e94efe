"""A snapshot's Discord-shaped parts (messages, members, voice transcripts) as ``chatcontext.core.types``
value objects, and the stage's tunables it was built with as a ``StageConfig``."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from chatcontext.core.config import StageConfig
from chatcontext.core.snapshot_format import doc_items
from chatcontext.core.transcripts import MemoryTranscriptCache
from chatcontext.core.types import (
    Activity,
    Attachment,
    Author,
    DiscordMessage,
    Embed,
    EmbedField,
    EmbedMedia,
    ForwardSnapshot,
    JSONDict,
    MemberInfo,
    MessageReference,
    Reaction,
    ReactionEmoji,
    Role,
    StickerRef,
)


def _author(d: JSONDict) -> Author:
    return Author(
        id=d["id"],
        username=d.get("username") or "",
        global_name=d.get("global_name"),
        display_name=d.get("display_name"),
        bot=bool(d.get("bot")),
    )


def _attachment(d: JSONDict) -> Attachment:
    return Attachment(
        id=d["id"],
        name=d["name"],
        url=d["url"],
        proxy_url=d.get("proxy_url") or "",
        content_type=d.get("content_type"),
        size=d.get("size") or 0,
    )


def _embed_media(d: JSONDict | None) -> EmbedMedia | None:
    return EmbedMedia(url=d["url"], proxy_url=d.get("proxy_url")) if d else None


def _embed(d: JSONDict) -> Embed:
    return Embed(
        title=d.get("title"),
        description=d.get("description"),
        url=d.get("url"),
        color=d.get("color"),
        author_name=d.get("author_name"),
        footer_text=d.get("footer_text"),
        fields=tuple(EmbedField(f.get("name") or "", f.get("value") or "") for f in d.get("fields") or []),
        image=_embed_media(d.get("image")),
        thumbnail=_embed_media(d.get("thumbnail")),
    )


def _stickers(items: list[JSONDict] | None) -> tuple[StickerRef, ...]:
    return tuple(StickerRef(s["id"], s["name"]) for s in items or [])


def _components(items: list[JSONDict] | None) -> tuple[JSONDict, ...]:
    return tuple(copy.deepcopy(c) for c in items or [])


def _forward(d: JSONDict) -> ForwardSnapshot:
    member = d.get("member") or {}
    return ForwardSnapshot(
        content=d.get("content") or "",
        attachments=tuple(_attachment(a) for a in d.get("attachments") or []),
        components=_components(d.get("components")),
        embeds=tuple(_embed(e) for e in d.get("embeds") or []),
        stickers=_stickers(d.get("stickers")),
        author=_author(d["author"]) if d.get("author") else None,
        member_display_name=member.get("display_name") or member.get("nickname"),
        channel_id=d.get("channel_id"),
    )


def _reaction(d: JSONDict) -> Reaction:
    emoji = d["emoji"]
    return Reaction(
        emoji=ReactionEmoji(id=emoji.get("id"), name=emoji.get("name")),
        count=d["count"],
        users=tuple(d.get("users") or ()),
    )


def parse_message(d: JSONDict) -> DiscordMessage:
    """One snapshot message → ``DiscordMessage`` (build-context.md §1.3)."""
    ref = d.get("reference")
    return DiscordMessage(
        id=d["id"],
        channel_id=d["channel_id"],
        author=_author(d["author"]),
        created_timestamp=d["created_timestamp"],
        guild_id=d.get("guild_id"),
        type=d.get("type") or "default",
        member_display_name=d.get("member_display_name"),
        webhook_id=d.get("webhook_id"),
        content=d.get("content") or "",
        clean_content=d.get("clean_content") or "",
        reference=(
            MessageReference(type=ref["type"], message_id=ref.get("message_id"), channel_id=ref.get("channel_id"))
            if ref
            else None
        ),
        message_snapshots=tuple(_forward(s) for s in d.get("message_snapshots") or []),
        attachments=tuple(_attachment(a) for a in d.get("attachments") or []),
        stickers=_stickers(d.get("stickers")),
        embeds=tuple(_embed(e) for e in d.get("embeds") or []),
        components=_components(d.get("components")),
        reactions=tuple(_reaction(r) for r in d.get("reactions") or []),
    )


def parse_messages(doc: Mapping[str, Any]) -> list[DiscordMessage]:
    """The channel's messages, oldest first, as the document lists them."""
    return [parse_message(d) for d in doc_items(doc, "messages")]


def parse_member(d: JSONDict) -> MemberInfo:
    return MemberInfo(
        user_disc_id=d["user_disc_id"],
        username=d["username"],
        global_name=d.get("global_name"),
        nickname=d.get("nickname"),
        # Discord's member display name: server nickname, else global name, else username.
        display_name=d.get("nickname") or d.get("global_name") or d["username"],
        is_bot=bool(d.get("is_bot")),
        roles=tuple(Role(r["id"], r["name"], r["position"]) for r in d.get("roles") or []),
        presence_status=d.get("presence_status"),
        activities=tuple(
            Activity(type=a["type"], name=a["name"], state=a.get("state"), started_at_ms=a.get("started_at_ms"))
            for a in d.get("activities") or []
        ),
    )


def parse_members(doc: Mapping[str, Any]) -> list[MemberInfo]:
    return [parse_member(d) for d in doc_items(doc, "members")]


def transcript_cache(doc: Mapping[str, Any]) -> MemoryTranscriptCache:
    """The voice-transcript cache preloaded from ``voice_transcripts`` (BC11-02): each entry is
    keyed by the id of the message that carries the attachment, cached at the turn's clock."""
    owner = {a["id"]: msg["id"] for msg in doc_items(doc, "messages") for a in msg.get("attachments") or []}
    cache = MemoryTranscriptCache()
    for entry in doc_items(doc, "voice_transcripts"):
        cache.put(
            owner[entry["attachment_id"]],
            entry["text"],
            "user_stt",
            now_ms=doc["now_ms"],
            attachment_id=entry["attachment_id"],
        )
    return cache


def snapshot_stage(doc: Mapping[str, Any]) -> StageConfig | None:
    """The tunables the turn was built with (``stage``, format 4); None for a document without them
    (versions 1 to 3), which replays under the replaying process's settings."""
    stage = doc.get("stage")
    return StageConfig.from_json(stage) if stage is not None else None
