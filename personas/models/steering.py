"""What steers a channel's conversation (README "Steering a conversation"): the summaries ``/compact``
wrote and each persona's short-term memory of a channel.

Both remember whose messages they were made from (``author_disc_ids``), so forget-me deletes the
ones that drew on a user's words (``personas.actions.forget``).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

from personas.models.history import audit_trail
from personas.models.personas import Persona
from personas.models.provenance import ToolProvenance
from personas.models.servers import Server

# A short-term note is a working pad, not an archive: it is injected into every turn of its channel.
SHORT_TERM_MEMORY_MAX_CHARS = 1500


def validate_short_term_memory_length(value: str) -> None:
    if len(value) > SHORT_TERM_MEMORY_MAX_CHARS:
        raise ValidationError(
            f"A short-term memory holds at most {SHORT_TERM_MEMORY_MAX_CHARS} characters (this one has {len(value)})."
        )


class ShortTermMemory(ToolProvenance):
    """A persona's note about the ongoing conversation of one channel, which it rewrites whole through the
    ``update_short_term_memory`` tool and reads back in every turn of that channel (BC8-12b)."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="short_term_memories")
    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="short_term_memories")
    channel_disc_id = models.CharField("channel Discord ID", max_length=20)
    content = models.TextField(
        validators=[validate_short_term_memory_length],
        help_text="What the persona keeps in mind about this channel's ongoing conversation; shown to it in every "
        "turn of the channel. Empty: nothing is shown.",
    )
    author_disc_ids = models.JSONField(
        "drawn from",
        default=list,
        blank=True,
        help_text="Discord ids of the people whose messages the turn that wrote it read (forget-me deletes it).",
    )
    updated_at = models.DateTimeField(auto_now=True)

    history = audit_trail()

    class Meta:
        db_table = "short_term_memories"
        verbose_name_plural = "short-term memories"
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["persona", "channel_disc_id"], name="stm_one_per_persona_channel"),
        ]

    def __str__(self) -> str:
        return f"{self.persona.persona_nickname} in channel {self.channel_disc_id}"


class ConversationSummary(ToolProvenance):
    """A summary ``/compact`` posted: what it says, which kind, and whose messages it was made from.
    ``source_prompt_record_id`` is the summary call's record (empty for a manual entry)."""

    class Kind(models.TextChoices):
        SUMMARY = "summary", "Conversation summary"
        ROLEPLAY_SCENE = "roleplay_scene", "Roleplay scene summary"
        MANUAL_ENTRY = "manual_entry", "Manual entry"

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="conversation_summaries")
    persona = models.ForeignKey(Persona, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    channel_disc_id = models.CharField("channel Discord ID", max_length=20)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    content = models.TextField()
    author_disc_ids = models.JSONField(
        "drawn from",
        default=list,
        blank=True,
        help_text="Discord ids of the people whose messages were summarised (forget-me deletes the summary).",
    )
    requested_by_disc_id = models.CharField(
        "requested by", max_length=20, blank=True, default="", help_text="Empty: automatic compaction."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "conversation_summaries"
        verbose_name_plural = "conversation summaries"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} in channel {self.channel_disc_id}"
