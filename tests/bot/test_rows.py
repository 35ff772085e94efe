"""First contact with a guild, a DM and a user (bot.conversation.state over personas.actions)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from bot.conversation.state import load_author_state, load_server_state
from chatcontext.core.types import Author
from chatcontext.repository import datetime_to_ms
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR

pytestmark = pytest.mark.django_db


def state(disc_id: str = "4100", *, is_dm: bool = False):  # type: ignore[no-untyped-def]
    return load_server_state(disc_id, name="Night Owls", is_dm=is_dm, locale="ja", default_persona="Tomori")


def test_a_new_guild_is_registered_once_with_a_main_persona():
    first = state()
    again = state()

    assert first == again
    assert [p.persona_nickname for p in first.personas] == ["Tomori"]
    assert first.personas[0].trigger_words == ("tomori",)
    assert first.config.preferred_locale == "ja" and not first.config.is_dm
    assert m.Server.objects.count() == 1 and m.Persona.objects.count() == 1


def test_a_dm_channel_is_its_own_pseudo_server():
    dm = state("777", is_dm=True)
    assert dm.config.is_dm and dm.main_persona is not None


def test_an_existing_server_keeps_its_personas_and_provider_settings(settings):
    settings.LLM_PROVIDER = settings.LLM_BASE_URL = settings.LLM_API_KEY = settings.LLM_MODEL = ""
    server = actions.register_server(
        "4100", name="x", is_dm=False, locale=None, main_persona_nickname="Mina", actor=TEST_ACTOR
    )
    m.ServerSettings.objects.filter(server=server).update(
        llm_provider="openai", llm_base_url="http://127.0.0.1:9/v1", llm_model="local-model"
    )

    loaded = state()

    assert [p.persona_nickname for p in loaded.personas] == ["Mina"]
    assert (loaded.provider.kind, loaded.provider.base_url, loaded.provider.model) == (
        "openai",
        "http://127.0.0.1:9/v1",
        "local-model",
    )


def test_author_state_registers_the_user_and_reads_active_mutes_and_the_blacklist():
    loaded = state()
    now = timezone.now()
    server = m.Server.objects.get(server_disc_id="4100")
    tomori = m.Persona.objects.get(server=server)
    m.PersonaUserBlock.objects.create(
        server=server, persona=tomori, user_disc_id="11", block_type="mute", reason="", expires_at=now + timedelta(1)
    )
    actions.add_to_blacklist(server, "11", actor=TEST_ACTOR)
    expired_for = m.Persona.objects.create(server=server, persona_nickname="Pip", is_alter=True)
    m.PersonaUserBlock.objects.create(
        server=server, persona=expired_for, user_disc_id="11", reason="", expires_at=now - timedelta(1)
    )

    author = load_author_state(
        loaded.server_id, Author(id="11", username="mina", global_name="Mina"), datetime_to_ms(now)
    )

    assert author.user_row.user_disc_id == "11" and author.user_row.global_name == "Mina"
    assert author.blacklisted
    assert author.muted_persona_ids == frozenset({tomori.persona_id})
