"""The voice-transcript cache (build-context.md §11, data-model.md §2.17).

``TranscriptCache`` is what the stage reads. ``DatabaseTranscriptCache`` keeps a process-local
map in front of the ``VoiceTranscript`` table, so a transcript written by a Celery worker is seen
by the bot process; ``MemoryTranscriptCache`` serves turn snapshots and tests. Entries older
than the TTL are absent and evicted on read (BC11-02); writes overwrite.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

from django.db import transaction

from chatcontext.repository import datetime_to_ms, ms_to_datetime
from chatcontext.voice.models import VoiceTranscript

Source = Literal["user_stt", "tts"]


@dataclass(frozen=True)
class CachedTranscript:
    transcript: str
    source: Source
    cached_at_ms: int


def is_expired(entry: CachedTranscript, now_ms: int, ttl_minutes: int) -> bool:
    return now_ms - entry.cached_at_ms > ttl_minutes * 60_000


class TranscriptCache(Protocol):
    def get_many(self, message_ids: list[str], *, now_ms: int, ttl_minutes: int) -> dict[str, CachedTranscript]:
        """Live entries for the ids that have one; expired entries are evicted."""

    def put(
        self, message_id: str, transcript: str, source: Source, *, now_ms: int, attachment_id: str = ""
    ) -> CachedTranscript:
        """Store (overwrite) one transcript."""


class MemoryTranscriptCache:
    def __init__(self) -> None:
        self.entries: dict[str, CachedTranscript] = {}
        # message id → the attachment its transcript came from, so forget-me finds it by either id
        self.attachment_ids: dict[str, str] = {}

    def get_many(self, message_ids: list[str], *, now_ms: int, ttl_minutes: int) -> dict[str, CachedTranscript]:
        found: dict[str, CachedTranscript] = {}
        for mid in message_ids:
            entry = self.entries.get(mid)
            if entry is None:
                continue
            if is_expired(entry, now_ms, ttl_minutes):
                del self.entries[mid]
                self.attachment_ids.pop(mid, None)
            else:
                found[mid] = entry
        return found

    def put(
        self, message_id: str, transcript: str, source: Source, *, now_ms: int, attachment_id: str = ""
    ) -> CachedTranscript:
        entry = CachedTranscript(transcript, source, now_ms)
        self.entries[message_id] = entry
        self.attachment_ids[message_id] = attachment_id
        return entry

    def forget(self, message_ids: Iterable[str], attachment_ids: Iterable[str]) -> None:
        """Drop the entries of these messages or attachments (forget-me deleted their rows)."""
        attachments = set(attachment_ids)
        gone = set(message_ids) | {mid for mid, aid in self.attachment_ids.items() if aid and aid in attachments}
        for mid in gone:
            self.entries.pop(mid, None)
            self.attachment_ids.pop(mid, None)


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
