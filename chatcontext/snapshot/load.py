"""A snapshot's database-shaped parts (server, settings, emojis, stickers, personas, users, naming
preferences, sprite messages, memories, reminders, blacklist, blocks) written as rows, so the
ordinary batched loaders read them. Callers run it inside ``transaction.atomic()`` and roll back
(``chatcontext.replay`` does it on a private scratch database)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import router, transaction

from chatcontext import repository
from chatcontext.core.snapshot_format import check_references, doc_items
from chatcontext.core.snapshot_parse import parse_members
from personas import models as m
from personas.actions import versions

_SETTINGS_FIELDS = {f.name for f in m.ServerSettings._meta.get_fields()}
_USER_FIELDS = {f.name for f in m.DiscordUser._meta.get_fields()}


@dataclass(frozen=True)
class LoadedSnapshot:
    """Internal ids of the rows ``load_snapshot_rows`` wrote."""

    server_id: int
    persona_ids: dict[str, int]  # snapshot persona key → persona_id
    user_ids: dict[str, int]  # Discord user id → user_id


def _dt(ms: int) -> Any:
    return repository.ms_to_datetime(ms)


def _insert_with_created_at(model: type[Any], objs: list[Any], stamps: list[int]) -> None:
    """Insert in document order (memory ids render as `ID:N`, H-14), then restore the snapshot's
    creation times, which auto_now_add overrides at insert time: one update per distinct time."""
    created = model.objects.bulk_create(objs)
    by_stamp: dict[int, list[Any]] = {}
    for obj, stamp in zip(created, stamps, strict=True):
        by_stamp.setdefault(stamp, []).append(obj.pk)
    for stamp, pks in by_stamp.items():
        model.objects.filter(pk__in=pks).update(created_at=_dt(stamp))


def _load_assets(server: m.Server, server_doc: Mapping[str, Any]) -> None:
    """The emoji and sticker rows the turn read, in row order (BC7-08)."""
    m.ServerEmoji.objects.bulk_create(
        m.ServerEmoji(
            server=server,
            emoji_disc_id=e["id"],
            emoji_name=e["name"],
            is_animated=bool(e.get("animated")),
            emoji_desc=e.get("description") or "",
        )
        for e in server_doc.get("emojis") or []
    )
    m.ServerSticker.objects.bulk_create(
        m.ServerSticker(
            server=server, sticker_disc_id=s["id"], sticker_name=s["name"], sticker_desc=s.get("description") or ""
        )
        for s in server_doc.get("stickers") or []
    )


def load_snapshot_rows(doc: Mapping[str, Any]) -> LoadedSnapshot:
    """Write the snapshot's database rows so the normal batched loaders read them.

    Run it inside ``transaction.atomic()`` and roll back afterwards: the rows describe one
    replayed turn, never live state. Raises SnapshotError for an unknown persona key or trigger
    message (the same checks as ``validate_snapshot``).
    """
    check_references(doc)
    server_doc = doc["server"]
    server = m.Server.objects.create(
        server_disc_id=server_doc["disc_id"],
        name=server_doc["name"],
        description=server_doc.get("description") or "",
        is_dm_channel=bool(server_doc.get("is_dm")),
    )
    settings = {k: v for k, v in (server_doc.get("settings") or {}).items() if v is not None}
    unknown = set(settings) - _SETTINGS_FIELDS
    if unknown:  # the schema and the model disagree: a programming error, not bad input
        raise RuntimeError(f"snapshot settings without a model field: {sorted(unknown)}")
    if settings:
        m.ServerSettings.objects.filter(server=server).update(**settings)

    persona_ids: dict[str, int] = {}
    for p in doc_items(doc, "personas"):
        persona = m.Persona.objects.create(
            server=server,
            persona_nickname=p["persona_nickname"],
            is_alter=p["is_alter"],
            persona_lineage_id=p["persona_lineage_id"],
            trigger_words=list(p.get("trigger_words") or []),
            persona_prompt=p.get("persona_prompt"),
            physical_appearance_tags=list(p.get("physical_appearance_tags") or []),
            sample_dialogue=list(p.get("sample_dialogue") or []),
            naming_prefixes=dict(p.get("naming_prefixes") or {}),
            naming_suffixes=dict(p.get("naming_suffixes") or {}),
            naming_address_terms=dict(p.get("naming_address_terms") or {}),
            self_debug_enabled=bool(p.get("self_debug_enabled")),
        )
        persona_ids[p["key"]] = persona.persona_id
        m.PersonaAttribute.objects.bulk_create(
            m.PersonaAttribute(persona=persona, attribute_order=i, attribute_text=a["text"], is_public=a["is_public"])
            for i, a in enumerate(p.get("attributes") or [], start=1)
        )

    # bulk_create sets primary keys on PostgreSQL and SQLite ≥ 3.35 (RETURNING), in input order.
    users = m.DiscordUser.objects.bulk_create(
        m.DiscordUser(
            user_disc_id=u["disc_id"],
            **{k: v for k, v in u.items() if k != "disc_id" and v is not None and k in _USER_FIELDS},
        )
        for u in doc_items(doc, "users")
    )
    user_ids = {u.user_disc_id: u.user_id for u in users}
    m.UserPersonaNamingPreference.objects.bulk_create(
        m.UserPersonaNamingPreference(
            user_id=user_ids[n["user_disc_id"]],
            persona_lineage_id=n["persona_lineage_id"],
            nickname_override=n.get("nickname_override"),
            prefix_override=n.get("prefix_override"),
            suffix_override=n.get("suffix_override"),
        )
        for n in doc_items(doc, "naming_preferences")
    )
    # D-16 evidence: one counted message in the server, on the day of the turn.
    m.StatCounter.objects.bulk_create(
        m.StatCounter(
            server=server,
            user_id=user_ids[a["user_disc_id"]],
            metric="message_sent",
            bucket=_dt(doc["now_ms"]).date(),
            count=1,
        )
        for a in doc_items(doc, "server_activity")
    )
    _load_assets(server, server_doc)
    m.PersonaSpriteMessage.objects.bulk_create(
        m.PersonaSpriteMessage(
            message_disc_id=s["message_id"],
            persona_id=persona_ids[s["persona_key"]],
            sprite_name=s["sprite_name"],
            channel_disc_id=doc["channel"]["id"],
        )
        for s in doc_items(doc, "sprite_messages")
    )

    m.ServerMember.objects.bulk_create(
        m.ServerMember(
            server=server,
            user_disc_id=mem.user_disc_id,
            display_name=mem.display_name,
            nickname=mem.nickname,
            global_name=mem.global_name,
            username=mem.username,
            is_bot=mem.is_bot,
            roles=[{"id": r.id, "name": r.name, "position": r.position} for r in mem.roles],
            presence_status=mem.presence_status,
            activities=[{k: v for k, v in a.items() if v is not None} for a in (d.get("activities") or [])],
        )
        for mem, d in zip(parse_members(doc), doc_items(doc, "members"), strict=True)
    )
    # D-16's nickname branch selects among the server's member rows: a bare row for each user it
    # selected live without a member the transport fetched (format 4); the transport knows none of them.
    m.ServerMember.objects.bulk_create(
        m.ServerMember(server=server, user_disc_id=k["user_disc_id"]) for k in doc_items(doc, "known_users")
    )

    memories = [
        m.PersonalMemory(
            # Without an id the database numbers a memory after the highest given one (from 1 on an empty
            # scratch database), in document order.
            **({"personal_memory_id": pm["id"]} if pm.get("id") is not None else {}),
            user_id=user_ids[pm["user_disc_id"]],
            persona_lineage_id=pm["persona_lineage_id"],
            content=pm["content"],
            tags=list(pm.get("tags") or []),
        )
        for pm in doc_items(doc, "personal_memories")
    ]
    _insert_with_created_at(
        m.PersonalMemory, memories, [pm["created_at_ms"] for pm in doc_items(doc, "personal_memories")]
    )

    server_memories = [
        m.ServerMemory(
            server=server,
            persona_lineage_id=sm["persona_lineage_id"],
            content=sm["content"],
            tags=list(sm.get("tags") or []),
        )
        for sm in doc_items(doc, "server_memories")
    ]
    _insert_with_created_at(
        m.ServerMemory, server_memories, [sm["created_at_ms"] for sm in doc_items(doc, "server_memories")]
    )

    bot_id = doc["bot_user"]["id"]
    channel_id = doc["channel"]["id"]
    for r in doc_items(doc, "reminders"):
        self_reminder = r.get("self_reminder")
        m.Reminder.objects.create(
            **({"reminder_id": r["id"]} if r.get("id") is not None else {}),
            server=server,
            channel_disc_id=r.get("channel_id") or channel_id,
            user_discord_id=r["user_disc_id"],
            reminder_purpose=r["purpose"],
            reminder_time=_dt(r["due_at_ms"]),
            repetition_interval_hours=r.get("repetition_interval_hours"),
            # A reminder aimed at the bot's own id is a persona self-task (data-model.md §2.13).
            self_reminder=(r["user_disc_id"] == bot_id) if self_reminder is None else self_reminder,
            persona_id=persona_ids[r["persona_key"]] if r.get("persona_key") else None,
        )

    m.PersonalizationBlacklist.objects.bulk_create(
        m.PersonalizationBlacklist(server=server, user_disc_id=b["user_disc_id"]) for b in doc_items(doc, "blacklist")
    )
    blocks: dict[tuple[int, str], m.PersonaUserBlock] = {}
    for b in doc_items(doc, "persona_user_blocks"):
        # A block without persona_key applies to every persona of the server.
        targets = [persona_ids[b["persona_key"]]] if b.get("persona_key") else list(persona_ids.values())
        for pid in targets:
            blocks[(pid, b["user_disc_id"])] = m.PersonaUserBlock(
                server=server,
                persona_id=pid,
                user_disc_id=b["user_disc_id"],
                block_type=b.get("block_type") or m.PersonaUserBlock.BlockType.BLOCK,
                reason=b.get("reason") or "",
                expires_at=_dt(b["expires_at_ms"]),
            )
    m.PersonaUserBlock.objects.bulk_create(blocks.values())
    # New user rows and blacklist entries: a process keeping rows of these ids must read them again.
    with transaction.atomic(using=router.db_for_write(m.PersonalizationVersion)):
        versions.bump_user_rows()
        versions.bump_server(server.server_id)
    return LoadedSnapshot(server_id=server.server_id, persona_ids=persona_ids, user_ids=user_ids)
