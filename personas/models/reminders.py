from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Coalesce

from personas.models.personas import Persona
from personas.models.provenance import ToolProvenance
from personas.models.servers import Server
from personas.models.users import DiscordUser
from personas.validators import validate_discord_id


def validate_reminder_purpose_length(value: str) -> None:
    # A purpose is shown in every prompt of its target until it fires, like a memory.
    limit = settings.TOMORI["MAX_REMINDER_PURPOSE_LENGTH"]
    if len(value) > limit:
        raise ValidationError(f"A reminder's purpose holds at most {limit} characters (this one has {len(value)}).")


class Reminder(ToolProvenance):
    """A reminder for a user, or a persona self-task when the target is the bot's own id."""

    class Status(models.TextChoices):
        """``personas.reminder_firing`` moves a row along pending → claimed → delivering → fired."""

        PENDING = "pending"
        CLAIMED = "claimed", "claimed (handed to the bot, not taken yet)"
        DELIVERING = "delivering", "delivering (the bot took it, not confirmed yet)"
        FIRED = "fired"
        FAILED = "failed"
        CANCELLED = "cancelled"

    reminder_id = models.BigAutoField(primary_key=True)
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="reminders")
    channel_disc_id = models.CharField("channel Discord ID", max_length=20, validators=[validate_discord_id])
    user_discord_id = models.CharField(max_length=255, help_text="Target: user snowflake, Matrix id, or the bot's id.")
    user_nickname = models.TextField(default="", blank=True)
    reminder_purpose = models.TextField(validators=[validate_reminder_purpose_length])
    reminder_time = models.DateTimeField()
    repetition_interval_hours = models.PositiveIntegerField(null=True, blank=True)
    self_reminder = models.BooleanField(default=False)
    persona = models.ForeignKey(
        Persona,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="reminders",
        help_text="Empty = unassigned (belongs to the main persona).",
    )
    created_by_user = models.ForeignKey(
        DiscordUser, on_delete=models.SET_NULL, null=True, blank=True, related_name="created_reminders"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    last_error = models.TextField(blank=True, default="", help_text="Why the last delivery attempt failed.")
    next_attempt_at = models.DateTimeField(
        null=True, blank=True, help_text="Pending: when the next attempt is due. Claimed or delivering: when it lapses."
    )
    delivery_retry_count = models.IntegerField(default=0, help_text="Failed delivery attempts of this occurrence.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    # Not settled yet: waiting, on its way to the bot, or failed (a moderator may still cancel it).
    OPEN_STATUSES = (Status.PENDING, Status.CLAIMED, Status.DELIVERING, Status.FAILED)

    class Meta:
        db_table = "reminders"
        ordering = ["reminder_time", "reminder_id"]
        indexes = [
            models.Index(fields=["reminder_time"], name="reminder_time_idx"),
            models.Index(Coalesce("next_attempt_at", "reminder_time"), name="reminder_next_due_idx"),
            models.Index(fields=["server", "user_discord_id", "reminder_time"], name="reminder_target_idx"),
            # "Has a pending task" evidence of participant discovery (D-16) looks across servers.
            models.Index(fields=["user_discord_id", "reminder_time"], name="reminder_user_due_idx"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(repetition_interval_hours__isnull=True) | models.Q(repetition_interval_hours__gte=1),
                name="reminder_repetition_gte_1",
            ),
        ]

    def __str__(self) -> str:
        return self.reminder_purpose[:80]
