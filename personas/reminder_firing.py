"""Firing due reminders (data-model.md §2.13): each occurrence is posted once, and is never lost.

An occurrence is *fired* only when the process that posted it says so. Its row moves through
``pending → claimed → delivering → fired`` (a repeating reminder goes back to ``pending`` at its next
occurrence instead of ``fired``); ``next_attempt_at`` holds, while it is claimed or delivering, the
end of its lease, and while it is pending, when a retry is due.

1. **Claim** (``claim_due``, every beat tick, possibly in several workers at once). A reminder is
   *due* when ``status = pending`` and ``COALESCE(next_attempt_at, reminder_time) <= now`` (the
   expression index ``reminder_next_due_idx`` serves it). Inside a transaction, due ids are selected
   with ``SELECT … FOR UPDATE SKIP LOCKED`` (PostgreSQL: a concurrent tick skips rows another tick
   holds), then each row moves ``pending → claimed`` with a conditional ``UPDATE … WHERE status =
   'pending' AND <still due>``; only the tick whose UPDATE hit the row hands it on. On SQLite ``FOR
   UPDATE`` is a no-op and the conditional UPDATE alone decides; re-checking "still due" keeps a stale
   id from claiming a repeating reminder another tick has already delivered and rescheduled. The
   claim's lease is ``CLAIM_LEASE``.
2. **Hand over** outside the transaction (no row lock held while talking to Discord) through a
   ``ReminderDispatcher``: the Channels layer to the bot processes (``ChannelLayerDispatcher``). The
   dispatcher does not post; raising means the hand-over itself failed (retried at once, step 5).
3. **Accept** (``accept_delivery``, by the process that will post it, once it knows the channel is
   its own): ``claimed → delivering``, lease ``DELIVERY_LEASE`` (long enough to wait in the channel's
   turn queue and generate a reply). Refused when the occurrence is no longer claimed — cancelled,
   settled, or taken by another copy of the message — and then the process does not post it.
4. **Acknowledge** (``acknowledge_delivery``, by the same process, after Discord took the post): a
   one-shot reminder is ``fired``; a repeating one moves ``reminder_time`` forward by its interval
   until it is in the future and is ``pending`` again. A confirmation that arrives after the lease
   ran out still settles the occurrence, so it is not posted a second time.
5. **Retry or fail.** A lease that runs out (``expire_leases``, at the start of every tick: nobody
   took the occurrence — no bot running, a restart, a deploy —, or the process that took it stopped
   before confirming), a failure the poster reports (``report_delivery_failure``) and a failed
   hand-over all count as one failed attempt: ``delivery_retry_count`` grows, ``last_error`` says
   why, and the occurrence is ``pending`` again after a backoff (``retry_delay``), up to
   ``MAX_DELIVERY_ATTEMPTS``; then it is ``failed``, which the admin shows with its reason. A
   channel that is gone fails it at once (never retried).

So delivery is at least once, and more than once only when a process posted and stopped before
confirming (the next attempt posts it again, once), or took longer than ``DELIVERY_LEASE``. Whoever
fires occurrences — the Celery beat task with Redis, an in-process scheduler of each process
without it (``bot.conversation.reminder_scheduler``) — calls ``fire_due_reminders`` with its
dispatcher; whoever posts calls ``accept_delivery``,
``acknowledge_delivery`` and ``report_delivery_failure``. Nothing else changes between the two.
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

from personas.metrics import REMINDER_LAG
from personas.models import Reminder

logger = logging.getLogger(__name__)

REMINDERS_GROUP = "bot.reminders"
REMINDER_MESSAGE_TYPE = "reminder.fire"
CLAIM_BATCH_SIZE = 50
# Attempts per occurrence, counting the first; after the last failed one the reminder is failed.
MAX_DELIVERY_ATTEMPTS = 4
RETRY_BASE_DELAY = timedelta(minutes=1)
# How long a handed-over occurrence waits for a process to take it: the Channels layer delivers in
# well under a second to a bot that is listening (beat ticks every 30 s).
CLAIM_LEASE = timedelta(minutes=1)
# How long a process that took an occurrence has to confirm it posted it: a wait in the channel's
# turn queue (up to bot.conversation.planner.DEFAULT_MAX_QUEUE turns) and one generation (LLM_TIMEOUT_SECONDS).
DELIVERY_LEASE = timedelta(minutes=10)
IN_FLIGHT = (Reminder.Status.CLAIMED, Reminder.Status.DELIVERING)
SETTLED_FIELDS = ("status", "reminder_time", "delivery_retry_count", "next_attempt_at", "last_error", "updated_at")
LAST_ERROR_MAX_CHARS = 500
_TWO_MS = timedelta(milliseconds=2)
NOT_TAKEN = "no bot process took it within {lease} (is the bot running?)"
NOT_CONFIRMED = "the bot took it but did not confirm posting it within {lease} (it may have stopped)"


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
        """Hand one claimed occurrence to whoever posts it (who then accepts and acknowledges it),
        or raise ``ChannelGone`` / any other exception when the hand-over failed."""


class ChannelLayerDispatcher:
    """Hands occurrences to the bot processes through the Channels layer.

    Contract with the bot (its consumer joins the group ``"bot.reminders"``): every message is
    ``DueReminder.as_message()``, i.e. ``{"type": "reminder.fire", "reminder_id": int, "kind":
    "human" | "self_task", "server_disc_id", "channel_disc_id", "target_user_id", "purpose",
    "persona_id": int | None, "scheduled_at_ms", "fired_at_ms"}``. The process serving the channel
    calls ``accept_delivery(reminder_id, scheduled_at_ms)`` and posts only when it returns True: for
    ``human`` in ``channel_disc_id`` mentioning ``target_user_id``; for ``self_task`` a persona turn
    with the reminder injected (BC7-01, lateness = ``fired_at_ms - scheduled_at_ms``). Once Discord
    took the post it calls ``acknowledge_delivery(reminder_id, scheduled_at_ms)``; when posting
    fails, ``report_delivery_failure(reminder_id, scheduled_at_ms=…, channel_gone=…)``.

    The layer does not queue for absent consumers: an occurrence sent while no bot is listening is
    dropped by the layer, and comes back when its claim's lease runs out.
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
    """One tick: occurrences handed over, and failed attempts put back for later or given up."""

    dispatched: int = 0
    retried: int = 0
    failed: int = 0

    def __add__(self, other: FireReport) -> FireReport:
        return FireReport(self.dispatched + other.dispatched, self.retried + other.retried, self.failed + other.failed)

    @classmethod
    def of_attempt(cls, status: str | None) -> FireReport:
        """The count of one failed attempt that left the row with ``status`` (None: not applied)."""
        if status == Reminder.Status.PENDING:
            return cls(retried=1)
        return cls(failed=1) if status == Reminder.Status.FAILED else cls()


def _due_at(now: datetime) -> Q:
    """``COALESCE(next_attempt_at, reminder_time) <= now`` without an annotation, usable in UPDATE."""
    return Q(next_attempt_at__isnull=True, reminder_time__lte=now) | Q(next_attempt_at__lte=now)


def select_due_ids(now: datetime, limit: int, scope: Q | None = None) -> list[int]:
    """Due ids (of ``scope`` when given), oldest first; locks them (skipping locked ones) when called
    inside a transaction on PostgreSQL."""
    return list(
        Reminder.objects.select_for_update(skip_locked=True)
        .annotate(due_at=Coalesce("next_attempt_at", "reminder_time"))
        .filter(scope or Q(), status=Reminder.Status.PENDING, due_at__lte=now)
        .order_by("due_at", "reminder_id")
        .values_list("reminder_id", flat=True)[:limit]
    )


def try_claim(reminder_id: int, now: datetime) -> bool:
    """The conditional update: true only for the one caller that moves the row from pending to claimed."""
    claimed = Reminder.objects.filter(_due_at(now), reminder_id=reminder_id, status=Reminder.Status.PENDING)
    return claimed.update(status=Reminder.Status.CLAIMED, next_attempt_at=now + CLAIM_LEASE, updated_at=now) == 1


def claim_due(now: datetime, limit: int = CLAIM_BATCH_SIZE, scope: Q | None = None) -> tuple[list[DueReminder], int]:
    """Claim up to ``limit`` due reminders (of ``scope``); returns the claimed ones and how many ids were seen."""
    with transaction.atomic():
        ids = select_due_ids(now, limit, scope)
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
    dispatcher: ReminderDispatcher,
    *,
    now: datetime | None = None,
    batch_size: int = CLAIM_BATCH_SIZE,
    scope: Q | None = None,
) -> FireReport:
    """One beat tick: put back the occurrences whose lease ran out, then claim and hand over every
    reminder due at ``now``; only those matching ``scope`` when given (an in-process scheduler
    claims only the channels its own process posts in)."""
    now = now or timezone.now()
    report = expire_leases(now, batch_size=batch_size)
    for batch in _claimed_batches(now, batch_size, scope):
        for due in batch:
            report += _hand_over(dispatcher, due, now)
    if report != FireReport():
        logger.info("reminders: dispatched=%d retried=%d failed=%d", report.dispatched, report.retried, report.failed)
    return report


def _claimed_batches(now: datetime, batch_size: int, scope: Q | None) -> Iterator[list[DueReminder]]:
    while True:
        claimed, seen = claim_due(now, batch_size, scope)
        if claimed:
            yield claimed
        if seen < batch_size:
            return


def _hand_over(dispatcher: ReminderDispatcher, due: DueReminder, now: datetime) -> FireReport:
    try:
        dispatcher.dispatch(due)
    except ChannelGone as exc:
        return FireReport.of_attempt(mark_failed(due.reminder_id, f"channel gone: {exc}", now=now))
    except Exception as exc:  # any hand-over error is retried with backoff, never crashes the tick
        failed = record_transient_failure(due.reminder_id, due.scheduled_at_ms, type(exc).__name__, now=now)
        return FireReport.of_attempt(failed)
    REMINDER_LAG.observe(due.lateness_ms / 1000)
    return FireReport(dispatched=1)


def expire_leases(now: datetime, *, batch_size: int = CLAIM_BATCH_SIZE) -> FireReport:
    """Occurrences claimed or taken whose lease ran out before a confirmation: one failed attempt each."""
    report = FireReport()
    while True:
        with transaction.atomic():
            rows = list(
                Reminder.objects.select_for_update(skip_locked=True)
                .filter(status__in=IN_FLIGHT, next_attempt_at__lte=now)
                .order_by("next_attempt_at", "reminder_id")[:batch_size]
            )
            for row in rows:
                if row.status == Reminder.Status.CLAIMED:
                    reason = NOT_TAKEN.format(lease=_minutes(CLAIM_LEASE))
                else:
                    reason = NOT_CONFIRMED.format(lease=_minutes(DELIVERY_LEASE))
                report += FireReport.of_attempt(_retry_or_fail(row, reason, now))
        if len(rows) < batch_size:
            return report


def accept_delivery(reminder_id: int, scheduled_at_ms: int, *, now: datetime | None = None) -> bool:
    """The posting process takes a claimed occurrence (step 3); False: do not post it."""
    now = now or timezone.now()
    claimed = Reminder.Status.CLAIMED
    taken = Reminder.objects.filter(_occurrence(scheduled_at_ms), reminder_id=reminder_id, status=claimed)
    return taken.update(status=Reminder.Status.DELIVERING, next_attempt_at=now + DELIVERY_LEASE, updated_at=now) == 1


def acknowledge_delivery(reminder_id: int, scheduled_at_ms: int, *, now: datetime | None = None) -> bool:
    """Settle an occurrence its poster confirmed (step 4): one-shot → fired; repeating → its next
    future time. Also after its lease ran out (it is pending again for the same occurrence); a
    cancelled, failed or already settled occurrence is left as it is (False)."""
    now = now or timezone.now()
    with transaction.atomic():
        row = _locked_occurrence(reminder_id, scheduled_at_ms, (*IN_FLIGHT, Reminder.Status.PENDING))
        if row is None:
            return False
        row.delivery_retry_count = 0
        row.next_attempt_at = None
        row.last_error = ""
        if row.repetition_interval_hours:
            row.reminder_time = next_occurrence(row.reminder_time, row.repetition_interval_hours, now)
            row.status = Reminder.Status.PENDING
        else:
            row.status = Reminder.Status.FIRED
        row.save(update_fields=[*SETTLED_FIELDS])
        return True


def next_occurrence(current: datetime, interval_hours: int, now: datetime) -> datetime:
    """``current + k·interval`` for the smallest k ≥ 1 that lands after ``now`` (missed ones are skipped)."""
    step = timedelta(hours=interval_hours)
    missed = max(0, (now - current) // step)
    return current + step * (missed + 1)


def retry_delay(attempt: int) -> timedelta:
    """Exponential backoff after the ``attempt``-th failed attempt (1 → 1 min, 2 → 2 min, 3 → 4 min)."""
    return RETRY_BASE_DELAY * (2 ** (attempt - 1))


def record_transient_failure(reminder_id: int, scheduled_at_ms: int, reason: str, *, now: datetime) -> str | None:
    """One failed attempt of an occurrence in flight: back to pending with backoff, or failed after
    the last attempt. Returns the new status; None when the occurrence is not in flight any more
    (settled, cancelled, or already put back when its lease ran out)."""
    with transaction.atomic():
        row = _locked_occurrence(reminder_id, scheduled_at_ms, IN_FLIGHT)
        return _retry_or_fail(row, reason, now) if row is not None else None


def _retry_or_fail(row: Reminder, reason: str, now: datetime) -> str:
    attempts = row.delivery_retry_count + 1
    row.delivery_retry_count = attempts
    row.last_error = reason[:LAST_ERROR_MAX_CHARS]
    if attempts >= MAX_DELIVERY_ATTEMPTS:
        row.status = Reminder.Status.FAILED
        row.next_attempt_at = None
    else:
        row.status = Reminder.Status.PENDING
        row.next_attempt_at = now + retry_delay(attempts)
    row.save(update_fields=[*SETTLED_FIELDS])
    return row.status


def _locked_occurrence(reminder_id: int, scheduled_at_ms: int, statuses: tuple[str, ...]) -> Reminder | None:
    """The row, locked, when it is in one of ``statuses`` for this very occurrence."""
    return (
        Reminder.objects.select_for_update()
        .filter(_occurrence(scheduled_at_ms), reminder_id=reminder_id, status__in=statuses)
        .first()
    )


def _occurrence(scheduled_at_ms: int) -> Q:
    """The row still points at this occurrence. ``scheduled_at_ms`` lost the time's microseconds
    (and a float millisecond may be one short); occurrences of one reminder are an hour apart at
    least, so two milliseconds either side name exactly one."""
    at = datetime.fromtimestamp(scheduled_at_ms / 1000, tz=UTC)
    return Q(reminder_time__gt=at - _TWO_MS, reminder_time__lt=at + _TWO_MS)


def mark_failed(reminder_id: int, reason: str, *, now: datetime) -> str | None:
    """Failed at once (the channel is gone), unless it was cancelled or fired meanwhile."""
    open_rows = Reminder.objects.filter(reminder_id=reminder_id).exclude(
        status__in=[Reminder.Status.CANCELLED, Reminder.Status.FIRED]
    )
    updated = open_rows.update(
        status=Reminder.Status.FAILED,
        last_error=reason[:LAST_ERROR_MAX_CHARS],
        next_attempt_at=None,
        updated_at=now,
    )
    return Reminder.Status.FAILED if updated else None


def report_delivery_failure(
    reminder_id: int, *, scheduled_at_ms: int, channel_gone: bool, reason: str = "", now: datetime | None = None
) -> None:
    """Called by the posting process when it could not post an occurrence it received."""
    now = now or timezone.now()
    if channel_gone:
        mark_failed(reminder_id, f"channel gone: {reason}" if reason else "channel gone", now=now)
        return
    record_transient_failure(reminder_id, scheduled_at_ms, reason or "delivery failed", now=now)


def _ms(value: datetime) -> int:
    return int(value.timestamp() * 1000)


def _minutes(lease: timedelta) -> str:
    minutes = int(lease.total_seconds() // 60)
    return f"{minutes} minute{'s' if minutes != 1 else ''}"


__all__ = [
    "CLAIM_LEASE",
    "DELIVERY_LEASE",
    "MAX_DELIVERY_ATTEMPTS",
    "REMINDERS_GROUP",
    "ChannelGone",
    "ChannelLayerDispatcher",
    "DueReminder",
    "FireReport",
    "ReminderDispatcher",
    "ReminderKind",
    "accept_delivery",
    "acknowledge_delivery",
    "fire_due_reminders",
    "report_delivery_failure",
]
