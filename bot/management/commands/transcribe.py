"""``manage.py transcribe FILE``: run the voice-message transcription path on one file and print the text."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from chatcontext.core.transcripts import MemoryTranscriptCache, TranscriptCache
from chatcontext.voice.cache import shared_cache
from chatcontext.voice.tasks import transcribe_attachment


class Command(BaseCommand):
    help = (
        "Transcribe an audio file (OGG/Opus voice message, WAV, MP3, ...) with the bundled Whisper model "
        "through the same path as the Celery task, and print the text. FILE may be a path, a file:// URL "
        "or an http(s) URL. Nothing is stored unless --message-id is given, in which case the transcript "
        "is written to the voice-transcript cache under that Discord message id. Exits with status 1 and "
        "the failure reason (too_large, not_found, undecodable, no_speech, ...) when there is no text."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="audio file path, file:// URL or http(s) URL")
        parser.add_argument(
            "--message-id",
            default="",
            help="store the transcript in the voice-transcript cache under this Discord message id",
        )
        parser.add_argument("--attachment-id", default="", help="attachment id recorded with the stored transcript")
        parser.add_argument("--max-bytes", type=int, default=None, help="size cap for the audio (default 25 MiB)")

    def handle(self, *args: Any, **options: Any) -> None:
        message_id: str = options["message_id"]
        cache: TranscriptCache = shared_cache if message_id else MemoryTranscriptCache()
        outcome = transcribe_attachment(
            message_id or "cli",
            options["attachment_id"],
            options["file"],
            cache=cache,
            max_bytes=options["max_bytes"],
        )
        if outcome.status == "failed":
            raise CommandError(f"no transcript: {outcome.failure}")
        self.stdout.write(outcome.text)
