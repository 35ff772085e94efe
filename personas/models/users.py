from __future__ import annotations

from django.db import models

from personas.models.history import audit_trail
from personas.models.servers import Server
from personas.validators import validate_discord_id


class PrivacyLevel(models.IntegerChoices):
    MINIMAL = 0, "Minimal (full personalization)"
    PARTIAL = 1, "Partial (messages visible, no personal enrichments)"
    FULL = 2, "Full (messages removed from context)"


class AddressingStyle(models.TextChoices):
    MASCULINE = "masculine"
    FEMININE = "feminine"
    NEUTRAL = "neutral"


# What a user told the platform about themselves. Forget-me clears these fields (the row stays, with
# its privacy level), and a stored snapshot whose user row holds any of them is about that user
# (``chatcontext.records.subject_user_ids``); usernames, global names and settings are not profile.
PROFILE_FIELDS = (
    "user_nickname",
    "prefix_override",
    "suffix_override",
    "addressing_style",
    "gender_identity",
    "pronouns",
    "timezone_offset",
    "physical_appearance_tags",
    "nai_char_ref_url",
    "impersonation_prompt",
)


class DiscordUser(models.Model):
    """A Discord account with its personalization (`users` + `user_personalization_configs`)."""

    user_id = models.BigAutoField(primary_key=True)
    user_disc_id = models.CharField("Discord user ID", max_length=20, unique=True, validators=[validate_discord_id])
    username = models.CharField(max_length=100, blank=True, default="")
    global_name = models.CharField(max_length=100, null=True, blank=True)
    language_pref = models.CharField(max_length=16, default="en-US")
    registration_locale = models.CharField(max_length=16, null=True, blank=True)
    privacy_level = models.SmallIntegerField(choices=PrivacyLevel.choices, default=PrivacyLevel.MINIMAL)
    user_nickname = models.TextField(null=True, blank=True, help_text="Saved nickname; empty = follow the live name.")
    prefix_override = models.TextField(
        null=True,
        blank=True,
        help_text="Put before their name by every persona. Empty = each persona's own prefix for their addressing "
        "style applies.",
    )
    suffix_override = models.TextField(
        null=True,
        blank=True,
        help_text="Put after their name by every persona. Empty = each persona's own suffix for their addressing "
        "style applies.",
    )
    addressing_style = models.CharField(max_length=16, choices=AddressingStyle.choices, null=True, blank=True)
    gender_identity = models.TextField(null=True, blank=True)
    pronouns = models.TextField(null=True, blank=True)
    timezone_offset = models.SmallIntegerField(null=True, blank=True)
    physical_appearance_tags = models.JSONField(default=list, blank=True)
    nai_char_ref_url = models.TextField(null=True, blank=True)
    impersonation_prompt = models.TextField(null=True, blank=True)
    personal_dtm = models.CharField(max_length=8, default="follow")
    personal_deliberate_tool_mode = models.CharField(max_length=8, default="follow")
    allow_impersonation = models.BooleanField(
        default=False,
        help_text="The member allowed personas to write messages as them (/impersonate), with /privacy "
        "impersonation. Never for Privacy-Full or blacklisted members.",
    )
    shortterm_cache_crossserver_opt_in = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    history = audit_trail()

    class Meta:
        db_table = "users"
        verbose_name = "Discord user"
        ordering = ["user_id"]
        # Participant discovery's index of saved nicknames by their first characters (D-16) is SQL
        # of its own database in migration 0016: its expression differs between SQLite and PostgreSQL.
        constraints = [
            models.CheckConstraint(condition=models.Q(privacy_level__in=[0, 1, 2]), name="user_privacy_level_valid"),
            models.CheckConstraint(
                condition=models.Q(addressing_style__isnull=True)
                | models.Q(addressing_style__in=["masculine", "feminine", "neutral"]),
                name="user_addressing_style_valid",
            ),
            models.CheckConstraint(
                condition=models.Q(timezone_offset__isnull=True)
                | models.Q(timezone_offset__gte=-12, timezone_offset__lte=14),
                name="user_timezone_offset_range",
            ),
        ]

    def __str__(self) -> str:
        return self.global_name or self.username or self.user_disc_id


class UserPersonaNamingPreference(models.Model):
    user = models.ForeignKey(DiscordUser, on_delete=models.CASCADE, related_name="naming_preferences")
    persona_lineage_id = models.BigIntegerField("lineage")
    nickname_override = models.TextField(
        null=True, blank=True, help_text="What the personas of this lineage call them, instead of their nickname."
    )
    prefix_override = models.TextField(
        null=True, blank=True, help_text="Before their name, for this lineage only. Empty = the user's own prefix."
    )
    suffix_override = models.TextField(
        null=True, blank=True, help_text="After their name, for this lineage only. Empty = the user's own suffix."
    )

    class Meta:
        db_table = "user_persona_naming_preferences"
        verbose_name = "naming preference"
        constraints = [
            models.UniqueConstraint(fields=["user", "persona_lineage_id"], name="naming_pref_unique_per_lineage"),
        ]

    def __str__(self) -> str:
        return f"naming of {self.user_id} for lineage {self.persona_lineage_id}"


class StatCounter(models.Model):
    server = models.ForeignKey(Server, on_delete=models.CASCADE, related_name="stat_counters")
    user = models.ForeignKey(DiscordUser, on_delete=models.CASCADE, related_name="stat_counters")
    persona_lineage_id = models.BigIntegerField(default=0)
    metric = models.CharField(max_length=32)
    metric_key = models.CharField(max_length=64, default="", blank=True)
    bucket = models.DateField()
    count = models.BigIntegerField(default=0)
    first_at = models.DateTimeField(null=True, blank=True)
    last_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "stat_counters"
        constraints = [
            models.UniqueConstraint(
                fields=["server", "user", "persona_lineage_id", "metric", "metric_key", "bucket"],
                name="stat_counter_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.metric} {self.bucket}: {self.count}"
