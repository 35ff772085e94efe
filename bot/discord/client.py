"""The Discord client: an ``AutoShardedBot`` whose cogs live in ``bot/discord/exts/`` (loaded in
``setup_hook``, the layout python-discord/bot uses).

Several processes can split the shards: each runs ``manage.py runbot`` with the same
``DISCORD_SHARD_COUNT`` and its own ``DISCORD_SHARD_IDS``. Everything stateful the bot keeps in
memory (channel locks and queues, webhook and server caches) is per guild, and a guild lives on
exactly one shard, so processes never need to share it.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import pkgutil
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import aiohttp
import discord
from discord.ext import commands
from django.conf import settings

from bot.conversation.db import closing_stale_connections
from bot.conversation.jobs import TurnJob
from bot.conversation.media import HttpImageFetcher, ImageFetcher
from bot.conversation.planner import TurnPlanner, wall_clock_ms
from bot.conversation.providers import build_provider
from bot.conversation.runner import ProviderFactory, TurnRunner
from bot.discord import exts
from bot.discord.delivery import SAFE_MENTIONS, Delivery, WebhookRegistry
from bot.discord.reply_stream import Pacing
from chatcontext.core.transcripts import TranscriptCache
from chatcontext.voice.cache import shared_cache

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    _BotBase = commands.Bot
else:
    _BotBase = object


# The bot never joins a voice channel (voice messages are files, chatcontext.voice): discord.py's
# start-up warnings that voice would need PyNaCl and davey are noise in the operator's log.
discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False


def platform_intents(*, presences: bool) -> discord.Intents:
    """Message content (the prompt needs it) and members (names, roles, permissions); presences
    only when the deployment enabled that privileged intent (participants.md H-12)."""
    intents = discord.Intents.default()
    intents.message_content = True
    intents.members = True
    intents.presences = presences
    return intents


DEVELOPER_PORTAL = "https://discord.com/developers/applications"
GATEWAY_PROBE_SECONDS = 30
# What the bot's features call in a server, and nothing more (``manage.py invite_url`` asks for it).
BOT_PERMISSIONS = discord.Permissions(
    view_channel=True,  # see the channels it is talked to in
    send_messages=True,  # replies, notices, the typing indicator (delivery.NativeSpeaker, turns.py)
    send_messages_in_threads=True,  # the same in threads
    read_message_history=True,  # the conversation history and replies to a message (transport.py)
    embed_links=True,  # a reply's first embed and tool notices (delivery.notice_embed)
    add_reactions=True,  # the persona's react tool (turns.DiscordOutlet.react)
    use_external_emojis=True,  # custom emojis of other servers a persona repeats from the conversation
    manage_webhooks=True,  # alters speak through one platform webhook per channel (delivery.WebhookRegistry)
)
# The export of a member's data is a DM (exts/members.py): no Attach Files in servers.
INVITE_SCOPES = ("bot", "applications.commands")


def application_id_from_token(token: str) -> int | None:
    """A bot token's first segment is the application's id in base64 (how Discord issues them)."""
    head = token.strip().split(".", 1)[0]
    try:
        decoded = base64.b64decode(head + "=" * (-len(head) % 4), validate=True).decode("ascii")
    except (ValueError, UnicodeDecodeError):
        return None
    return int(decoded) if decoded.isdigit() else None


def invite_url(application_id: int) -> str:
    return discord.utils.oauth_url(application_id, permissions=BOT_PERMISSIONS, scopes=INVITE_SCOPES)


class GatewayUnreachable(Exception):
    """Discord's API answered but its gateway (a websocket) could not be opened at start-up."""


def startup_failure(exc: BaseException, *, presences: bool) -> str | None:
    """The one line an operator reads when the bot cannot start (``manage.py runbot``), or None for
    anything else: an unexpected error keeps its traceback."""
    if isinstance(exc, discord.PrivilegedIntentsRequired):
        intents = "Message Content Intent and Server Members Intent" + (" and Presence Intent" if presences else "")
        return f"Discord refused the privileged intents: enable {intents} under Bot in {DEVELOPER_PORTAL}"
    if isinstance(exc, discord.LoginFailure):
        return f"Discord refused DISCORD_TOKEN: copy the bot's token again (Bot, Reset Token in {DEVELOPER_PORTAL})"
    if isinstance(exc, GatewayUnreachable):
        return f"Cannot reach Discord's gateway ({exc}): websockets to it must be allowed from this machine"
    if isinstance(exc, OSError | aiohttp.ClientError | asyncio.TimeoutError | discord.GatewayNotFound):
        reason = " ".join(str(exc).split()) or type(exc).__name__
        return f"Cannot reach Discord ({reason}): check this machine's network, DNS and proxy"
    if isinstance(exc, discord.DiscordServerError):
        return f"Discord answered HTTP {exc.status} at start-up: try again later (https://discordstatus.com)"
    return None


def walk_extensions() -> Iterator[str]:
    for module in pkgutil.iter_modules(exts.__path__, prefix=f"{exts.__name__}."):
        if not module.name.rsplit(".", 1)[-1].startswith("_"):
            yield module.name


class PlatformBotMixin(_BotBase):
    """What the platform adds to a discord.py bot; mixed into a sharded or an unsharded base."""

    def __init__(
        self,
        *,
        sync_commands: bool = True,
        presences: bool = False,
        provider_factory: ProviderFactory = build_provider,
        webhooks: WebhookRegistry | None = None,
        transcripts: TranscriptCache = shared_cache,
        image_fetcher: ImageFetcher | None = None,
        embedded_reminders: bool = False,
        **kwargs: Any,
    ) -> None:
        """``image_fetcher``: where a vision model's images are read (default: Discord's CDN);
        ``embedded_reminders``: this process fires its own reminders (no Celery beat, no Redis;
        ``bot.conversation.reminder_scheduler``)."""
        super().__init__(
            command_prefix=commands.when_mentioned,
            intents=platform_intents(presences=presences),
            allowed_mentions=SAFE_MENTIONS,
            help_command=None,
            **kwargs,
        )
        self.sync_commands = sync_commands
        self.embedded_reminders = embedded_reminders
        self.clock = wall_clock_ms
        self.webhooks = webhooks or WebhookRegistry()
        self.pacing = Pacing()  # how streamed replies are paced (tests give it their own clock)
        self.runner = TurnRunner(
            db=closing_stale_connections,
            provider_factory=provider_factory,
            transcripts=transcripts,
            clock=self.clock,
            image_fetcher=image_fetcher or HttpImageFetcher(),
        )
        self.planner: TurnPlanner[TurnJob[Delivery]] = TurnPlanner(self.runner.run, self.clock)

    async def setup_hook(self) -> None:
        for extension in walk_extensions():
            await self.load_extension(extension)
        if self.sync_commands:
            synced = await self.tree.sync()
            logger.info("synced %d application commands", len(synced))

    async def on_message(self, message: discord.Message, /) -> None:
        """No prefix commands: messages are handled by ``bot.discord.exts.chat``."""


class TomoriBot(PlatformBotMixin, commands.AutoShardedBot):
    """The production client."""

    gateway_reached = False

    async def launch_shard(self, gateway: Any, shard_id: int, *, initial: bool = False) -> None:
        """discord.py retries a shard's connection every 5 s forever, logging a traceback each time:
        right for a gateway that drops a running bot, wrong for one this machine cannot reach at all.
        The first connection of the process is tried once, and a failure stops the start."""
        if not self.gateway_reached:
            try:
                async with asyncio.timeout(GATEWAY_PROBE_SECONDS):
                    probe = await self.http.ws_connect(str(gateway))
                await probe.close()
            except (OSError, aiohttp.ClientError, TimeoutError) as exc:
                raise GatewayUnreachable(" ".join(str(exc).split()) or type(exc).__name__) from exc
            self.gateway_reached = True
        await super().launch_shard(gateway, shard_id, initial=initial)


class UnshardedTomoriBot(PlatformBotMixin, commands.Bot):
    """The same bot on one connection, for dpytest (which refuses sharded clients) and tiny setups."""


def create_bot(**kwargs: Any) -> TomoriBot:
    """The production bot with its shard split read from DISCORD_SHARD_IDS / DISCORD_SHARD_COUNT."""
    return TomoriBot(
        shard_ids=settings.DISCORD_SHARD_IDS,
        shard_count=settings.DISCORD_SHARD_COUNT,
        presences=settings.DISCORD_PRESENCE_INTENT,
        **kwargs,
    )
