"""What the personas know about one user: the single builder behind the admin's user view, its JSON
download, the API's export and the member's own ``/privacy export`` (issue 16).

``build_user_export(user, server_ids)`` reads everything the platform keeps about the user that
reaches the prompts of ``server_ids``: the memories of those servers' personas' lineages and the
global ones (lineage 0, which every persona reads), the naming preferences of those lineages, the
reminders for or by them, persona blocks and blacklist entries there, and the newest prompt records
about them there. ``server_ids=None`` is every server: a superuser's view, and the user's own export
(it is all theirs). A moderator passes their servers and gets nothing of any other server — not its
lineages' memories, its records, nor its name.

The answer is plain JSON values (ids of Discord as strings, times as ISO 8601 text), so the three
exports are the same bytes for the same scope.
"""

from __future__ import annotations

import json
from typing import Any

from django.db.models import Q
from django.utils import timezone

from chatcontext.records.user_records import newest_records_about
from personas.memory_text import persona_name, user_name
from personas.models import (
    GLOBAL_LINEAGE_ID,
    PROFILE_FIELDS,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    Server,
    ServerMember,
    UserPersonaNamingPreference,
)
from personas.times import iso
from personas.values.placeholders import fill_placeholders

FORMAT = "tomori-user-export/1"
RECORD_LIMIT = 20
# Who reads a global (lineage 0) memory, in the page's words. Its `read_by` stays an empty list (the
# format's one type) beside `read_by_every_persona`: a list of one scope's personas would read as if the
# others did not (and, with every server in scope, would list the whole platform).
EVERY_PERSONA = "every persona of every server"
EVERY_SERVER = "A privacy level and forget-me apply on every server the user is on, never to one server alone."

# What each level keeps from the personas, in the words a member or moderator uses.
PRIVACY_HIDES = {
    PrivacyLevel.MINIMAL: "Nothing. The personas may use their messages, memories, saved names, pronouns, "
    "appearance, presence and roles.",
    PrivacyLevel.PARTIAL: "Their personal details. Their messages stay in the conversation, but no persona gets "
    "their memories, saved nickname, pronouns or gender, appearance, presence or roles.",
    PrivacyLevel.FULL: "Everything. Their messages are left out of every prompt, they cannot make a persona "
    "answer, and none of their personal details are used.",
}


def _scoped(queryset: Any, server_ids: frozenset[int] | None, field: str = "server_id") -> Any:
    return queryset if server_ids is None else queryset.filter(**{f"{field}__in": sorted(server_ids)})


def _lineage_holders(user: DiscordUser, server_ids: frozenset[int] | None) -> dict[int, list[dict[str, Any]]]:
    """Lineage id → the personas of the scope's servers that read it (lineage 0: all of them). Every
    server: only the personas of the lineages holding something of the user, not the whole platform."""
    holders: dict[int, list[dict[str, Any]]] = {}
    personas = _scoped(Persona.objects.order_by("server_id", "is_alter", "persona_id"), server_ids)
    if server_ids is None:
        own = PersonalMemory.objects.filter(user=user).values("persona_lineage_id")
        named = UserPersonaNamingPreference.objects.filter(user=user).values("persona_lineage_id")
        personas = personas.filter(Q(persona_lineage_id__in=own) | Q(persona_lineage_id__in=named))
    for persona_id, nickname, lineage_id, server_id, server_name, server_disc_id in personas.values_list(
        "persona_id", "persona_nickname", "persona_lineage_id", "server_id", "server__name", "server__server_disc_id"
    ):
        holders.setdefault(lineage_id, []).append(
            {
                "persona_id": persona_id,
                "persona": nickname,
                "server_id": server_id,
                "server": server_name or f"server {server_disc_id}",
            }
        )
    return holders


def _memories(user: DiscordUser, holders: dict[int, list[dict[str, Any]]], everything: bool) -> list[dict[str, Any]]:
    rows = PersonalMemory.objects.filter(user=user)
    if not everything:
        rows = rows.filter(persona_lineage_id__in=sorted({*holders, GLOBAL_LINEAGE_ID}))
    by_lineage: dict[int, list[dict[str, Any]]] = {}
    # {bot} is the lineage's first persona in scope, as the holders list them (main persona first).
    bots = {lineage_id: personas[0]["persona"] for lineage_id, personas in holders.items() if personas}
    name = user_name(user)
    for memory in rows.order_by("persona_lineage_id", "-created_at", "-personal_memory_id"):
        by_lineage.setdefault(memory.persona_lineage_id, []).append(
            {
                "personal_memory_id": memory.personal_memory_id,
                "content": fill_placeholders(memory.content, name, persona_name(memory.persona_lineage_id, bots)),
                "tags": [str(t) for t in memory.tags or []],
                "created_at": iso(memory.created_at),
                "updated_at": iso(memory.updated_at),
            }
        )
    return [
        {
            "lineage_id": lineage_id,
            "global": lineage_id == GLOBAL_LINEAGE_ID,
            "read_by": [] if lineage_id == GLOBAL_LINEAGE_ID else holders.get(lineage_id, []),
            "read_by_every_persona": lineage_id == GLOBAL_LINEAGE_ID,
            "memories": memories,
        }
        for lineage_id, memories in by_lineage.items()
    ]


def _naming(user: DiscordUser, holders: dict[int, list[dict[str, Any]]], everything: bool) -> list[dict[str, Any]]:
    rows = UserPersonaNamingPreference.objects.filter(user=user)
    if not everything:
        rows = rows.filter(persona_lineage_id__in=sorted(holders))
    return [
        {"lineage_id": lid, "nickname": nickname, "prefix": prefix, "suffix": suffix}
        for lid, nickname, prefix, suffix in rows.order_by("persona_lineage_id").values_list(
            "persona_lineage_id", "nickname_override", "prefix_override", "suffix_override"
        )
    ]


def _reminders(user: DiscordUser, server_ids: frozenset[int] | None) -> list[dict[str, Any]]:
    rows = Reminder.objects.filter(Q(user_discord_id=user.user_disc_id) | Q(created_by_user=user))
    return [
        {
            "reminder_id": r.reminder_id,
            "server_id": r.server_id,
            "for_them": r.user_discord_id == user.user_disc_id,
            "by_them": r.created_by_user_id == user.pk,
            "purpose": r.reminder_purpose,
            "time": iso(r.reminder_time),
            "repeats_every_hours": r.repetition_interval_hours,
            "persona": r.persona.persona_nickname if r.persona else None,
            "status": r.status,
        }
        for r in _scoped(rows, server_ids).select_related("persona").order_by("reminder_time", "reminder_id")
    ]


def _blocks(user: DiscordUser, server_ids: frozenset[int] | None) -> list[dict[str, Any]]:
    now = timezone.now()
    rows = _scoped(PersonaUserBlock.objects.filter(user_disc_id=user.user_disc_id), server_ids)
    return [
        {
            "id": b.pk,
            "server_id": b.server_id,
            "persona": b.persona.persona_nickname,
            "block_type": b.block_type,
            "meaning": b.get_block_type_display(),
            "reason": b.reason,
            "expires_at": iso(b.expires_at),
            "active": b.expires_at > now,
        }
        for b in rows.select_related("persona").order_by("server_id", "persona_id")
    ]


def _blacklist(user: DiscordUser, server_ids: frozenset[int] | None) -> list[dict[str, Any]]:
    rows = _scoped(PersonalizationBlacklist.objects.filter(user_disc_id=user.user_disc_id), server_ids)
    return [
        {"id": pk, "server_id": server_id, "reason": reason, "created_at": iso(created_at)}
        for pk, server_id, reason, created_at in rows.order_by("server_id").values_list(
            "pk", "server_id", "reason", "created_at"
        )
    ]


def _memory_use(level: PrivacyLevel, enabled: bool, blacklisted: bool) -> str:
    """Whether this server's prompts get the user's memories and saved details, and why not."""
    if not enabled:
        return "no: personal memories are off on this server"
    if blacklisted:
        return "no: they are on this server's personalization blacklist"
    if level != PrivacyLevel.MINIMAL:
        return f"no: their privacy level is {level.name.title()}"
    return "yes"


def _servers(
    user: DiscordUser, server_ids: frozenset[int] | None, mentioned: set[int], blacklisted: set[int]
) -> list[dict[str, Any]]:
    """The servers of the scope the user is a member of or that hold something about them."""
    member_of = set(
        _scoped(ServerMember.objects.filter(user_disc_id=user.user_disc_id), server_ids).values_list(
            "server_id", flat=True
        )
    )
    wanted = sorted(member_of | mentioned)
    level = PrivacyLevel(user.privacy_level)
    rows = Server.objects.filter(pk__in=wanted).select_related("settings").order_by("server_id")
    return [
        {
            "server_id": s.server_id,
            "server_disc_id": s.server_disc_id,
            "name": str(s),
            "member": s.server_id in member_of,
            "memories_used": _memory_use(level, s.settings.personal_memories_enabled, s.server_id in blacklisted),
        }
        for s in rows
    ]


def build_user_export(user: DiscordUser, server_ids: frozenset[int] | None) -> dict[str, Any]:
    """Everything above, for ``server_ids`` (None: every server). The one export of the platform."""
    everything = server_ids is None
    holders = _lineage_holders(user, server_ids)
    level = PrivacyLevel(user.privacy_level)
    memories = _memories(user, holders, everything)
    reminders = _reminders(user, server_ids)
    blocks = _blocks(user, server_ids)
    blacklist = _blacklist(user, server_ids)
    records = newest_records_about(user.user_disc_id, server_ids, RECORD_LIMIT)
    mentioned = {
        *(p["server_id"] for lineage in memories if not lineage["global"] for p in lineage["read_by"]),
        *(row["server_id"] for row in (*reminders, *blocks, *blacklist, *records)),
    }
    blacklisted = {row["server_id"] for row in blacklist}
    return {
        "format": FORMAT,
        "scope": "every server" if everything else sorted(server_ids or ()),
        "user": {
            "user_disc_id": user.user_disc_id,
            "username": user.username,
            "global_name": user.global_name,
            "language": user.language_pref,
            **{name: getattr(user, name) for name in PROFILE_FIELDS},
        },
        "privacy": {
            "level": int(level),
            "name": level.name.title(),
            "label": level.label,
            "hides": PRIVACY_HIDES[level],
            "applies": EVERY_SERVER,
        },
        "servers": _servers(user, server_ids, mentioned, blacklisted),
        "memories": memories,
        "naming_preferences": _naming(user, holders, everything),
        "reminders": reminders,
        "persona_blocks": blocks,
        "blacklist": blacklist,
        "prompt_records": records,
    }


def export_file(user: DiscordUser, export: dict[str, Any]) -> tuple[str, bytes]:
    """The export as the file a moderator downloads and a member gets by DM: name and UTF-8 JSON."""
    body = json.dumps(export, indent=2, ensure_ascii=False, sort_keys=True)
    return f"tomori-user-{user.user_disc_id}.json", body.encode("utf-8")
