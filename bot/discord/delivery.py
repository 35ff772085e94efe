"""Sending a persona's reply to Discord.

``split_message`` is pure: it cuts a reply into Discord-sized messages without breaking words or
code blocks (an open fence is closed at the end of a piece and reopened, with its language, at the
start of the next). The main persona replies natively to the trigger message; alters speak through
the platform's channel webhook under their own name and avatar. discord.py applies Discord's rate
limits to both paths.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import discord

from bot.conversation.texts import ERROR_MESSAGES, localized
from bot.conversation.tools.notices import NOTICE_COLOR, Notice
from chatcontext.types import PersonaInfo, ReplyNoticeState

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


def _reply_notice_embed(trigger: discord.Message, locale: str | None) -> discord.Embed:
    name = trigger.author.display_name
    embed = discord.Embed(description=localized(REPLY_NOTICES, locale).format(name=name), url=trigger.jump_url)
    embed.set_footer(text=REPLY_CONTEXT_TOKEN)
    return embed


async def _send_native(trigger: discord.Message, pieces: list[str]) -> Delivery:
    sent = [await trigger.reply(pieces[0], allowed_mentions=SAFE_MENTIONS)]
    for piece in pieces[1:]:
        sent.append(await trigger.channel.send(piece, allowed_mentions=SAFE_MENTIONS))
    return Delivery([str(m.id) for m in sent], via_webhook=False)


async def _send_webhook(
    hook: discord.Webhook,
    channel: discord.abc.Messageable,
    persona: PersonaInfo,
    pieces: list[str],
    *,
    first_embed: discord.Embed | None = None,
) -> Delivery:
    thread = channel if isinstance(channel, discord.Thread) else discord.utils.MISSING
    ids: list[str] = []
    for index, piece in enumerate(pieces):
        embed = first_embed if index == 0 and first_embed is not None else discord.utils.MISSING
        message = await hook.send(
            piece,
            username=persona.persona_nickname,
            avatar_url=persona.webhook_avatar_url or discord.utils.MISSING,
            embed=embed,
            allowed_mentions=SAFE_MENTIONS,
            thread=thread,
            wait=True,
        )
        ids.append(str(message.id))
    return Delivery(ids, via_webhook=True)


async def _alter_webhook(webhooks: WebhookRegistry, channel: discord.abc.Messageable) -> discord.Webhook | None:
    """The channel webhook alters speak through, or None (DMs, missing Manage Webhooks permission):
    the caller then speaks natively with the alter's name in bold, so the message is never lost."""
    try:
        return await webhooks.for_channel(channel)
    except discord.HTTPException as exc:
        logger.warning("alter webhook unavailable (HTTP %s); sending natively", exc.status)
        return None


def _named(persona: PersonaInfo, text: str) -> list[str]:
    return split_message(f"**{persona.persona_nickname}**: {text}")


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
    pieces = split_message(text)
    if not pieces:
        return Delivery([], via_webhook=False)
    if persona.is_alter:
        hook = await _alter_webhook(webhooks, trigger.channel)
        if hook is not None:
            # BC9-04: a queued turn carries reply_notice_state; webhooks cannot reply natively, so
            # the first piece carries the "Replying to…" notice instead.
            embed = _reply_notice_embed(trigger, locale) if reply_notice is not None else None
            if reply_notice is not None:
                reply_notice.attempted = True
            delivery = await _send_webhook(hook, trigger.channel, persona, pieces, first_embed=embed)
            if reply_notice is not None:
                reply_notice.sent = True
            return delivery
        pieces = _named(persona, text)
    return await _send_native(trigger, pieces)


async def send_as_persona(
    channel: discord.abc.Messageable, persona: PersonaInfo, text: str, *, webhooks: WebhookRegistry
) -> Delivery:
    """Post ``text`` as ``persona`` without replying to anything (reminders)."""
    pieces = split_message(text)
    if persona.is_alter and pieces:
        hook = await _alter_webhook(webhooks, channel)
        if hook is not None:
            return await _send_webhook(hook, channel, persona, pieces)
        pieces = _named(persona, text)
    sent = [await channel.send(piece, allowed_mentions=SAFE_MENTIONS) for piece in pieces]
    return Delivery([str(m.id) for m in sent], via_webhook=False)


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
