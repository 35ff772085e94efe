"""Issue 26 item 12: with a broker and no Celery worker, a playground voice message waited 150 s and
the send answered 500. The wait is bounded (``PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS``); the persona
answers without the transcript and the page says why. A real broker with nobody consuming: kombu's
filesystem transport, and Redis too when ``REDIS_URL`` is set (the broker fixture of the worker tests)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from bot.playground.models import PlaygroundMessage
from bot.playground.notes import NO_WORKER, TRANSCRIPTION_NOTES
from botplatform.celery import app
from tests.bot.playground.conftest import MINA, Demo
from tests.celery_broker import reset_connection_pools

pytestmark = pytest.mark.django_db


@pytest.fixture
def no_worker(settings: Any, broker: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Tasks go to the broker and results are awaited from a backend, as with ``REDIS_URL``; no worker runs."""
    settings.CELERY_TASK_ALWAYS_EAGER = False
    settings.PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS = 1
    if broker == "redis":
        settings.CELERY_RESULT_BACKEND = settings.CELERY_BROKER_URL
    else:
        (tmp_path / "results").mkdir()
        settings.CELERY_RESULT_BACKEND = f"file://{tmp_path / 'results'}"
    # Celery keeps each thread's result backend; new threads read the settings above.
    monkeypatch.setattr(app, "_local", threading.local())
    reset_connection_pools()
    yield
    reset_connection_pools()
    if broker == "redis":  # the message nobody consumed, in this test's own Redis database
        redis.Redis.from_url(settings.CELERY_BROKER_URL).delete(app.conf.task_default_queue)


def test_a_voice_message_without_a_worker_is_answered_without_its_transcript_and_says_why(demo: Demo, no_worker):
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    voice = SimpleUploadedFile("voice-message.ogg", b"OggS" + bytes(64), "audio/ogg")

    response = client.post(
        reverse("playground:send_message", args=[demo.channel.pk]),
        {"identity": MINA, "content": f"{demo.mention()} listen", "files": [voice]},
    )

    assert response.status_code == 200
    answer = response.json()
    assert answer["transcription"] == "failed" and len(answer["records"]) == 1 and not answer["records"][0]["error"]
    assert [m["kind"] for m in answer["messages"]] == ["user", "persona"]
    assert answer["messages"][0]["notes"] == [TRANSCRIPTION_NOTES[NO_WORKER]]
    assert PlaygroundMessage.objects.get(disc_id=answer["messages"][0]["id"]).transcription_failure == NO_WORKER
