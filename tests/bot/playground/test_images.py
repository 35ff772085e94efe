"""The playground and the inspector show the images sent with a turn (issue 18): a playground upload
reaches a vision server's model from its stored file, and both pages show its thumbnail through the
playground's attachment view."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from bot.conversation.media import ImageRefused
from bot.playground.images import UploadImageFetcher
from bot.playground.models import PlaygroundMessage
from bot.playground.service import send_playground_message
from personas.models import ServerSettings
from tests.bot.image_server import png_bytes
from tests.bot.playground.conftest import MINA, Demo

pytestmark = pytest.mark.django_db


def send_photo(demo: Demo, *, vision: bool):  # type: ignore[no-untyped-def]
    ServerSettings.objects.filter(server=demo.server).update(model_accepts_images=vision)
    photo = SimpleUploadedFile("owl.png", png_bytes(), "image/png")
    [record] = send_playground_message(demo.channel, MINA, f"{demo.mention()} what is this?", attachments=[photo])
    return record


def test_the_images_sent_with_a_turn_show_in_the_playground_panel_and_the_inspector(demo):
    record = send_photo(demo, vision=True)

    message = PlaygroundMessage.objects.get(disc_id=record.trigger_message_disc_id)
    thumbnail = reverse("playground:attachment", args=[message.disc_id, message.attachments[0]["id"]])
    [sent] = record.images["sent"]
    assert sent["filename"] == "owl.png" and sent["size"] == len(png_bytes()) and sent["content_type"] == "image/png"
    assert sent["preview_url"] == thumbnail and record.images["not_sent"] == []
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    panel = client.get(reverse("playground:record_panel", args=[record.pk])).content.decode()
    inspector = client.get(reverse("admin:chatcontext_promptrecord_change", args=[record.pk])).content.decode()
    for page in (panel, inspector):
        assert f'<img src="{thumbnail}"' in page and "Sent to the model with this turn (1)" in page
    assert client.get(thumbnail).status_code == 200


def test_a_text_only_server_sends_no_image_and_the_panel_says_why(demo):
    record = send_photo(demo, vision=False)

    assert record.images["sent"] == []
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    panel = client.get(reverse("playground:record_panel", args=[record.pk])).content.decode()
    assert "<img" not in panel and "the server&#x27;s model does not accept images" in panel


async def test_only_stored_uploads_are_read(tmp_path):
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    for url in (outside.as_uri(), "https://cdn.discordapp.com/a.png"):
        with pytest.raises(ImageRefused, match="not a playground upload"):
            await UploadImageFetcher().fetch(url, max_bytes=1 << 20)
