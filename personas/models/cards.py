"""Character cards and lorebooks (world info) brought from SillyTavern (issue 31; README "Bringing characters").

A card's fields that the persona has a column for live on the persona (name, description as its prompt,
example dialogue, avatar link); the rest live here, so an exported card gives back what was imported.
"""

from __future__ import annotations

from django.db import models

from personas.models.history import audit_trail
from personas.models.personas import Persona
from personas.models.servers import Server


class PersonaCard(models.Model):
    """The card fields of an imported persona that have no persona column, kept as the card had them."""

    persona = models.OneToOneField(Persona, on_delete=models.CASCADE, primary_key=True, related_name="card")
    spec = models.CharField(
        max_length=16, default="chara_card_v3", help_text="The card version it was imported from (v1 for flat cards)."
    )
    personality = models.TextField(blank=True, default="", help_text="A short summary of the character's manner.")
    scenario = models.TextField(blank=True, default="", help_text="The situation the conversation happens in.")
    first_message = models.TextField(blank=True, default="", help_text="The card's greeting. Kept, not sent.")
    alternate_greetings = models.JSONField(default=list, blank=True, help_text="Other greetings. Kept, not sent.")
    system_prompt = models.TextField(
        blank=True, default="", help_text="The card's system prompt: under a preset, its main prompt."
    )
    post_history_instructions = models.TextField(
        blank=True,
        default="",
        help_text="The card's instructions after the history: under a preset, its post-history prompt.",
    )
    creator_notes = models.TextField(blank=True, default="", help_text="The author's notes for people, not the model.")
    creator = models.CharField(max_length=200, blank=True, default="")
    character_version = models.CharField(max_length=100, blank=True, default="")
    tags = models.JSONField(default=list, blank=True)
    extensions = models.JSONField(
        default=dict, blank=True, help_text="The card's extensions (scripts included), kept as data and never run."
    )
    avatar = models.BinaryField(null=True, blank=True, help_text="The card's PNG picture, served for alters' webhooks.")
    imported_at = models.DateTimeField(auto_now_add=True)

    history = audit_trail(excluded_fields=["avatar"])

    class Meta:
        db_table = "persona_cards"

    def __str__(self) -> str:
        return f"card of {self.persona_id}"


class Lorebook(models.Model):
    """A world-info book: a server's (every persona reads it) or one persona's."""

    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="lorebooks")
    persona = models.ForeignKey(
        Persona,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="lorebooks",
        help_text="Empty: every persona of the server reads it.",
    )
    name = models.CharField(max_length=200, blank=True, default="")
    description = models.TextField(blank=True, default="")
    scan_depth = models.PositiveIntegerField(
        default=2, help_text="How many of the newest history messages are scanned for keys."
    )
    token_budget = models.PositiveIntegerField(
        default=2048, help_text="Most tokens (estimated) its fired entries may take; lower order is dropped first."
    )
    recursive_scanning = models.BooleanField(default=False, help_text="Kept from the book; not applied.")
    extensions = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    history = audit_trail()

    class Meta:
        db_table = "lorebooks"
        ordering = ["server_id", "id"]

    def __str__(self) -> str:
        return self.name or f"lorebook {self.pk}"


class LorebookEntry(models.Model):
    class Logic(models.TextChoices):
        AND_ANY = "and_any", "AND ANY"
        NOT_ALL = "not_all", "NOT ALL"
        NOT_ANY = "not_any", "NOT ANY"
        AND_ALL = "and_all", "AND ALL"

    class Position(models.TextChoices):
        BEFORE_CHAR = "before_char", "before the character"
        AFTER_CHAR = "after_char", "after the character"
        AT_DEPTH = "at_depth", "at depth"

    lorebook = models.ForeignKey(Lorebook, on_delete=models.CASCADE, related_name="entries")
    uid = models.IntegerField(help_text="The entry's id in its book.")
    comment = models.CharField(max_length=500, blank=True, default="", help_text="The entry's title.")
    keys = models.JSONField(default=list, blank=True)
    secondary_keys = models.JSONField(default=list, blank=True)
    selective = models.BooleanField(default=False, help_text="On: the secondary keys and logic apply.")
    selective_logic = models.CharField(max_length=8, choices=Logic.choices, default=Logic.AND_ANY)
    content = models.TextField(blank=True, default="")
    constant = models.BooleanField(default=False, help_text="On: always enters the prompt, keys or not.")
    enabled = models.BooleanField(default=True)
    insertion_order = models.IntegerField(default=100, help_text="Higher goes nearer the end and is kept first.")
    position = models.CharField(max_length=12, choices=Position.choices, default=Position.BEFORE_CHAR)
    depth = models.PositiveIntegerField(default=4, help_text="At depth: how many messages from the end.")
    scan_depth = models.PositiveIntegerField(null=True, blank=True, help_text="Empty: the book's.")
    case_sensitive = models.BooleanField(null=True, blank=True, help_text="Empty: no (SillyTavern's default).")
    match_whole_words = models.BooleanField(null=True, blank=True, help_text="Empty: yes (SillyTavern's default).")
    extensions = models.JSONField(default=dict, blank=True)

    history = audit_trail()

    class Meta:
        db_table = "lorebook_entries"
        ordering = ["lorebook_id", "insertion_order", "uid"]
        constraints = [models.UniqueConstraint(fields=["lorebook", "uid"], name="lorebook_entry_uid_unique")]

    def __str__(self) -> str:
        return self.comment or ", ".join(str(k) for k in self.keys)[:80]
