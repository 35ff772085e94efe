"""Test doubles for the bot tests. dpytest has no route for listing, creating or executing webhooks,
so alters' webhook deliveries go through ``FakeWebhook``; it has no interactions either, so slash
commands are called with ``FakeInteraction``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import discord
import discord.ext.test as dpytest
from channels.db import database_sync_to_async
from discord.ext.test import backend, factories

from bot.conversation.providers import GenerationResult
from bot.discord.client import UnshardedTomoriBot
from bot.discord.delivery import WebhookRegistry
from chatcontext.core.types import ContextItem
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR


@dataclass
class WebhookSend:
    content: str
    username: str
    avatar_url: Any
    embed: Any
    edits: int = 0
    deleted: bool = False
    view: Any = None  # the components an edit put on it (the Regenerate button)


@dataclass
class FakeWebhook:
    """Stands in for the platform's channel webhook: records each send and posts the message into
    dpytest's channel as a webhook message, so later history reads see it."""

    channel: discord.TextChannel
    id: int = field(default_factory=factories.make_id)
    sends: list[WebhookSend] = field(default_factory=list)
    messages: list[discord.Message] = field(default_factory=list)

    async def send(self, content: str, *, username: str, avatar_url: Any = None, embed: Any = None, **_: Any):
        self.sends.append(WebhookSend(content, username, avatar_url, embed))
        author = backend.make_user(username, 1)
        data = factories.make_message_dict(self.channel, author, content=content, webhook_id=self.id)
        if isinstance(embed, discord.Embed):  # a notice: later history reads must see it
            data["embeds"] = [embed.to_dict()]
        backend.get_state().parse_message_create(data)
        # dpytest keeps channel history in its backend state; it has no public call to add to it.
        backend._cur_config.messages.setdefault(self.channel.id, []).append(data)
        message = backend.get_state()._get_message(data["id"])
        self.messages.append(message)
        return message

    async def edit_message(
        self, message_id: int, *, content: Any = discord.utils.MISSING, embed: Any = None, view: Any = None, **_: Any
    ) -> None:
        """The webhook's edit endpoint: the send and the channel's message change in place; an edit
        without content keeps it."""
        index = [m.id for m in self.messages].index(message_id)
        send = self.sends[index]
        send.edits += 1
        if view is not None:
            send.view = view
        if content is discord.utils.MISSING:
            return
        send.content = content
        if embed is not discord.utils.MISSING:
            send.embed = embed
        self.messages[index].content = content
        for data in backend._cur_config.messages[self.channel.id]:
            if data["id"] == message_id:
                data["content"] = content

    async def delete_message(self, message_id: int, **_: Any) -> None:
        index = [m.id for m in self.messages].index(message_id)
        self.sends[index].deleted = True
        history = backend._cur_config.messages[self.channel.id]
        history[:] = [data for data in history if data["id"] != message_id]

    @property
    def standing(self) -> list[WebhookSend]:
        """The sends not deleted since."""
        return [send for send in self.sends if not send.deleted]


class FakeWebhookRegistry(WebhookRegistry):
    def __init__(self) -> None:
        super().__init__()
        self.hooks: dict[int, FakeWebhook] = {}

    async def find(self, channel: discord.abc.Messageable) -> discord.Webhook | None:
        return self.hooks.get(channel.id)  # type: ignore[return-value]

    async def for_channel(self, channel: discord.abc.Messageable) -> discord.Webhook | None:
        return self.hooks.setdefault(channel.id, FakeWebhook(channel))  # type: ignore[return-value,arg-type]


class RecordingProvider:
    """Wraps the configured provider and keeps every prompt it was given."""

    def __init__(self, inner: Any, calls: list[Sequence[ContextItem]]) -> None:
        self.inner, self.calls = inner, calls
        self.name, self.model_name = inner.name, inner.model_name
        self.supports_tools = getattr(inner, "supports_tools", False)

    async def generate(self, items: Sequence[ContextItem], *, stream: bool, **options: Any) -> GenerationResult:
        """``options``: a streaming sink, and the tools and follow-ups of a turn with tools; a prompt is
        recorded once per turn, at its first round."""
        if not options.get("followups"):
            self.calls.append(list(items))
        return await self.inner.generate(items, stream=stream, **options)


@dataclass
class BotHarness:
    bot: UnshardedTomoriBot
    webhooks: FakeWebhookRegistry
    prompts: list[Sequence[ContextItem]]

    @property
    def config(self) -> Any:
        return dpytest.get_config()

    @property
    def guild(self) -> discord.Guild:
        return self.config.guilds[0]

    @property
    def channel(self) -> discord.TextChannel:
        return self.config.channels[0]

    def member(self, index: int) -> discord.Member:
        return self.config.members[index]


async def run_db(fn: Any, *args: Any, **kwargs: Any) -> Any:
    return await database_sync_to_async(fn)(*args, **kwargs)


@dataclass
class FakeResponse:
    sent: list[tuple[str, bool]] = field(default_factory=list)
    deferred: bool = False  # ephemerally: Discord shows the member "thinking…" until the follow-up

    async def send_message(self, content: str, *, ephemeral: bool = False, **_: Any) -> None:
        assert not self.deferred, "a deferred interaction answers through its follow-up"
        self.sent.append((content, ephemeral))

    async def defer(self, *, ephemeral: bool = False, **_: Any) -> None:
        assert ephemeral, "commands answer privately"
        self.deferred = True


@dataclass
class FakeFollowup:
    """``Interaction.followup``: what is said after the first answer or the deferral (a command's
    turn that failed, a compaction's result), kept with the response's messages."""

    response: FakeResponse

    async def send(self, content: str, *, ephemeral: bool = False, **_: Any) -> None:
        assert self.response.deferred or self.response.sent, "a follow-up comes after an answer or a deferral"
        self.response.sent.append((content, ephemeral))


@dataclass
class FakeInteraction:
    """The attributes the command handlers read from ``discord.Interaction``."""

    user: discord.abc.User
    guild: discord.Guild | None
    channel_id: int
    response: FakeResponse = field(default_factory=FakeResponse)
    message: discord.Message | None = None  # the message whose button was clicked

    @property
    def followup(self) -> FakeFollowup:
        return FakeFollowup(self.response)

    @property
    def guild_id(self) -> int | None:
        return self.guild.id if self.guild else None

    @property
    def reply(self) -> str:
        content, ephemeral = self.response.sent[-1]
        assert ephemeral
        return content


ELLEN_AVATAR = "https://cdn.example/ellen.png"


def setup_server(guild: discord.Guild, *, full_privacy: Sequence[discord.Member] = ()) -> m.Server:
    server = actions.register_server(
        str(guild.id), name=guild.name, is_dm=False, locale="en-US", main_persona_nickname="Tomori", actor=TEST_ACTOR
    )
    m.Persona.objects.create(
        server=server, persona_nickname="Ellen", is_alter=True, trigger_words=["ellen"], webhook_avatar_url=ELLEN_AVATAR
    )
    for member in full_privacy:
        user = actions.register_user(str(member.id), username=member.name, global_name=None, actor=TEST_ACTOR)
        actions.set_privacy_level(user, m.PrivacyLevel.FULL, actor=TEST_ACTOR)
    return server


async def post_reply(channel: discord.TextChannel, author: discord.Member, target_id: int, content: str) -> None:
    """A member's reply to an earlier message, without a ping (dpytest's ``message`` cannot reply)."""
    history = backend._cur_config.messages[channel.id]
    referenced = next(data for data in history if data["id"] == target_id)
    data = factories.make_message_dict(channel, author, content=content, type=discord.MessageType.reply.value)
    data["message_reference"] = {"message_id": target_id, "channel_id": channel.id, "guild_id": channel.guild.id}
    data["referenced_message"] = referenced
    backend.get_state().parse_message_create(data)
    history.append(data)
    await dpytest.run_all_events()
