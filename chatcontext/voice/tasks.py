"""``transcribe_voice_attachment``: a voice message's first audio attachment → the transcript cache.

The transcript lands in ``chatcontext.voice.cache.shared_cache`` (the ``VoiceTranscript`` table behind
a process-local map) with source ``user_stt``, which is what the Build Context stage reads (BC11-01,
BC11-02; data-model.md §2.17). Callers decide *whether* to transcribe: bot authors, webhooks and
blocked authors (BC11-03) are filtered before enqueueing.

Idempotent: a live cache entry for the message short-circuits before any download or model load,
and the write is an upsert on the message id, so a task delivered twice (``acks_late`` redelivery)
leaves one transcript. Failures (too large, unreachable, corrupt, silent, timeout) return a
``failed`` outcome with a reason code, are logged without ids or text, and store nothing.

Without a broker (the embedded default, no ``REDIS_URL``: Celery runs tasks eagerly, in the caller)
``enqueue_transcription`` hands the work to this process's one speech-to-text thread instead
(``LocalTranscriptions``), as reminders get an in-process scheduler: the caller — the bot's event loop
or database thread — never runs Whisper, and at most ``LOCAL_TRANSCRIPTION_QUEUE`` voice messages wait;
more are not transcribed (logged), so a burst cannot pile up memory or hours of work.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Literal

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import close_old_connections, transaction

from chatcontext.core.transcripts import TranscriptCache
from chatcontext.voice.cache import shared_cache
from chatcontext.voice.engine.fetch import DEFAULT_MAX_BYTES, fetch_audio
from chatcontext.voice.engine.transcribe import (
    FailureReason,
    TranscriptionFailed,
    WhisperTranscriber,
    default_transcriber,
)

logger = logging.getLogger(__name__)

SOFT_TIME_LIMIT_SECONDS = 120
TIME_LIMIT_SECONDS = 150


@dataclass(frozen=True)
class TranscriptionOutcome:
    status: Literal["transcribed", "cached", "failed"]
    message_disc_id: str
    text: str = ""
    failure: str = ""

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def ttl_minutes() -> int:
    configured = int(settings.TOMORI.get("VOICE_TRANSCRIPT_CACHE_TTL_MINUTES", 120))
    return configured if configured > 0 else 120  # BC §0.1: non-positive → 120


def max_download_bytes() -> int:
    return int(getattr(settings, "VOICE_MAX_DOWNLOAD_BYTES", DEFAULT_MAX_BYTES))


def transcribe_attachment(
    message_disc_id: str,
    attachment_id: str,
    url_or_path: str,
    *,
    cache: TranscriptCache | None = None,
    transcriber: WhisperTranscriber | None = None,
    now_ms: int | None = None,
    max_bytes: int | None = None,
) -> TranscriptionOutcome:
    """The task's body, callable directly (tests, ``manage.py transcribe``)."""
    cache = shared_cache if cache is None else cache
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    existing = cache.get_many([message_disc_id], now_ms=now_ms, ttl_minutes=ttl_minutes()).get(message_disc_id)
    if existing is not None:
        return TranscriptionOutcome("cached", message_disc_id, text=existing.transcript)
    try:
        audio = fetch_audio(url_or_path, max_bytes=max_download_bytes() if max_bytes is None else max_bytes)
        result = (transcriber or default_transcriber()).transcribe(audio)
    except TranscriptionFailed as exc:
        logger.warning("voice: no transcript (%s)", exc.reason)
        return TranscriptionOutcome("failed", message_disc_id, failure=str(exc.reason))
    cache.put(message_disc_id, result.text, "user_stt", now_ms=now_ms, attachment_id=attachment_id)
    logger.info("voice: transcribed %.1fs of audio in %.1fs", result.duration_s, result.seconds)
    return TranscriptionOutcome("transcribed", message_disc_id, text=result.text)


@shared_task(
    name="bot.voice.transcribe_voice_attachment",
    acks_late=True,
    reject_on_worker_lost=True,
    soft_time_limit=SOFT_TIME_LIMIT_SECONDS,
    time_limit=TIME_LIMIT_SECONDS,
)
def transcribe_voice_attachment(message_disc_id: str, attachment_id: str, url_or_path: str) -> dict[str, str]:
    """Transcribe one voice attachment into the shared transcript cache; returns the outcome as a dict."""
    try:
        return transcribe_attachment(message_disc_id, attachment_id, url_or_path).as_dict()
    except SoftTimeLimitExceeded:
        logger.warning("voice: no transcript (%s)", FailureReason.TIMEOUT)
        return TranscriptionOutcome("failed", message_disc_id, failure=str(FailureReason.TIMEOUT)).as_dict()


class LocalTranscriptions:
    """Transcriptions on one thread of this process, at most ``limit`` waiting or running."""

    def __init__(self, limit: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="speech-to-text")
        self._slots = threading.BoundedSemaphore(limit)

    def submit(self, message_disc_id: str, attachment_id: str, url_or_path: str) -> Future[TranscriptionOutcome] | None:
        """The transcription's future, or None when ``limit`` are already waiting (not transcribed)."""
        if not self._slots.acquire(blocking=False):
            logger.warning("voice: no transcript (in-process queue full)")
            return None
        return self._executor.submit(self._run, message_disc_id, attachment_id, url_or_path)

    def _run(self, message_disc_id: str, attachment_id: str, url_or_path: str) -> TranscriptionOutcome:
        try:
            return transcribe_attachment(message_disc_id, attachment_id, url_or_path)
        except Exception as exc:  # nobody awaits this future: the log is the only trace
            logger.warning("voice: no transcript (%s)", type(exc).__name__)
            raise
        finally:
            close_old_connections()  # this thread outlives requests: its connection must not go stale
            self._slots.release()


LOCAL_TRANSCRIPTION_QUEUE = 8
local_transcriptions = LocalTranscriptions(LOCAL_TRANSCRIPTION_QUEUE)


def enqueue_transcription(message_disc_id: str, attachment_id: str, url_or_path: str) -> None:
    """Queue a transcription once the surrounding transaction (if any) commits: on the broker, or,
    without one, on this process's speech-to-text thread."""
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(
            functools.partial(local_transcriptions.submit, message_disc_id, attachment_id, url_or_path)
        )
    else:
        transcribe_voice_attachment.delay_on_commit(message_disc_id, attachment_id, url_or_path)
