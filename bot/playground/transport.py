"""``PlaygroundTransport``: the ``ChatTransport`` over a stored playground channel.

It answers what the Build Context stage asks Discord: the channel's history (newest first, as
Discord returns it), one message by id, who reacted, the server's members (its ``ServerMember``
rows), plain users (``DiscordUser`` rows) for people who are not members, channel and role names.
Reads are batched: the members once per transport, one query per history window, one for the
non-member authors of that window, so the query count of a turn does not grow with its messages.

Like ``bot.discord.transport.DiscordTransport`` it remembers what it read (``messages``,
``members``, ``reaction_users``), so the turn snapshot stored with the prompt record holds exactly
the data the pipeline saw and replays to the same prompt.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.store import as_attachment
from chatcontext.core.memory_transport import member_as_author
from chatcontext.core.transport import TransportError
from chatcontext.core.types import (
    Author,
    DiscordMessage,
    Embed,
    MemberInfo,
    MessageReference,
    Reaction,
    ReactionEmoji,
)
from chatcontext.snapshot import parse_member
from personas import models as m

_USER_MENTION = re.compile(r"<@!?(\d+)>")
_CHANNEL_MENTION = re.compile(r"<#(\d+)>")
UNKNOWN_USERNAME = "unknown-user"


def member_info(row: m.ServerMember, *, presence_intent: bool) -> MemberInfo:
    """A member row as discord.py would report the member. The display name is Discord's (server
    nickname, else global name, else username), read the same way a turn snapshot reads it back."""
    activities = row.activities if presence_intent and isinstance(row.activities, list) else []
    info = parse_member(
        {
            "user_disc_id": row.user_disc_id,
            "username": row.username or row.user_disc_id,
            "global_name": row.global_name,
            "nickname": row.nickname,
            "is_bot": row.is_bot,
            "roles": [r for r in row.roles or [] if isinstance(r, dict) and {"id", "name", "position"} <= r.keys()],
            "presence_status": row.presence_status if presence_intent else None,
            "activities": [a for a in activities if isinstance(a, dict) and {"type", "name"} <= a.keys()],
        }
    )
    return replace(info, can_manage_server=row.can_manage_server)


def user_author(user: m.DiscordUser) -> Author:
    return Author(
        id=user.user_disc_id,
        username=user.username,
        global_name=user.global_name,
        display_name=user.global_name or user.username,
    )


class PlaygroundTransport:
    """One turn's view of a playground channel. ``bot_user`` is the account the main persona
    speaks as (the server's bot member, or the playground's own bot identity)."""

    def __init__(self, channel: PlaygroundChannel, *, bot_user: Author) -> None:
        self._channel = channel
        self._server: m.Server = channel.server
        self.bot_user = bot_user
        self._all_members: dict[str, MemberInfo] | None = None
        self._users: dict[str, Author | None] = {}
        self._raw: dict[str, PlaygroundMessage] = {}
        self._all_channel_names: dict[str, str] | None = None
        self.messages: dict[str, DiscordMessage] = {}
        self.members: dict[str, MemberInfo] = {}
        self.reaction_users: dict[tuple[str, ReactionEmoji], list[str]] = {}
        self.channel_names: dict[str, str] = {}
        self.role_names: dict[str, str] = {}

    # -- rows ----------------------------------------------------------------------------------

    def _member_rows(self) -> dict[str, MemberInfo]:
        if self._all_members is None:
            rows = m.ServerMember.objects.filter(server=self._server).order_by("user_disc_id")
            self._all_members = {
                row.user_disc_id: member_info(row, presence_intent=self.presence_intent) for row in rows
            }
        return self._all_members

    def _load_users(self, user_ids: Iterable[str]) -> None:
        """Plain users for ids that are neither members nor already looked up: one query."""
        members = self._member_rows()
        wanted = sorted({uid for uid in user_ids if uid not in members and uid not in self._users})
        if not wanted:
            return
        found = {u.user_disc_id: user_author(u) for u in m.DiscordUser.objects.filter(user_disc_id__in=wanted)}
        for uid in wanted:
            self._users[uid] = found.get(uid)

    def author_of(self, row: PlaygroundMessage) -> tuple[Author, str | None]:
        """The message's author and member display name, as discord.py would give them."""
        if row.webhook_disc_id:
            return Author(id=row.webhook_disc_id, username=row.author_name, bot=True), None
        members = self._member_rows()
        if row.author_disc_id == self.bot_user.id:
            member = members.get(row.author_disc_id)
            return self.bot_user, member.effective_display_name if member else None
        member = members.get(row.author_disc_id)
        if member is not None:
            author = member_as_author(member)
            return replace(author, display_name=member.global_name or member.username), member.display_name
        user = self._users.get(row.author_disc_id)
        return user or Author(id=row.author_disc_id, username=UNKNOWN_USERNAME), None

    def _clean(self, content: str) -> str:
        """Discord's ``clean_content``: user and channel mentions written as names."""

        def user(match: re.Match[str]) -> str:
            uid = match.group(1)
            member = self._member_rows().get(uid)
            if member is not None:
                return "@" + member.effective_display_name
            known = self._users.get(uid)
            return "@" + (known.display_name or known.username) if known else match.group(0)

        def channel(match: re.Match[str]) -> str:
            label = self.channel_label(match.group(1))
            return label or match.group(0)

        return _CHANNEL_MENTION.sub(channel, _USER_MENTION.sub(user, content))

    def _convert(self, row: PlaygroundMessage) -> DiscordMessage:
        author, member_display_name = self.author_of(row)
        reply_to = row.reply_to.disc_id if row.reply_to_id and row.reply_to else None
        message = DiscordMessage(
            id=row.disc_id,
            channel_id=self._channel.disc_id,
            guild_id=None if self._server.is_dm_channel else self._server.server_disc_id,
            author=author,
            created_timestamp=row.created_at_ms,
            type="reply" if reply_to else "default",
            member_display_name=member_display_name,
            webhook_id=row.webhook_disc_id or None,
            content=row.content,
            clean_content=self._clean(row.content),
            reference=MessageReference(message_id=reply_to, channel_id=self._channel.disc_id) if reply_to else None,
            attachments=tuple(as_attachment(a) for a in row.attachments or []),
            embeds=tuple(
                Embed(
                    title=e.get("title"),
                    description=e.get("description"),
                    color=e.get("color"),
                    footer_text=e.get("footer_text"),
                )
                for e in row.embeds or []
            ),
            reactions=tuple(
                Reaction(emoji=ReactionEmoji(id=None, name=r["emoji"]), count=len(r["users"]))
                for r in row.reactions or []
                if r.get("users")
            ),
        )
        self._raw[message.id] = row
        self.messages[message.id] = message
        return message

    def read_rows(self, rows: list[PlaygroundMessage]) -> list[DiscordMessage]:
        """Stored rows as Discord messages, remembered like every other read of this transport."""
        self._load_users(r.author_disc_id for r in rows if not r.webhook_disc_id)
        return [self._convert(row) for row in rows]

    # -- ChatTransport -------------------------------------------------------------------------

    @property
    def supports_history(self) -> bool:
        return True

    @property
    def guild_available(self) -> bool:
        return not self._server.is_dm_channel

    @property
    def presence_intent(self) -> bool:
        # The members' stored presence is what the playground knows of them, and a turn snapshot
        # replays with presence known (chatcontext.snapshot.snapshot_transport): so it is on.
        return True

    def fetch_history(self, limit: int) -> list[DiscordMessage]:
        rows = list(
            PlaygroundMessage.objects.filter(channel=self._channel)
            .select_related("reply_to")
            .order_by("-created_at_ms", "-id")[: max(0, limit)]
        )
        return self.read_rows(rows)

    def get_cached_message(self, message_id: str) -> DiscordMessage | None:
        return self.messages.get(message_id)

    def fetch_message(self, message_id: str) -> DiscordMessage:
        if message_id in self.messages:
            return self.messages[message_id]
        row = (
            PlaygroundMessage.objects.filter(channel=self._channel, disc_id=message_id)
            .select_related("reply_to")
            .first()
        )
        if row is None:
            raise TransportError("message not found")
        return self.read_rows([row])[0]

    def fetch_reaction_users(self, message: DiscordMessage, reaction: Reaction, limit: int) -> list[Author]:
        row = self._raw.get(message.id)
        if row is None:
            raise TransportError("message not read by this transport")
        stored = next((r for r in row.reactions or [] if r.get("emoji") == reaction.emoji.name), None)
        if stored is None:
            raise TransportError("reaction not found")
        ids = [str(uid) for uid in stored.get("users") or []][: max(0, limit)]
        self._load_users(ids)
        authors = [a for a in (self.fetch_user(uid) for uid in ids) if a is not None]
        self.reaction_users[(message.id, reaction.emoji)] = [a.id for a in authors]
        return authors

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        if not self.guild_available:
            return None
        member = self._member_rows().get(user_id)
        if member is not None:
            self.members[user_id] = member
        return member

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        return self.get_cached_member(user_id)

    def cached_member_ids(self) -> list[str]:
        return list(self._member_rows()) if self.guild_available else []

    def fetch_user(self, user_id: str) -> Author | None:
        if user_id == self.bot_user.id:
            return self.bot_user
        member = self._member_rows().get(user_id)
        if member is not None:
            return replace(member_as_author(member), display_name=member.global_name or member.username)
        self._load_users([user_id])
        return self._users.get(user_id)

    def channel_label(self, channel_id: str) -> str | None:
        if self._all_channel_names is None:
            self._all_channel_names = dict(
                PlaygroundChannel.objects.filter(server=self._server).values_list("disc_id", "name")
            )
        name = self._all_channel_names.get(channel_id)
        if name is None:
            return None
        self.channel_names[channel_id] = name
        return f"#{name}"

    def role_name(self, role_id: str) -> str | None:
        roles = {r.id: r.name for member in self._member_rows().values() for r in member.roles}
        name = roles.get(role_id)
        if name is not None:
            self.role_names[role_id] = name
        return name
