"""Discord's half of a turn: the outlets a turn speaks through on Discord, the job of an admitted
message, and the server state of a guild.

The runner (``bot.conversation.runner.TurnRunner``) is the one every surface uses; what is Discord's
is only where the turn reads (a ``DiscordTransport`` over the live channel) and speaks (a native
reply, the channel webhook for alters, a plain post for reminders). discord.py's ``HTTPException``
becomes the runner's ``DeliveryRefused``, so a refused post is in the prompt record.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import discord
from channels.db import database_sync_to_async

from bot.conversation.admission import Admission
from bot.conversation.jobs import TurnJob
from bot.conversation.providers import DeltaSink
from bot.conversation.runner import DeliveryRefused
from bot.conversation.state import ServerState, load_server_state
from bot.conversation.texts import ERROR_MESSAGES, localized
from bot.conversation.tools.notices import Notice
from bot.discord.delivery import (
    SAFE_MENTIONS,
    Delivery,
    WebhookRegistry,
    deliver_reply,
    persona_speaker,
    reply_notice_embed,
    send_as_persona,
    send_error_notice,
    send_notices,
)
from bot.discord.regenerate_button import show_regenerate
from bot.discord.reply_stream import LiveReply, Pacing
from bot.discord.transport import DiscordTransport, to_author, to_member_info
from chatcontext.core.regeneration import record_turn_output_message
from chatcontext.core.types import Author, ChatTurnContext, DiscordMessage, MemberInfo, PersonaInfo, ReplyNoticeState

DM_CHANNEL_NAME = "direct-message"
DM_SERVER_NAME = "Direct messages"


def server_key(guild_id: int | None, channel_id: int | None) -> str:
    """Guild id, or the DM channel id: a DM is its own pseudo server."""
    return str(guild_id if guild_id is not None else channel_id)


async def guild_server_state(server_disc_id: str, guild: discord.Guild | None) -> ServerState:
    """The state of a guild (None: a DM channel) as Discord shows it, registered on first contact."""
    return await database_sync_to_async(load_server_state)(
        server_disc_id,
        name=guild.name if guild else DM_SERVER_NAME,
        is_dm=guild is None,
        locale=str(guild.preferred_locale) if guild else None,
    )


def as_member(user: discord.abc.User) -> MemberInfo | None:
    """A message author as a member of its guild (None in a DM), for the triggerer's name."""
    return to_member_info(user, presence_intent=False) if isinstance(user, discord.Member) else None


def refused(exc: discord.HTTPException) -> DeliveryRefused:
    return DeliveryRefused(f"HTTP {exc.status}")


@dataclass(frozen=True)
class DiscordOutlet:
    """What every Discord outlet shares: the channel as a turn reads it, from ``anchor`` (the
    trigger, live, or a value object when no Discord message exists), and the typing indicator
    while a reply is generated. On its own it is the outlet of a steering job (``/refresh``,
    ``/compact``), which speaks in notices: a reply would be a plain post in the channel."""

    client: discord.Client
    webhooks: WebhookRegistry
    channel: discord.abc.Messageable
    anchor: discord.Message | DiscordMessage

    source: ClassVar[str] = "bot"

    @property
    def bot_user(self) -> Author:
        assert self.client.user is not None  # turns run only while the client is logged in
        return to_author(self.client.user)

    @property
    def channel_name(self) -> str:
        return getattr(self.channel, "name", None) or DM_CHANNEL_NAME

    @property
    def channel_description(self) -> str | None:
        return getattr(self.channel, "topic", None)

    @property
    def thread_parent_id(self) -> str | None:
        return str(self.channel.parent_id) if isinstance(self.channel, discord.Thread) else None

    def transport(self) -> DiscordTransport:
        return DiscordTransport(self.client, self.channel, self.anchor)

    @contextlib.asynccontextmanager
    async def composing(self, persona: PersonaInfo) -> AsyncIterator[DeltaSink | None]:
        async with contextlib.AsyncExitStack() as stack:
            # The typing indicator is a courtesy: a channel that refuses it still gets the reply.
            with contextlib.suppress(discord.HTTPException):
                await stack.enter_async_context(self.channel.typing())
            yield None

    async def post_notices(self, persona: PersonaInfo, notices: list[Notice]) -> None:
        try:
            await send_notices(self.channel, persona, notices, webhooks=self.webhooks)
        except discord.HTTPException as exc:
            raise refused(exc) from exc

    async def react(self, message_id: str, emoji: str) -> None:
        try:
            await self.channel.get_partial_message(int(message_id)).add_reaction(emoji)  # type: ignore[attr-defined]
        except discord.HTTPException as exc:
            raise refused(exc) from exc

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> Delivery:
        """``text`` posted in the channel as ``persona``, replying to nothing; the outlets of turns
        that answer something say how they reply."""
        try:
            return await send_as_persona(self.channel, persona, text, webhooks=self.webhooks)
        except discord.HTTPException as exc:
            raise refused(exc) from exc

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        """The short, localised error message in the channel, from the bot's account."""
        try:
            await self.channel.send(localized(ERROR_MESSAGES, locale), allowed_mentions=SAFE_MENTIONS)
        except discord.HTTPException as exc:
            raise refused(exc) from exc

    async def offer_regeneration(self, ctx: ChatTurnContext, record_id: int) -> None:
        """Only a reply to a trigger offers Regenerate (``ReplyToTrigger``)."""


@dataclass(frozen=True)
class ReplyToTrigger(DiscordOutlet):
    """A message turn answers its trigger (native reply, or the alter's webhook), streamed while it is
    written (``bot.discord.reply_stream``) unless the server turned streaming off."""

    anchor: discord.Message
    pacing: Pacing = field(default_factory=Pacing)
    # Each persona's reply as far as it was shown, from composing to delivery or failure.
    _live: dict[int | None, LiveReply] = field(default_factory=dict, init=False, repr=False, compare=False)
    # Each persona's delivery, until its turn's record offers Regenerate on it.
    _delivered: dict[int | None, Delivery] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def answering(
        cls, client: discord.Client, webhooks: WebhookRegistry, trigger: discord.Message, *, pacing: Pacing
    ) -> ReplyToTrigger:
        return cls(client, webhooks, trigger.channel, trigger, pacing)

    @contextlib.asynccontextmanager
    async def composing(self, persona: PersonaInfo) -> AsyncIterator[DeltaSink]:
        async with contextlib.AsyncExitStack() as typing:
            # The typing indicator is a courtesy: a channel that refuses it still gets the reply.
            with contextlib.suppress(discord.HTTPException):
                await typing.enter_async_context(self.channel.typing())

            async def speaker_for() -> Any:
                return await persona_speaker(self.channel, persona, webhooks=self.webhooks, reply_to=self.anchor)

            # Typing shows while nothing is visible: the first streamed message ends it.
            live = LiveReply(speaker_for, self.pacing, on_visible=typing.aclose)
            self._live[persona.persona_id] = live
            yield live.add

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> Delivery:
        live = self._live.pop(persona.persona_id, None)
        try:
            if live is None or not live.visible:  # nothing shown yet: posted once, complete
                delivery = await deliver_reply(
                    self.anchor, persona, text, webhooks=self.webhooks, reply_notice=reply_notice, locale=locale
                )
            else:
                embed = reply_notice_embed(live.speaker, self.anchor, reply_notice, locale)
                delivery = await live.finish(text, first_embed=embed)
                if embed is not None and reply_notice is not None:
                    reply_notice.sent = True
        except discord.HTTPException as exc:
            raise refused(exc) from exc
        self._delivered[persona.persona_id] = delivery
        return delivery

    async def offer_regeneration(self, ctx: ChatTurnContext, record_id: int) -> None:
        """BC9-06: the reply's messages are what Regenerate may replace; the button goes on its last."""
        persona_id = ctx.current_persona.persona_id
        delivery = self._delivered.pop(persona_id, None)
        if delivery is None or not delivery.message_ids:
            return
        for message_id in delivery.message_ids:
            record_turn_output_message(ctx, message_id, persona_id)
        try:
            await show_regenerate(self.channel, self.webhooks, delivery, record_id)
        except discord.HTTPException as exc:
            raise refused(exc) from exc

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        """One notice: what was streamed is deleted first, so no half reply stands unexplained."""
        live = self._live.pop(persona.persona_id, None)
        try:
            if live is not None:
                await live.withdraw()
            await send_error_notice(self.anchor, locale)
        except discord.HTTPException as exc:
            raise refused(exc) from exc


def message_job(
    client: discord.Client,
    webhooks: WebhookRegistry,
    message: discord.Message,
    incoming: DiscordMessage,
    admission: Admission,
    server: ServerState,
    *,
    pacing: Pacing,
) -> TurnJob[Delivery]:
    """The job of an admitted Discord message: its personas reply to it, at ``pacing``."""
    outlet = ReplyToTrigger.answering(client, webhooks, message, pacing=pacing)
    return TurnJob.answering(incoming, admission, server, outlet, triggerer=as_member(message.author))
