"""The server's custom emojis as Discord lists them (issue 30 item 8)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db import transaction

from personas.actions.actor import Actor, recording
from personas.models import Server, ServerEmoji


@dataclass(frozen=True)
class GuildEmoji:
    """One custom emoji of a guild, as the gateway gives it."""

    disc_id: str
    name: str
    animated: bool


def sync_server_emojis(server: Server, emojis: Sequence[GuildEmoji], *, actor: Actor) -> int:
    """Make the server's emoji rows the guild's list: new emojis are added, renamed or re-animated
    ones updated, deleted ones removed. What moderators wrote about an emoji (description, emotion)
    stays with its id. Returns how many rows changed."""
    wanted = {e.disc_id: e for e in emojis}
    changed = 0
    with recording(actor), transaction.atomic(durable=True):
        existing = {row.emoji_disc_id: row for row in ServerEmoji.objects.select_for_update().filter(server=server)}
        gone = [row.pk for disc_id, row in existing.items() if disc_id not in wanted]
        if gone:
            changed += ServerEmoji.objects.filter(pk__in=gone).delete()[0]
        for disc_id, emoji in wanted.items():
            row = existing.get(disc_id)
            if row is None:
                ServerEmoji.objects.create(
                    server=server, emoji_disc_id=disc_id, emoji_name=emoji.name[:64], is_animated=emoji.animated
                )
                changed += 1
            elif (row.emoji_name, row.is_animated) != (emoji.name[:64], emoji.animated):
                row.emoji_name, row.is_animated = emoji.name[:64], emoji.animated
                row.save(update_fields=["emoji_name", "is_animated"])
                changed += 1
    return changed
