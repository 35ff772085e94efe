from __future__ import annotations

from django.db import models


class VoiceTranscript(models.Model):
    """Persistent side of the voice-transcript cache (data-model.md §2.17), shared across processes.

    Keyed by the Discord message id; entries older than VOICE_TRANSCRIPT_CACHE_TTL_MINUTES are
    treated as absent and evicted on read (BC11-02).
    """

    class Source(models.TextChoices):
        USER_STT = "user_stt"
        TTS = "tts"

    message_disc_id = models.CharField("message Discord ID", max_length=20, primary_key=True)
    attachment_disc_id = models.CharField("attachment Discord ID", max_length=20, blank=True, default="")
    transcript = models.TextField()
    source = models.CharField(max_length=8, choices=Source.choices, default=Source.USER_STT)
    cached_at = models.DateTimeField()

    class Meta:
        db_table = "voice_transcripts"

    def __str__(self) -> str:
        return f"transcript of {self.message_disc_id}"
