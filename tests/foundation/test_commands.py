"""load_demo (idempotent demo data) and ensure_admin (password printed once, stored only hashed)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import authenticate, get_user_model
from django.core.management import call_command
from simple_history.models import HistoricalChanges

from personas.management.commands.load_demo import DEMO_SERVER_DISC_ID
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
)

pytestmark = pytest.mark.django_db


def _row_counts() -> dict[str, int]:
    # The audit trail is left out: a re-run renews the demo block's expiry, which its history records.
    models = [m for m in apps.get_app_config("personas").get_models() if not issubclass(m, HistoricalChanges)]
    return {m._meta.label: m._default_manager.count() for m in models}


def test_load_demo_is_idempotent_and_reports_each_step() -> None:
    out = StringIO()
    call_command("load_demo", stdout=out)
    first = _row_counts()
    memory_ids = sorted(PersonalMemory.objects.values_list("pk", flat=True))
    call_command("load_demo", stdout=StringIO())
    assert _row_counts() == first
    assert sorted(PersonalMemory.objects.values_list("pk", flat=True)) == memory_ids
    lines = out.getvalue().splitlines()
    assert len(lines) >= 7 and lines[-1] == "Demo server 'Night Owls Demo' is ready."


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
