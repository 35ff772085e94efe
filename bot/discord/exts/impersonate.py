"""``/impersonate member [instruction]`` (issue 30 item 5; build-context.md BC7-03/BC7-04): the main
persona writes one message as a member, posted through the channel's platform webhook under the
member's display name and avatar.

Only members who allowed it themselves (``/privacy impersonation``, off by default) can be
impersonated, never a privacy-Full member (their words never reach a prompt) or one on the server's
personalization blacklist; a privacy-Full member cannot start the turn either (P-01). The turn offers
no tools (BC9-01) and is recorded like any other, with what the command did
(``chatcontext.records.commands``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import discord
from channels.db import database_sync_to_async
from discord import app_commands
from discord.ext import commands

from bot.conversation.refusals import DeliveryRefused
from bot.conversation.runner import TurnJob
from bot.conversation.state import ServerState
from bot.discord.command_turns import channel_anchor
from bot.discord.delivery import SAFE_MENTIONS, Delivery, split_message
from bot.discord.exts._interactions import FULL_ASKER, interaction_server, reply
from bot.discord.turns import DiscordOutlet, refused
from chatcontext import repository
from chatcontext.core.types import ChatIncoming, DiscordMessage, LockedTurn, PersonaInfo, ReplyNoticeState
from chatcontext.records.commands import TurnCommand
from personas import models as m

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

GUILD_ONLY = "/impersonate works in a server's channels only."
FAILED = "No message was written as {name} (the prompt record says why)."
MAX_INSTRUCTION = 500


def refusal(server_id: int, asker: discord.abc.User, target: discord.abc.User) -> str | None:
    """Why ``asker`` may not have a persona write as ``target`` on this server, or None."""
    name = getattr(target, "display_name", target.name)
    if target.bot:
        return "Only people can be impersonated, not bots or apps."
    rows = repository.load_user_rows([str(asker.id), str(target.id)])
    asker_row, target_row = rows.get(str(asker.id)), rows.get(str(target.id))
    if asker_row is not None and asker_row.privacy_level == m.PrivacyLevel.FULL:
        return FULL_ASKER
    consent = m.DiscordUser.objects.filter(user_disc_id=str(target.id), allow_impersonation=True).exists()
    if target_row is None or not consent:
        return (
            f"{name} has not allowed impersonation. Only members who turned it on themselves "
            "(/privacy impersonation allow:True) can be impersonated."
        )
    if target_row.privacy_level == m.PrivacyLevel.FULL:
        return f"{name}'s privacy level is Full: their words never reach a persona, so they cannot be impersonated."
    if repository.load_blacklisted(server_id, [str(target.id)]):
        return f"{name} is on this server's personalization blacklist, so they cannot be impersonated."
    return None


def without_name_prefix(text: str, names: list[str]) -> str:
    """The message without the ``Name:`` the tail directive asks the model to start with (BC7-04)."""
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        stripped = re.sub(rf"^\s*{re.escape(name)}\s*:\s*", "", text, count=1, flags=re.IGNORECASE)
        if stripped != text:
            return stripped
    return text


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


def impersonation_turn(anchor: DiscordMessage, persona: PersonaInfo, target_id: str, instruction: str) -> LockedTurn:
    """The locked turn: ``persona`` writes as the member (BC7-03), the instruction as the manual
    directive (BC8-05)."""
    incoming = ChatIncoming(
        message=anchor,
        is_user_impersonation=True,
        impersonated_user_id=target_id,
        manual_system_prompt=instruction.strip() or None,
    )
    persona_ids = (persona.persona_id,) if persona.persona_id is not None else ()
    return LockedTurn(incoming=incoming, channel_id=anchor.channel_id, triggered_persona_ids=persona_ids)


def command_summary(asker: discord.abc.User, target: discord.abc.User, instruction: str) -> str:
    said = f' with the instruction "{instruction.strip()}"' if instruction.strip() else ""
    return f"/impersonate: {asker.name} had the persona write as {target.name}{said}."


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
            await reply(interaction, "This server has no persona to write the message.")
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
        locked = impersonation_turn(anchor.message, persona, str(member.id), instruction)
        command = TurnCommand(
            "impersonate", str(interaction.user.id), command_summary(interaction.user, member, instruction)
        )
        return TurnJob(locked, outlet, (persona,), state, anchor.author, triggerer=anchor.triggerer, command=command)


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(ImpersonateCog(bot))
