"""Due reminders as persona turns on Discord (issue 7; build-context.md §7.1, BC7-01/BC7-02).

A reminder occurrence runs the same turn as a message: the channel's planner lock, then
``bot.conversation.runner.TurnRunner`` (build the context, generate, deliver as the persona — the
channel webhook for alters —, write the prompt record with its snapshot), with the incoming and
reply rules of ``bot.conversation.reminder_turn_rules``. What is Discord's:

- **Trigger.** The channel's newest message, read through the channel; when the channel has no
  history the bot can read, a synthetic bot-authored message in that channel. The trigger only
  anchors the turn (history window, triggerer): nobody is replied to and nobody is registered.
- **Outlet.** The reply is posted in the channel. Once Discord took the post, the occurrence is
  confirmed (``bot.conversation.reminder_turn_rules.confirm_posted``: fired, or rescheduled); when Discord
  refuses it the failure goes back to the dispatcher (``report_failure``: channel gone → failed,
  else retried). A process that stops in between confirms nothing, and the occurrence comes back
  when its lease ends.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime

import discord
from channels.db import database_sync_to_async

from bot.conversation.jobs import TurnJob
from bot.conversation.reminder_turn_rules import (
    confirm_posted,
    ensure_ping,
    fallback_text,
    reminder_incoming,
    report_failure,
)
from bot.conversation.state import read_author_state
from bot.discord.delivery import Delivery, WebhookRegistry, send_as_persona
from bot.discord.transport import to_author, to_discord_message
from bot.discord.turns import DiscordOutlet, as_member, guild_server_state, refused
from chatcontext.core.types import DiscordMessage, LockedTurn, PersonaInfo, ReplyNoticeState
from personas.reminder_firing import DueReminder, ReminderKind

logger = logging.getLogger(__name__)


def synthetic_trigger(channel_id: str, guild_id: str | None, bot_user: discord.abc.User, now_ms: int) -> DiscordMessage:
    """An empty bot-authored message in the channel at ``now_ms``: the anchor of a reminder turn in a
    channel without readable history. Its id is the snowflake of ``now_ms``, so the turn snapshot
    (whose message ids are snowflakes) stays valid."""
    at = datetime.fromtimestamp(now_ms / 1000, tz=UTC)
    return DiscordMessage(
        id=str(discord.utils.time_snowflake(at)),
        channel_id=channel_id,
        guild_id=guild_id,
        author=to_author(bot_user),
        created_timestamp=now_ms,
    )


@dataclass(frozen=True)
class ReminderOutlet(DiscordOutlet):
    """Posts a reminder turn in its channel; refused posts are reported back to the dispatcher."""

    due: DueReminder
    fallback: str

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> Delivery:
        if self.due.kind == ReminderKind.HUMAN:
            text = ensure_ping(text, self.due.target_user_id)
        return await self._post(persona, text)

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        await self._post(persona, self.fallback)

    async def _post(self, persona: PersonaInfo, text: str) -> Delivery:
        try:
            delivery = await send_as_persona(self.channel, persona, text, webhooks=self.webhooks)
        except discord.HTTPException as exc:
            gone = isinstance(exc, discord.Forbidden | discord.NotFound)
            await report_failure(self.due, channel_gone=gone, reason=f"HTTP {exc.status}")
            raise refused(exc) from exc
        await confirm_posted(self.due)
        return delivery


async def latest_message(channel: discord.abc.Messageable) -> discord.Message | None:
    """The channel's newest message; None when it has none or the bot may not read its history.
    ``discord.NotFound`` (the channel is gone) propagates."""
    if not hasattr(channel, "history"):
        return None
    try:
        async for message in channel.history(limit=1):
            return message
    except discord.Forbidden:
        return None
    return None


async def reminder_job(
    due: DueReminder,
    channel: discord.abc.Messageable,
    *,
    client: discord.Client,
    webhooks: WebhookRegistry,
    now_ms: int,
) -> TurnJob[Delivery] | None:
    """The turn of one occurrence, spoken by its persona (the main persona when unassigned or
    deleted); None when the server has no persona at all."""
    assert client.user is not None  # occurrences are handled only while the client is logged in
    server = await guild_server_state(due.server_disc_id, getattr(channel, "guild", None))
    persona = next((p for p in server.personas if p.persona_id == due.persona_id), server.main_persona)
    if persona is None:
        return None
    latest = await latest_message(channel)
    if latest is not None:
        trigger = to_discord_message(latest)
    else:
        guild = getattr(channel, "guild", None)
        trigger = synthetic_trigger(due.channel_disc_id, str(guild.id) if guild else None, client.user, now_ms)
    author = await database_sync_to_async(read_author_state)(server.server_id, trigger.author.id, now_ms)
    locked = LockedTurn(
        incoming=reminder_incoming(due, trigger, now_ms),
        channel_id=due.channel_disc_id,
        triggered_persona_ids=(persona.persona_id,) if persona.persona_id is not None else (),
    )
    fallback = fallback_text(due, server.config.preferred_locale)
    outlet = ReminderOutlet(client, webhooks, channel, latest or trigger, due, fallback)
    triggerer = as_member(latest.author) if latest is not None else None
    return TurnJob(locked, outlet, (persona,), server, author, triggerer=triggerer)
