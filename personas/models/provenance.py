from __future__ import annotations

from django.db import models


class ToolProvenance(models.Model):
    """Where a row a persona's tool call wrote came from: the prompt record of the turn and the message
    that triggered it. Plain ids, no foreign keys: personas rows never depend on chatcontext rows, and
    retention or forget-me clear them when the record goes (``personas.provenance``)."""

    source_prompt_record_id = models.BigIntegerField(
        "from prompt record",
        null=True,
        blank=True,
        help_text="The turn whose tool call wrote this (empty: a moderator).",
    )
    source_message_disc_id = models.CharField(
        "from message", max_length=32, blank=True, default="", help_text="The message that turn answered."
    )

    class Meta:
        abstract = True
