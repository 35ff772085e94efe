"""A real Celery worker consuming from a real broker, end to end (issue 7 acceptance).

The worker runs in a thread of this process (``celery.contrib.testing.worker.start_worker``) so it
shares the Django test database; tasks travel through the broker as serialized messages. The
broker is kombu's filesystem transport in a temporary folder on every machine (its messages written
whole, tests/botplatform/celery/atomic_filesystem.py), and the real Redis
as well when ``REDIS_URL`` is set (CI), exactly as configured there (tests/services.py). A private
queue keeps other processes on the same Redis from taking the test's tasks.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
import redis
from asgiref.sync import async_to_sync
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from channels.layers import get_channel_layer
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from botplatform.celery import app
from chatcontext.models import VoiceTranscript
from chatcontext.voice.cache import shared_cache
from chatcontext.voice.tasks import transcribe_voice_attachment
from personas.models import Reminder
from personas.reminder_firing import REMINDERS_GROUP
from personas.tasks import fire_due_reminders
from tests.botplatform.celery.conftest import SENTENCE, word_error_rate
from tests.celery_broker import reset_connection_pools
from tests.services import receive_from_sync

pytestmark = pytest.mark.slow

WAIT_SECONDS = 60


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"the worker did not {what} within {WAIT_SECONDS}s")
        time.sleep(0.1)


@pytest.fixture
def worker_queue(settings, broker: str) -> Iterator[str]:
    queue = f"tests-background-{uuid.uuid4().hex[:12]}"
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.CELERY_WORKER_HIJACK_ROOT_LOGGER = False
    # The worker thread shares this process's transcript map, which outlives the test database an
    # earlier test flushed (the same message on the other broker): start empty, as a new worker does.
    shared_cache.entries.clear()
    reset_connection_pools()
    try:
        with start_worker(app, pool="solo", perform_ping_check=False, queues=[queue], loglevel="WARNING"):
            yield queue
    finally:
        reset_connection_pools()
        if broker == "redis":
            redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(queue)


@pytest.mark.django_db(transaction=True)
def test_worker_transcribes_a_voice_message_from_the_broker_into_the_transcript_cache(
    worker_queue, speech_files, transcriber
):
    transcribe_voice_attachment.apply_async(
        ("700000000000000100", "800000000000000100", str(speech_files.ogg)), queue=worker_queue
    )

    wait_for(lambda: VoiceTranscript.objects.filter(message_disc_id="700000000000000100").exists(), "transcribe")
    row = VoiceTranscript.objects.get(message_disc_id="700000000000000100")
    assert row.source == "user_stt"
    assert word_error_rate(SENTENCE, row.transcript) < 0.3, row.transcript
    assert transcriber.loads == 1  # the worker thread used the process's model, loaded once


@pytest.mark.django_db(transaction=True)
def test_worker_fires_a_due_reminder_through_the_bot_channel_layer_group(worker_queue, make_reminder):
    reminder = make_reminder(reminder_time=timezone.now() - timedelta(seconds=5))
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(REMINDERS_GROUP, channel)
    tick_id, ticked = uuid.uuid4().hex, threading.Event()

    def on_postrun(task_id: str, **_: object) -> None:
        if task_id == tick_id:
            ticked.set()

    # The in-memory layer (without REDIS_URL) is one object shared with the worker thread, and its
    # queues are not thread-safe: receive only once the tick has handed the reminder over.
    task_postrun.connect(on_postrun, weak=False)
    try:
        fire_due_reminders.apply_async(queue=worker_queue, task_id=tick_id)
        wait_for(ticked.is_set, "finish the tick")
        # Handed to the bot group; fired once a bot confirms it posted it (tests/bot/test_reminders.py).
        assert Reminder.objects.get(pk=reminder.pk).status == Reminder.Status.CLAIMED
        message = receive_from_sync(layer, channel)
    finally:
        task_postrun.disconnect(on_postrun)
        async_to_sync(layer.group_discard)(REMINDERS_GROUP, channel)

    assert (message["type"], message["reminder_id"], message["kind"]) == ("reminder.fire", reminder.pk, "human")


@pytest.mark.django_db
def test_beat_schedules_are_database_rows_editable_in_the_admin():
    schedules = {
        task.task: (task.interval.every, task.interval.period, task.enabled)
        for task in PeriodicTask.objects.select_related("interval").filter(task__startswith="personas.tasks.")
    }
    assert schedules == {
        "personas.tasks.fire_due_reminders": (30, "seconds", True),
        "personas.tasks.prune_prompt_records": (1, "days", True),
    }
    assert app.conf.beat_scheduler == "django_celery_beat.schedulers:DatabaseScheduler"
    assert {"personas.tasks.fire_due_reminders", "personas.tasks.prune_prompt_records"} <= set(app.tasks)
    assert "bot.voice.transcribe_voice_attachment" in app.tasks
