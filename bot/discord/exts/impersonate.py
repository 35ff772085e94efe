"""``/impersonate member [instruction]`` (issue 30 item 5; build-context.md BC7-03/BC7-04): the main
persona writes one message as a member, posted through the channel's platform webhook under the
member's display name and avatar.

Who may be impersonated, the locked turn and the message body are ``bot.conversation.impersonation``'s
(shared with the playground). The turn offers no tools (BC9-01) and is recorded like any other, with
what the command did (``chatcontext.records.commands``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import discord
from channels.db import database_sync_to_async
from discord import app_commands
from discord.ext import commands

from bot.conversation import impersonation as rules
from bot.conversation.impersonation import FAILED, MAX_INSTRUCTION, NO_PERSONA, Person, without_name_prefix
from bot.conversation.jobs import TurnJob
from bot.conversation.refusals import DeliveryRefused
from bot.conversation.state import ServerState
from bot.discord.command_turns import channel_anchor
from bot.discord.delivery import SAFE_MENTIONS, Delivery, split_message
from bot.discord.exts._interactions import interaction_server, reply
from bot.discord.turns import DiscordOutlet, refused
from chatcontext.core.types import PersonaInfo, ReplyNoticeState
from chatcontext.records.commands import TurnCommand

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

GUILD_ONLY = "/impersonate works in a server's channels only."


def person(user: discord.abc.User) -> Person:
    return Person(str(user.id), getattr(user, "display_name", user.name), user.name, bot=user.bot)


def refusal(server_id: int, asker: discord.abc.User, target: discord.abc.User) -> str | None:
    """Why ``asker`` may not have a persona write as ``target`` on this server, or None."""
    return rules.refusal(server_id, str(asker.id), person(target))


@dataclass(frozen=True)
class ImpersonationOutlet(DiscordOutlet):
    """Posts the message through the channel webhook as ``member``; a failure is told only to who asked."""

    member: discord.Member | None = None
    interaction: discord.Interaction | None = None

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> Delivery:
        assert self.member is not None
        member = self.member
        names = [member.display_name, member.global_name or "", member.name]
        body = without_name_prefix(text, names)
        try:
            hook = await self.webhooks.for_channel(self.channel)
            if hook is None:  # a DM or a thread of a forum-less parent: never posted natively as them
                raise DeliveryRefused("no webhook")
            thread = self.channel if isinstance(self.channel, discord.Thread) else discord.utils.MISSING
            ids = []
            for piece in split_message(body):
                sent = await hook.send(
                    piece,
                    username=member.display_name,
                    avatar_url=member.display_avatar.url,
                    allowed_mentions=SAFE_MENTIONS,
                    thread=thread,
                    wait=True,
                )
                ids.append(str(sent.id))
        except discord.HTTPException as exc:
            raise refused(exc) from exc
        return Delivery(ids, via_webhook=True)

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        assert self.member is not None and self.interaction is not None
        try:
            await self.interaction.followup.send(FAILED.format(name=self.member.display_name), ephemeral=True)
        except discord.HTTPException as exc:
            raise refused(exc) from exc


class ImpersonateCog(commands.Cog):
    def __init__(self, bot: PlatformBotMixin) -> None:
        self.bot = bot

    @app_commands.command(name="impersonate", description="Have the persona write one message as a member")
    @app_commands.describe(
        member="A member who allowed it (/privacy impersonation)", instruction="What the message should say or do"
    )
    @app_commands.guild_only()
    async def impersonate(
        self,
        interaction: discord.Interaction,
        member: discord.Member,
        instruction: app_commands.Range[str, 0, MAX_INSTRUCTION] = "",
    ) -> None:
        channel = self.bot.get_channel(interaction.channel_id) if interaction.channel_id else None
        if interaction.guild is None or channel is None:
            await reply(interaction, GUILD_ONLY)
            return
        state = await interaction_server(interaction)
        why = await database_sync_to_async(refusal)(state.server_id, interaction.user, member)
        if why is not None:
            await reply(interaction, why)
            return
        job = await self.job(interaction, channel, state, member, instruction[:MAX_INSTRUCTION])  # type: ignore[arg-type]
        if job is None:
            await reply(interaction, NO_PERSONA)
            return
        await reply(interaction, f"{job.personas[0].persona_nickname} is writing a message as {member.display_name}.")
        await self.bot.planner.submit(job)

    async def job(
        self,
        interaction: discord.Interaction,
        channel: discord.abc.Messageable,
        state: ServerState,
        member: discord.Member,
        instruction: str,
    ) -> TurnJob[Delivery] | None:
        persona = state.main_persona
        if persona is None:
            return None
        anchor = await channel_anchor(channel, client=self.bot, server_id=state.server_id, now_ms=self.bot.clock())
        outlet = ImpersonationOutlet(
            self.bot, self.bot.webhooks, channel, anchor.live or anchor.message, member=member, interaction=interaction
        )
        locked = rules.impersonation_turn(anchor.message, persona, str(member.id), instruction)
        summary = rules.command_summary(interaction.user.name, member.name, instruction)
        command = TurnCommand("impersonate", str(interaction.user.id), summary)
        return TurnJob(locked, outlet, (persona,), state, anchor.author, triggerer=anchor.triggerer, command=command)


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(ImpersonateCog(bot))
