"""The admin's side of issue 31 items 4–6: importing a preset from a file (a bad file is a form error
and writes nothing), a persona's sampling settings, and a server's fallback endpoints chosen among
the approved ones."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from personas.models import PersonaPreset, PersonaSampling, Server, ServerModerator, ServerSettings
from tests.bot.playground.conftest import Demo
from tests.botplatform.conftest import settings_form
from tests.personas.presets.preset_files import DEFAULT, real_preset

IMPORT = reverse("admin:personas_personapreset_add")
SAMPLING = reverse("admin:personas_personasampling_add")


def moderator_of(server: Server, name: str) -> Client:
    account = get_user_model().objects.create_user(name, is_staff=True)
    ServerModerator.objects.create(server=server, user=account)
    client = Client()
    client.force_login(account)
    return client


def upload(data: bytes, name: str = "preset.json") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/json")


def test_a_moderator_imports_the_real_preset_and_reads_its_prompt_order(demo: Demo) -> None:
    mod = moderator_of(demo.server, "mod")

    response = mod.post(IMPORT, {"persona": demo.tomori.pk, "file": upload(DEFAULT.read_bytes(), DEFAULT.name)})

    assert response.status_code == 302
    preset = PersonaPreset.objects.get(persona=demo.tomori)
    assert preset.name == DEFAULT.name
    assert PersonaSampling.objects.get(persona=demo.tomori).max_reply_tokens == 300
    page = mod.get(reverse("admin:personas_personapreset_change", args=[preset.pk])).content.decode()
    assert "chatHistory" in page and "Write {{char}}&#x27;s next reply" in page


@pytest.mark.parametrize(
    ("data", "error"),
    [
        (json.dumps(real_preset() | {"temperature": 9}).encode(), "Not imported: temperature: 9 is outside 0 to 2."),
        (b"\x89PNG\r\n\x1a\n", "Not imported: not a JSON file (UnicodeDecodeError)."),
        (b'{"spec": "chara_card_v2"}', "Not imported: not a SillyTavern chat-completion preset"),
    ],
)
def test_an_unusable_file_is_a_form_error_and_nothing_is_written(demo: Demo, data: bytes, error: str) -> None:
    response = moderator_of(demo.server, "mod").post(IMPORT, {"persona": demo.tomori.pk, "file": upload(data)})

    assert response.status_code == 200
    assert error in response.content.decode()
    assert not PersonaPreset.objects.exists() and not PersonaSampling.objects.exists()


def test_a_moderator_cannot_import_for_another_servers_persona(demo: Demo) -> None:
    other = Server.objects.create(server_disc_id="880000000000000001", name="Elsewhere")
    response = moderator_of(other, "stranger").post(
        IMPORT, {"persona": demo.tomori.pk, "file": upload(DEFAULT.read_bytes())}
    )

    assert response.status_code == 200 and "Select a valid choice" in response.content.decode()
    assert not PersonaPreset.objects.exists()


def sampling_form(demo: Demo, **fields: Any) -> dict[str, Any]:
    return {"persona": demo.pip.pk, "stop": "", **fields}


def test_sampling_settings_are_saved_and_checked(demo: Demo) -> None:
    mod = moderator_of(demo.server, "mod")

    refused = mod.post(SAMPLING, sampling_form(demo, temperature="2.5", stop="a, b, c, d, e"))
    assert refused.status_code == 200
    page = refused.content.decode()
    assert "Ensure this value is less than or equal to 2.0." in page
    assert "stop: 5 strings, at most 4" in page
    assert not PersonaSampling.objects.exists()

    assert mod.post(SAMPLING, sampling_form(demo, temperature="0.8", stop="###, User:", seed="7")).status_code == 302
    saved = PersonaSampling.objects.get(persona=demo.pip).value()
    assert (saved.temperature, saved.stop, saved.seed) == (0.8, ("###", "User:"), 7)


def test_a_moderator_orders_the_fallback_endpoints_among_the_approved_ones(demo: Demo, settings: Any) -> None:
    approved = {"base_url": "http://127.0.0.1:9/v1", "api_key": "", "model": "m"}
    settings.LLM_APPROVED_ENDPOINTS = {"local": approved, "spare": approved}
    mod = moderator_of(demo.server, "mod")
    url = reverse("admin:personas_server_change", args=[demo.server.pk])

    refused = mod.post(url, settings_form(demo.server, llm_fallback_endpoints="spare, elsewhere"))
    assert "“elsewhere” is not an endpoint the operator approved (LLM_APPROVED_ENDPOINTS: local, spare)." in (
        refused.content.decode()
    )
    assert ServerSettings.objects.get(server=demo.server).llm_fallback_endpoints == []

    assert mod.post(url, settings_form(demo.server, llm_fallback_endpoints="spare, local")).status_code == 302
    assert ServerSettings.objects.get(server=demo.server).llm_fallback_endpoints == ["spare", "local"]
