"""Every admin changelist with rows to fill it, and the statement bound a page of it keeps."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from django.utils import timezone

from personas.models import (
    GLOBAL_LINEAGE_ID,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    Reminder,
    Server,
    ServerMember,
    ServerMemory,
    UserPersonaNamingPreference,
)

# One bound for every changelist at 1 row and at 200 rows: session, user, count, page, filters,
# date hierarchy. A query per row would blow it at 200.
CHANGELIST_MAX_QUERIES = 12


def _personal_memories(n: int, server: Server, persona: Persona) -> None:
    users = _users(n)
    PersonalMemory.objects.bulk_create(
        PersonalMemory(
            user=u,
            persona_lineage_id=GLOBAL_LINEAGE_ID if i % 2 else persona.persona_lineage_id,
            content=f"memory {i}",
            tags=["t"],
        )
        for i, u in enumerate(users)
    )


def _discord_users(n: int, server: Server, persona: Persona) -> None:
    for u in _users(n):
        PersonalMemory.objects.create(user=u, persona_lineage_id=persona.persona_lineage_id, content="likes owls")


def _reminders(n: int, server: Server, persona: Persona) -> None:
    creator = _users(1)[0]
    Reminder.objects.bulk_create(
        Reminder(
            server=server,
            persona=persona if i % 3 else None,
            channel_disc_id="4200",
            user_discord_id=str(20_000 + i),
            reminder_purpose=f"task {i}",
            reminder_time=timezone.now() + timedelta(hours=i + 1),
            self_reminder=i % 2 == 0,
            created_by_user=creator,
        )
        for i in range(n)
    )


def _server_memories(n: int, server: Server, persona: Persona) -> None:
    author = _users(1)[0]
    ServerMemory.objects.bulk_create(
        ServerMemory(
            server=server, persona=persona, persona_lineage_id=persona.persona_lineage_id, user=author, content=f"m{i}"
        )
        for i in range(n)
    )


def _blacklist(n: int, server: Server, persona: Persona) -> None:
    _users(n)
    PersonalizationBlacklist.objects.bulk_create(
        PersonalizationBlacklist(server=server, user_disc_id=str(10_000 + i)) for i in range(n)
    )


def _blocks(n: int, server: Server, persona: Persona) -> None:
    PersonaUserBlock.objects.bulk_create(
        PersonaUserBlock(
            server=server,
            persona=persona,
            user_disc_id=str(30_000 + i),
            reason="spam",
            expires_at=timezone.now() + timedelta(days=1),
        )
        for i in range(n)
    )


def _members(n: int, server: Server, persona: Persona) -> None:
    ServerMember.objects.bulk_create(
        ServerMember(server=server, user_disc_id=str(40_000 + i), roles=[{"id": "1", "name": "Regular", "position": 1}])
        for i in range(n)
    )


def _personas(n: int, server: Server, persona: Persona) -> None:
    for i in range(n - 1):
        Persona.objects.create(server=server, persona_nickname=f"Alter {i}", is_alter=True)


def _servers(n: int, server: Server, persona: Persona) -> None:
    for i in range(n - 1):
        Server.objects.create(server_disc_id=str(50_000 + i), name=f"S{i}")


def _naming(n: int, server: Server, persona: Persona) -> None:
    UserPersonaNamingPreference.objects.bulk_create(
        UserPersonaNamingPreference(user=u, persona_lineage_id=persona.persona_lineage_id, nickname_override="N")
        for u in _users(n)
    )


def _users(n: int) -> list[DiscordUser]:
    return DiscordUser.objects.bulk_create(
        DiscordUser(user_disc_id=str(10_000 + i), username=f"u{i}", privacy_level=i % 3) for i in range(n)
    )


CHANGELISTS: dict[str, Callable[[int, Server, Persona], None]] = {
    "personalmemory": _personal_memories,
    "discorduser": _discord_users,
    "reminder": _reminders,
    "servermemory": _server_memories,
    "personalizationblacklist": _blacklist,
    "personauserblock": _blocks,
    "servermember": _members,
    "persona": _personas,
    "server": _servers,
    "userpersonanamingpreference": _naming,
}
