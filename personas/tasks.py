"""Periodic Celery tasks of the personas app; the logic lives in reminder_firing (retention and
forget-me, which reach prompt records too, are ``community.tasks``).

Schedules are rows of ``django_celery_beat`` (created by migration 0004, editable in the admin).
"""

from __future__ import annotations

from dataclasses import asdict

from celery import shared_task

from personas import reminder_firing


@shared_task(name="personas.tasks.fire_due_reminders", ignore_result=True, time_limit=300)
def fire_due_reminders() -> dict[str, int]:
    """One beat tick: put back occurrences no bot confirmed in time, and hand each due reminder to
    the bot's channel-layer group once (the bot confirms what it posts).

    No soft time limit: interrupting a hand-over half-way only delays it until its lease ends;
    overlapping ticks are safe because every row is claimed by exactly one of them.
    """
    report = reminder_firing.fire_due_reminders(reminder_firing.ChannelLayerDispatcher())
    return asdict(report)
