"""Voice transcripts as the stage reads them (build-context.md §11, BC11-02): the cached entry, the
cache protocol and the in-memory cache that turn snapshots and tests use. Entries older than the TTL
are absent and evicted on read; writes overwrite. The database-backed cache is the shell's
(``chatcontext.voice.cache``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, Protocol

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
