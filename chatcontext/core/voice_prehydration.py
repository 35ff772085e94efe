"""Voice-transcript pre-hydration (build-context.md §11).

Before the simplify loop, voice messages of the visible history that have no cached transcript are
transcribed once, so rendering (BC3-18) is a plain cache lookup. Speech-to-text itself is behind the
`Transcriber` protocol; failures cost a transcript, never the turn.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, MutableMapping
from typing import Protocol

from chatcontext.core.simplify.media import is_audio_attachment
from chatcontext.core.transcripts import CachedTranscript, TranscriptCache
from chatcontext.core.types import Attachment, DiscordMessage

logger = logging.getLogger(__name__)


class Transcriber(Protocol):
    def __call__(self, attachment: Attachment, message: DiscordMessage) -> str | None:
        """The transcript of one audio attachment, or None; may raise on failure."""


def voice_chat_mode(setting: bool | None) -> bool:
    """`voice_transcript_chat_mode`, one default for rendering and pre-hydration.

    [QUIRK] BC3-18 vs BC11-01: the reference reads an unset value as true when rendering and false
    when transcribing, so an unset server paid for transcripts it never showed. Unset means false
    in both places here: transcripts are made and rendered.
    """
    return bool(setting)


def prehydrate_transcripts(
    messages: Iterable[DiscordMessage],
    known: MutableMapping[str, CachedTranscript],
    *,
    cache: TranscriptCache,
    transcriber: Transcriber,
    now_ms: int,
) -> int:
    """BC11-01: transcribe the first audio attachment of each uncached human message, in order.

    `messages` must already exclude blocked authors (BC2-09) and privacy-FULL authors (BC11-03: their
    messages never reach history, so their audio is not sent to speech-to-text either). Bot and
    webhook messages are skipped; any cache entry (user_stt or tts) counts as known. New transcripts
    are stored as `user_stt` in `cache` and in `known`. Returns the number of speech-to-text calls.
    """
    calls = 0
    for message in messages:
        if message.author.bot or message.webhook_id or message.id in known:
            continue
        audio = next((a for a in message.attachments if is_audio_attachment(a)), None)
        if audio is None:
            continue
        calls += 1
        try:
            text = transcriber(audio, message)
        except Exception as exc:  # STT, download or key failures must not abort the turn (BC11-01)
            # The error type only: exception texts may carry urls and ids.
            logger.warning("voice pre-hydration: transcription failed (%s)", type(exc).__name__)
            continue
        if text and text.strip():
            known[message.id] = cache.put(message.id, text, "user_stt", now_ms=now_ms, attachment_id=audio.id)
    return calls
