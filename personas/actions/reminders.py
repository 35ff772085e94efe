"""Moderators' and members' changes to reminders; delivery itself is ``personas.reminder_firing``."""

from __future__ import annotations

from django.db import transaction

from personas.actions.actor import Actor, recording
from personas.actions.errors import ReminderNotCancellable, ReminderNotRetryable
from personas.models import (
    Reminder,
)


def cancel_reminder(reminder: Reminder, *, actor: Actor) -> Reminder:
    """Cancel a pending, failed or in-flight reminder or self-task; fired ones are history.

    A claimed occurrence is then not posted (the bot's ``accept_delivery`` refuses it); one the bot
    already took may still be posted, and its confirmation leaves the row cancelled.
    """
    with recording(actor), transaction.atomic():
        # Locked so a dispatcher that is firing this very reminder cannot overwrite the cancellation.
        current = Reminder.objects.select_for_update().get(pk=reminder.pk)
        if current.status == Reminder.Status.CANCELLED:
            return current
        if current.status not in Reminder.OPEN_STATUSES:
            raise ReminderNotCancellable(f"Reminder {current.pk} has status {current.status}; it cannot be cancelled.")
        current.status = Reminder.Status.CANCELLED
        current.next_attempt_at = None
        current.save(update_fields=["status", "next_attempt_at", "updated_at"])
    return current


def retry_reminder(reminder: Reminder, *, actor: Actor) -> Reminder:
    """Put a failed reminder back to pending with a fresh count of attempts; it is due at once when
    its time has passed (a missed occurrence is delivered late, not skipped)."""
    with recording(actor), transaction.atomic():
        current = Reminder.objects.select_for_update().get(pk=reminder.pk)
        if current.status != Reminder.Status.FAILED:
            raise ReminderNotRetryable(f"Reminder {current.pk} has status {current.status}; only failed ones retry.")
        current.status = Reminder.Status.PENDING
        current.delivery_retry_count = 0
        current.next_attempt_at = None
        current.last_error = ""
        current.save(update_fields=["status", "delivery_retry_count", "next_attempt_at", "last_error", "updated_at"])
    return current
