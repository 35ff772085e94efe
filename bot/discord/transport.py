"""``ChatTransport`` over a live discord.py channel, and discord.py → ``chatcontext.core.types`` conversion.

The pipeline is synchronous and runs in a worker thread (``sync_to_async(..., thread_sensitive=True)``).
Methods that need Discord I/O bridge back to the bot's event loop with ``async_to_sync`` — asgiref's
supported pattern for sync code called from async code — so they must never be called on the
event loop thread itself. Cache reads need no bridge.

The transport remembers what it read (messages, members) so the turn snapshot stored with the
prompt record holds exactly the data the pipeline saw.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, TypeVar

import discord
from asgiref.sync import async_to_sync

from chatcontext.core.transport import TransportError
from chatcontext.core.types import (
    Activity,
    Attachment,
    Author,
    DiscordMessage,
    Embed,
    EmbedField,
    EmbedMedia,
    ForwardSnapshot,
    MemberInfo,
    MessageReference,
    Reaction,
    ReactionEmoji,
    Role,
    StickerRef,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

MESSAGE_TYPES = {
    discord.MessageType.default: "default",
    discord.MessageType.reply: "reply",
    discord.MessageType.new_member: "user_join",
    discord.MessageType.pins_add: "channel_pinned_message",
}
ACTIVITY_TYPES = {
    discord.ActivityType.playing: "playing",
    discord.ActivityType.streaming: "streaming",
    discord.ActivityType.listening: "listening",
    discord.ActivityType.watching: "watching",
    discord.ActivityType.custom: "custom",
    discord.ActivityType.competing: "competing",
}


def _snowflake(value: str) -> int | None:
    """Synthetic ids (``system-embed``, ``synthetic-…``) never reach Discord."""
    return int(value) if value.isdigit() else None


def _ms(value: Any) -> int | None:
    return int(value.timestamp() * 1000) if value is not None else None


# ---------------------------------------------------------------------------------------------
# Conversion
# ---------------------------------------------------------------------------------------------


def to_author(user: discord.abc.User) -> Author:
    return Author(
        id=str(user.id),
        username=user.name,
        global_name=user.global_name,
        display_name=user.global_name or user.name,
        bot=user.bot,
    )


def to_attachment(attachment: discord.Attachment) -> Attachment:
    return Attachment(
        id=str(attachment.id),
        name=attachment.filename,
        url=attachment.url,
        proxy_url=attachment.proxy_url or "",
        content_type=attachment.content_type,
        size=attachment.size or 0,
    )


def _embed_media(proxy: Any) -> EmbedMedia | None:
    url = getattr(proxy, "url", None)
    return EmbedMedia(url=url, proxy_url=getattr(proxy, "proxy_url", None)) if url else None


def to_embed(embed: discord.Embed) -> Embed:
    return Embed(
        title=embed.title,
        description=embed.description,
        url=embed.url,
        color=embed.color.value if embed.color is not None else None,
        author_name=embed.author.name,
        footer_text=embed.footer.text,
        fields=tuple(EmbedField(name=f.name or "", value=f.value or "") for f in embed.fields),
        image=_embed_media(embed.image),
        thumbnail=_embed_media(embed.thumbnail),
    )


def to_components(components: Iterable[Any]) -> tuple[dict[str, Any], ...]:
    return tuple(c.to_dict() for c in components)


def to_stickers(stickers: Iterable[discord.StickerItem]) -> tuple[StickerRef, ...]:
    return tuple(StickerRef(id=str(s.id), name=s.name) for s in stickers)


def to_reaction(reaction: discord.Reaction) -> Reaction:
    emoji = reaction.emoji
    if isinstance(emoji, str):
        return Reaction(emoji=ReactionEmoji(id=None, name=emoji), count=reaction.count)
    return Reaction(emoji=ReactionEmoji(id=str(emoji.id) if emoji.id else None, name=emoji.name), count=reaction.count)


def to_reference(reference: discord.MessageReference | None) -> MessageReference | None:
    if reference is None:
        return None
    is_forward = reference.type == discord.MessageReferenceType.forward
    return MessageReference(
        type="forward" if is_forward else "default",
        message_id=str(reference.message_id) if reference.message_id else None,
        channel_id=str(reference.channel_id) if reference.channel_id else None,
    )


def to_forward_snapshot(snapshot: discord.MessageSnapshot, channel_id: str | None) -> ForwardSnapshot:
    # Discord sends no author with a forwarded snapshot; the origin channel comes from the reference.
    return ForwardSnapshot(
        content=snapshot.content,
        attachments=tuple(to_attachment(a) for a in snapshot.attachments),
        components=to_components(snapshot.components),
        embeds=tuple(to_embed(e) for e in snapshot.embeds),
        stickers=to_stickers(snapshot.stickers),
        channel_id=channel_id,
    )


def to_discord_message(message: discord.Message) -> DiscordMessage:
    reference = to_reference(message.reference)
    forward_channel = reference.channel_id if reference and reference.type == "forward" else None
    return DiscordMessage(
        id=str(message.id),
        channel_id=str(message.channel.id),
        guild_id=str(message.guild.id) if message.guild else None,
        author=to_author(message.author),
        created_timestamp=_ms(message.created_at) or 0,
        type=MESSAGE_TYPES.get(message.type, message.type.name),
        member_display_name=message.author.display_name if isinstance(message.author, discord.Member) else None,
        webhook_id=str(message.webhook_id) if message.webhook_id else None,
        content=message.content,
        clean_content=message.clean_content,
        reference=reference,
        message_snapshots=tuple(to_forward_snapshot(s, forward_channel) for s in message.message_snapshots),
        attachments=tuple(to_attachment(a) for a in message.attachments),
        stickers=to_stickers(message.stickers),
        embeds=tuple(to_embed(e) for e in message.embeds),
        # discord.py leaves ``components`` unset when a payload carries no components key.
        components=to_components(getattr(message, "components", ())),
        reactions=tuple(to_reaction(r) for r in message.reactions),
    )


def to_activity(activity: discord.BaseActivity | discord.Spotify) -> Activity:
    emoji = getattr(activity, "emoji", None)
    kind: discord.ActivityType | None = getattr(activity, "type", None)
    return Activity(
        type=ACTIVITY_TYPES.get(kind, "other") if kind is not None else "other",
        name=getattr(activity, "name", None) or "",
        details=getattr(activity, "details", None),
        state=getattr(activity, "state", None),
        started_at_ms=_ms(getattr(activity, "start", None)),
        ended_at_ms=_ms(getattr(activity, "end", None)),
        emoji_name=emoji.name if emoji is not None else None,
        large_image_text=getattr(activity, "large_image_text", None),
        small_image_text=getattr(activity, "small_image_text", None),
    )


def to_member_info(member: discord.Member, *, presence_intent: bool) -> MemberInfo:
    return MemberInfo(
        user_disc_id=str(member.id),
        username=member.name,
        global_name=member.global_name,
        nickname=member.nick,
        display_name=member.display_name,
        is_bot=member.bot,
        can_manage_server=member.guild_permissions.manage_guild,
        roles=tuple(Role(id=str(r.id), name=r.name, position=r.position) for r in member.roles if not r.is_default()),
        presence_status=str(member.status) if presence_intent else None,
        activities=tuple(to_activity(a) for a in member.activities) if presence_intent else (),
    )


# ---------------------------------------------------------------------------------------------
# Transport
# ---------------------------------------------------------------------------------------------


class DiscordTransport:
    """The live channel of one turn, read synchronously from the pipeline's worker thread."""

    def __init__(
        self, client: discord.Client, channel: discord.abc.Messageable, trigger: discord.Message | DiscordMessage
    ) -> None:
        """``trigger`` is live, or a value object when no Discord message exists (a reminder turn
        in a channel without readable history)."""
        self._client = client
        self._channel = channel
        self._guild: discord.Guild | None = getattr(channel, "guild", None)
        self._raw: dict[str, discord.Message] = {}
        self.messages: dict[str, DiscordMessage] = {}
        if isinstance(trigger, DiscordMessage):
            self.messages[trigger.id] = trigger
        else:
            self._remember(trigger)
        self.members: dict[str, MemberInfo] = {}
        self.reaction_users: dict[tuple[str, ReactionEmoji], list[str]] = {}
        self.channel_names: dict[str, str] = {}
        self.role_names: dict[str, str] = {}

    def _call(self, make: Callable[[], Awaitable[T]]) -> T:
        async def run() -> T:
            return await make()

        try:
            return async_to_sync(run)()
        except discord.NotFound:
            raise
        except (discord.HTTPException, TimeoutError) as exc:
            raise TransportError(type(exc).__name__) from exc

    def _remember(self, message: discord.Message) -> DiscordMessage:
        converted = to_discord_message(message)
        self._raw[converted.id] = message
        self.messages[converted.id] = converted
        return converted

    def _member(self, member: discord.Member) -> MemberInfo:
        info = to_member_info(member, presence_intent=self.presence_intent)
        self.members[info.user_disc_id] = info
        return info

    @property
    def supports_history(self) -> bool:
        return hasattr(self._channel, "history")

    @property
    def guild_available(self) -> bool:
        return self._guild is not None and not self._guild.unavailable

    @property
    def presence_intent(self) -> bool:
        return self._client.intents.presences

    def fetch_history(self, limit: int) -> list[DiscordMessage]:
        async def history() -> list[discord.Message]:
            return [m async for m in self._channel.history(limit=limit)]

        return [self._remember(m) for m in self._call(history)]

    def get_cached_message(self, message_id: str) -> DiscordMessage | None:
        if message_id in self.messages:
            return self.messages[message_id]
        snowflake = _snowflake(message_id)
        cached = discord.utils.get(self._client.cached_messages, id=snowflake) if snowflake else None
        return self._remember(cached) if cached is not None else None

    def fetch_message(self, message_id: str) -> DiscordMessage:
        snowflake = _snowflake(message_id)
        if snowflake is None:
            raise TransportError("not a Discord message id")
        try:
            return self._remember(self._call(lambda: self._channel.fetch_message(snowflake)))
        except discord.NotFound as exc:
            raise TransportError("message not found") from exc

    def fetch_reaction_users(self, message: DiscordMessage, reaction: Reaction, limit: int) -> list[Author]:
        raw = self._raw.get(message.id)
        if raw is None:
            raise TransportError("message not read by this transport")
        live = next((r for r in raw.reactions if to_reaction(r).emoji == reaction.emoji), None)
        if live is None:
            raise TransportError("reaction not found")

        async def users() -> list[discord.abc.User]:
            return [u async for u in live.users(limit=limit)]

        try:
            authors = [to_author(u) for u in self._call(users)]
        except discord.NotFound as exc:
            raise TransportError("message not found") from exc
        self.reaction_users[(message.id, reaction.emoji)] = [a.id for a in authors]
        return authors

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        snowflake = _snowflake(user_id)
        member = self._guild.get_member(snowflake) if self._guild and snowflake else None
        return self._member(member) if member is not None else None

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        guild, snowflake = self._guild, _snowflake(user_id)
        if guild is None or snowflake is None:
            return None
        try:
            return self._member(self._call(lambda: guild.fetch_member(snowflake)))
        except discord.NotFound:
            return None

    def cached_member_ids(self) -> list[str]:
        return [str(m.id) for m in self._guild.members] if self._guild else []

    def fetch_user(self, user_id: str) -> Author | None:
        snowflake = _snowflake(user_id)
        if snowflake is None:
            return None
        cached = self._client.get_user(snowflake)
        if cached is not None:
            return to_author(cached)
        try:
            return to_author(self._call(lambda: self._client.fetch_user(snowflake)))
        except discord.NotFound:
            return None

    def channel_label(self, channel_id: str) -> str | None:
        snowflake = _snowflake(channel_id)
        channel = self._guild.get_channel_or_thread(snowflake) if self._guild and snowflake else None
        if channel is None:
            return None
        self.channel_names[channel_id] = channel.name
        return f"#{channel.name}"

    def role_name(self, role_id: str) -> str | None:
        snowflake = _snowflake(role_id)
        role = self._guild.get_role(snowflake) if self._guild and snowflake else None
        if role is None:
            return None
        self.role_names[role_id] = role.name
        return role.name
