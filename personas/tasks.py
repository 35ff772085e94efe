"""Periodic Celery tasks of the personas app; the logic lives in reminders_service and retention.

Schedules are rows of ``django_celery_beat`` (created by migration 0004, editable in the admin).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from personas import actions, reminders_service, retention


@shared_task(name="personas.tasks.fire_due_reminders", ignore_result=True, time_limit=300)
def fire_due_reminders() -> dict[str, int]:
    """One beat tick: put back occurrences no bot confirmed in time, and hand each due reminder to
    the bot's channel-layer group once (the bot confirms what it posts).

    No soft time limit: interrupting a hand-over half-way only delays it until its lease ends;
    overlapping ticks are safe because every row is claimed by exactly one of them.
    """
    report = reminders_service.fire_due_reminders(reminders_service.ChannelLayerDispatcher())
    return asdict(report)


@shared_task(name="personas.tasks.prune_prompt_records", soft_time_limit=1800, time_limit=1900)
def prune_prompt_records() -> dict[str, Any]:
    """Daily: delete prompt records older than each server's retention, and audit-trail rows older
    than ``AUDIT_HISTORY_DAYS``."""
    return {**asdict(retention.prune_prompt_records()), "history_rows": retention.prune_history()}


@shared_task(name="personas.tasks.forget_user", acks_late=True, time_limit=600)
def forget_user(user_disc_id: str) -> dict[str, Any]:
    """Forget-me off the request path; idempotent (a second run finds nothing left to delete)."""
    return actions.forget_user(user_disc_id, actor=actions.Actor.system("forget-me task")).as_dict()
