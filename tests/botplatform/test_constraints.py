"""Every schema invariant of data-model.md §4 (and the per-entity constraints of §2) rejects a violating row.

Each test first writes a row at the allowed boundary (so a failure cannot come from elsewhere), then
the violating row inside ``transaction.atomic()`` so the savepoint rollback keeps the test usable.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from personas.models import (
    FIRST_LINEAGE_ID,
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    Persona,
    PersonaAttribute,
    PersonaLineage,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    Server,
    ServerMember,
    ServerSettings,
    UserPersonaNamingPreference,
)

pytestmark = pytest.mark.django_db


@contextmanager
def rejects() -> Iterator[None]:
    """``pytest.raises(IntegrityError)`` around a savepoint, so the outer test transaction survives."""
    with pytest.raises(IntegrityError), transaction.atomic():
        yield


def test_inv1_one_main_persona_per_server(server: Server, main_persona: Persona) -> None:
    Persona.objects.create(server=server, persona_nickname="Pip", is_alter=True)
    with rejects():
        Persona.objects.create(server=server, persona_nickname="Second main", is_alter=False)


def test_inv1_main_personas_of_different_servers_coexist(make_server, main_persona: Persona) -> None:
    Persona.objects.create(server=make_server(), persona_nickname="Tomori")
    assert Persona.objects.filter(is_alter=False).count() == 2


@pytest.mark.parametrize("clash", ["Tomori", "tomori", "  TOMORI ", "Tomori "])
def test_inv2_nickname_unique_per_server_case_insensitive_and_trimmed(
    server: Server, main_persona: Persona, clash: str
) -> None:
    with rejects():
        Persona.objects.create(server=server, persona_nickname=clash, is_alter=True)


def test_inv2_same_nickname_on_another_server_is_fine(make_server, main_persona: Persona) -> None:
    other = Persona.objects.create(server=make_server(), persona_nickname=" tomori ", is_alter=True)
    assert other.pk is not None


@pytest.mark.parametrize("lineage", [GLOBAL_LINEAGE_ID, 1, FIRST_LINEAGE_ID - 1, -5])
def test_inv3_persona_lineage_zero_or_below_10000_rejected(server: Server, lineage: int) -> None:
    with rejects():
        Persona.objects.create(server=server, persona_nickname="Broken", persona_lineage_id=lineage)


def test_inv3_persona_lineage_drawn_from_10000(server: Server) -> None:
    persona = Persona.objects.create(server=server, persona_nickname="Fresh")
    assert persona.persona_lineage_id >= FIRST_LINEAGE_ID


def test_inv3_memories_may_use_global_lineage_but_not_negative(user: DiscordUser) -> None:
    PersonalMemory.objects.create(user=user, persona_lineage_id=GLOBAL_LINEAGE_ID, content="likes tea")
    with rejects():
        PersonalMemory.objects.create(user=user, persona_lineage_id=-1, content="broken")


def test_lineage_registry_ids_start_at_10000() -> None:
    assert PersonaLineage.allocate("first") >= FIRST_LINEAGE_ID
    with rejects():
        PersonaLineage.objects.create(id=FIRST_LINEAGE_ID - 1, label="too low")


@pytest.mark.parametrize("level", [3, -1, 9])
def test_inv4_privacy_level_check(make_user, level: int) -> None:
    make_user(privacy_level=2)
    with rejects():
        make_user(privacy_level=level)


def test_inv4_addressing_style_check(make_user) -> None:
    make_user(addressing_style="neutral")
    make_user(addressing_style=None)
    with rejects():
        make_user(addressing_style="formal")


@pytest.mark.parametrize("offset", [-13, 15, 100])
def test_inv4_user_timezone_offset_range(make_user, offset: int) -> None:
    make_user(timezone_offset=-12)
    make_user(timezone_offset=14)
    with rejects():
        make_user(timezone_offset=offset)


def test_inv5_attribute_order_at_least_one(main_persona: Persona) -> None:
    PersonaAttribute.objects.create(persona=main_persona, attribute_order=1, attribute_text="kind")
    with rejects():
        PersonaAttribute.objects.create(persona=main_persona, attribute_order=0, attribute_text="zero")


def test_inv5_attribute_order_unique_per_persona(server: Server, main_persona: Persona) -> None:
    alter = Persona.objects.create(server=server, persona_nickname="Pip", is_alter=True)
    PersonaAttribute.objects.create(persona=main_persona, attribute_order=1, attribute_text="kind")
    PersonaAttribute.objects.create(persona=alter, attribute_order=1, attribute_text="loud")
    with rejects():
        PersonaAttribute.objects.create(persona=main_persona, attribute_order=1, attribute_text="again")


def test_unique_member_per_server(make_server, server: Server) -> None:
    ServerMember.objects.create(server=server, user_disc_id="11")
    ServerMember.objects.create(server=make_server(), user_disc_id="11")
    with rejects():
        ServerMember.objects.create(server=server, user_disc_id="11")


def test_inv7_blacklist_unique_per_server(make_server, server: Server) -> None:
    PersonalizationBlacklist.objects.create(server=server, user_disc_id="14")
    PersonalizationBlacklist.objects.create(server=make_server(), user_disc_id="14")
    with rejects():
        PersonalizationBlacklist.objects.create(server=server, user_disc_id="14")


def test_persona_block_unique_per_server_persona_user(server: Server, main_persona: Persona) -> None:
    expires = timezone.now() + timedelta(days=1)
    PersonaUserBlock.objects.create(
        server=server, persona=main_persona, user_disc_id="15", reason="spam", expires_at=expires
    )
    with rejects():
        PersonaUserBlock.objects.create(
            server=server,
            persona=main_persona,
            user_disc_id="15",
            block_type="mute",
            reason="again",
            expires_at=expires,
        )


def test_persona_block_type_check(server: Server, main_persona: Persona) -> None:
    expires = timezone.now() + timedelta(days=1)
    PersonaUserBlock.objects.create(
        server=server, persona=main_persona, user_disc_id="15", block_type="mute", reason="x", expires_at=expires
    )
    with rejects():
        PersonaUserBlock.objects.create(
            server=server, persona=main_persona, user_disc_id="16", block_type="ban", reason="x", expires_at=expires
        )


def test_naming_preference_unique_per_user_and_lineage(user: DiscordUser) -> None:
    UserPersonaNamingPreference.objects.create(user=user, persona_lineage_id=10000, nickname_override="Birdie")
    UserPersonaNamingPreference.objects.create(user=user, persona_lineage_id=10001, nickname_override="Captain")
    with rejects():
        UserPersonaNamingPreference.objects.create(user=user, persona_lineage_id=10000, nickname_override="Again")


def test_reminder_repetition_at_least_one_hour(make_reminder) -> None:
    make_reminder(repetition_interval_hours=None)
    make_reminder(repetition_interval_hours=1)
    with rejects():
        make_reminder(repetition_interval_hours=0)


def test_inv6_reminder_persona_set_null_on_delete(server: Server, make_reminder) -> None:
    alter = Persona.objects.create(server=server, persona_nickname="Pip", is_alter=True)
    reminder = make_reminder(persona=alter)
    alter.delete()
    reminder.refresh_from_db()
    assert reminder.persona_id is None


def test_server_disc_id_unique(server: Server) -> None:
    with rejects():
        Server.objects.create(server_disc_id=server.server_disc_id)


def test_server_settings_created_with_server_and_range_checked(server: Server) -> None:
    assert ServerSettings.objects.filter(server=server).exists()
    with rejects():
        ServerSettings.objects.filter(server=server).update(timezone_offset=15)
    with rejects():
        ServerSettings.objects.filter(server=server).update(humanizer_degree=4)


def test_persona_humanizer_degree_0_to_3(server: Server) -> None:
    Persona.objects.create(server=server, persona_nickname="Calm", humanizer_degree=3)
    with rejects():
        Persona.objects.create(server=server, persona_nickname="Wild", is_alter=True, humanizer_degree=4)


def test_inv8_memories_survive_their_persona(server: Server, user: DiscordUser) -> None:
    """No FK from memories to personas: deleting a persona keeps its lineage's memories (§2.9)."""
    persona = Persona.objects.create(server=server, persona_nickname="Gone")
    PersonalMemory.objects.create(user=user, persona_lineage_id=persona.persona_lineage_id, content="likes owls")
    persona.delete()
    assert PersonalMemory.objects.filter(persona_lineage_id=persona.persona_lineage_id).count() == 1
