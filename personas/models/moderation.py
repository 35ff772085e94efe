from __future__ import annotations

from django.db import models

from personas.models.history import audit_trail
from personas.models.personas import Persona
from personas.models.servers import Server
from personas.validators import validate_discord_id

# The longest reason a moderator may type (the column is unbounded text; the API and the admin bound it).
BLACKLIST_REASON_CHARS = 500


class PersonalizationBlacklist(models.Model):
    """Users whose memories and saved names this server does not use (keyed by snowflake, not FK)."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="blacklist")
    user_disc_id = models.CharField("Discord user ID", max_length=20, validators=[validate_discord_id])
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    history = audit_trail()

    class Meta:
        db_table = "personalization_blacklist"
        verbose_name = "personalization blacklist entry"
        verbose_name_plural = "personalization blacklist"
        constraints = [
            models.UniqueConstraint(fields=["server", "user_disc_id"], name="blacklist_unique_per_server"),
        ]

    def __str__(self) -> str:
        return self.user_disc_id


class PersonaUserBlock(models.Model):
    class BlockType(models.TextChoices):
        MUTE = "mute", "Mute (cannot trigger)"
        BLOCK = "block", "Block (messages hidden from this persona)"

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="persona_blocks")
    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="user_blocks")
    user_disc_id = models.CharField("Discord user ID", max_length=20, validators=[validate_discord_id])
    block_type = models.CharField(max_length=8, choices=BlockType.choices, default=BlockType.BLOCK)
    reason = models.TextField()
    expires_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    history = audit_trail()

    class Meta:
        db_table = "persona_user_blocks"
        constraints = [
            models.UniqueConstraint(fields=["server", "persona", "user_disc_id"], name="persona_block_unique"),
            models.CheckConstraint(
                condition=models.Q(block_type__in=["mute", "block"]), name="persona_block_type_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.block_type} {self.user_disc_id} for {self.persona}"
