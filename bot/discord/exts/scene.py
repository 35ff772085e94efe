"""``/scene personas rounds [topic]`` (issue 30 item 6; build-context.md BC8-08 scene turns): two or
three personas of the server talk with each other for up to ``rounds`` rounds, with a Stop button.

The scene opens with a scene-directive notice (BC6-01: the history reads it as ``[System: …]``, so
every persona turn sees the topic), posted by the bot with the Stop button. Then each round runs one
turn per persona, in the order given, each on the channel's planner lock like any turn and anchored
on the channel's newest message (``bot.discord.command_turns``): every persona reads what the others
just said (BC1-02). A scene turn answers nobody's message, so it is never a queued reply (BC8-08).
Each turn has its prompt record, with what the command did. The scene ends after its last round,
when Stop is clicked (after the turn that is running), or when a persona gave no reply.

Who may start or stop one: members with Manage Messages (a scene posts many messages and costs many
model calls); the member who started a scene may also stop it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import discord
from channels.db import database_sync_to_async
from discord import app_commands
from discord.ext import commands

from bot.conversation.runner import TurnJob
from bot.conversation.state import ServerState
from bot.conversation.tools.notices import notice
from bot.discord.command_turns import channel_anchor
from bot.discord.delivery import SAFE_MENTIONS, Delivery, notice_embed, send_as_persona
from bot.discord.exts._interactions import FULL_ASKER, interaction_server, reply
from bot.discord.turns import DiscordOutlet, refused
from chatcontext import repository
from chatcontext.core.types import ChatIncoming, LockedTurn, PersonaInfo, ReplyNoticeState
from chatcontext.records.commands import TurnCommand
from personas import models as m

if TYPE_CHECKING:
    from bot.discord.client import PlatformBotMixin

MAX_ROUNDS = 5
MAX_TOPIC = 500
WHO_MAY = "Only members with Manage Messages can start a scene: it posts many messages and costs many model calls."
WHO_MAY_STOP = "Only {name}, who started this scene, or members with Manage Messages can stop it."
GUILD_ONLY = "/scene works in a server's channels only."
PICK = "Name two or three different personas of this server, separated by commas (for example: Tomori, Ellen). {why}"
ENDED = "This scene has already ended."
STOPPING = "The scene stops after the turn that is running."


def pick_personas(state: ServerState, names: str) -> tuple[list[PersonaInfo], str | None]:
    """The personas named, in the order given, or why the names do not name 2–3 of them."""
    wanted = [n.strip() for n in re.split(r"[,;]", names) if n.strip()]
    by_name = {p.persona_nickname.strip().lower(): p for p in state.personas}
    unknown = [n for n in wanted if n.lower() not in by_name]
    if unknown:
        return [], PICK.format(why=f"Not a persona here: {', '.join(unknown)}.")
    chosen = list({n.lower(): by_name[n.lower()] for n in wanted}.values())
    if not 2 <= len(chosen) <= 3:
        return [], PICK.format(why=f"You named {len(chosen)}.")
    return chosen, None


def may_direct(user: discord.abc.User) -> bool:
    return isinstance(user, discord.Member) and user.guild_permissions.manage_messages


def asker_is_full(user_disc_id: str) -> bool:
    row = repository.load_user_rows([user_disc_id]).get(user_disc_id)
    return row is not None and row.privacy_level == m.PrivacyLevel.FULL


def scene_description(personas: list[PersonaInfo], rounds: int, topic: str) -> str:
    names = ", ".join(p.persona_nickname for p in personas)
    said = f" Topic: {topic}" if topic else ""
    return f"Scene: {names} talk with each other, taking turns (up to {rounds} rounds).{said}"


@dataclass
class Scene:
    scene_id: int  # the scene notice's message id
    started_by: int
    starter_name: str
    stopped: bool = False


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
        cls, interaction: discord.Interaction, item: discord.ui.Button[Any], match: re.Match[str], /
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
        await reply(interaction, f"The scene starts: {', '.join(p.persona_nickname for p in cast)}, {rounds} rounds.")
        opening = notice("commands.generate.scene.success_title", scene_description(cast, rounds, topic))
        view = discord.ui.View(timeout=None)
        posted = await channel.send(embed=notice_embed(opening), allowed_mentions=SAFE_MENTIONS, view=view)  # type: ignore[union-attr]
        view.add_item(StopSceneButton(posted.id))
        await posted.edit(view=view)
        scene = Scene(posted.id, interaction.user.id, interaction.user.name)
        self.running[scene.scene_id] = scene
        try:
            await self.play(scene, channel, state, cast, rounds, topic)  # type: ignore[arg-type]
        finally:
            self.running.pop(scene.scene_id, None)
            await posted.edit(view=None)

    async def play(
        self,
        scene: Scene,
        channel: discord.abc.Messageable,
        state: ServerState,
        cast: list[PersonaInfo],
        rounds: int,
        topic: str,
    ) -> None:
        total = rounds * len(cast)
        for sequence in range(total):
            if scene.stopped:
                return
            persona = cast[sequence % len(cast)]
            outlet = await self.turn(scene, channel, state, persona, sequence, total, topic)
            if not outlet.delivered:
                return  # a persona gave no reply: the scene ends rather than talk past it

    async def turn(
        self,
        scene: Scene,
        channel: discord.abc.Messageable,
        state: ServerState,
        persona: PersonaInfo,
        sequence: int,
        total: int,
        topic: str,
    ) -> SceneOutlet:
        anchor = await channel_anchor(channel, client=self.bot, server_id=state.server_id, now_ms=self.bot.clock())
        scene_turn = {
            "command_id": str(scene.scene_id),
            "sequence": sequence,
            "turn_index": sequence,
            "total_turns": total,
            "additional_instructions": topic or None,
        }
        locked = LockedTurn(
            incoming=ChatIncoming(message=anchor.message, scene_turn=scene_turn),
            channel_id=anchor.message.channel_id,
            triggered_persona_ids=(persona.persona_id,) if persona.persona_id is not None else (),
        )
        outlet = SceneOutlet(self.bot, self.bot.webhooks, channel, anchor.live or anchor.message)
        summary = (
            f"/scene by {scene.starter_name}: turn {sequence + 1} of {total}, {persona.persona_nickname}"
            + (f", topic: {topic}" if topic else "")
            + "."
        )
        command = TurnCommand("scene", str(scene.started_by), summary)
        job = TurnJob(locked, outlet, (persona,), state, anchor.author, triggerer=anchor.triggerer, command=command)
        await self.bot.planner.submit(job)
        return outlet

    async def stop(self, interaction: discord.Interaction, scene_id: int) -> None:
        scene = self.running.get(scene_id)
        if scene is None:
            await reply(interaction, ENDED)
            return
        if interaction.user.id != scene.started_by and not may_direct(interaction.user):
            await reply(interaction, WHO_MAY_STOP.format(name=scene.starter_name))
            return
        scene.stopped = True
        await reply(interaction, STOPPING)


async def setup(bot: PlatformBotMixin) -> None:
    await bot.add_cog(SceneCog(bot))
