from __future__ import annotations

from django.db import models
from django.db.models.functions import Lower, Trim

from personas.models.history import audit_trail
from personas.models.servers import Server
from personas.validators import validate_discord_id

FIRST_LINEAGE_ID = 10000
GLOBAL_LINEAGE_ID = 0
# The preset fields come from the reference bot's persona presets, which nothing here imports yet.
PRESET_FIELD_HELP = "Stored for persona presets, which this platform does not import yet: changes nothing."


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
    server = models.ForeignKey(
        Server, on_delete=models.CASCADE, related_name="personas", help_text="The server this persona speaks in."
    )
    persona_nickname = models.CharField(
        "name",
        max_length=80,
        help_text="The persona's name: what the model is told it is called and what its replies are signed with "
        "(alters post under it). Unique within the server.",
    )
    is_alter = models.BooleanField(
        default=False,
        help_text="Off: the server's main persona (exactly one), which answers mentions and DMs. On: an alter, "
        "which answers its trigger words and replies to its messages, and posts through a channel webhook.",
    )
    persona_lineage_id = models.BigIntegerField(
        "lineage",
        blank=True,
        help_text="Memory namespace: personas with the same lineage share their memories. Drawn from 10000 upwards "
        "when left empty; never 0.",
    )
    trigger_words = models.JSONField(
        default=list,
        blank=True,
        help_text="A message containing one of these words (any case, as a whole word) makes this persona answer, "
        "unless Deliberate trigger mode is on.",
    )
    persona_prompt = models.TextField(
        null=True,
        blank=True,
        help_text="Who the persona is and how it speaks: the first thing the model is told. {bot} stands for the "
        "persona's name, {user} for the person it answers.",
    )
    physical_appearance_tags = models.JSONField(
        "appearance tags",
        default=list,
        blank=True,
        help_text="What the persona looks like (e.g. silver hair, green eyes), told to the model with its character.",
    )
    naming_prefixes = models.JSONField(
        default=dict,
        blank=True,
        help_text="Put before a user's name by this persona (e.g. feminine: Lady). A user's own prefix wins.",
    )
    naming_suffixes = models.JSONField(
        default=dict,
        blank=True,
        help_text="Put after a user's name by this persona (e.g. neutral: -san). A user's own suffix wins.",
    )
    naming_address_terms = models.JSONField(
        default=dict,
        blank=True,
        help_text="How this persona addresses the person it answers (e.g. masculine: sir); {user_term} in the "
        "persona's texts stands for it.",
    )
    webhook_avatar_url = models.URLField(
        null=True,
        blank=True,
        help_text="Alters only: the picture an alter's webhook posts show. Empty = the webhook's own avatar.",
    )
    sample_dialogue = models.JSONField(
        default=list,
        blank=True,
        help_text="Example exchanges the model reads before the conversation, to show how the persona talks "
        "(left out when someone is impersonated).",
    )
    self_debug_enabled = models.BooleanField(
        "self debug",
        default=False,
        help_text="On: members who may manage the server can speak as the persona: a message starting with $: "
        "enters the prompt as the persona's own words (to steer or test it), and the bot's error notices are "
        "shown to the model.",
    )
    humanizer_degree = models.PositiveSmallIntegerField(
        null=True,
        blank=True,
        help_text="0–3, empty = the server's. Stored, but nothing reads it yet: changing it changes no reply.",
    )
    tools_enabled = models.BooleanField(
        "tools",
        default=True,
        help_text="On: the persona may act when the server allows it (remember, set reminders, react). Off: it only "
        "replies, whatever the server's settings.",
    )
    is_pointer = models.BooleanField(
        default=False,
        help_text=PRESET_FIELD_HELP,
    )
    preset_lineage_id = models.BigIntegerField(
        null=True,
        blank=True,
        help_text=PRESET_FIELD_HELP,
    )
    preset_language = models.CharField(
        max_length=16,
        null=True,
        blank=True,
        help_text=PRESET_FIELD_HELP,
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = audit_trail()

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
    attribute_order = models.PositiveIntegerField("order", help_text="Position in the list of traits, 1 first.")
    attribute_text = models.TextField(
        "trait",
        help_text="One fact about the persona, listed under its traits in its own prompt. {bot} and {user} are "
        "replaced as in the persona prompt.",
    )
    is_public = models.BooleanField(
        "public",
        default=False,
        help_text="On: the other personas of the server are told this trait too. Off: only this persona knows it.",
    )

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
    message_disc_id = models.CharField(
        "message Discord ID", max_length=20, primary_key=True, validators=[validate_discord_id]
    )
    persona = models.ForeignKey(Persona, on_delete=models.CASCADE, related_name="sprite_messages")
    sprite_name = models.CharField(max_length=64)
    channel_disc_id = models.CharField("channel Discord ID", max_length=20, validators=[validate_discord_id])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "persona_sprite_messages"

    def __str__(self) -> str:
        return f"{self.persona} ({self.sprite_name})"
