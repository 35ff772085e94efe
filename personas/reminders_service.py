"""Firing due reminders (data-model.md §2.13): each due reminder is delivered exactly once per occurrence.

A reminder is *due* when ``status = pending`` and ``COALESCE(next_attempt_at, reminder_time) <= now``
(the expression index ``reminder_next_due_idx`` serves that filter). ``fire_due_reminders`` runs on
every beat tick, possibly in several workers at the same time:

1. **Claim.** Inside a transaction, select due ids with ``SELECT … FOR UPDATE SKIP LOCKED`` (PostgreSQL:
   a concurrent tick skips rows another tick holds), then move each row ``pending → fired`` with a
   conditional ``UPDATE … WHERE status = 'pending' AND <still due>``. Only the tick whose UPDATE hit
   the row delivers it. On SQLite ``FOR UPDATE`` is a no-op and the conditional UPDATE alone decides;
   re-checking "still due" keeps a stale id from firing a repeating reminder that another tick has
   already delivered and rescheduled.
2. **Deliver** outside the transaction (no row lock held while talking to Discord) through a
   ``ReminderDispatcher``.
3. **Settle.** Success: a one-shot reminder stays ``fired``; a repeating one moves ``reminder_time``
   forward by its interval until it is in the future and goes back to ``pending``. ``ChannelGone``:
   ``failed`` with ``last_error`` (never retried). Any other delivery error: ``delivery_retry_count``
   grows and ``next_attempt_at`` backs off, up to ``MAX_DELIVERY_ATTEMPTS``, then ``failed``.

A worker that dies between claim and delivery leaves the occurrence ``fired`` and undelivered: the
design prefers a rare missed reminder to a duplicate ping.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Protocol

from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from personas.models import Reminder

logger = logging.getLogger(__name__)

REMINDERS_GROUP = "bot.reminders"
REMINDER_MESSAGE_TYPE = "reminder.fire"
CLAIM_BATCH_SIZE = 50
# Attempts per occurrence, counting the first; after the last failed one the reminder is failed.
MAX_DELIVERY_ATTEMPTS = 4
RETRY_BASE_DELAY = timedelta(minutes=1)
SETTLED_FIELDS = ("status", "reminder_time", "delivery_retry_count", "next_attempt_at", "last_error", "updated_at")
LAST_ERROR_MAX_CHARS = 500


class ReminderKind(StrEnum):
    HUMAN = "human"
    SELF_TASK = "self_task"


@dataclass(frozen=True)
class DueReminder:
    """One occurrence to deliver; plain values so it crosses the channel layer as JSON."""

    reminder_id: int
    kind: ReminderKind
    server_disc_id: str
    channel_disc_id: str
    target_user_id: str
    purpose: str
    persona_id: int | None
    scheduled_at_ms: int
    fired_at_ms: int

    @property
    def lateness_ms(self) -> int:
        return max(0, self.fired_at_ms - self.scheduled_at_ms)

    def as_message(self) -> dict[str, Any]:
        return {"type": REMINDER_MESSAGE_TYPE, **asdict(self), "kind": str(self.kind)}


class ChannelGone(Exception):
    """The destination channel (or server) no longer exists or is unreachable for good."""


class ReminderDispatcher(Protocol):
    def dispatch(self, reminder: DueReminder) -> None:
        """Deliver one occurrence, or raise ``ChannelGone`` / any other exception."""


class ChannelLayerDispatcher:
    """Hands occurrences to the bot process through the Channels layer.

    Contract with the bot (its consumer joins the group ``"bot.reminders"``): every message is
    ``DueReminder.as_message()``, i.e. ``{"type": "reminder.fire", "reminder_id": int, "kind":
    "human" | "self_task", "server_disc_id", "channel_disc_id", "target_user_id", "purpose",
    "persona_id": int | None, "scheduled_at_ms", "fired_at_ms"}``. For ``human`` the bot posts in
    ``channel_disc_id`` mentioning ``target_user_id``; for ``self_task`` it runs a persona turn
    with the reminder injected (BC7-01, lateness = ``fired_at_ms - scheduled_at_ms``). When posting
    fails the bot calls ``report_delivery_failure(reminder_id, scheduled_at_ms=…, channel_gone=…)``
    so the occurrence is retried or marked failed exactly as an in-process failure would be.

    The layer does not queue for absent consumers: an occurrence sent while no bot is listening
    is lost (it stays ``fired``), in line with the at-most-once choice above.
    """

    def __init__(self, group: str = REMINDERS_GROUP) -> None:
        self.group = group

    def dispatch(self, reminder: DueReminder) -> None:
        from asgiref.sync import async_to_sync
        from channels.layers import get_channel_layer

        layer = get_channel_layer()
        if layer is None:
            raise RuntimeError("no channel layer configured")
        async_to_sync(layer.group_send)(self.group, reminder.as_message())


@dataclass(frozen=True)
class FireReport:
    delivered: int = 0
    retried: int = 0
    failed: int = 0

    def __add__(self, other: FireReport) -> FireReport:
        return FireReport(self.delivered + other.delivered, self.retried + other.retried, self.failed + other.failed)


def _due_at(now: datetime) -> Q:
    """``COALESCE(next_attempt_at, reminder_time) <= now`` without an annotation, usable in UPDATE."""
    return Q(next_attempt_at__isnull=True, reminder_time__lte=now) | Q(next_attempt_at__lte=now)


def select_due_ids(now: datetime, limit: int) -> list[int]:
    """Due ids, oldest first; locks them (skipping locked ones) when called inside a transaction on PostgreSQL."""
    return list(
        Reminder.objects.select_for_update(skip_locked=True)
        .annotate(due_at=Coalesce("next_attempt_at", "reminder_time"))
        .filter(status=Reminder.Status.PENDING, due_at__lte=now)
        .order_by("due_at", "reminder_id")
        .values_list("reminder_id", flat=True)[:limit]
    )


def try_claim(reminder_id: int, now: datetime) -> bool:
    """The conditional update: true only for the one caller that moves the row from pending to fired."""
    claimed = Reminder.objects.filter(_due_at(now), reminder_id=reminder_id, status=Reminder.Status.PENDING)
    return claimed.update(status=Reminder.Status.FIRED, updated_at=now) == 1


def claim_due(now: datetime, limit: int = CLAIM_BATCH_SIZE) -> tuple[list[DueReminder], int]:
    """Claim up to ``limit`` due reminders; returns the claimed ones and how many ids were seen."""
    with transaction.atomic():
        ids = select_due_ids(now, limit)
        won = [rid for rid in ids if try_claim(rid, now)]
        rows = Reminder.objects.filter(reminder_id__in=won).select_related("server").order_by("reminder_time")
        now_ms = _ms(now)
        claimed = [
            DueReminder(
                reminder_id=r.reminder_id,
                kind=ReminderKind.SELF_TASK if r.self_reminder else ReminderKind.HUMAN,
                server_disc_id=r.server.server_disc_id,
                channel_disc_id=r.channel_disc_id,
                target_user_id=r.user_discord_id,
                purpose=r.reminder_purpose,
                persona_id=r.persona_id,
                scheduled_at_ms=_ms(r.reminder_time),
                fired_at_ms=now_ms,
            )
            for r in rows
        ]
    return claimed, len(ids)


def fire_due_reminders(
    dispatcher: ReminderDispatcher, *, now: datetime | None = None, batch_size: int = CLAIM_BATCH_SIZE
) -> FireReport:
    """Claim, deliver and settle every reminder due at ``now`` (one beat tick)."""
    now = now or timezone.now()
    report = FireReport()
    for batch in _claimed_batches(now, batch_size):
        for due in batch:
            report += _deliver(dispatcher, due, now)
    if report != FireReport():
        logger.info("reminders: delivered=%d retried=%d failed=%d", report.delivered, report.retried, report.failed)
    return report


def _claimed_batches(now: datetime, batch_size: int) -> Iterator[list[DueReminder]]:
    while True:
        claimed, seen = claim_due(now, batch_size)
        if claimed:
            yield claimed
        if seen < batch_size:
            return


def _deliver(dispatcher: ReminderDispatcher, due: DueReminder, now: datetime) -> FireReport:
    try:
        dispatcher.dispatch(due)
    except ChannelGone as exc:
        mark_failed(due.reminder_id, f"channel gone: {exc}", now=now)
        return FireReport(failed=1)
    except Exception as exc:  # any delivery error is retried with backoff, never crashes the tick
        retried = record_transient_failure(due.reminder_id, due.scheduled_at_ms, type(exc).__name__, now=now)
        return FireReport(retried=1) if retried else FireReport(failed=1)
    record_success(due, now=now)
    return FireReport(delivered=1)


def record_success(due: DueReminder, *, now: datetime) -> None:
    """Settle a delivered occurrence: one-shot stays fired; repeating moves to its next future time."""
    with transaction.atomic():
        row = Reminder.objects.select_for_update().filter(reminder_id=due.reminder_id).first()
        if row is None or row.status != Reminder.Status.FIRED:
            return  # deleted, cancelled or already settled meanwhile
        row.delivery_retry_count = 0
        row.next_attempt_at = None
        row.last_error = ""
        if row.repetition_interval_hours:
            row.reminder_time = next_occurrence(row.reminder_time, row.repetition_interval_hours, now)
            row.status = Reminder.Status.PENDING
        row.save(update_fields=[*SETTLED_FIELDS])


def next_occurrence(current: datetime, interval_hours: int, now: datetime) -> datetime:
    """``current + k·interval`` for the smallest k ≥ 1 that lands after ``now`` (missed ones are skipped)."""
    step = timedelta(hours=interval_hours)
    missed = max(0, (now - current) // step)
    return current + step * (missed + 1)


def retry_delay(attempt: int) -> timedelta:
    """Exponential backoff after the ``attempt``-th failed attempt (1 → 1 min, 2 → 2 min, 3 → 4 min)."""
    return RETRY_BASE_DELAY * (2 ** (attempt - 1))


def record_transient_failure(reminder_id: int, scheduled_at_ms: int, reason: str, *, now: datetime) -> bool:
    """Put the occurrence back for a later attempt; returns False when attempts are exhausted (→ failed)."""
    with transaction.atomic():
        row = Reminder.objects.select_for_update().filter(reminder_id=reminder_id).first()
        if row is None or row.status not in (Reminder.Status.FIRED, Reminder.Status.PENDING):
            return False
        attempts = row.delivery_retry_count + 1
        row.delivery_retry_count = attempts
        row.last_error = reason[:LAST_ERROR_MAX_CHARS]
        if attempts >= MAX_DELIVERY_ATTEMPTS:
            row.status = Reminder.Status.FAILED
            row.next_attempt_at = None
        else:
            # A repeating reminder may already point at its next occurrence (bot-reported failure):
            # retry the occurrence that failed, not the next one.
            row.reminder_time = datetime.fromtimestamp(scheduled_at_ms / 1000, tz=UTC)
            row.status = Reminder.Status.PENDING
            row.next_attempt_at = now + retry_delay(attempts)
        row.save(update_fields=[*SETTLED_FIELDS])
        return row.status == Reminder.Status.PENDING


def mark_failed(reminder_id: int, reason: str, *, now: datetime) -> None:
    Reminder.objects.filter(reminder_id=reminder_id).exclude(status=Reminder.Status.CANCELLED).update(
        status=Reminder.Status.FAILED,
        last_error=reason[:LAST_ERROR_MAX_CHARS],
        next_attempt_at=None,
        updated_at=now,
    )


def report_delivery_failure(
    reminder_id: int, *, scheduled_at_ms: int, channel_gone: bool, reason: str = "", now: datetime | None = None
) -> None:
    """Called by the bot when it could not post an occurrence it received over the channel layer."""
    now = now or timezone.now()
    if channel_gone:
        mark_failed(reminder_id, f"channel gone: {reason}" if reason else "channel gone", now=now)
        return
    record_transient_failure(reminder_id, scheduled_at_ms, reason or "delivery failed", now=now)


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


__all__ = [
    "MAX_DELIVERY_ATTEMPTS",
    "REMINDERS_GROUP",
    "ChannelGone",
    "ChannelLayerDispatcher",
    "DueReminder",
    "FireReport",
    "ReminderDispatcher",
    "ReminderKind",
    "fire_due_reminders",
    "report_delivery_failure",
]
