"""Issue 26 items 1, 2 and 16: an upload is what its bytes are. The playground keeps and serves an
upload by the type Pillow finds in it, never the uploader's ``content_type``: only an allowed raster
image is shown inline, anything else (an HTML page, an SVG, garbage) is a download. Every page carries
a Content-Security-Policy without inline script, and ``nosniff``. A decompression bomb or garbage
declared as an image is "not sent (why)" in the prompt record; the turn still answers."""

from __future__ import annotations

import io
from html.parser import HTMLParser

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile
from django.test import Client
from django.urls import reverse

from bot.conversation.image_bytes import NOT_AN_IMAGE, TOO_MANY_PIXELS
from bot.playground.models import PlaygroundMessage
from bot.playground.service import send_playground_message
from chatcontext.models import PromptRecord
from personas.models import ServerSettings
from tests.bot.image_server import GARBAGE, bomb_gif_bytes, png_bytes
from tests.bot.playground.conftest import MINA, Demo

pytestmark = pytest.mark.django_db

SCRIPT_PAGE = b"<html><body><script>fetch('/admin/password_change/')</script></body></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>'


@pytest.fixture
def root_client() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    return client


def post_files(demo: Demo, *uploads: UploadedFile, vision: bool = False) -> PlaygroundMessage:
    ServerSettings.objects.filter(server=demo.server).update(model_accepts_images=vision)
    send_playground_message(demo.channel, MINA, f"{demo.mention()} look", attachments=list(uploads))
    return PlaygroundMessage.objects.filter(is_bot=False).latest("id")


def served(client: Client, message: PlaygroundMessage, index: int):  # type: ignore[no-untyped-def]
    return client.get(reverse("playground:attachment", args=[message.disc_id, message.attachments[index]["id"]]))


def test_an_upload_is_kept_and_served_as_what_its_bytes_are(demo, root_client):
    message = post_files(
        demo,
        SimpleUploadedFile("page.html", SCRIPT_PAGE, "text/html"),
        SimpleUploadedFile("logo.svg", SVG, "image/svg+xml"),
        SimpleUploadedFile("owl.png", png_bytes(), "text/html"),
        SimpleUploadedFile("fake.png", GARBAGE, "image/png"),
        SimpleUploadedFile("bomb.gif", bomb_gif_bytes(), "image/gif"),
        SimpleUploadedFile("note.ogg", b"OggS", "audio/ogg"),
    )

    assert [a["content_type"] for a in message.attachments] == [None, None, "image/png", None, None, "audio/ogg"]
    for index in (0, 1, 3, 4, 5):  # not an allowed image: a download, never rendered on this origin
        response = served(root_client, message, index)
        assert response["Content-Type"] == "application/octet-stream"
        assert response["Content-Disposition"].startswith("attachment;")
        assert response["X-Content-Type-Options"] == "nosniff"
    png = served(root_client, message, 2)
    assert png["Content-Type"] == "image/png" and png["Content-Disposition"].startswith("inline;")
    assert b"".join(png.streaming_content) == png_bytes()


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [("bomb.gif", bomb_gif_bytes(), TOO_MANY_PIXELS), ("fake.png", GARBAGE, NOT_AN_IMAGE)],
)
def test_a_bomb_or_garbage_upload_is_not_sent_and_the_turn_still_answers(demo, name, data, reason):
    message = post_files(demo, SimpleUploadedFile(name, data, "image/png"), vision=True)

    reply = PlaygroundMessage.objects.get(is_bot=True, reply_to=message)
    assert reply.content
    [record] = PromptRecord.objects.filter(trigger_message_disc_id=message.disc_id)
    assert not record.error and record.images["sent"] == []
    [not_sent] = record.images["not_sent"]
    assert not_sent["filename"] == name and not_sent["reason"] == reason


class _InlineScripts(HTMLParser):
    """Inline code the policy would block: script elements a browser runs without a ``src``, and
    event-handler attributes (``onchange=…``)."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        inline_script = tag == "script" and not attributes.get("src") and attributes.get("type") != "application/json"
        if inline_script or any(name.startswith("on") for name in attributes):
            self.found.append((tag, attributes))


def test_every_kind_of_page_has_a_csp_without_inline_script_and_nosniff(demo, root_client):
    message = post_files(demo, SimpleUploadedFile("owl.png", png_bytes(), "image/png"))
    record = PromptRecord.objects.latest("id")
    pages = [
        reverse("admin:index"),
        reverse("admin:personas_server_changelist"),
        reverse("admin:chatcontext_promptrecord_change", args=[record.pk]),
        f"{reverse('playground:index')}?server={demo.server.pk}&channel={demo.channel.pk}",
        reverse("playground:record_panel", args=[record.pk]),
        reverse("playground:attachment", args=[message.disc_id, message.attachments[0]["id"]]),
        "/api/docs",
        "/no-such-page/",
    ]
    for url in pages:
        response = root_client.get(url)
        assert response.status_code in (200, 404), url
        policy = {d.split()[0]: d.split()[1:] for d in response["Content-Security-Policy"].split(";") if d.strip()}
        assert policy["default-src"] == ["'self'"] and policy["script-src"] == ["'self'"], url
        assert policy["object-src"] == ["'none'"] and policy["frame-ancestors"] == ["'none'"], url
        assert response["X-Content-Type-Options"] == "nosniff", url
        if response["Content-Type"].startswith("text/html"):
            parser = _InlineScripts()
            parser.feed(response.content.decode())
            assert parser.found == [], url


class ReadCounting(io.BytesIO):
    """An upload's file that notes how much each read returned."""

    def __init__(self, data: bytes) -> None:
        super().__init__(data)
        self.reads: list[int] = []

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.reads.append(len(data))
        return data


def test_an_upload_is_never_read_into_memory_whole_to_learn_its_type(demo):
    image = png_bytes()
    data = image + b"\0" * (4 * 1024 * 1024)  # a large file: its header is all the type needs
    # As a large upload Django spooled to disk: read in chunks (SimpleUploadedFile is all in memory).
    file = ReadCounting(data)
    upload = UploadedFile(file, "big.png", content_type="text/plain", size=len(data))
    message = post_files(demo, upload)

    [kept] = message.attachments
    assert kept["content_type"] == "image/png" and kept["size"] == len(data)
    assert max(file.reads) <= upload.DEFAULT_CHUNK_SIZE  # read in pieces: the header, then the copy to disk
    assert sum(file.reads) >= len(data)  # and the whole of it was saved
