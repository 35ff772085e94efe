"""Periodic Celery tasks of the personas app; the logic lives in reminders_service (retention and
forget-me, which reach prompt records too, are ``community.tasks``).

Schedules are rows of ``django_celery_beat`` (created by migration 0004, editable in the admin).
"""

from __future__ import annotations

from dataclasses import asdict

from celery import shared_task

from personas import reminders_service


@shared_task(name="personas.tasks.fire_due_reminders", ignore_result=True, time_limit=300)
def fire_due_reminders() -> dict[str, int]:
    """One beat tick: put back occurrences no bot confirmed in time, and hand each due reminder to
    the bot's channel-layer group once (the bot confirms what it posts).

    No soft time limit: interrupting a hand-over half-way only delays it until its lease ends;
    overlapping ticks are safe because every row is claimed by exactly one of them.
    """
    report = reminders_service.fire_due_reminders(reminders_service.ChannelLayerDispatcher())
    return asdict(report)
