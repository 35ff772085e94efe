"""Reminder firing (data-model.md §2.13): exactly once, rescheduling, failure handling, the bot contract."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import Counter
from datetime import datetime, timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection, transaction

from personas import actions
from personas.models import Reminder
from personas.reminder_firing import (
    CLAIM_LEASE,
    DELIVERY_LEASE,
    MAX_DELIVERY_ATTEMPTS,
    REMINDERS_GROUP,
    ChannelLayerDispatcher,
    FireReport,
    ReminderKind,
    accept_delivery,
    acknowledge_delivery,
    claim_due,
    fire_due_reminders,
    report_delivery_failure,
    retry_delay,
    select_due_ids,
    try_claim,
)
from tests.actors import TEST_ACTOR
from tests.botplatform.celery.conftest import BOT_USER_ID, NOW, RecordingDispatcher, channel_gone
from tests.services import receive_from_sync


def test_due_reminders_fire_once_and_future_or_backed_off_ones_wait(make_reminder, persona):
    human = make_reminder(reminder_time=NOW - timedelta(minutes=5))
    task = make_reminder(
        reminder_time=NOW, self_reminder=True, user_discord_id=BOT_USER_ID, persona=persona, reminder_purpose="post"
    )
    future = make_reminder(reminder_time=NOW + timedelta(seconds=1))
    # COALESCE(next_attempt_at, reminder_time): a backed-off retry waits although its time has passed.
    backed_off = make_reminder(reminder_time=NOW - timedelta(hours=1), next_attempt_at=NOW + timedelta(minutes=1))
    cancelled = make_reminder(reminder_time=NOW - timedelta(hours=1), status=Reminder.Status.CANCELLED)
    dispatcher = RecordingDispatcher()

    report = fire_due_reminders(dispatcher, now=NOW)
    again = fire_due_reminders(dispatcher, now=NOW)

    assert sorted(dispatcher.ids) == sorted([human.pk, task.pk])
    assert (report.dispatched, again.dispatched) == (2, 0)
    by_id = {d.reminder_id: d for d in dispatcher.delivered}
    assert by_id[human.pk].kind is ReminderKind.HUMAN
    assert by_id[human.pk].target_user_id == "111111111111111111"
    assert by_id[human.pk].lateness_ms == 5 * 60_000
    assert by_id[task.pk].kind is ReminderKind.SELF_TASK
    assert by_id[task.pk].persona_id == persona.pk
    statuses = dict(Reminder.objects.values_list("pk", "status"))
    assert statuses[human.pk] == statuses[task.pk] == Reminder.Status.FIRED
    assert statuses[future.pk] == statuses[backed_off.pk] == Reminder.Status.PENDING
    assert statuses[cancelled.pk] == Reminder.Status.CANCELLED


def test_repeating_reminder_is_rescheduled_to_its_next_future_occurrence(make_reminder):
    daily = make_reminder(reminder_time=NOW - timedelta(hours=50), repetition_interval_hours=24)
    dispatcher = RecordingDispatcher()

    fire_due_reminders(dispatcher, now=NOW)
    daily.refresh_from_db()

    # Missed occurrences are skipped, not replayed: one delivery, next time = first one after now.
    assert dispatcher.ids == [daily.pk]
    assert daily.status == Reminder.Status.PENDING
    assert daily.reminder_time == NOW + timedelta(hours=22)
    assert fire_due_reminders(dispatcher, now=NOW + timedelta(hours=21)).dispatched == 0
    assert fire_due_reminders(dispatcher, now=NOW + timedelta(hours=22)).dispatched == 1
    daily.refresh_from_db()
    assert daily.reminder_time == NOW + timedelta(hours=46)


def test_channel_gone_marks_the_reminder_failed_and_it_is_never_retried(make_reminder):
    daily = make_reminder(reminder_time=NOW, repetition_interval_hours=24)

    report = fire_due_reminders(RecordingDispatcher(fail_with=channel_gone), now=NOW)
    daily.refresh_from_db()

    assert report.failed == 1
    assert daily.status == Reminder.Status.FAILED
    assert daily.last_error.startswith("channel gone")
    later = RecordingDispatcher()
    assert fire_due_reminders(later, now=NOW + timedelta(days=30)).dispatched == 0
    assert later.ids == []


def test_other_delivery_errors_back_off_then_fail_after_the_maximum(make_reminder):
    reminder = make_reminder(reminder_time=NOW)
    broken = RecordingDispatcher(fail_with=lambda: ConnectionError("discord unavailable"))
    at = NOW
    for attempt in range(1, MAX_DELIVERY_ATTEMPTS):
        assert fire_due_reminders(broken, now=at).retried == 1
        reminder.refresh_from_db()
        assert (reminder.status, reminder.delivery_retry_count) == (Reminder.Status.PENDING, attempt)
        assert reminder.next_attempt_at == at + retry_delay(attempt)
        assert reminder.last_error == "ConnectionError"
        # Not due again before the backoff has passed.
        assert fire_due_reminders(broken, now=reminder.next_attempt_at - timedelta(seconds=1)) == FireReport()
        at = reminder.next_attempt_at

    assert fire_due_reminders(broken, now=at).failed == 1
    reminder.refresh_from_db()
    assert reminder.status == Reminder.Status.FAILED
    assert reminder.delivery_retry_count == MAX_DELIVERY_ATTEMPTS


def test_a_retry_that_succeeds_resets_the_retry_state(make_reminder):
    reminder = make_reminder(reminder_time=NOW)
    fire_due_reminders(RecordingDispatcher(fail_with=lambda: TimeoutError()), now=NOW)
    reminder.refresh_from_db()
    ok = RecordingDispatcher()

    fire_due_reminders(ok, now=reminder.next_attempt_at)
    reminder.refresh_from_db()

    assert ok.ids == [reminder.pk]
    assert ok.delivered[0].scheduled_at_ms == int(NOW.timestamp() * 1000)
    assert (reminder.status, reminder.delivery_retry_count, reminder.next_attempt_at) == (
        Reminder.Status.FIRED,
        0,
        None,
    )


def test_bot_reported_failures_retry_the_missed_occurrence_or_fail_when_the_channel_is_gone(make_reminder):
    daily = make_reminder(reminder_time=NOW, repetition_interval_hours=24)
    dispatcher = RecordingDispatcher(confirm=False)  # the bot posts, or here fails to
    fire_due_reminders(dispatcher, now=NOW)
    occurrence = dispatcher.delivered[0]

    report_delivery_failure(daily.pk, scheduled_at_ms=occurrence.scheduled_at_ms, channel_gone=False, now=NOW)
    daily.refresh_from_db()
    assert (daily.status, daily.reminder_time, daily.next_attempt_at) == (
        Reminder.Status.PENDING,
        NOW,
        NOW + retry_delay(1),
    )
    retried = RecordingDispatcher(confirm=False)
    fire_due_reminders(retried, now=NOW + retry_delay(1))
    assert [d.scheduled_at_ms for d in retried.delivered] == [occurrence.scheduled_at_ms]

    report_delivery_failure(daily.pk, scheduled_at_ms=occurrence.scheduled_at_ms, channel_gone=True, now=NOW)
    daily.refresh_from_db()
    assert daily.status == Reminder.Status.FAILED


def test_channel_layer_dispatcher_sends_the_documented_message_to_the_bot_group(make_reminder, persona):
    task = make_reminder(self_reminder=True, user_discord_id=BOT_USER_ID, persona=persona, reminder_purpose="post")
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(REMINDERS_GROUP, channel)
    try:
        fire_due_reminders(ChannelLayerDispatcher(), now=NOW + timedelta(minutes=2))
        message = receive_from_sync(layer, channel)
    finally:
        async_to_sync(layer.group_discard)(REMINDERS_GROUP, channel)

    assert message == {
        "type": "reminder.fire",
        "reminder_id": task.pk,
        "kind": "self_task",
        "server_disc_id": "500000000000000001",
        "channel_disc_id": "600000000000000001",
        "target_user_id": BOT_USER_ID,
        "purpose": "post",
        "persona_id": persona.pk,
        "scheduled_at_ms": int(NOW.timestamp() * 1000),
        "fired_at_ms": int((NOW + timedelta(minutes=2)).timestamp() * 1000),
    }


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_ticks_fire_each_due_reminder_once(make_reminder):
    reminders = [make_reminder(reminder_time=NOW - timedelta(seconds=i)) for i in range(40)]
    reminders.append(make_reminder(reminder_time=NOW - timedelta(hours=1), repetition_interval_hours=1))
    expected = sorted(r.pk for r in reminders)

    if connection.vendor == "postgresql":
        # Two beat ticks in two threads (two connections) start together; SKIP LOCKED plus the
        # conditional update must hand every row to exactly one of them.
        dispatchers = [RecordingDispatcher(), RecordingDispatcher()]
        barrier = threading.Barrier(2)
        errors: list[BaseException] = []

        def tick(dispatcher: RecordingDispatcher) -> None:
            try:
                barrier.wait()
                fire_due_reminders(dispatcher, now=NOW, batch_size=3)
            except BaseException as exc:
                errors.append(exc)
            finally:
                connection.close()

        threads = [threading.Thread(target=tick, args=(d,)) for d in dispatchers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        delivered = Counter(dispatchers[0].ids + dispatchers[1].ids)
    else:
        # SQLite has no row locks: the conditional update alone decides. Worker A reads the due ids,
        # worker B fires them all (rescheduling the repeating one, which is pending again), then
        # A's stale claims must all lose.
        with transaction.atomic():
            stale_ids = select_due_ids(NOW, limit=100)
        assert sorted(stale_ids) == expected
        worker_b = RecordingDispatcher()
        fire_due_reminders(worker_b, now=NOW)
        assert Reminder.objects.get(pk=reminders[-1].pk).status == Reminder.Status.PENDING
        with transaction.atomic():
            assert [rid for rid in stale_ids if try_claim(rid, NOW)] == []
        delivered = Counter(worker_b.ids)

    assert sorted(delivered) == expected
    assert set(delivered.values()) == {1}


# ---------------------------------------------------------------------------------------------
# Acknowledged delivery (issue 13 item 6): an occurrence is fired only when the process that
# posted it says so; an unacknowledged one comes back, late, and is never silently dropped.
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def in_memory_layer(settings):
    """The fake bot drains its channel in a new event loop each time, which channels_redis' per-loop
    buffers refuse. The bot over Redis (CI sets REDIS_URL) is tests/bot/test_reminders.py."""
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


class FakeBot:
    """A bot process on the channel layer: it takes each occurrence it receives (accept), posts it,
    and confirms (acknowledge) — or stops at the step a crash would stop it."""

    def __init__(self, *, crash: str | None = None) -> None:
        self.layer = get_channel_layer()
        self.channel = async_to_sync(self.layer.new_channel)()
        async_to_sync(self.layer.group_add)(REMINDERS_GROUP, self.channel)
        self.crash = crash  # None, "before posting" or "before confirming"
        self.posted: list[int] = []

    def handle_waiting(self, now: datetime) -> None:
        async def drain() -> list[dict]:
            messages = []
            with contextlib.suppress(asyncio.TimeoutError):
                while True:
                    messages.append(await asyncio.wait_for(self.layer.receive(self.channel), 0.05))
            return messages

        for message in async_to_sync(drain)():
            if not accept_delivery(message["reminder_id"], message["scheduled_at_ms"], now=now):
                continue
            if self.crash == "before posting":
                continue
            self.posted.append(message["reminder_id"])
            if self.crash != "before confirming":
                acknowledge_delivery(message["reminder_id"], message["scheduled_at_ms"], now=now)

    def stop(self) -> None:
        async_to_sync(self.layer.group_discard)(REMINDERS_GROUP, self.channel)


def tick(at: datetime) -> FireReport:
    return fire_due_reminders(ChannelLayerDispatcher(), now=at)


def test_fired_with_no_bot_listening_it_comes_back_and_is_delivered_once_late(in_memory_layer, make_reminder):
    reminder = make_reminder(reminder_time=NOW)

    assert tick(NOW).dispatched == 1  # nobody is in the group: the message is lost on the layer
    reminder.refresh_from_db()
    assert reminder.status == Reminder.Status.CLAIMED  # not fired: no bot said it posted it

    retry_at = NOW + CLAIM_LEASE
    assert tick(retry_at) == FireReport(retried=1)
    reminder.refresh_from_db()
    assert (reminder.status, reminder.delivery_retry_count) == (Reminder.Status.PENDING, 1)
    assert reminder.next_attempt_at == retry_at + retry_delay(1)
    assert "no bot process took it" in reminder.last_error

    bot = FakeBot()  # the bot starts
    try:
        later = reminder.next_attempt_at
        assert tick(later).dispatched == 1
        bot.handle_waiting(later)
        for minutes in (1, 10, 60, 600):
            tick(later + timedelta(minutes=minutes))
            bot.handle_waiting(later + timedelta(minutes=minutes))
    finally:
        bot.stop()
    reminder.refresh_from_db()
    assert bot.posted == [reminder.pk]
    assert (reminder.status, reminder.last_error, reminder.next_attempt_at) == (Reminder.Status.FIRED, "", None)


@pytest.mark.parametrize("crash", ["before posting", "before confirming"])
def test_a_bot_that_dies_mid_delivery_gets_it_delivered_at_most_once_more(in_memory_layer, make_reminder, crash):
    reminder = make_reminder(reminder_time=NOW)
    dying = FakeBot(crash=crash)
    try:
        tick(NOW)
        dying.handle_waiting(NOW)
    finally:
        dying.stop()
    reminder.refresh_from_db()
    assert reminder.status == Reminder.Status.DELIVERING  # taken, neither confirmed nor given up

    expired = NOW + DELIVERY_LEASE
    assert tick(expired) == FireReport(retried=1)
    reminder.refresh_from_db()
    assert reminder.status == Reminder.Status.PENDING and "did not confirm" in reminder.last_error

    restarted = FakeBot()
    try:
        at = reminder.next_attempt_at
        for step in range(0, 120, 5):
            tick(at + timedelta(minutes=step))
            restarted.handle_waiting(at + timedelta(minutes=step))
    finally:
        restarted.stop()
    reminder.refresh_from_db()
    assert len(dying.posted) + len(restarted.posted) == (2 if crash == "before confirming" else 1)
    assert restarted.posted == [reminder.pk]
    assert reminder.status == Reminder.Status.FIRED


def test_unacknowledged_after_every_attempt_it_is_failed_with_the_reason(make_reminder):
    reminder = make_reminder(reminder_time=NOW)
    at = NOW
    for _ in range(MAX_DELIVERY_ATTEMPTS):
        tick(at)
        reminder.refresh_from_db()
        assert reminder.status == Reminder.Status.CLAIMED
        at = reminder.next_attempt_at
        tick(at)  # the lease ran out: retried, or failed after the last attempt
        reminder.refresh_from_db()
        at = reminder.next_attempt_at or at

    assert reminder.status == Reminder.Status.FAILED
    assert reminder.delivery_retry_count == MAX_DELIVERY_ATTEMPTS
    assert "no bot process took it" in reminder.last_error
    assert tick(at + timedelta(days=1)) == FireReport()


def test_a_late_confirmation_settles_the_occurrence_instead_of_delivering_it_again(in_memory_layer, make_reminder):
    daily = make_reminder(reminder_time=NOW, repetition_interval_hours=24)
    slow = FakeBot(crash="before confirming")
    try:
        tick(NOW)
        slow.handle_waiting(NOW)
    finally:
        slow.stop()
    tick(NOW + DELIVERY_LEASE)  # back to pending, waiting out its backoff
    scheduled_ms = int(NOW.timestamp() * 1000)

    assert acknowledge_delivery(daily.pk, scheduled_ms, now=NOW + DELIVERY_LEASE + timedelta(seconds=1))
    assert not acknowledge_delivery(daily.pk, scheduled_ms, now=NOW + DELIVERY_LEASE + timedelta(seconds=2))

    daily.refresh_from_db()
    assert (daily.status, daily.reminder_time, daily.delivery_retry_count) == (
        Reminder.Status.PENDING,
        NOW + timedelta(hours=24),
        0,
    )
    assert tick(NOW + timedelta(hours=1)) == FireReport()


def test_an_occurrence_cancelled_or_taken_meanwhile_is_not_posted(make_reminder):
    cancelled, twice = make_reminder(reminder_time=NOW), make_reminder(reminder_time=NOW)
    claimed, _ = claim_due(NOW)
    by_id = {d.reminder_id: d for d in claimed}
    actions.cancel_reminder(cancelled, actor=TEST_ACTOR)

    assert not accept_delivery(cancelled.pk, by_id[cancelled.pk].scheduled_at_ms, now=NOW)
    assert accept_delivery(twice.pk, by_id[twice.pk].scheduled_at_ms, now=NOW)
    # A second copy of the same claim (two processes serving one guild) is not taken again.
    assert not accept_delivery(twice.pk, by_id[twice.pk].scheduled_at_ms, now=NOW)
    assert Reminder.objects.get(pk=cancelled.pk).status == Reminder.Status.CANCELLED
