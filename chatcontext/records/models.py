from __future__ import annotations

from django.db import models


class PromptRecord(models.Model):
    """One assembled turn exactly as the model saw it, with the snapshot it was built from.

    Immutable once written: retention and forget-me delete whole records rather than edit them.
    """

    class Source(models.TextChoices):
        BOT = "bot", "Discord bot"
        REPLAY = "replay", "replay_turn --record"
        PLAYGROUND = "playground", "Playground"
        INSPECTOR = "inspector", "Inspector replay"

    server = models.ForeignKey("personas.Server", on_delete=models.CASCADE, related_name="prompt_records")
    channel_disc_id = models.CharField("channel Discord ID", max_length=20)
    channel_name = models.CharField(max_length=100, blank=True, default="")
    persona = models.ForeignKey(
        "personas.Persona", on_delete=models.SET_NULL, null=True, blank=True, related_name="prompt_records"
    )
    persona_nickname = models.CharField(max_length=80, blank=True, default="")
    trigger_message_disc_id = models.CharField("trigger message Discord ID", max_length=32, blank=True, default="")
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.BOT)
    created_at = models.DateTimeField(db_index=True)
    provider = models.CharField(max_length=32, blank=True, default="")
    model_name = models.CharField(max_length=128, blank=True, default="")
    context_items = models.JSONField(default=list)
    simplified_messages = models.JSONField(default=list)
    message_id_map = models.JSONField(default=dict)
    streaming_context = models.JSONField(default=dict)
    participant_target_index = models.JSONField(default=dict)
    diagnostics = models.JSONField(default=dict)
    exclusions = models.JSONField(default=list)
    snapshot = models.JSONField(default=dict)
    token_estimate = models.PositiveIntegerField(default=0)
    reply_text = models.TextField(blank=True, default="")
    error = models.TextField(blank=True, default="")
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    usage = models.JSONField(default=dict, blank=True)
    # The turn's tokens and cost as written (chatcontext.core.usage): the provider's counts when it
    # reported them, else the estimates; the cost at the server's prices of that moment, so a later
    # price change does not rewrite what a turn cost. Columns, so a server's totals are one query.
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    tokens_measured = models.BooleanField(default=False)
    cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    # The images of the prompt (bot.conversation.media): {"sent": [...], "not_sent": [...]}, each with its
    # media id, message, filename and url; sent ones with their size and content type, the others with why.
    # Never the bytes.
    images = models.JSONField(
        default=dict, blank=True, help_text="Which images went to the model with this turn, and why the others did not."
    )
    # Discord user ids whose messages or profile this record contains (forget-me finds them here).
    subject_user_ids = models.JSONField(default=list, blank=True)
    # The persona's tool calls of the turn: the tools offered, the rounds, whether the provider refused
    # tools, and each call in order (name, arguments, result or refusal, rows written). Empty: the
    # turn offered no tools.
    tool_calls = models.JSONField(default=dict, blank=True)
    # How the reply was asked for (bot.conversation.providers): the sampling settings sent, and each
    # endpoint tried in order, with the one that answered and why the others did not. Empty: the
    # offline echo, or a record written before this column.
    generation = models.JSONField(
        default=dict, blank=True, help_text="Sampling sent; which endpoint answered and why others did not."
    )
    # What a slash command or button made of this turn (chatcontext.records.commands,
    # bot.conversation.steering): its name, who asked ("by": a Discord id, or "automatic"), what it did,
    # e.g. {"name": "compact", "kind": "summary", "by": "<disc id>", "summarised_messages": 12}, and for
    # a regenerated reply the record of the version it replaced. Empty: a turn nobody commanded.
    command = models.JSONField(default=dict, blank=True, help_text="The command that caused this call, if any.")

    class Meta:
        db_table = "prompt_records"
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["server", "-created_at"], name="precord_server_recent"),
            models.Index(fields=["server", "channel_disc_id", "persona", "-created_at"], name="precord_channel_recent"),
        ]

    def __str__(self) -> str:
        where = self.channel_name or self.channel_disc_id
        return f"{self.persona_nickname or 'persona'} in #{where} at {self.created_at:%Y-%m-%d %H:%M}"

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if not self._state.adding:
            raise ValueError("Prompt records are immutable once written.")
        super().save(*args, **kwargs)
