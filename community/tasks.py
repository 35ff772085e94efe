"""Celery tasks of the use cases that reach prompt records: retention (daily, from beat) and
forget-me off the request path.

Their wire names are those they had in ``personas.tasks``: beat's schedule rows (migration
personas.0004) and messages already queued name them so.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from celery import shared_task

from community import forget, retention
from personas import actions


@shared_task(name="personas.tasks.prune_prompt_records", soft_time_limit=1800, time_limit=1900)
def prune_prompt_records() -> dict[str, Any]:
    """Daily: delete prompt records older than each server's retention, and audit-trail rows older
    than ``AUDIT_HISTORY_DAYS``."""
    return {**asdict(retention.prune_prompt_records()), "history_rows": retention.prune_history()}


@shared_task(name="personas.tasks.forget_user", acks_late=True, time_limit=600)
def forget_user(user_disc_id: str) -> dict[str, Any]:
    """Forget-me off the request path; idempotent (a second run finds nothing left to delete)."""
    return forget.forget_user(user_disc_id, actor=actions.Actor.system("forget-me task")).as_dict()
