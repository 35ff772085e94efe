"""Small things of the console (issue 32 item 8), through Django's test client: the admin home by task
with its entry points, /favicon.ico, "View site", static files logged quietly, the playground's labels,
its MINIMAL first speaker and what the echo provider cannot do."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from botplatform.management.commands.serve import access_log
from personas.models import PrivacyLevel, ServerModerator
from tests.bot.playground.conftest import Demo

pytestmark = pytest.mark.django_db


@pytest.fixture
def root(db: None) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw-root-small"))
    return client


def page(client: Client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_the_admin_home_groups_models_by_task_with_entry_points(root: Client) -> None:
    home = page(root, reverse("admin:index"))
    captions = re.findall(r"<caption>(.*?)</caption>", home, re.S)
    assert captions == ["Start here", "People", "Personas and memories", "Turns", "Settings and access"]
    people = home.split("<caption>People</caption>", 1)[1].split("</table>", 1)[0]
    assert "Discord users" in people and "Prompt records" not in people
    assert f'action="{reverse("admin:personas_discorduser_changelist")}"' in home and 'name="q"' in home
    assert f'href="{reverse("admin:chatcontext_promptrecord_changelist")}" id="recent-turns"' in home
    settings_group = home.split("<caption>Settings and access</caption>", 1)[1]
    assert "Periodic tasks" in settings_group and "API tokens" in settings_group


def test_a_moderator_s_home_offers_only_what_they_may_open(demo: Demo) -> None:
    alice = get_user_model().objects.create_user("alice", password="pw-alice-small", is_staff=True)
    ServerModerator.objects.create(server=demo.server, user=alice)
    client = Client()
    client.force_login(alice)
    home = page(client, reverse("admin:index"))
    assert "Find a user" in home and "Recent turns" in home
    assert "Periodic tasks" not in home and ">Groups<" not in home


def test_favicon_and_view_site(root: Client) -> None:
    response = root.get("/favicon.ico")
    assert response.status_code == 302 and response["Location"].endswith("/personas/favicon.ico")
    found = finders.find("personas/favicon.ico")
    assert found is not None and Path(found).read_bytes()[:4] == b"\x00\x00\x01\x00"  # an ICO file
    home = page(root, reverse("admin:index"))
    assert re.search(r'<a href="/playground/">View site</a>', home)


def test_static_files_served_fine_are_logged_at_debug_others_at_info() -> None:
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    serve_logger = logging.getLogger("botplatform.serve")
    handler = Keep(level=logging.DEBUG)
    serve_logger.addHandler(handler)
    serve_logger.setLevel(logging.DEBUG)
    try:
        for path, status in (("/static/admin/css/base.css", 200), ("/static/missing.css", 404), ("/admin/", 200)):
            access_log(None, "complete", {"method": "GET", "path": path, "status": status})
    finally:
        serve_logger.removeHandler(handler)
        serve_logger.setLevel(logging.NOTSET)
    assert [(r.levelno, r.getMessage()) for r in records] == [
        (logging.DEBUG, "GET /static/admin/css/base.css 200"),
        (logging.INFO, "GET /static/missing.css 404"),
        (logging.INFO, "GET /admin/ 200"),
    ]


def test_the_playground_labels_its_fields_starts_minimal_and_says_what_echo_cannot_do(
    demo: Demo, root: Client, settings: Any
) -> None:
    html = page(root, reverse("playground:index") + f"?server={demo.server.pk}")
    assert re.search(r"<label>Topic <input name=\"topic\"", html)
    assert '<label for="pg-content"' in html
    selected = re.search(r'<option value="(\d+)" data-privacy="(\w+)" selected>', html)
    assert selected is not None and selected.group(2) == PrivacyLevel.MINIMAL.name
    banner = re.search(r'<div class="pg-banner" id="pg-echo-banner">(.*?)</div>', html, re.S).group(1)  # type: ignore[union-attr]
    assert "tool-capable model" in " ".join(banner.split())
