"""The turn snapshot a turn is stored with (turn-snapshot.md §4): what the pipeline read from
Discord (through the transport), the personas, emojis and stickers it used and the rows it could
read, taken right after the context is built (``chatcontext.captured``), minimised to what
the turn could show (``chatcontext.snapshot.minimise``: no privacy-FULL user's words, no memory the persona
cannot load).

``python manage.py replay_turn`` on an exported record rebuilds the same prompt offline. Reads are
batched: one query per kind of row. Field lists of settings and users follow the snapshot schema,
so the two cannot drift apart; server secrets (the LLM key and base URL) are no snapshot field, so
a snapshot never holds them and a replay never needs them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, Protocol

from chatcontext.core import snapshot_format
from chatcontext.core.config import StageConfig
from chatcontext.core.preset import Preset
from chatcontext.core.reminder_injection import reminder_applies
from chatcontext.core.types import (
    Attachment,
    Author,
    ChatTurn,
    ChatTurnContext,
    DiscordMessage,
    Embed,
    EmbedMedia,
    ForwardSnapshot,
    JSONDict,
    LoreEntryInfo,
    MemberInfo,
    PersonaInfo,
    ReactionEmoji,
    ShortTermNote,
)
from chatcontext.participants.candidates import ACTIVITY_METRICS, nickname_selected_ids
from chatcontext.participants.discovery import history_text
from chatcontext.repository import datetime_to_ms, ms_to_datetime
from chatcontext.snapshot.minimise import minimise_snapshot
from chatcontext.voice.models import VoiceTranscript
from personas import models as m

# Every table the Build Context stage reads, and the snapshot key that keeps what it read
# (turn-snapshot.md §1): tests/chatcontext/pipeline/test_capture_covers_reads.py fails when the stage reads a
# table that is not here, so a new read cannot go without its capture.
CAPTURED_TABLES: dict[type[Any], str] = {
    m.Server: "server",
    m.ServerSettings: "server.settings",
    m.ServerEmoji: "server.emojis",
    m.ServerSticker: "server.stickers",
    m.Persona: "personas",
    m.PersonaAttribute: "personas[].attributes",
    m.PersonaSpriteMessage: "sprite_messages, personas[].sprite_names",
    m.PersonaPreset: "personas[].preset",
    m.Lorebook: "personas[].lorebook",
    m.LorebookEntry: "personas[].lorebook",
    m.PersonaCard: "personas[].card",
    # Sent to the provider with the request; the stage never reads it (README, "Sampling").
    m.PersonaSampling: "",
    m.DiscordUser: "users",
    # The members the turn's transport read, which the replay writes back as member rows; D-16's nickname
    # branch also starts from member rows the transport never fetched: those it selects are known_users.
    m.ServerMember: "members, known_users",
    m.UserPersonaNamingPreference: "naming_preferences",
    m.StatCounter: "server_activity",
    m.PersonalMemory: "personal_memories",
    m.ServerMemory: "server_memories",
    m.Reminder: "reminders",
    m.PersonalizationBlacklist: "blacklist",
    m.PersonaUserBlock: "persona_user_blocks",
    VoiceTranscript: "voice_transcripts",
    # The counters that say whether kept user rows are current: no turn data, only cache validity.
    m.PersonalizationVersion: "",
}
MEDIA_KEYS = ("url", "proxy_url", "content_type", "width", "height")


@functools.cache
def _schema_keys(*path: str | int) -> tuple[str, ...]:
    node: Any = snapshot_format.schema()
    for key in path:
        node = node[key]
    return tuple(k for k in node["properties"] if k != "disc_id")


def settings_keys() -> tuple[str, ...]:
    return _schema_keys("properties", "server", "properties", "settings", "anyOf", 0)


def persona_key(persona_id: int | None) -> str:
    return f"persona-{persona_id}"


# ---------------------------------------------------------------------------------------------
# Discord-shaped parts (the inverse of chatcontext.snapshot.parse_message)
# ---------------------------------------------------------------------------------------------


def author_json(author: Author) -> JSONDict:
    return {
        "id": author.id,
        "username": author.username,
        "global_name": author.global_name,
        "display_name": author.display_name,
        "bot": author.bot,
    }


def attachment_json(attachment: Attachment) -> JSONDict:
    return {
        "id": attachment.id,
        "name": attachment.name,
        "url": attachment.url,
        "proxy_url": attachment.proxy_url or None,
        "content_type": attachment.content_type,
        "size": attachment.size,
    }


def _embed_media_json(media: EmbedMedia | None) -> JSONDict | None:
    return {"url": media.url, "proxy_url": media.proxy_url} if media else None


def embed_json(embed: Embed) -> JSONDict:
    return {
        "title": embed.title,
        "description": embed.description,
        "url": embed.url,
        "color": embed.color,
        "author_name": embed.author_name,
        "footer_text": embed.footer_text,
        "fields": [{"name": f.name, "value": f.value} for f in embed.fields],
        "image": _embed_media_json(embed.image),
        "thumbnail": _embed_media_json(embed.thumbnail),
    }


def _media_json(media: Any) -> JSONDict | None:
    if not isinstance(media, Mapping) or not media.get("url"):
        return None
    return {k: media[k] for k in MEDIA_KEYS if media.get(k) is not None}


def component_json(component: Mapping[str, Any]) -> JSONDict:
    """A Components-V2 node reduced to what the notice reader uses (BC6-04); buttons, selects and
    other interactive parts keep only their type."""
    out: JSONDict = {"type": component.get("type")}
    for key in ("id", "content", "description", "spoiler", "accent_color"):
        if component.get(key) is not None:
            out[key] = component[key]
    for key in ("media", "file"):
        if (media := _media_json(component.get(key))) is not None:
            out[key] = media
    if isinstance(component.get("accessory"), Mapping):
        out["accessory"] = component_json(component["accessory"])
    if isinstance(component.get("components"), list):
        out["components"] = [component_json(c) for c in component["components"] if isinstance(c, Mapping)]
    if isinstance(component.get("items"), list):
        out["items"] = [
            {"media": _media_json(i.get("media")), "description": i.get("description"), "spoiler": i.get("spoiler")}
            for i in component["items"]
            if isinstance(i, Mapping) and _media_json(i.get("media")) is not None
        ]
    return out


def forward_json(forward: ForwardSnapshot) -> JSONDict:
    return {
        "content": forward.content,
        "attachments": [attachment_json(a) for a in forward.attachments],
        "components": [component_json(c) for c in forward.components],
        "embeds": [embed_json(e) for e in forward.embeds],
        "stickers": [{"id": s.id, "name": s.name} for s in forward.stickers],
        "author": author_json(forward.author) if forward.author else None,
        "channel_id": forward.channel_id,
    }


def message_json(message: DiscordMessage, reaction_users: Mapping[tuple[str, ReactionEmoji], list[str]]) -> JSONDict:
    """One message as the snapshot stores it; reactions carry the reactors the pipeline fetched."""
    reference = message.reference
    return {
        "id": message.id,
        "channel_id": message.channel_id,
        "guild_id": message.guild_id,
        "type": message.type,
        "author": author_json(message.author),
        "member_display_name": message.member_display_name,
        "webhook_id": message.webhook_id,
        "content": message.content,
        "clean_content": message.clean_content,
        "created_timestamp": message.created_timestamp,
        "reference": (
            {"type": reference.type, "message_id": reference.message_id, "channel_id": reference.channel_id}
            if reference
            else None
        ),
        "message_snapshots": [forward_json(f) for f in message.message_snapshots],
        "attachments": [attachment_json(a) for a in message.attachments],
        "stickers": [{"id": s.id, "name": s.name} for s in message.stickers],
        "embeds": [embed_json(e) for e in message.embeds],
        "components": [component_json(c) for c in message.components],
        "reactions": [
            {
                "emoji": {"id": r.emoji.id, "name": r.emoji.name},
                "count": r.count,
                "users": reaction_users.get((message.id, r.emoji)),
            }
            for r in message.reactions
        ],
    }


def member_json(member: MemberInfo) -> JSONDict:
    return {
        "user_disc_id": member.user_disc_id,
        "username": member.username or member.user_disc_id,
        "global_name": member.global_name,
        "nickname": member.nickname,
        "is_bot": member.is_bot,
        "roles": [{"id": r.id, "name": r.name, "position": r.position} for r in member.roles],
        "presence_status": member.presence_status,
        "activities": [
            {"type": a.type, "name": a.name, "state": a.state, "started_at_ms": a.started_at_ms}
            for a in member.activities
        ],
    }


# ---------------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    return float(value) if isinstance(value, Decimal) else value


def persona_json(persona: PersonaInfo) -> JSONDict:
    return {
        "key": persona_key(persona.persona_id),
        "persona_nickname": persona.persona_nickname,
        "is_alter": persona.is_alter,
        "persona_lineage_id": persona.persona_lineage_id,
        "trigger_words": list(persona.trigger_words),
        "persona_prompt": persona.persona_prompt,
        "physical_appearance_tags": list(persona.physical_appearance_tags),
        "attributes": [{"text": a.text, "is_public": a.is_public} for a in persona.attributes],
        "sample_dialogue": [dict(sample) for sample in persona.sample_dialogue],
        "naming_prefixes": dict(persona.naming_prefixes),
        "naming_suffixes": dict(persona.naming_suffixes),
        "naming_address_terms": dict(persona.naming_address_terms),
        "self_debug_enabled": persona.self_debug_enabled,
        "sprite_names": list(persona.sprite_names),
        "preset": preset_json(persona.preset) if persona.preset is not None else None,
        "lorebook": [lore_entry_json(entry) for entry in persona.lorebook],
        "card": dataclasses.asdict(persona.card) if persona.card is not None else None,
    }


def preset_json(preset: Preset) -> list[JSONDict]:
    """The preset's nodes as the persona stores them (``Preset.from_json`` reads them back)."""
    return [
        {"identifier": n.identifier, "marker": n.is_marker, "content": n.content, "role": n.role, "enabled": n.enabled}
        for n in preset.nodes
    ]


def lore_entry_json(entry: LoreEntryInfo) -> JSONDict:
    """An entry as the stage read it, its book's settings applied; the book id is the one the prompt's
    world-info hits name, so the replay keeps it rather than numbering books anew."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(entry).items()}


def _voice_transcripts(messages: Iterable[DiscordMessage]) -> list[JSONDict]:
    by_id = {msg.id: msg for msg in messages if msg.attachments}
    rows = VoiceTranscript.objects.filter(message_disc_id__in=sorted(by_id), source=VoiceTranscript.Source.USER_STT)
    out = []
    for row in rows.order_by("message_disc_id"):
        attachment_ids = [a.id for a in by_id[row.message_disc_id].attachments]
        attachment = row.attachment_disc_id if row.attachment_disc_id in attachment_ids else attachment_ids[0]
        out.append({"attachment_id": attachment, "text": row.transcript})
    return out


class RecordingTransport(Protocol):
    """What a transport kept of the Discord reads of one turn (bot and playground transports). Read
    only: the capture reads what the transport wrote."""

    @property
    def messages(self) -> Mapping[str, DiscordMessage]: ...

    @property
    def members(self) -> Mapping[str, MemberInfo]: ...

    @property
    def reaction_users(self) -> Mapping[tuple[str, ReactionEmoji], list[str]]: ...

    @property
    def channel_names(self) -> Mapping[str, str]:
        """Other channels whose names the turn read, without the "#"."""

    @property
    def role_names(self) -> Mapping[str, str]: ...


def capture_snapshot(ctx: ChatTurnContext, transport: RecordingTransport, *, config: StageConfig) -> JSONDict:
    """The stored snapshot of one turn (turn-snapshot.md §1): what it read, minimised, and the
    tunables ``config`` it was built with. Taken right after ``build_turn_context`` returned ``ctx``
    and before anything of the turn writes (``chatcontext.captured``), so a row a tool writes later
    is not in it."""
    return minimise_snapshot({**read_snapshot(ctx, transport), "stage": config.as_json()})


def _people(
    turn: ChatTurn,
    messages: Iterable[DiscordMessage],
    members: Iterable[MemberInfo],
    reaction_users: Mapping[tuple[str, ReactionEmoji], list[str]],
) -> list[str]:
    """Everyone whose row the turn may read: authors (of messages and forwarded snapshots), reactors
    (whose privacy decides whether a reaction names them), members, the impersonated user and the
    reminder's recipient. The bot's own account is not a person."""
    ids = {msg.author.id for msg in messages if not msg.webhook_id}
    ids |= {s.author.id for msg in messages for s in msg.message_snapshots if s.author is not None}
    ids |= {uid for users in reaction_users.values() for uid in users}
    ids |= {mem.user_disc_id for mem in members}
    ids |= {i for i in (turn.incoming.impersonated_user_id, turn.incoming.reminder_recipient_id) if i}
    return sorted(ids - {turn.bot_user.id})


def _named_by_saved_nickname(ctx: ChatTurnContext, server: m.Server) -> list[str]:
    """The users D-16's nickname branch selected for this turn (none in a DM, where discovery stops
    at D-15): known to the server, named in the history by their saved nickname. The transport
    fetches only those of them discovery then looks up as members (D-18)."""
    if server.is_dm_channel:
        return []
    return [
        uid
        for uid in nickname_selected_ids(server.server_id, history_text(ctx.simplified_messages))
        if uid != ctx.turn.bot_user.id
    ]


def _evidence_markers(user_ids: list[str], now: Any) -> tuple[list[JSONDict], list[JSONDict]]:
    """D-16 evidence of users the turn only considered (``known_users`` outside everyone it read):
    one empty memory and one blank due reminder each at most. The turn could show none of their
    text, so none is kept; discovery's eligibility (D-17) needs only that the rows exist."""
    if not user_ids:  # the common turn: no query
        return [], []
    memories: dict[str, JSONDict] = {}
    for pm in m.PersonalMemory.objects.filter(user__user_disc_id__in=user_ids).select_related("user").order_by("pk"):
        memories.setdefault(
            pm.user.user_disc_id,
            {
                "id": pm.personal_memory_id,
                "user_disc_id": pm.user.user_disc_id,
                "persona_lineage_id": pm.persona_lineage_id,
                "content": "",
                "created_at_ms": 0,
            },
        )
    reminders: dict[str, JSONDict] = {}
    due = m.Reminder.objects.filter(
        user_discord_id__in=user_ids, status=m.Reminder.Status.PENDING, reminder_time__gt=now
    ).order_by("reminder_time", "reminder_id")
    for r in due:
        reminders.setdefault(
            r.user_discord_id,
            {"user_disc_id": r.user_discord_id, "purpose": "", "due_at_ms": datetime_to_ms(r.reminder_time)},
        )
    return list(memories.values()), list(reminders.values())


def read_snapshot(ctx: ChatTurnContext, transport: RecordingTransport) -> JSONDict:
    """The snapshot document of everything one turn read (before ``minimise_snapshot``): the
    Discord reads ``transport`` kept, the personas, emojis and stickers the pipeline used (from
    ``ctx``) and the rows the loaders read."""
    turn, reaction_users = ctx.turn, transport.reaction_users
    ordered = sorted(
        transport.messages.values(), key=lambda msg: (msg.created_timestamp, int(msg.id) if msg.id.isdigit() else 0)
    )
    member_list = sorted(transport.members.values(), key=lambda mem: mem.user_disc_id)
    bot_id = turn.bot_user.id
    people = _people(turn, ordered, member_list, reaction_users)
    server = m.Server.objects.select_related("settings").get(server_disc_id=turn.server.server_disc_id)
    named = _named_by_saved_nickname(ctx, server)
    considered = set(named) - set(people)  # selected by D-16, read in no other way
    lineages = sorted({p.persona_lineage_id for p in turn.all_personas} | {m.GLOBAL_LINEAGE_ID})
    now = ms_to_datetime(turn.now_ms)
    user_keys = _schema_keys("properties", "users", "anyOf", 0, "items")

    # Rows as they were when the turn started: hydration registers participants it meets during
    # the turn, and a replay must meet them unregistered too, or their names would differ.
    users = list(
        m.DiscordUser.objects.filter(user_disc_id__in=[*people, *considered], created_at__lte=now).order_by(
            "user_disc_id"
        )
    )
    read_users = [u for u in users if u.user_disc_id not in considered]
    captured_ids = {u.user_disc_id for u in users}
    marker_memories, marker_reminders = _evidence_markers(sorted(considered & captured_ids), now)
    fetched_members = {mem.user_disc_id for mem in member_list}
    # Every lineage: discovery counts a memory of any lineage as evidence (D-16); minimise_snapshot
    # keeps the text of the ones the persona can load only.
    memories = m.PersonalMemory.objects.filter(user__in=read_users).select_related("user")
    server_memories = m.ServerMemory.objects.filter(server=server, persona_lineage_id__in=lineages)
    reminders = m.Reminder.objects.filter(
        server=server, status=m.Reminder.Status.PENDING, user_discord_id__in=[*people, bot_id]
    )
    blacklist = m.PersonalizationBlacklist.objects.filter(server=server, user_disc_id__in=[*people, *considered])
    # Mutes too (format 4): they affect triggering, which a replay skips, but the persona's block notice
    # lists them with the blocks.
    blocks = m.PersonaUserBlock.objects.filter(server=server, expires_at__gt=now)
    active = m.StatCounter.objects.filter(
        server=server, user__in=users, metric__in=ACTIVITY_METRICS, count__gt=0
    ).values_list("user__user_disc_id", flat=True)
    preferences = m.UserPersonaNamingPreference.objects.filter(user__in=read_users, persona_lineage_id__in=lineages)
    persona_keys = {p.persona_id: persona_key(p.persona_id) for p in turn.all_personas}
    sprites = m.PersonaSpriteMessage.objects.filter(
        message_disc_id__in=[msg.id for msg in ordered], persona_id__in=list(persona_keys)
    )
    responders = [pid for pid in turn.locked_turn.triggered_persona_ids if pid != turn.persona.persona_id]
    return {
        "format": snapshot_format.FORMAT,
        "now_ms": turn.now_ms,
        "bot_user": {"id": bot_id, "username": turn.bot_user.username, "global_name": turn.bot_user.global_name},
        "server": {
            "disc_id": server.server_disc_id,
            "name": server.name,
            "description": server.description or None,
            "is_dm": server.is_dm_channel,
            "settings": {k: _plain(getattr(server.settings, k)) for k in settings_keys()},
            **assets_json(ctx),
        },
        "channel": {
            "id": turn.locked_turn.channel_id,
            "name": turn.channel_name,
            "topic": turn.channel_description,
            "parent_id": turn.thread_parent_id,
        },
        "channels": [
            {"id": cid, "name": name}
            for cid, name in sorted(transport.channel_names.items())
            if cid != turn.locked_turn.channel_id
        ],
        "roles": [{"id": rid, "name": name} for rid, name in sorted(transport.role_names.items())],
        "personas": [persona_json(p) for p in turn.all_personas],
        "users": [{"disc_id": u.user_disc_id, **{k: getattr(u, k) for k in user_keys}} for u in users],
        "members": [member_json(mem) for mem in member_list],
        "known_users": [{"user_disc_id": uid} for uid in named if uid in captured_ids and uid not in fetched_members],
        "personal_memories": [
            {
                "id": pm.personal_memory_id,
                "user_disc_id": pm.user.user_disc_id,
                "persona_lineage_id": pm.persona_lineage_id,
                "content": pm.content,
                "tags": [str(t) for t in pm.tags or []],
                "created_at_ms": datetime_to_ms(pm.created_at),
            }
            for pm in memories.order_by("created_at", "personal_memory_id")
        ]
        + marker_memories,
        "server_memories": [
            {
                "persona_lineage_id": sm.persona_lineage_id,
                "content": sm.content,
                "tags": [str(t) for t in sm.tags or []],
                "created_at_ms": datetime_to_ms(sm.created_at),
            }
            for sm in server_memories.order_by("created_at", "id")
        ],
        "reminders": [
            {
                "id": r.reminder_id,
                "channel_id": r.channel_disc_id,
                "user_disc_id": r.user_discord_id,
                "persona_key": persona_key(r.persona_id) if r.persona_id else None,
                "purpose": r.reminder_purpose,
                "due_at_ms": datetime_to_ms(r.reminder_time),
                "self_reminder": r.self_reminder,
                "repetition_interval_hours": r.repetition_interval_hours,
            }
            for r in reminders.order_by("reminder_time", "reminder_id")
        ]
        + marker_reminders,
        "blacklist": [
            {"user_disc_id": uid} for uid in blacklist.order_by("user_disc_id").values_list("user_disc_id", flat=True)
        ],
        "persona_user_blocks": [
            {
                "persona_key": persona_key(b.persona_id),
                "user_disc_id": b.user_disc_id,
                "expires_at_ms": datetime_to_ms(b.expires_at),
                "block_type": b.block_type,
                "reason": b.reason or None,
            }
            for b in blocks.order_by("id")
        ],
        "naming_preferences": [
            {
                "user_disc_id": n.user.user_disc_id,
                "persona_lineage_id": n.persona_lineage_id,
                "nickname_override": n.nickname_override,
                "prefix_override": n.prefix_override,
                "suffix_override": n.suffix_override,
            }
            for n in preferences.select_related("user").order_by("user__user_disc_id", "persona_lineage_id")
        ],
        "server_activity": [{"user_disc_id": uid} for uid in sorted(set(active))],
        "sprite_messages": [
            {"message_id": s.message_disc_id, "persona_key": persona_keys[s.persona_id], "sprite_name": s.sprite_name}
            for s in sprites.order_by("message_disc_id")
        ],
        "voice_transcripts": _voice_transcripts(ordered),
        "messages": [message_json(msg, reaction_users) for msg in ordered],
        "turn": {
            "persona_key": persona_key(turn.persona.persona_id),
            "trigger_message_id": turn.incoming.message.id,
            "is_from_queue": turn.incoming.is_from_queue,
            "is_stop_response": bool(turn.incoming.is_stop_response),
            "co_responder_keys": [persona_key(pid) for pid in responders],
            "reminder": reminder_json(turn),
            **manual_json(turn),
            "short_term_memory": _note_json(turn.short_term_memory) if turn.short_term_memory else None,
            "history_anchor_id": turn.history_anchor_id,
        },
    }


def assets_json(ctx: ChatTurnContext) -> JSONDict:
    """The emoji and sticker rows the turn used (BC7-08), as the pipeline read them: from the cache
    or the database, whichever served the turn. A kind the turn did not load is absent."""
    out: JSONDict = {}
    if ctx.loaded_emojis is not None:
        out["emojis"] = [
            {"id": e.emoji_disc_id, "name": e.emoji_name, "animated": e.is_animated, "description": e.emoji_desc}
            for e in ctx.loaded_emojis
        ]
    if ctx.loaded_stickers is not None:
        out["stickers"] = [
            {"id": s.sticker_disc_id, "name": s.sticker_name, "description": s.sticker_desc}
            for s in ctx.loaded_stickers
        ]
    return out


def manual_json(turn: ChatTurn) -> JSONDict:
    """The manual parts of a turn (BC7-03 impersonation, the BC8 prefill, directive and reasoning
    query), which the prompt shows; the format keeps the values, not who asked for them."""
    incoming = turn.incoming
    return {
        "impersonated_user_disc_id": incoming.impersonated_user_id if incoming.is_user_impersonation else None,
        "manual_prefill": incoming.manual_prefill,
        "manual_directive": incoming.manual_system_prompt,
        "reasoning_directive": incoming.reasoning_query if incoming.force_reason else None,
    }


def reminder_json(turn: ChatTurn) -> JSONDict | None:
    """``turn.reminder`` of a reminder turn (BC7-01): a self-task targets the bot's own id, as the
    Reminder row does. The lateness is the text the prompt shows (``3 minutes``)."""
    incoming = turn.incoming
    data = incoming.reminder_data
    if data is None or not reminder_applies(incoming):
        return None
    target = turn.bot_user.id if data.self_reminder else incoming.reminder_recipient_id
    return {"purpose": data.reminder_purpose, "user_disc_id": target, "lateness": data.reminder_lateness}


def _note_json(note: ShortTermNote) -> JSONDict:
    return {**dataclasses.asdict(note), "author_ids": list(note.author_ids)}
