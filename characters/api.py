"""Cards over the API: upload a SillyTavern card as a persona, download a persona as a card."""

from __future__ import annotations

from typing import Annotated, Literal

from django.http import HttpRequest, HttpResponse
from ninja import File, Form, Path, Router, Status
from ninja.errors import HttpError
from ninja.files import UploadedFile

from characters.downloads import card_download
from characters.errors import CardError
from characters.files import MAX_CARD_BYTES, read_card
from personas.actions.cards import import_card
from personas.api import PersonaOut
from personas.api_common import (
    MAX_ID,
    READ_ERRORS,
    WRITE_ERRORS,
    Integer,
    ServerKey,
    get_or_404,
    principal,
    scoped_server,
    writer,
)
from personas.models import Persona

router = Router(tags=["cards"])

PersonaId = Annotated[
    Integer, Path(ge=1, le=MAX_ID, description="The persona's persona_id, as the persona list gives it.")
]
CardKind = Annotated[Literal["png", "json"], Path(description="`png` or `json`.")]

CARD_UPLOAD_EXAMPLE = {"file": "(a .png, .json or .charx card)", "alter": True}


@router.post(
    "/servers/{server_id}/cards",
    response={201: PersonaOut, **WRITE_ERRORS},
    openapi_extra={"requestBody": {"content": {"multipart/form-data": {"example": CARD_UPLOAD_EXAMPLE}}}},
)
def upload_card(
    request: HttpRequest, server_id: ServerKey, file: File[UploadedFile], alter: Form[bool] = True
) -> Status:
    """Import a SillyTavern character card (PNG with a `ccv3` or `chara` chunk, JSON or CHARX; Character
    Card V1, V2 or V3) as a new alter of the server, or with `alter=false` as its main persona (which
    then takes the character and a new lineage). The card's lorebook comes with it. A file that is no
    card is a 400 (over 20 MB a 413) and writes nothing."""
    actor = writer(request)
    server = scoped_server(request, server_id)
    if file.size is not None and file.size > MAX_CARD_BYTES:
        raise HttpError(413, f"A card may have at most {MAX_CARD_BYTES // 1024 // 1024} MB.")
    try:
        card = read_card(file.read(MAX_CARD_BYTES + 1))
    except CardError as exc:
        raise HttpError(400, str(exc)) from exc
    return Status(201, import_card(server, card, as_alter=alter, actor=actor))


@router.get("/personas/{persona_id}/card.{kind}", response={200: None, **READ_ERRORS})
def download_card(request: HttpRequest, persona_id: PersonaId, kind: CardKind) -> HttpResponse:
    """A persona as a SillyTavern card: `png` (its picture with the V2 card in `chara` and the V3 card in
    `ccv3`) or `json` (V3). Personas of servers the caller cannot see are a 404."""
    scoped = principal(request).scope(Persona.objects.all(), "server_id")
    return card_download(get_or_404(scoped, "persona", persona_id=persona_id), kind)
