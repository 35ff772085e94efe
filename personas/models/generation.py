"""How a persona's replies are asked for (issue 31 items 4 and 5): its sampling settings and the
SillyTavern preset that orders its prompt. One row of each per persona at most; none = the
provider's defaults and the native prompt order."""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from personas.models.personas import Persona
from personas.values.sampling import RANGES, SEED_RANGE, Sampling


def _range(name: str) -> list[MinValueValidator | MaxValueValidator]:
    low, high = RANGES[name]
    return [MinValueValidator(low), MaxValueValidator(high)]


class PersonaSampling(models.Model):
    """Empty fields are not sent: the provider's default applies."""

    persona = models.OneToOneField(Persona, on_delete=models.CASCADE, primary_key=True, related_name="sampling")
    temperature = models.FloatField(
        null=True, blank=True, validators=_range("temperature"), help_text="0–2: higher is more varied."
    )
    top_p = models.FloatField("top p", null=True, blank=True, validators=_range("top_p"), help_text="0–1.")
    max_reply_tokens = models.PositiveIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(1)],
        help_text="The longest reply in tokens; never more than the platform's LLM_MAX_REPLY_TOKENS.",
    )
    presence_penalty = models.FloatField(
        null=True, blank=True, validators=_range("presence_penalty"), help_text="-2–2."
    )
    frequency_penalty = models.FloatField(
        null=True, blank=True, validators=_range("frequency_penalty"), help_text="-2–2."
    )
    stop = models.JSONField(
        "stop strings",
        default=list,
        blank=True,
        help_text="Up to 4 texts; the reply ends before the first one it would write.",
    )
    seed = models.BigIntegerField(
        null=True,
        blank=True,
        validators=[MinValueValidator(SEED_RANGE[0]), MaxValueValidator(SEED_RANGE[1])],
        help_text="The same seed asks for the same reply to the same prompt, where the provider supports it.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "persona_sampling"
        verbose_name = "sampling settings"
        verbose_name_plural = "sampling settings"

    def __str__(self) -> str:
        return f"sampling of {self.persona}"

    def value(self) -> Sampling:
        return Sampling(
            temperature=self.temperature,
            top_p=self.top_p,
            max_reply_tokens=self.max_reply_tokens,
            presence_penalty=self.presence_penalty,
            frequency_penalty=self.frequency_penalty,
            stop=tuple(self.stop or ()),
            seed=self.seed,
        )


class PersonaPreset(models.Model):
    """A SillyTavern chat-completion preset imported for a persona (``personas.presets``)."""

    persona = models.OneToOneField(Persona, on_delete=models.CASCADE, primary_key=True, related_name="preset")
    name = models.CharField(max_length=100, help_text="The file it was imported from.")
    nodes = models.JSONField(
        default=list, help_text="The prompt order the preset gives: markers of the platform's slots and its own texts."
    )
    source = models.JSONField(
        default=dict, help_text="The preset as imported (keys this platform does not use are kept, unused)."
    )
    imported_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "persona_presets"

    def __str__(self) -> str:
        return f"{self.name} for {self.persona}"
