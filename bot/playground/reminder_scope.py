"""Which reminders are the playground's: those of its channels, which the web process posts
(``bot.playground.reminder_listener``); the bot process takes every other one and leaves these alone
(``bot.discord.exts.reminders``)."""

from __future__ import annotations

from django.db.models import Q

from bot.playground.models import PlaygroundChannel


def playground_reminders() -> Q:
    """The reminders whose channel is a playground channel (a subquery: one statement per claim)."""
    return Q(channel_disc_id__in=PlaygroundChannel.objects.values("disc_id"))


def is_playground_channel(channel_disc_id: str) -> bool:
    return PlaygroundChannel.objects.filter(disc_id=channel_disc_id).exists()
