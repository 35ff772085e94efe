"""Small row builders for the foundation tests (models, admin, actions, commands)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from personas.models import DiscordUser, Persona, Reminder, Server

_ids = itertools.count(1000)


def next_disc_id() -> str:
    return str(900_000_000_000_000_000 + next(_ids))


@pytest.fixture
def make_server() -> Callable[..., Server]:
    def make(**fields: Any) -> Server:
        fields.setdefault("server_disc_id", next_disc_id())
        fields.setdefault("name", f"server {fields['server_disc_id']}")
        return Server.objects.create(**fields)

    return make


@pytest.fixture
def server(make_server: Callable[..., Server]) -> Server:
    return make_server()


@pytest.fixture
def main_persona(server: Server) -> Persona:
    return Persona.objects.create(server=server, persona_nickname="Tomori")


@pytest.fixture
def make_user() -> Callable[..., DiscordUser]:
    def make(**fields: Any) -> DiscordUser:
        fields.setdefault("user_disc_id", next_disc_id())
        fields.setdefault("username", f"user{fields['user_disc_id'][-4:]}")
        return DiscordUser.objects.create(**fields)

    return make


@pytest.fixture
def user(make_user: Callable[..., DiscordUser]) -> DiscordUser:
    return make_user()


@pytest.fixture
def make_reminder(server: Server) -> Callable[..., Reminder]:
    def make(**fields: Any) -> Reminder:
        fields.setdefault("server", server)
        fields.setdefault("channel_disc_id", "4200")
        fields.setdefault("user_discord_id", next_disc_id())
        fields.setdefault("reminder_purpose", "water the plants")
        fields.setdefault("reminder_time", timezone.now() + timedelta(hours=1))
        return Reminder.objects.create(**fields)

    return make


def settings_form(server: Server, **settings_fields: Any) -> dict[str, Any]:
    """The server change form with its settings inline, as a browser posts it; ``settings_fields``
    (``llm_endpoint="local"``) override or add fields of the inline."""
    fields = {
        "server": server.pk,
        "message_fetch_limit": 60,
        "timezone_offset": "0",
        "retention_days": 9,
        "max_images_per_turn": 4,
        "max_image_bytes": 4 * 1024 * 1024,
        "rp_channel_ids": "",
        "llm_provider": "",
        **settings_fields,
    }
    return {
        "server_disc_id": server.server_disc_id,
        "name": server.name,
        "settings-TOTAL_FORMS": 1,
        "settings-INITIAL_FORMS": 1,
        **{f"settings-0-{name}": value for name, value in fields.items()},
        "personas-TOTAL_FORMS": 0,
        "personas-INITIAL_FORMS": 0,
    }
