from __future__ import annotations

from django.db import models
from django.db.models.functions import Lower, Trim

from personas.models.servers import Server
from personas.validators import validate_discord_id

FIRST_LINEAGE_ID = 10000
GLOBAL_LINEAGE_ID = 0


class PersonaLineage(models.Model):
    """Registry of lineage ids (data-model.md §2.9): the memory namespace shared by copies of a character.

    Nothing points at it with a foreign key: memories keep their lineage id after a persona is
    deleted, so a re-import restores access. Ids start at 10000; 0 is the global namespace.
    """

    id = models.BigAutoField(primary_key=True)
    label = models.CharField(max_length=100, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "persona_lineages"
        constraints = [
            models.CheckConstraint(condition=models.Q(id__gte=FIRST_LINEAGE_ID), name="persona_lineage_id_from_10000"),
        ]

    def __str__(self) -> str:
        return f"lineage {self.id} {self.label}".strip()

    @classmethod
    def allocate(cls, label: str = "") -> int:
        """Draw the next lineage id; the migration starts the id sequence at 10000."""
        return cls.objects.create(label=label[:100]).id


class Persona(models.Model):
    """A character the bot speaks as in one server; exactly one main persona (not an alter) per server."""

    persona_id = models.BigAutoField(primary_key=True)
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="personas")
    persona_nickname = models.CharField(max_length=80)
    is_alter = models.BooleanField(default=False, help_text="Alters speak through a channel webhook.")
    persona_lineage_id = models.BigIntegerField(
        blank=True, help_text="Memory namespace; drawn from 10000 upwards when left empty. Never 0."
    )
    trigger_words = models.JSONField(default=list, blank=True)
    persona_prompt = models.TextField(null=True, blank=True)
    physical_appearance_tags = models.JSONField(default=list, blank=True)
    naming_prefixes = models.JSONField(default=dict, blank=True)
    naming_suffixes = models.JSONField(default=dict, blank=True)
    naming_address_terms = models.JSONField(default=dict, blank=True)
    webhook_avatar_url = models.URLField(null=True, blank=True)
    sample_dialogue = models.JSONField(
        default=list, blank=True, help_text='Example exchanges: [{"role": "user"|"model", "text": "..."}].'
    )
    self_debug_enabled = models.BooleanField(
        default=False, help_text="Let server managers speak as the persona with '$:' messages."
    )
    humanizer_degree = models.PositiveSmallIntegerField(null=True, blank=True)
    is_pointer = models.BooleanField(default=False)
    preset_lineage_id = models.BigIntegerField(null=True, blank=True)
    preset_language = models.CharField(max_length=16, null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "personas"
        ordering = ["server_id", "is_alter", "persona_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["server"], condition=models.Q(is_alter=False), name="persona_one_main_per_server"
            ),
            models.UniqueConstraint(
                Lower(Trim("persona_nickname")), "server", name="persona_nickname_unique_per_server"
            ),
            models.CheckConstraint(
                condition=models.Q(persona_lineage_id__gte=FIRST_LINEAGE_ID), name="persona_lineage_not_global"
            ),
            models.CheckConstraint(
                condition=models.Q(humanizer_degree__isnull=True) | models.Q(humanizer_degree__lte=3),
                name="persona_humanizer_0_3",
            ),
        ]

    def __str__(self) -> str:
        return self.persona_nickname

    def save(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        if self.persona_lineage_id is None:
            self.persona_lineage_id = PersonaLineage.allocate(self.persona_nickname)
        super().save(*args, **kwargs)


class PersonaAttribute(models.Model):
    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="attributes")
    attribute_order = models.PositiveIntegerField()
    attribute_text = models.TextField()
    is_public = models.BooleanField(default=False, help_text="Public attributes reach other personas' context.")

    class Meta:
        db_table = "persona_attributes"
        ordering = ["persona_id", "attribute_order"]
        constraints = [
            models.UniqueConstraint(fields=["persona", "attribute_order"], name="persona_attribute_order_unique"),
            models.CheckConstraint(condition=models.Q(attribute_order__gte=1), name="persona_attribute_order_gte_1"),
        ]

    def __str__(self) -> str:
        return self.attribute_text[:60]


class PersonaSpriteMessage(models.Model):
    message_disc_id = models.CharField(max_length=20, primary_key=True, validators=[validate_discord_id])
    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="sprite_messages")
    sprite_name = models.CharField(max_length=64)
    channel_disc_id = models.CharField(max_length=20, validators=[validate_discord_id])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "persona_sprite_messages"

    def __str__(self) -> str:
        return f"{self.persona} ({self.sprite_name})"
