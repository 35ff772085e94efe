from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from personas.models.history import audit_trail
from personas.models.personas import Persona
from personas.models.provenance import ToolProvenance
from personas.models.servers import Server
from personas.models.users import DiscordUser


def validate_memory_length(value: str) -> None:
    limit = settings.TOMORI["MAX_MEMORY_LENGTH"]
    if len(value) > limit:
        raise ValidationError(f"A memory holds at most {limit} characters (this one has {len(value)}).")


class PersonalMemory(ToolProvenance):
    """Something a persona lineage remembers about one user; lineage 0 = every persona of the server."""

    personal_memory_id = models.BigAutoField(primary_key=True)
    user = models.ForeignKey(DiscordUser, on_delete=models.CASCADE, related_name="personal_memories")
    # No foreign key to a persona or lineage on purpose (data-model.md §4.8).
    persona_lineage_id = models.BigIntegerField("lineage", db_index=False, help_text="0 = global (all personas).")
    content = models.TextField(
        validators=[validate_memory_length],
        help_text="What the persona remembers about this person. {user} stands for their name as the persona "
        "calls them, {bot} for the persona's name, e.g. “{user} taught {bot} to play chess”.",
    )
    tags = models.JSONField(
        default=list,
        blank=True,
        help_text="With Memory tagging on, the memory reaches the prompt only when a tag appears in the "
        "conversation; with Channel memory on, a #channel tag keeps it to that channel.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = audit_trail()

    class Meta:
        db_table = "personal_memories"
        verbose_name_plural = "personal memories"
        ordering = ["-created_at", "-personal_memory_id"]
        indexes = [
            models.Index(fields=["user", "persona_lineage_id", "-created_at"], name="pmem_user_lineage_recent"),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(persona_lineage_id__gte=0), name="pmem_lineage_non_negative"),
        ]

    def __str__(self) -> str:
        # Imported here: the helper reads the models of this module.
        from personas.memory_text import memory_title

        return memory_title(self)


class ServerMemory(ToolProvenance):
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="server_memories")
    persona = models.ForeignKey(Persona, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    persona_lineage_id = models.BigIntegerField("lineage", help_text="0 = every persona of the server.")
    user = models.ForeignKey(
        DiscordUser,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="Who taught it, if someone did.",
    )
    content = models.TextField(
        validators=[validate_memory_length],
        help_text="Something the persona remembers about the server, listed in every prompt of it. {user} stands for "
        "the person the persona answers, {bot} for the persona's name.",
    )
    tags = models.JSONField(
        default=list,
        blank=True,
        help_text="For your own sorting: every server memory reaches the prompt whatever its tags.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = audit_trail()

    class Meta:
        db_table = "server_memories"
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "server memories"
        indexes = [
            models.Index(fields=["server", "persona_lineage_id", "-created_at"], name="smem_server_lineage_recent"),
        ]

    def __str__(self) -> str:
        from personas.memory_text import memory_title

        return memory_title(self)


class DeletedPersonalMemory(PersonalMemory.history.model):  # type: ignore[name-defined]
    """The audit trail's record of a deleted personal memory, listed in the admin to be restored."""

    class Meta:
        proxy = True
        verbose_name = "deleted personal memory"
        verbose_name_plural = "deleted personal memories"


class DeletedServerMemory(ServerMemory.history.model):  # type: ignore[name-defined]
    """The audit trail's record of a deleted server memory, listed in the admin to be restored."""

    class Meta:
        proxy = True
        verbose_name = "deleted server memory"
        verbose_name_plural = "deleted server memories"
