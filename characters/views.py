"""The one public page of cards: an imported alter's picture, which Discord fetches for its webhook posts."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from personas.models import PersonaCard


@require_safe
def card_avatar(request: HttpRequest, persona_id: int) -> HttpResponse:
    """The picture alone, as the import re-encoded it (no card text, no metadata of the original file):
    public like any avatar Discord shows, and nothing else of the persona."""
    avatar = PersonaCard.objects.filter(persona_id=persona_id).values_list("avatar", flat=True).first()
    if not avatar:
        raise Http404("No card picture.")
    response = HttpResponse(bytes(avatar), content_type="image/png")
    response["X-Content-Type-Options"] = "nosniff"
    response["Cache-Control"] = "public, max-age=3600"
    return response
