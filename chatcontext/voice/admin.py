"""Admin for the voice-transcript cache (data-model.md §2.17)."""

from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.db.models import Model
from django.http import HttpRequest
from django.utils import timezone

from chatcontext.voice.models import VoiceTranscript


@admin.register(VoiceTranscript)
class VoiceTranscriptAdmin(admin.ModelAdmin):
    """Speech-to-text cache rows (data-model.md §2.17): readable and deletable, never hand-edited.

    A transcript becomes the message's text in every prompt, so a wrong one is deleted (and
    transcribed again) rather than rewritten by a moderator.
    """

    list_display = ["message_disc_id", "source", "text", "cached_at", "is_live"]
    list_filter = ["source"]
    search_fields = ["=message_disc_id", "=attachment_disc_id", "transcript"]
    date_hierarchy = "cached_at"
    show_full_result_count = False
    ordering = ["-cached_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        return False

    @admin.display(description="transcript")
    def text(self, obj: VoiceTranscript) -> str:
        return obj.transcript if len(obj.transcript) <= 90 else obj.transcript[:89] + "…"

    @admin.display(description="within TTL", boolean=True)
    def is_live(self, obj: VoiceTranscript) -> bool:
        ttl_minutes = settings.TOMORI["VOICE_TRANSCRIPT_CACHE_TTL_MINUTES"]
        return (timezone.now() - obj.cached_at).total_seconds() <= ttl_minutes * 60
