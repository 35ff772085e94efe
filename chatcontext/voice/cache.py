"""The voice-transcript cache of the live database (build-context.md §11, data-model.md §2.17).

``DatabaseTranscriptCache`` keeps a process-local map in front of the ``VoiceTranscript`` table, so a
transcript written by a Celery worker is seen by the bot process. What the stage reads
(``TranscriptCache``) and the in-memory cache live in ``chatcontext.core.transcripts``.
"""

from __future__ import annotations

from django.db import transaction

from chatcontext.core.transcripts import CachedTranscript, MemoryTranscriptCache, Source, is_expired
from chatcontext.repository import datetime_to_ms, ms_to_datetime
from chatcontext.voice.models import VoiceTranscript


class DatabaseTranscriptCache(MemoryTranscriptCache):
    """The process-local map backed by the shared table: one query per window for unknown ids."""

    def get_many(self, message_ids: list[str], *, now_ms: int, ttl_minutes: int) -> dict[str, CachedTranscript]:
        missing = [mid for mid in message_ids if mid not in self.entries]
        if missing:
            for row in VoiceTranscript.objects.filter(message_disc_id__in=missing):
                source: Source = "tts" if row.source == "tts" else "user_stt"
                self.entries[row.message_disc_id] = CachedTranscript(
                    row.transcript, source, datetime_to_ms(row.cached_at)
                )
                self.attachment_ids[row.message_disc_id] = row.attachment_disc_id
        expired = [
            mid for mid in message_ids if mid in self.entries and is_expired(self.entries[mid], now_ms, ttl_minutes)
        ]
        if expired:
            VoiceTranscript.objects.filter(message_disc_id__in=expired).delete()
        return super().get_many(message_ids, now_ms=now_ms, ttl_minutes=ttl_minutes)

    def put(
        self, message_id: str, transcript: str, source: Source, *, now_ms: int, attachment_id: str = ""
    ) -> CachedTranscript:
        with transaction.atomic():
            VoiceTranscript.objects.update_or_create(
                message_disc_id=message_id,
                defaults={
                    "transcript": transcript,
                    "source": source,
                    "cached_at": ms_to_datetime(now_ms),
                    "attachment_disc_id": attachment_id,
                },
            )
        return super().put(message_id, transcript, source, now_ms=now_ms, attachment_id=attachment_id)


# The bot process's shared instance; snapshots and tests build their own.
shared_cache = DatabaseTranscriptCache()
