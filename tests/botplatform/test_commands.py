"""load_demo (idempotent demo data) and ensure_admin (password printed once, stored only hashed)."""

from __future__ import annotations

import re
from decimal import Decimal
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from simple_history.models import HistoricalChanges

from community.forget import forget_user
from personas.actions import Actor, set_privacy_level, update_personal_memory
from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID, DEMO_USERS
from personas.models import (
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    Server,
    ServerEmoji,
    ServerMember,
    ServerSettings,
)

pytestmark = pytest.mark.django_db


def _row_counts() -> dict[str, int]:
    # The audit trail is left out: a re-run renews the demo block's expiry, which its history records.
    models = [m for m in apps.get_app_config("personas").get_models() if not issubclass(m, HistoricalChanges)]
    return {m._meta.label: m._default_manager.count() for m in models}


def test_load_demo_creates_once_and_then_changes_nothing() -> None:
    out = StringIO()
    call_command("load_demo", stdout=out)
    lines = out.getvalue().splitlines()
    assert len(lines) >= 7 and lines[-1] == "Demo server 'Night Owls Demo' is ready."
    first = _row_counts()
    memory_ids = sorted(PersonalMemory.objects.values_list("pk", flat=True))
    again = StringIO()
    call_command("load_demo", stdout=again)
    assert again.getvalue() == "Demo 'Night Owls Demo' already present, nothing changed (--reset rebuilds it).\n"
    assert _row_counts() == first
    assert sorted(PersonalMemory.objects.values_list("pk", flat=True)) == memory_ids


def test_a_rerun_keeps_moderators_work_and_forget_me() -> None:
    """What ``make run`` did on every start: a corrected memory came back as a duplicate, a
    forgotten user got their reminder back, privacy levels, prices and settings were reset."""
    call_command("load_demo", stdout=StringIO())
    moderator = Actor.system("a moderator's edits")
    mina = DiscordUser.objects.get(user_disc_id=DEMO_USERS["mina"])
    memory = PersonalMemory.objects.filter(user=mina, content__contains="chemistry").get()
    update_personal_memory(memory, content="{user} passed the chemistry exam", actor=moderator)
    set_privacy_level(DiscordUser.objects.get(user_disc_id=DEMO_USERS["jun"]), PrivacyLevel.FULL, actor=moderator)
    ServerSettings.objects.filter(server__server_disc_id=DEMO_SERVER_DISC_ID).update(
        llm_input_price=Decimal("2.50"), message_fetch_limit=20
    )
    forget_user(DEMO_USERS["mina"], actor=moderator)
    before = _row_counts()

    call_command("load_demo", stdout=StringIO())
    call_command("load_demo", stdout=StringIO())

    assert _row_counts() == before
    assert not PersonalMemory.objects.filter(user=mina).exists()
    assert not Reminder.objects.filter(user_discord_id=DEMO_USERS["mina"]).exists()
    assert DiscordUser.objects.get(user_disc_id=DEMO_USERS["mina"]).user_nickname is None
    assert DiscordUser.objects.get(user_disc_id=DEMO_USERS["jun"]).privacy_level == PrivacyLevel.FULL
    demo_settings = ServerSettings.objects.get(server__server_disc_id=DEMO_SERVER_DISC_ID)
    assert (demo_settings.llm_input_price, demo_settings.message_fetch_limit) == (Decimal("2.50"), 20)


def test_reset_rebuilds_the_demo_without_duplicates() -> None:
    call_command("load_demo", stdout=StringIO())
    fresh = _row_counts()
    mina = DiscordUser.objects.get(user_disc_id=DEMO_USERS["mina"])
    PersonalMemory.objects.filter(user=mina).update(content="edited")
    out = StringIO()
    call_command("load_demo", "--reset", stdout=out)
    assert "removed the previous demo server" in out.getvalue()
    # The rebuilt personas get new lineage ids (the registry keeps every id ever issued, by design)
    # and the new server its own version counter.
    registries = {"personas.PersonaLineage": 2, "personas.PersonalizationVersion": 1}
    assert _row_counts() == {label: n + registries.get(label, 0) for label, n in fresh.items()}
    assert not PersonalMemory.objects.filter(content="edited").exists()


def test_if_no_servers_leaves_a_database_with_servers_alone() -> None:
    Server.objects.create(server_disc_id="904493457735819999", name="A real community")
    before = _row_counts()
    out = StringIO()
    call_command("load_demo", "--if-no-servers", stdout=out)
    assert out.getvalue() == "This database already has servers: the demo is not loaded (DEMO=1 loads it).\n"
    assert _row_counts() == before
    assert not Server.objects.filter(server_disc_id=DEMO_SERVER_DISC_ID).exists()


def test_if_no_servers_loads_the_demo_into_an_empty_database() -> None:
    call_command("load_demo", "--if-no-servers", stdout=StringIO())
    assert Server.objects.filter(server_disc_id=DEMO_SERVER_DISC_ID).exists()


def test_load_demo_covers_every_case_the_demo_promises() -> None:
    call_command("load_demo", stdout=StringIO())
    server = Server.objects.get(server_disc_id=DEMO_SERVER_DISC_ID)
    assert server.name == "Night Owls Demo"
    main = Persona.objects.get(server=server, is_alter=False)
    alter = Persona.objects.get(server=server, is_alter=True)
    assert (main.persona_nickname, alter.persona_nickname) == ("Tomori", "Pip")
    for persona in (main, alter):
        assert {a.is_public for a in persona.attributes.all()} == {True, False}
    levels = set(DiscordUser.objects.values_list("privacy_level", flat=True))
    assert {PrivacyLevel.MINIMAL, PrivacyLevel.PARTIAL, PrivacyLevel.FULL} <= levels
    lineages = set(PersonalMemory.objects.values_list("persona_lineage_id", flat=True))
    assert {GLOBAL_LINEAGE_ID, main.persona_lineage_id, alter.persona_lineage_id} <= lineages
    assert server.server_memories.exists()
    assert Reminder.objects.filter(server=server, self_reminder=True, persona=main).exists()
    assert Reminder.objects.filter(server=server, self_reminder=False).exists()
    assert PersonalizationBlacklist.objects.filter(server=server).exists()
    assert PersonaUserBlock.objects.filter(server=server, persona=alter).exists()
    assert ServerMember.objects.filter(server=server).exclude(roles=[]).exists()


def test_load_demo_discord_ids_are_realistic_snowflakes() -> None:
    """Every Discord id the demo writes (server, channel, users, members and their roles, reminder
    targets, blacklist and block entries, emojis) is 17–20 ASCII digits, as on Discord."""
    call_command("load_demo", stdout=StringIO())
    server = Server.objects.get(server_disc_id=DEMO_SERVER_DISC_ID)
    members = ServerMember.objects.filter(server=server)
    ids = {
        server.server_disc_id,
        *DiscordUser.objects.values_list("user_disc_id", flat=True),
        *members.values_list("user_disc_id", flat=True),
        *(role["id"] for roles in members.values_list("roles", flat=True) for role in roles),
        *Reminder.objects.values_list("channel_disc_id", flat=True),
        *Reminder.objects.values_list("user_discord_id", flat=True),
        *PersonalizationBlacklist.objects.values_list("user_disc_id", flat=True),
        *PersonaUserBlock.objects.values_list("user_disc_id", flat=True),
        *ServerEmoji.objects.values_list("emoji_disc_id", flat=True),
    }
    assert len(ids) > 10
    assert sorted(i for i in ids if not re.fullmatch(r"[0-9]{17,20}", i)) == []


def test_load_demo_help_describes_it(capsys) -> None:
    with pytest.raises(SystemExit):
        call_command("load_demo", "--help")
    assert "Night Owls Demo" in capsys.readouterr().out


@pytest.fixture
def no_admin_env(monkeypatch):
    for name in ("DJANGO_SUPERUSER_USERNAME", "DJANGO_SUPERUSER_PASSWORD", "DJANGO_SUPERUSER_EMAIL"):
        monkeypatch.delenv(name, raising=False)


def test_ensure_admin_prints_a_generated_password_once(no_admin_env) -> None:
    first = StringIO()
    call_command("ensure_admin", stdout=first)
    password = re.search(r"password: (\S+)", first.getvalue()).group(1)
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_superuser and admin.password != password
    assert authenticate(username="admin", password=password) == admin
    second = StringIO()
    call_command("ensure_admin", stdout=second)
    assert password not in second.getvalue()
    assert "An admin account exists" in second.getvalue()
    assert get_user_model().objects.count() == 1


def test_ensure_admin_from_environment_does_not_print_the_password(no_admin_env, monkeypatch) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_USERNAME", "mod")
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", "correct horse battery")
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    call_command("ensure_admin", stdout=out)
    assert "correct horse battery" not in out.getvalue()
    assert authenticate(username="mod", password="correct horse battery") is not None
    assert get_user_model().objects.filter(is_superuser=True).count() == 1
