"""Sending a persona's reply to Discord.

``split_message`` is pure: it cuts a reply into Discord-sized messages without breaking words or
code blocks (an open fence is closed at the end of a piece and reopened, with its language, at the
start of the next). The main persona replies natively to the trigger message; alters speak through
the platform's channel webhook under their own name and avatar (a ``Speaker`` each, which also
edits and deletes its posts for a streamed reply). discord.py applies Discord's rate limits to both
paths.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Protocol

import discord

from bot.conversation.texts import ERROR_MESSAGES, localized
from bot.conversation.tools.notices import NOTICE_COLOR, Notice
from chatcontext.core.types import PersonaInfo, ReplyNoticeState

logger = logging.getLogger(__name__)

DISCORD_MESSAGE_LIMIT = 2000
FENCE = "```"
CLOSING_FENCE = "\n" + FENCE
MAX_FENCE_INFO = 20  # a reopened fence keeps at most this much of its info string (the language)
WEBHOOK_NAME = "Tomori Platform"
# BC3-03: the history reader recognises this footer token as a reply-context notice.
REPLY_CONTEXT_TOKEN = "[tomori:v1:reply_context]"

REPLY_NOTICES: dict[str, str] = {
    "en-US": "↪ Replying to {name}",
    "en-GB": "↪ Replying to {name}",
    "ja": "↪ {name} さんへの返信",
}


# ---------------------------------------------------------------------------------------------
# Splitting (pure)
# ---------------------------------------------------------------------------------------------


def _fence_after(text: str, opener: str | None) -> str | None:
    """The fence still open after ``text`` (its opening line), given the one open before it."""
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped.startswith(FENCE):
            continue
        if opener is not None:
            opener = None
        elif stripped.count(FENCE) == 1:  # ```code``` on one line opens nothing
            opener = FENCE + stripped[len(FENCE) :].split(" ")[0][:MAX_FENCE_INFO]
    return opener


def _cut_index(rest: str, window: int) -> tuple[int, int]:
    """(end of this piece, start of the next) for a piece of at most ``window`` characters.

    Prefers a line break in the second half of the window, then a word boundary, then any line
    break; a single word longer than the window is cut hard.
    """
    head = rest[:window]
    newline = head.rfind("\n")
    if newline >= window // 2:
        return newline, newline + 1
    if rest[window] in " \n":
        return window, window + 1
    space = head.rfind(" ")
    if space > 0:
        return space, space + 1
    if newline > 0:
        return newline, newline + 1
    return window, window


def split_message(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> list[str]:
    """Cut ``text`` into pieces of at most ``limit`` characters with balanced code fences."""
    pieces: list[str] = []
    opener: str | None = None
    rest = text.strip()
    while rest:
        prefix = opener + "\n" if opener else ""
        budget = limit - len(prefix)
        if len(rest) <= budget:
            pieces.append(prefix + rest)
            break
        end, next_start = _cut_index(rest, budget - len(CLOSING_FENCE))
        body = rest[:end]
        last_line_start = body.rfind("\n") + 1
        ends_on_opening_fence = (
            _fence_after(body[:last_line_start], opener) is None and _fence_after(body, opener) is not None
        )
        if last_line_start > 0 and ends_on_opening_fence:
            # Do not end a piece on the line that opens a block: it moves to the next piece.
            end, next_start = last_line_start - 1, last_line_start
            body = rest[:end]
        after = _fence_after(body, opener)
        pieces.append(prefix + body.rstrip() + (CLOSING_FENCE if after else ""))
        opener = after
        rest = rest[next_start:]
        if not opener:
            rest = rest.lstrip()
    return pieces


# ---------------------------------------------------------------------------------------------
# Sending (imperative shell)
# ---------------------------------------------------------------------------------------------

SAFE_MENTIONS = discord.AllowedMentions(everyone=False, roles=False, users=True, replied_user=True)


class WebhookRegistry:
    """One platform webhook per channel (threads use their parent's), created on first use."""

    def __init__(self) -> None:
        self._by_channel: dict[int, discord.Webhook] = {}

    @staticmethod
    def _owner(channel: discord.abc.Messageable) -> discord.TextChannel | discord.ForumChannel | None:
        if isinstance(channel, discord.Thread):
            parent = channel.parent
            return parent if isinstance(parent, discord.TextChannel | discord.ForumChannel) else None
        return channel if isinstance(channel, discord.TextChannel) else None

    async def find(self, channel: discord.abc.Messageable) -> discord.Webhook | None:
        owner = self._owner(channel)
        if owner is None:
            return None
        if owner.id not in self._by_channel:
            bot_user = owner.guild.me
            for hook in await owner.webhooks():
                if hook.name == WEBHOOK_NAME and hook.token and hook.user and hook.user.id == bot_user.id:
                    self._by_channel[owner.id] = hook
                    break
        return self._by_channel.get(owner.id)

    async def for_channel(self, channel: discord.abc.Messageable) -> discord.Webhook | None:
        hook = await self.find(channel)
        owner = self._owner(channel)
        if hook is None and owner is not None:
            hook = await owner.create_webhook(name=WEBHOOK_NAME, reason="Tomori Platform alter personas")
            self._by_channel[owner.id] = hook
        return hook


@dataclass
class Delivery:
    message_ids: list[str]
    via_webhook: bool


class Speaker(Protocol):
    """Where a persona's pieces go, as posts that can later be edited or deleted (streaming,
    ``bot.discord.reply_stream``); discord.py applies the rate limits of each call."""

    via_webhook: bool

    def pieces(self, text: str) -> list[str]:
        """``text`` as the Discord messages this speaker posts."""

    async def send(self, index: int, content: str, *, embed: discord.Embed | None = None) -> discord.Message: ...

    async def edit(self, message: discord.Message, content: str, *, embed: discord.Embed | None = None) -> None: ...

    async def delete(self, message: discord.Message) -> None: ...


@dataclass
class NativeSpeaker:
    """The bot account: the first piece replies to ``reply_to`` (a plain post when None), the rest are
    posts; ``prefix`` names an alter that speaks natively."""

    channel: discord.abc.Messageable
    reply_to: discord.Message | None = None
    prefix: str = ""
    via_webhook: bool = False

    def pieces(self, text: str) -> list[str]:
        return split_message(self.prefix + text) if text.strip() else []

    async def send(self, index: int, content: str, *, embed: discord.Embed | None = None) -> discord.Message:
        if index == 0 and self.reply_to is not None:
            return await self.reply_to.reply(content, allowed_mentions=SAFE_MENTIONS)
        return await self.channel.send(content, allowed_mentions=SAFE_MENTIONS)

    async def edit(self, message: discord.Message, content: str, *, embed: discord.Embed | None = None) -> None:
        await message.edit(content=content, allowed_mentions=SAFE_MENTIONS)

    async def delete(self, message: discord.Message) -> None:
        await message.delete()


@dataclass
class WebhookSpeaker:
    """An alter through the channel webhook, under its own name and avatar; its posts are edited and
    deleted through the webhook's own endpoints."""

    hook: discord.Webhook
    channel: discord.abc.Messageable
    persona: PersonaInfo
    via_webhook: bool = True

    @property
    def _thread(self) -> Any:
        return self.channel if isinstance(self.channel, discord.Thread) else discord.utils.MISSING

    def pieces(self, text: str) -> list[str]:
        return split_message(text)

    async def send(self, index: int, content: str, *, embed: discord.Embed | None = None) -> discord.Message:
        return await self.hook.send(
            content,
            username=self.persona.persona_nickname,
            avatar_url=self.persona.webhook_avatar_url or discord.utils.MISSING,
            embed=embed if embed is not None else discord.utils.MISSING,
            allowed_mentions=SAFE_MENTIONS,
            thread=self._thread,
            wait=True,
        )

    async def edit(self, message: discord.Message, content: str, *, embed: discord.Embed | None = None) -> None:
        await self.hook.edit_message(
            message.id,
            content=content,
            embed=embed if embed is not None else discord.utils.MISSING,
            allowed_mentions=SAFE_MENTIONS,
            thread=self._thread,
        )

    async def delete(self, message: discord.Message) -> None:
        await self.hook.delete_message(message.id, thread=self._thread)


async def _alter_webhook(webhooks: WebhookRegistry, channel: discord.abc.Messageable) -> discord.Webhook | None:
    """The channel webhook alters speak through, or None (DMs, missing Manage Webhooks permission):
    the caller then speaks natively with the alter's name in bold, so the message is never lost."""
    try:
        return await webhooks.for_channel(channel)
    except discord.HTTPException as exc:
        logger.warning("alter webhook unavailable (HTTP %s); sending natively", exc.status)
        return None


async def persona_speaker(
    channel: discord.abc.Messageable,
    persona: PersonaInfo,
    *,
    webhooks: WebhookRegistry,
    reply_to: discord.Message | None = None,
) -> Speaker:
    """How ``persona`` speaks in ``channel``: natively for the main persona (replying to ``reply_to``),
    through the channel webhook for alters."""
    if persona.is_alter:
        hook = await _alter_webhook(webhooks, channel)
        if hook is not None:
            return WebhookSpeaker(hook, channel, persona)
        return NativeSpeaker(channel, reply_to, prefix=f"**{persona.persona_nickname}**: ")
    return NativeSpeaker(channel, reply_to)


def reply_notice_embed(
    speaker: Speaker, trigger: discord.Message, reply_notice: ReplyNoticeState | None, locale: str | None
) -> discord.Embed | None:
    """BC9-04: a queued turn carries reply_notice_state; webhooks cannot reply natively, so their
    first piece carries the "Replying to…" notice instead (marked attempted here, sent by the caller)."""
    if reply_notice is None or not speaker.via_webhook:
        return None
    reply_notice.attempted = True
    name = trigger.author.display_name
    embed = discord.Embed(description=localized(REPLY_NOTICES, locale).format(name=name), url=trigger.jump_url)
    embed.set_footer(text=REPLY_CONTEXT_TOKEN)
    return embed


async def post_pieces(speaker: Speaker, pieces: list[str], *, first_embed: discord.Embed | None = None) -> Delivery:
    sent = [await speaker.send(i, piece, embed=first_embed if i == 0 else None) for i, piece in enumerate(pieces)]
    return Delivery([str(message.id) for message in sent], via_webhook=speaker.via_webhook)


async def deliver_reply(
    trigger: discord.Message,
    persona: PersonaInfo,
    text: str,
    *,
    webhooks: WebhookRegistry,
    reply_notice: ReplyNoticeState | None = None,
    locale: str | None = None,
) -> Delivery:
    """Send ``text`` as ``persona`` in answer to ``trigger``: a native reply for the main persona,
    the channel webhook for alters."""
    if not text.strip():
        return Delivery([], via_webhook=False)
    speaker = await persona_speaker(trigger.channel, persona, webhooks=webhooks, reply_to=trigger)
    embed = reply_notice_embed(speaker, trigger, reply_notice, locale)
    delivery = await post_pieces(speaker, speaker.pieces(text), first_embed=embed)
    if embed is not None and reply_notice is not None:
        reply_notice.sent = True
    return delivery


async def send_as_persona(
    channel: discord.abc.Messageable, persona: PersonaInfo, text: str, *, webhooks: WebhookRegistry
) -> Delivery:
    """Post ``text`` as ``persona`` without replying to anything (reminders)."""
    if not text.strip():
        return Delivery([], via_webhook=False)
    speaker = await persona_speaker(channel, persona, webhooks=webhooks)
    return await post_pieces(speaker, speaker.pieces(text))


def notice_embed(notice: Notice) -> discord.Embed:
    """A tool's confirmation as the history reader recognises it (BC6-03: the footer token wins)."""
    embed = discord.Embed(title=notice.title, description=notice.description, color=NOTICE_COLOR)
    embed.set_footer(text=notice.footer)
    return embed


async def send_notices(
    channel: discord.abc.Messageable, persona: PersonaInfo, notices: list[Notice], *, webhooks: WebhookRegistry
) -> Delivery:
    """Post tool confirmations as ``persona``: the bot account for the main persona, the channel
    webhook for alters (natively when the channel has none)."""
    hook = await _alter_webhook(webhooks, channel) if persona.is_alter else None
    thread = channel if isinstance(channel, discord.Thread) else discord.utils.MISSING
    ids: list[str] = []
    message: discord.Message  # a webhook's message or the bot's own
    for notice in notices:
        if hook is not None:
            message = await hook.send(
                "",
                username=persona.persona_nickname,
                avatar_url=persona.webhook_avatar_url or discord.utils.MISSING,
                embed=notice_embed(notice),
                allowed_mentions=SAFE_MENTIONS,
                thread=thread,
                wait=True,
            )
        else:
            message = await channel.send(embed=notice_embed(notice), allowed_mentions=SAFE_MENTIONS)
        ids.append(str(message.id))
    return Delivery(ids, via_webhook=hook is not None)


async def send_error_notice(trigger: discord.Message, locale: str | None) -> None:
    """One short, localised message when generation failed; the prompt record keeps the details."""
    await trigger.reply(localized(ERROR_MESSAGES, locale), allowed_mentions=SAFE_MENTIONS)
