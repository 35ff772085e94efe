"""The Regenerate button (issue 30 item 4; build-context.md BC9-06, BC9-10): a new reply for the same
trigger, which replaces the old one; each version keeps its own prompt record, and the new record
names the one it replaced (``chatcontext.records.commands``).

Who may: the member whose message the reply answered, or members with Manage Messages. Which reply:
only the channel's latest regenerable turn (its fast-regeneration recorder holds the message), so an
old reply deep in the history is never rewritten under the conversation that followed it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import discord
from channels.db import database_sync_to_async
from discord.ext import commands

from bot.conversation.admission import admit
from bot.conversation.db import closing_stale_connections
from bot.conversation.jobs import TurnJob
from bot.conversation.state import load_author_state
from bot.discord.delivery import Delivery
from bot.discord.exts._interactions import interaction_server, reply
from bot.discord.regenerate_button import RegenerateButton
from bot.discord.transport import to_discord_message
from bot.discord.turns import ReplyToTrigger, as_member, refused
from chatcontext.core.types import PersonaInfo, ReplyNoticeState
from chatcontext.models import PromptRecord
from chatcontext.pipeline import FAST_REGENERATION
from chatcontext.records.commands import TurnCommand

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

NOT_LATEST = (
    "Only the latest reply in this channel can be regenerated (a reply from before the bot restarted cannot either)."
)
RECORD_GONE = "This reply's prompt record was deleted, so it cannot be regenerated."
TRIGGER_GONE = "The message this reply answered was deleted, so it cannot be regenerated."
PERSONA_GONE = "The persona that wrote this reply no longer exists."
NOT_ADMITTED = "{name} can no longer be answered here (their privacy level or a block), so nothing was regenerated."
WHO_MAY = "Only {name}, whose message this reply answered, or members with Manage Messages can regenerate it."
STARTED = "Writing a new version of {persona}'s reply…"


def may_regenerate(user: discord.abc.User, trigger_author_id: int) -> bool:
    if user.id == trigger_author_id:
        return True
    return isinstance(user, discord.Member) and user.guild_permissions.manage_messages


@dataclass(frozen=True)
class ReplaceReply(ReplyToTrigger):
    """Answers the trigger again, then deletes the version it replaces (the bot's own messages, or
    the channel webhook's for an alter)."""

    replaced: tuple[int, ...] = field(default=(), kw_only=True)

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> Delivery:
        delivery = await super().deliver(persona, text, reply_notice=reply_notice, locale=locale)
        try:
            hook = await self.webhooks.find(self.channel) if persona.is_alter else None
            for message_id in self.replaced:
                if hook is not None:
                    await hook.delete_message(message_id)
                else:
                    await (await self.channel.fetch_message(message_id)).delete()
        except discord.HTTPException as exc:
            raise refused(exc) from exc
        return delivery


def record_of(record_id: int) -> PromptRecord | None:
    return PromptRecord.objects.filter(pk=record_id).first()


class RegenerateCog(commands.Cog):
    def __init__(self, bot: PlatformBotMixin) -> None:
        self.bot = bot

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(RegenerateButton)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(RegenerateButton)

    async def regenerate(self, interaction: discord.Interaction, record_id: int) -> None:
        clicked = interaction.message
        channel = self.bot.get_channel(interaction.channel_id) if interaction.channel_id else None
        recorder = FAST_REGENERATION.latest(str(interaction.channel_id))
        if clicked is None or channel is None or recorder is None or not recorder.holds(str(clicked.id)):
            await reply(interaction, NOT_LATEST)
            return
        record = await database_sync_to_async(record_of)(record_id)
        if record is None:
            await reply(interaction, RECORD_GONE)
            return
        try:
            trigger = await channel.fetch_message(int(record.trigger_message_disc_id))  # type: ignore[union-attr]
        except (discord.NotFound, ValueError):
            await reply(interaction, TRIGGER_GONE)
            return
        if not may_regenerate(interaction.user, trigger.author.id):
            await reply(interaction, WHO_MAY.format(name=trigger.author.display_name))
            return
        state = await interaction_server(interaction)
        persona = next((p for p in state.personas if p.persona_id == record.persona_id), None)
        if persona is None:
            await reply(interaction, PERSONA_GONE)
            return
        incoming = to_discord_message(trigger)
        author = await closing_stale_connections(load_author_state)(state.server_id, incoming.author, self.bot.clock())
        decision = admit(
            (persona,), privacy_level=author.user_row.privacy_level, blocked_persona_ids=author.muted_persona_ids
        )
        admission = replace(decision, author=author)
        if not admission.admitted:
            await reply(interaction, NOT_ADMITTED.format(name=trigger.author.display_name))
            return
        replaced = tuple(int(mid) for mid, pid in recorder.outputs if pid == persona.persona_id)
        outlet = ReplaceReply(self.bot, self.bot.webhooks, trigger.channel, trigger, self.bot.pacing, replaced=replaced)
        job = TurnJob.answering(incoming, admission, state, outlet, triggerer=as_member(trigger.author))
        job.command = TurnCommand(
            "regenerate",
            str(interaction.user.id),
            f"Regenerate: {interaction.user.name} asked for a new version of the reply of record {record_id}.",
            replaces_record=record_id,
        )
        await reply(interaction, STARTED.format(persona=persona.persona_nickname))
        await self.bot.planner.submit(job)


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(RegenerateCog(bot))
