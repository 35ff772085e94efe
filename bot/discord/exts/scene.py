"""``/scene personas rounds [topic]`` (issue 30 item 6; build-context.md BC8-08 scene turns): two or
three personas of the server talk with each other for up to ``rounds`` rounds, with a Stop button.

The rules are ``bot.conversation.scenes``'s (shared with the playground). Here the opening notice
carries the Stop button, and each turn runs on the channel's planner lock, anchored on the channel's
newest message (``bot.discord.command_turns``). The scene ends after its last round, when Stop is
clicked (after the turn that is running), or when a persona gave no reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord
from channels.db import database_sync_to_async
from discord import app_commands
from discord.ext import commands

from bot.conversation.impersonation import FULL_ASKER
from bot.conversation.jobs import TurnJob
from bot.conversation.scenes import (
    ENDED,
    MAX_ROUNDS,
    MAX_TOPIC,
    STOPPING,
    WHO_MAY,
    WHO_MAY_STOP,
    Scene,
    asker_is_full,
    opening_notice,
    pick_personas,
    started,
)
from bot.conversation.state import ServerState
from bot.discord.command_turns import channel_anchor
from bot.discord.delivery import SAFE_MENTIONS, Delivery, notice_embed, send_as_persona
from bot.discord.exts._interactions import interaction_server, reply
from bot.discord.turns import DiscordOutlet, refused
from chatcontext.core.types import PersonaInfo, ReplyNoticeState

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

GUILD_ONLY = "/scene works in a server's channels only."


def may_direct(user: discord.abc.User) -> bool:
    return isinstance(user, discord.Member) and user.guild_permissions.manage_messages


class StopSceneButton(discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"tomori:scene-stop:(?P<scene>[0-9]+)"):
    def __init__(self, scene_id: int) -> None:
        super().__init__(
            discord.ui.Button(
                label="Stop scene",
                emoji="⏹️",
                style=discord.ButtonStyle.danger,
                custom_id=f"tomori:scene-stop:{scene_id}",
            )
        )
        self.scene_id = scene_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> StopSceneButton:
        return cls(int(match["scene"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = interaction.client.get_cog("SceneCog")  # type: ignore[attr-defined]
        await cog.stop(interaction, self.scene_id)


@dataclass(frozen=True)
class SceneOutlet(DiscordOutlet):
    """A scene turn speaks in the channel without replying to anything (the channel webhook for
    alters); ``delivered`` counts its replies, so the scene knows when a persona gave none."""

    delivered: list[str] = field(default_factory=list, kw_only=True)

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> Delivery:
        try:
            delivery = await send_as_persona(self.channel, persona, text, webhooks=self.webhooks)
        except discord.HTTPException as exc:
            raise refused(exc) from exc
        self.delivered.extend(delivery.message_ids)
        return delivery

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        """Nothing is posted: the scene ends, and the record says why."""


class SceneCog(commands.Cog):
    def __init__(self, bot: PlatformBotMixin) -> None:
        self.bot = bot
        self.running: dict[int, Scene] = {}

    async def cog_load(self) -> None:
        self.bot.add_dynamic_items(StopSceneButton)

    async def cog_unload(self) -> None:
        self.bot.remove_dynamic_items(StopSceneButton)

    @app_commands.command(name="scene", description="Two or three personas talk with each other for a few rounds")
    @app_commands.describe(
        personas="Two or three persona names, separated by commas",
        rounds=f"How many rounds (1–{MAX_ROUNDS}); each persona speaks once a round",
        topic="What the scene is about",
    )
    @app_commands.guild_only()
    async def scene(
        self,
        interaction: discord.Interaction,
        personas: str,
        rounds: app_commands.Range[int, 1, MAX_ROUNDS],
        topic: app_commands.Range[str, 0, MAX_TOPIC] = "",
    ) -> None:
        channel = self.bot.get_channel(interaction.channel_id) if interaction.channel_id else None
        if interaction.guild is None or channel is None:
            await reply(interaction, GUILD_ONLY)
            return
        if not may_direct(interaction.user):
            await reply(interaction, WHO_MAY)
            return
        if await database_sync_to_async(asker_is_full)(str(interaction.user.id)):
            await reply(interaction, FULL_ASKER)
            return
        state = await interaction_server(interaction)
        cast, why = pick_personas(state, personas)
        if why is not None:
            await reply(interaction, why)
            return
        rounds = max(1, min(int(rounds), MAX_ROUNDS))
        topic = topic.strip()[:MAX_TOPIC]
        await reply(interaction, started(cast, rounds))
        view = discord.ui.View(timeout=None)
        opening = notice_embed(opening_notice(cast, rounds, topic))
        posted = await channel.send(embed=opening, allowed_mentions=SAFE_MENTIONS, view=view)  # type: ignore[union-attr]
        view.add_item(StopSceneButton(posted.id))
        await posted.edit(view=view)
        scene = Scene(str(posted.id), str(interaction.user.id), interaction.user.name, cast, rounds, topic)
        self.running[posted.id] = scene
        try:
            await self.play(scene, channel, state)  # type: ignore[arg-type]
        finally:
            self.running.pop(posted.id, None)
            await posted.edit(view=None)

    async def play(self, scene: Scene, channel: discord.abc.Messageable, state: ServerState) -> None:
        for sequence in range(scene.total):
            if scene.stopped:
                return
            outlet = await self.turn(scene, channel, state, sequence)
            if not outlet.delivered:
                return  # a persona gave no reply: the scene ends rather than talk past it

    async def turn(
        self, scene: Scene, channel: discord.abc.Messageable, state: ServerState, sequence: int
    ) -> SceneOutlet:
        anchor = await channel_anchor(channel, client=self.bot, server_id=state.server_id, now_ms=self.bot.clock())
        outlet = SceneOutlet(self.bot, self.bot.webhooks, channel, anchor.live or anchor.message)
        job = TurnJob(
            scene.turn(anchor.message, sequence),
            outlet,
            (scene.speaker(sequence),),
            state,
            anchor.author,
            triggerer=anchor.triggerer,
            command=scene.command(sequence),
        )
        await self.bot.planner.submit(job)
        return outlet

    async def stop(self, interaction: discord.Interaction, scene_id: int) -> None:
        scene = self.running.get(scene_id)
        if scene is None:
            await reply(interaction, ENDED)
            return
        if str(interaction.user.id) != scene.started_by and not may_direct(interaction.user):
            await reply(interaction, WHO_MAY_STOP.format(name=scene.starter_name))
            return
        scene.stopped = True
        await reply(interaction, STOPPING)


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(SceneCog(bot))
