"""A persona's card as a file download (admin and API)."""

from __future__ import annotations

from django.http import HttpResponse
from django.utils.text import slugify

from characters.files import card_json_bytes, card_png
from characters.persona_card import persona_card
from personas.models import Persona


def card_download(persona: Persona, kind: str) -> HttpResponse:
    card = persona_card(persona)
    data, content_type = (card_png(card), "image/png") if kind == "png" else (card_json_bytes(card), "application/json")
    response = HttpResponse(data, content_type=content_type)
    name = slugify(persona.persona_nickname) or f"persona-{persona.persona_id}"
    response["Content-Disposition"] = f'attachment; filename="{name}.{kind}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response
