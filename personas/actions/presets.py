"""A SillyTavern chat-completion preset given to a persona (issue 31 item 4)."""

from __future__ import annotations

from django.db import transaction

from personas.actions.actor import Actor, recording
from personas.models import Persona, PersonaPreset, PersonaSampling
from personas.presets import ParsedPreset


def import_preset(persona: Persona, preset: ParsedPreset, *, actor: Actor) -> PersonaPreset:
    """Give ``persona`` the preset: its prompt order replaces any earlier preset's, and the sampling
    settings it carries replace the persona's own (those it does not carry, such as stop strings,
    stay). ``preset`` was checked whole by ``personas.presets.parse_preset``: nothing here can fail
    half-way, and a failure writes nothing."""
    with recording(actor), transaction.atomic(durable=True):
        row, _ = PersonaPreset.objects.update_or_create(
            persona=persona, defaults={"name": preset.name, "nodes": list(preset.nodes), "source": preset.source}
        )
        sampling, _ = PersonaSampling.objects.get_or_create(persona=persona)
        for field, value in preset.sampling.items():
            setattr(sampling, field, value)
        sampling.full_clean()
        sampling.save()
    return row
