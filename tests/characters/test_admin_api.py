"""Cards in the console (upload → preview → save, download) and over the API (upload, download), each
scoped to the caller's servers; refused files are a form error or a 4xx and write nothing; an
imported alter's picture is served for Discord."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image

from personas.models import ApiToken, LorebookEntry, Persona, PersonaCard, Server, ServerModerator
from tests.characters import factory
from tests.characters.conftest import row_counts

pytestmark = pytest.mark.django_db

IMPORT_URL = "/admin/personas/persona/import-card/"


@pytest.fixture
def uploads(settings: Any, tmp_path: Path) -> Path:
    settings.VAR_DIR = tmp_path
    return tmp_path / "card-uploads"


def moderator_of(server: Server, name: str = "alice") -> Client:
    account = get_user_model().objects.create_user(name, is_staff=True)
    ServerModerator.objects.create(server=server, user=account)
    client = Client()
    client.force_login(account)
    return client


def upload(client: Client, server: Server, data: bytes, *, alter: bool = True) -> Any:
    file = SimpleUploadedFile("card.png", data, content_type="image/png")
    return client.post(IMPORT_URL, {"server": server.pk, "file": file, **({"alter": "on"} if alter else {})})


def test_the_console_previews_a_card_then_saves_it(server: Server, uploads: Path) -> None:
    client = moderator_of(server)
    assert 'href="/admin/personas/persona/import-card/"' in client.get("/admin/personas/persona/").content.decode()
    before = row_counts()

    preview = upload(client, server, factory.card_png(factory.v2_card()))

    page = preview.content.decode()
    assert preview.status_code == 200 and "Iris Vale (chara_card_v2)" in page
    assert "Joins <b>Saltmere</b> as a new alter" in page and "regex_scripts" in page and "never run" in page
    assert "lighthouse, beacon" in page  # the lorebook's entries
    assert row_counts() == before and len(list(uploads.iterdir())) == 1  # nothing saved yet

    token = preview.context["token"]
    saved = client.post(IMPORT_URL, {"token": token})

    persona = Persona.objects.get(server=server, persona_nickname="Iris Vale")
    assert saved.status_code == 302 and saved["Location"] == f"/admin/personas/persona/{persona.pk}/change/"
    assert persona.is_alter and LorebookEntry.objects.filter(lorebook__persona=persona).count() == 4
    assert list(uploads.iterdir()) == []
    assert client.post(IMPORT_URL, {"token": token}).status_code == 404  # a token saves once


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (factory.png_without_card(), "holds no character card"),
        (factory.truncated_png(), "The PNG is refused"),
        (factory.json_no_card(), "not a character card"),
        (factory.png_bomb(), "too many pixels"),
        (factory.oversized(), "more than 20 MB"),
    ],
)
def test_a_file_that_is_no_card_is_a_form_error_and_writes_nothing(
    server: Server, uploads: Path, data: bytes, error: str
) -> None:
    client = moderator_of(server)
    before = row_counts()
    response = upload(client, server, data)
    assert response.status_code == 200 and error in response.content.decode()
    assert row_counts() == before and not uploads.exists()


def test_a_moderator_imports_only_into_their_own_servers(server: Server, uploads: Path) -> None:
    other = Server.objects.create(server_disc_id="910000000000009999", name="Elsewhere")
    alice = moderator_of(server)
    response = upload(alice, other, factory.card_png(factory.v2_card()))
    assert "Select a valid choice" in response.content.decode()
    # Another account cannot use alice's preview.
    token = upload(alice, server, factory.card_png(factory.v2_card())).context["token"]
    assert moderator_of(server, "bob").post(IMPORT_URL, {"token": token}).status_code == 404
    assert not Persona.objects.filter(persona_nickname="Iris Vale").exists()


def test_a_name_clash_at_saving_says_why(server: Server, uploads: Path) -> None:
    client = moderator_of(server)
    token = upload(client, server, factory.card_png(factory.v2_card())).context["token"]
    Persona.objects.create(server=server, persona_nickname="Iris Vale", is_alter=True)
    response = client.post(IMPORT_URL, {"token": token}, follow=True)
    assert "Not imported: This server already has a persona named Iris Vale" in response.content.decode()
    assert list(uploads.iterdir()) == []


def test_the_console_downloads_a_card_of_its_own_servers_only(server: Server) -> None:
    persona = Persona.objects.get(server=server, is_alter=False)
    client = moderator_of(server)
    page = client.get(f"/admin/personas/persona/{persona.pk}/change/").content.decode()
    assert f"/admin/personas/persona/{persona.pk}/card.png" in page

    png = client.get(f"/admin/personas/persona/{persona.pk}/card.png")
    assert png.status_code == 200 and png["Content-Disposition"] == 'attachment; filename="tomori.png"'
    with Image.open(io.BytesIO(png.content)) as image:
        image.load()
        assert json.loads(base64.b64decode(image.text["ccv3"]))["data"]["name"] == "Tomori"
    assert json.loads(client.get(f"/admin/personas/persona/{persona.pk}/card.json").content)["spec"] == "chara_card_v3"

    other = Server.objects.create(server_disc_id="910000000000009998", name="Elsewhere")
    theirs = Persona.objects.create(server=other, persona_nickname="Theirs")
    assert client.get(f"/admin/personas/persona/{theirs.pk}/card.png").status_code == 404


def _api(token: str) -> Client:
    return Client(headers={"authorization": f"Bearer {token}"})


def test_the_api_imports_a_card_and_downloads_it(server: Server) -> None:
    _, write = ApiToken.issue(server, "cards", ApiToken.Scope.READ_WRITE)
    client = _api(write)
    file = SimpleUploadedFile("card.json", factory.json_bytes(factory.v3_card()))

    response = client.post(f"/api/v1/servers/{server.server_disc_id}/cards", {"file": file})

    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["persona_nickname"], body["is_alter"], body["trigger_words"]) == ("Iris Vale", True, ["iris vale"])
    card = client.get(f"/api/v1/personas/{body['persona_id']}/card.json")
    assert card.status_code == 200 and card.json()["data"]["character_book"]["name"] == "Harbour lore"
    assert client.get(f"/api/v1/personas/{body['persona_id']}/card.png")["Content-Type"] == "image/png"


@pytest.mark.parametrize(
    ("data", "status", "detail"),
    [
        (factory.png_without_card(), 400, "holds no character card"),
        (factory.json_no_card(), 400, "not a character card"),
        (factory.truncated_png(), 400, "The PNG is refused"),
        (factory.png_bomb(), 400, "too many pixels"),
        (factory.oversized(), 413, "at most 20 MB"),
    ],
)
def test_the_api_refuses_a_file_that_is_no_card_and_writes_nothing(
    server: Server, data: bytes, status: int, detail: str
) -> None:
    _, write = ApiToken.issue(server, "cards", ApiToken.Scope.READ_WRITE)
    before = row_counts()
    response = _api(write).post(
        f"/api/v1/servers/{server.server_disc_id}/cards", {"file": SimpleUploadedFile("x.png", data)}
    )
    assert response.status_code == status and detail in response.json()["detail"]
    assert row_counts() == before


def test_the_api_is_scoped_and_a_read_token_cannot_import(server: Server) -> None:
    other = Server.objects.create(server_disc_id="910000000000009997", name="Elsewhere")
    theirs = Persona.objects.create(server=other, persona_nickname="Theirs")
    _, read = ApiToken.issue(server, "read", ApiToken.Scope.READ)
    _, write = ApiToken.issue(server, "write", ApiToken.Scope.READ_WRITE)
    card = {"file": SimpleUploadedFile("c.json", factory.json_bytes(factory.v2_card()))}
    assert _api(read).post(f"/api/v1/servers/{server.server_disc_id}/cards", card).status_code == 403
    assert _api(write).post(f"/api/v1/servers/{other.server_disc_id}/cards", card).status_code == 404
    assert _api(write).get(f"/api/v1/personas/{theirs.pk}/card.png").status_code == 404
    assert not Persona.objects.filter(persona_nickname="Iris Vale").exists()


def test_an_imported_alters_picture_is_served_for_its_webhook(server: Server) -> None:
    _, write = ApiToken.issue(server, "cards", ApiToken.Scope.READ_WRITE)
    file = SimpleUploadedFile("card.png", factory.card_png(factory.v2_card()))
    persona_id = _api(write).post(f"/api/v1/servers/{server.server_disc_id}/cards", {"file": file}).json()["persona_id"]

    response = Client().get(f"/cards/{persona_id}/avatar.png")

    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert response.content == bytes(PersonaCard.objects.get(persona_id=persona_id).avatar)
    main = Persona.objects.get(server=server, is_alter=False)
    assert Client().get(f"/cards/{main.pk}/avatar.png").status_code == 404
