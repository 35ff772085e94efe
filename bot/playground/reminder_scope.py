"""Which reminders are the playground's: those of its channels, which the web process posts
(``bot.playground.reminders``). Registered with the other surfaces' reminder schedulers at start-up
(``bot.apps``), so the bot process leaves them alone without importing the playground."""

from __future__ import annotations

from django.db.models import Q

from bot.conversation.reminder_scheduler import ReminderSurface
from bot.playground.models import PlaygroundChannel


def playground_reminders() -> Q:
    """The reminders whose channel is a playground channel (a subquery: one statement per claim)."""
    return Q(channel_disc_id__in=PlaygroundChannel.objects.values("disc_id"))


def is_playground_channel(channel_disc_id: str) -> bool:
    return PlaygroundChannel.objects.filter(disc_id=channel_disc_id).exists()


PLAYGROUND = ReminderSurface("playground", playground_reminders, is_playground_channel)
