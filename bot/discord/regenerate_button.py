"""The Regenerate button on a persona's reply (issue 30 item 4).

Its custom id names the reply's prompt record (``tomori:regenerate:{record id}``), so the button
works after a restart of the process that drew it: discord.py matches it as a dynamic item and the
click goes to ``bot.discord.exts.regenerate``, which decides whether the reply may still be replaced.
"""

from __future__ import annotations

import re
from typing import Any

import discord

from bot.discord.delivery import Delivery, WebhookRegistry

LABEL = "Regenerate"


class RegenerateButton(
    discord.ui.DynamicItem[discord.ui.Button[Any]], template=r"tomori:regenerate:(?P<record>[0-9]+)"
):
    def __init__(self, record_id: int) -> None:
        super().__init__(
            discord.ui.Button(
                label=LABEL, emoji="🔄", style=discord.ButtonStyle.secondary, custom_id=f"tomori:regenerate:{record_id}"
            )
        )
        self.record_id = record_id

    @classmethod
    async def from_custom_id(
        cls, interaction: discord.Interaction, item: discord.ui.Item[Any], match: re.Match[str], /
    ) -> RegenerateButton:
        return cls(int(match["record"]))

    async def callback(self, interaction: discord.Interaction) -> None:
        cog = interaction.client.get_cog("RegenerateCog")  # type: ignore[attr-defined]
        await cog.regenerate(interaction, self.record_id)


def regenerate_view(record_id: int) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(RegenerateButton(record_id))
    return view


async def show_regenerate(
    channel: discord.abc.Messageable, webhooks: WebhookRegistry, delivery: Delivery, record_id: int
) -> None:
    """Put the button on the last message of a delivered reply (the bot's own, or the channel
    webhook's for an alter, which only that webhook may edit)."""
    last = int(delivery.message_ids[-1])
    view = regenerate_view(record_id)
    if delivery.via_webhook:
        hook = await webhooks.find(channel)
        if hook is not None:
            thread = channel if isinstance(channel, discord.Thread) else discord.utils.MISSING
            await hook.edit_message(last, view=view, thread=thread)
        return
    message = await channel.fetch_message(last)
    await message.edit(view=view)
