"""Turn snapshots (turn-snapshot.md): validation, parsing into value objects, and loading rows.

A snapshot is one JSON document holding everything one persona turn needs. This module

- validates it against ``schemas/turn-snapshot.schema.json`` and the cross-references the schema
  cannot express, raising ``SnapshotError`` whose text is ONE line naming the offending path
  (``messages[3].author.id: required``; turn-snapshot.md §3);
- parses its Discord-shaped parts into ``chatcontext.types`` (messages, members);
- writes its database-shaped parts (server, settings, personas, users, memories, reminders,
  blacklist, blocks) with ``load_snapshot_rows`` so the ordinary batched loaders read them. Callers
  run that inside ``transaction.atomic()`` and roll back (``chatcontext.replay`` does it on a
  private scratch database);
- builds the ``ChatTurn``, the in-memory transport and the preloaded transcript cache of a turn.

Deterministic by construction: no clock (``now_ms`` comes from the document), no randomness, and
rows are written in document order.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError, best_match

from chatcontext import repository
from chatcontext.memory_transport import InMemoryTransport
from chatcontext.triggerer import triggerer_naming
from chatcontext.types import (
    Activity,
    Attachment,
    Author,
    ChatIncoming,
    ChatTurn,
    DiscordMessage,
    Embed,
    EmbedField,
    EmbedMedia,
    ForwardSnapshot,
    JSONDict,
    LockedTurn,
    MemberInfo,
    MessageReference,
    PersonaInfo,
    Reaction,
    ReactionEmoji,
    ReminderData,
    Role,
    StickerRef,
)
from chatcontext.voice.cache import MemoryTranscriptCache
from personas import models as m

FORMAT = "tomori-turn-snapshot/1"
SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "turn-snapshot.schema.json"
ROOT_PATH = "$"
# json.loads and the schema validator recurse once per level of nesting, so a deeper document is
# refused before either sees it (the deepest a real snapshot gets, a forwarded Components-V2 tree, is
# about a dozen levels).
MAX_DEPTH = 64
# More digits than any bounded integer of the schema has (ids are strings).
MAX_INTEGER_DIGITS = 20


class SnapshotError(ValueError):
    """A snapshot that cannot be replayed; ``str()`` is one line: ``{path}: {problem}``."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path or ROOT_PATH
        self.problem = " ".join(problem.split())
        super().__init__(f"{self.path}: {self.problem}")


# ---------------------------------------------------------------------------------------------
# JSON and schema validation
# ---------------------------------------------------------------------------------------------


@functools.cache
def schema() -> JSONDict:
    loaded: JSONDict = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@functools.cache
def _validator() -> Draft202012Validator:
    Draft202012Validator.check_schema(schema())
    return Draft202012Validator(schema())


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> JSONDict:
    # json.loads keeps the last of two equal keys; a silent overwrite would change the turn (§1).
    seen: JSONDict = {}
    for key, value in pairs:
        if key in seen:
            raise SnapshotError(ROOT_PATH, f"duplicate key {json.dumps(key)} in one object")
        seen[key] = value
    return seen


def _reject_constant(name: str) -> None:
    raise SnapshotError(ROOT_PATH, f"{name} is not valid JSON")


def _parse_int(text: str) -> int | float:
    """An integer longer than any the schema allows becomes a float (infinite when huge), which the
    schema then reports at its path as out of range; Python refuses to convert integers of more than
    4,300 digits at all."""
    return float(text) if len(text.lstrip("-")) > MAX_INTEGER_DIGITS else int(text)


_NESTING_TOKENS = re.compile(r'"(?:[^"\\]|\\[\s\S])*"|[\[\]{}]')


def _line_column(text: str, position: int) -> str:
    line = text.count("\n", 0, position) + 1
    column = position - text.rfind("\n", 0, position)
    return f"line {line}, column {column}"


def check_nesting(text: str) -> None:
    """Refuse JSON text nested deeper than MAX_DEPTH before it is parsed (brackets inside strings do
    not count). Malformed text is left to the parser."""
    depth = 0
    for token in _NESTING_TOKENS.finditer(text):
        char = text[token.start()]
        if char in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                where = _line_column(text, token.start())
                raise SnapshotError(ROOT_PATH, f"nested deeper than {MAX_DEPTH} levels at {where}")
        elif char in "]}":
            depth -= 1


def parse_json(text: str | bytes) -> Any:
    """The JSON value of ``text``; malformed or too deeply nested input → SnapshotError naming line
    and column."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError(ROOT_PATH, f"not UTF-8 text (byte {exc.start})") from None
    check_nesting(text)
    try:
        return json.loads(
            text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant, parse_int=_parse_int
        )
    except json.JSONDecodeError as exc:
        raise SnapshotError(ROOT_PATH, f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None


# Characters JSON can escape but no replay can keep: an unpaired surrogate (`\ud800`) is no Unicode
# text (it cannot be printed or stored), and PostgreSQL stores no NUL in text or JSON columns.
_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def _unstorable(char: str) -> str:
    if char == "\x00":
        return "NUL character U+0000 (no database stores it in text)"
    return f"unpaired surrogate U+{ord(char):04X} (not Unicode text)"


def check_values(doc: Any) -> None:
    """What JSON allows but no replay can use, in any value (the schema cannot say it): nesting deeper
    than MAX_DEPTH (for a document that did not come through ``parse_json``), and strings holding an
    unpaired surrogate or a NUL. Keys count as strings; the first offender in document order is named
    by its path."""
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(doc, ())]
    while stack:
        value, path = stack.pop()
        if isinstance(value, dict | list) and len(path) >= MAX_DEPTH:
            raise SnapshotError(format_path(path), f"nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            if (bad := _UNSTORABLE.search(value)) is not None:
                raise SnapshotError(format_path(path), _unstorable(bad.group()))
        elif isinstance(value, dict):
            for key in value:
                if (bad := _UNSTORABLE.search(key)) is not None:
                    raise SnapshotError(format_path(path), f"in a key: {_unstorable(bad.group())}")
            stack.extend((item, (*path, key)) for key, item in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend((item, (*path, i)) for i, item in reversed(list(enumerate(value))))


def format_path(parts: Iterable[str | int]) -> str:
    """``["messages", 3, "author", "id"]`` → ``messages[3].author.id``."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or ROOT_PATH


_PATTERN_PHRASES = {
    "^[0-9]{1,20}(?!\\n)$": "must be a string of 1 to 20 ASCII digits (a Discord id)",
    "^([0-9]{1,20}|@[^:\\s]+:\\S+)(?!\\n)$": "must be a Discord id (1 to 20 ASCII digits) or a Matrix id (@user:host)",
}


def _type_names(value: Any) -> str:
    names = value if isinstance(value, list) else [value]
    return " or ".join(str(n) for n in names)


def _describe(error: ValidationError, *, nullable: bool = False) -> tuple[list[str | int], str]:
    path: list[str | int] = list(error.absolute_path)
    kind = error.validator
    value = error.validator_value
    or_null = " or null" if nullable else ""
    if kind == "anyOf" and error.context:
        # Optional keys are `anyOf: [X, null]`: report what is wrong against X, not against null.
        branches = [c for c in error.context if not (c.validator == "type" and c.validator_value == "null")]
        if branches:
            return _describe(best_match(branches), nullable=True)
    if kind == "required":
        missing = sorted(set(value) - set(error.instance))
        return [*path, missing[0] if missing else "?"], "required"
    if kind == "additionalProperties":
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(set(error.instance) - allowed)
        return [*path, extra[0] if extra else "?"], "unknown key"
    if kind == "type":
        return path, f"expected {_type_names(value)}{or_null}"
    if kind == "const":
        return path, f"must be {json.dumps(value)}"
    if kind == "enum":
        return path, "must be one of " + ", ".join(json.dumps(v) for v in value) + or_null
    if kind == "pattern":
        return path, _PATTERN_PHRASES.get(str(value), f"must match {value}")
    if kind == "minimum":
        return path, f"must be at least {value}"
    if kind == "maximum":
        return path, f"must be at most {value}"
    if kind in ("minItems", "minLength"):
        return path, "must not be empty"
    if kind == "multipleOf":
        return path, f"must be a multiple of {value}"
    return path, error.message


def validate_schema(doc: Any) -> None:
    """Raise SnapshotError for the most relevant schema violation of ``doc``, if any."""
    error = best_match(_validator().iter_errors(doc))
    if error is not None:
        path, problem = _describe(error)
        raise SnapshotError(format_path(path), problem)


def _check_unique(items: Sequence[JSONDict], field: str, where: str, what: str, *, fold: bool = False) -> None:
    seen: set[Any] = set()
    for i, item in enumerate(items):
        value = item.get(field)
        key = value.strip().lower() if fold and isinstance(value, str) else value
        if key in seen:
            raise SnapshotError(f"{where}[{i}].{field}", f"duplicate {what} {json.dumps(value)}")
        seen.add(key)


def _items(doc: Mapping[str, Any], key: str) -> list[JSONDict]:
    return list(doc.get(key) or [])


def check_references(doc: Mapping[str, Any]) -> None:
    """Cross-references the schema cannot express: persona keys, the trigger message, owners of
    memories and transcripts, and the uniqueness the database enforces (turn-snapshot.md §3)."""
    personas = _items(doc, "personas")
    _check_unique(personas, "key", "personas", "persona key")
    _check_unique(personas, "persona_nickname", "personas", "persona nickname", fold=True)
    mains = [i for i, p in enumerate(personas) if not p["is_alter"]]
    if len(mains) > 1:
        raise SnapshotError(f"personas[{mains[1]}].is_alter", "a server has exactly one main persona")
    keys = {p["key"] for p in personas}

    def known_key(path: str, key: str | None) -> None:
        if key is not None and key not in keys:
            raise SnapshotError(path, f"unknown persona key {json.dumps(key)}")

    turn = doc["turn"]
    known_key("turn.persona_key", turn["persona_key"])
    for i, key in enumerate(turn.get("co_responder_keys") or []):
        known_key(f"turn.co_responder_keys[{i}]", key)
    for i, reminder in enumerate(_items(doc, "reminders")):
        known_key(f"reminders[{i}].persona_key", reminder.get("persona_key"))
    for i, block in enumerate(_items(doc, "persona_user_blocks")):
        known_key(f"persona_user_blocks[{i}].persona_key", block.get("persona_key"))

    messages = _items(doc, "messages")
    _check_unique(messages, "id", "messages", "message id")
    if turn["trigger_message_id"] not in {msg["id"] for msg in messages}:
        raise SnapshotError(
            "turn.trigger_message_id", f"no message with id {json.dumps(turn['trigger_message_id'])} in messages"
        )

    users = _items(doc, "users")
    _check_unique(users, "disc_id", "users", "user id")
    _check_unique(_items(doc, "members"), "user_disc_id", "members", "member id")
    _check_unique(_items(doc, "blacklist"), "user_disc_id", "blacklist", "user id")
    reminders_with_id = [r for r in _items(doc, "reminders") if r.get("id") is not None]
    _check_unique(reminders_with_id, "id", "reminders", "reminder id")
    memories_with_id = [pm for pm in _items(doc, "personal_memories") if pm.get("id") is not None]
    _check_unique(memories_with_id, "id", "personal_memories", "memory id")
    user_ids = {u["disc_id"] for u in users}
    for i, memory in enumerate(_items(doc, "personal_memories")):
        if memory["user_disc_id"] not in user_ids:
            raise SnapshotError(f"personal_memories[{i}].user_disc_id", "no entry in users has this id")
    attachment_ids = {a["id"] for msg in messages for a in msg.get("attachments") or []}
    for i, transcript in enumerate(_items(doc, "voice_transcripts")):
        if transcript["attachment_id"] not in attachment_ids:
            raise SnapshotError(f"voice_transcripts[{i}].attachment_id", "no message carries this attachment")


def validate_snapshot(doc: Any) -> JSONDict:
    """Values, schema and references; returns the document (a dict) when it is replayable."""
    check_values(doc)
    validate_schema(doc)
    check_references(doc)
    valid: JSONDict = doc
    return valid


def load_snapshot_json(text: str | bytes) -> JSONDict:
    """Parse and validate a snapshot file's text."""
    return validate_snapshot(parse_json(text))


# ---------------------------------------------------------------------------------------------
# Discord-shaped parts → value objects
# ---------------------------------------------------------------------------------------------


def _author(d: JSONDict) -> Author:
    return Author(
        id=d["id"],
        username=d.get("username") or "",
        global_name=d.get("global_name"),
        display_name=d.get("display_name"),
        bot=bool(d.get("bot")),
    )


def _attachment(d: JSONDict) -> Attachment:
    return Attachment(
        id=d["id"],
        name=d["name"],
        url=d["url"],
        proxy_url=d.get("proxy_url") or "",
        content_type=d.get("content_type"),
        size=d.get("size") or 0,
    )


def _embed_media(d: JSONDict | None) -> EmbedMedia | None:
    return EmbedMedia(url=d["url"], proxy_url=d.get("proxy_url")) if d else None


def _embed(d: JSONDict) -> Embed:
    return Embed(
        title=d.get("title"),
        description=d.get("description"),
        url=d.get("url"),
        color=d.get("color"),
        author_name=d.get("author_name"),
        footer_text=d.get("footer_text"),
        fields=tuple(EmbedField(f.get("name") or "", f.get("value") or "") for f in d.get("fields") or []),
        image=_embed_media(d.get("image")),
        thumbnail=_embed_media(d.get("thumbnail")),
    )


def _stickers(items: list[JSONDict] | None) -> tuple[StickerRef, ...]:
    return tuple(StickerRef(s["id"], s["name"]) for s in items or [])


def _components(items: list[JSONDict] | None) -> tuple[JSONDict, ...]:
    return tuple(copy.deepcopy(c) for c in items or [])


def _forward(d: JSONDict) -> ForwardSnapshot:
    member = d.get("member") or {}
    return ForwardSnapshot(
        content=d.get("content") or "",
        attachments=tuple(_attachment(a) for a in d.get("attachments") or []),
        components=_components(d.get("components")),
        embeds=tuple(_embed(e) for e in d.get("embeds") or []),
        stickers=_stickers(d.get("stickers")),
        author=_author(d["author"]) if d.get("author") else None,
        member_display_name=member.get("display_name") or member.get("nickname"),
        channel_id=d.get("channel_id"),
    )


def _reaction(d: JSONDict) -> Reaction:
    emoji = d["emoji"]
    return Reaction(
        emoji=ReactionEmoji(id=emoji.get("id"), name=emoji.get("name")),
        count=d["count"],
        users=tuple(d.get("users") or ()),
    )


def parse_message(d: JSONDict) -> DiscordMessage:
    """One snapshot message → ``DiscordMessage`` (build-context.md §1.3)."""
    ref = d.get("reference")
    return DiscordMessage(
        id=d["id"],
        channel_id=d["channel_id"],
        author=_author(d["author"]),
        created_timestamp=d["created_timestamp"],
        guild_id=d.get("guild_id"),
        type=d.get("type") or "default",
        member_display_name=d.get("member_display_name"),
        webhook_id=d.get("webhook_id"),
        content=d.get("content") or "",
        clean_content=d.get("clean_content") or "",
        reference=(
            MessageReference(type=ref["type"], message_id=ref.get("message_id"), channel_id=ref.get("channel_id"))
            if ref
            else None
        ),
        message_snapshots=tuple(_forward(s) for s in d.get("message_snapshots") or []),
        attachments=tuple(_attachment(a) for a in d.get("attachments") or []),
        stickers=_stickers(d.get("stickers")),
        embeds=tuple(_embed(e) for e in d.get("embeds") or []),
        components=_components(d.get("components")),
        reactions=tuple(_reaction(r) for r in d.get("reactions") or []),
    )


def parse_messages(doc: Mapping[str, Any]) -> list[DiscordMessage]:
    """The channel's messages, oldest first, as the document lists them."""
    return [parse_message(d) for d in _items(doc, "messages")]


def parse_member(d: JSONDict) -> MemberInfo:
    return MemberInfo(
        user_disc_id=d["user_disc_id"],
        username=d["username"],
        global_name=d.get("global_name"),
        nickname=d.get("nickname"),
        # Discord's member display name: server nickname, else global name, else username.
        display_name=d.get("nickname") or d.get("global_name") or d["username"],
        is_bot=bool(d.get("is_bot")),
        roles=tuple(Role(r["id"], r["name"], r["position"]) for r in d.get("roles") or []),
        presence_status=d.get("presence_status"),
        activities=tuple(
            Activity(type=a["type"], name=a["name"], state=a.get("state"), started_at_ms=a.get("started_at_ms"))
            for a in d.get("activities") or []
        ),
    )


def parse_members(doc: Mapping[str, Any]) -> list[MemberInfo]:
    return [parse_member(d) for d in _items(doc, "members")]


def transcript_cache(doc: Mapping[str, Any]) -> MemoryTranscriptCache:
    """The voice-transcript cache preloaded from ``voice_transcripts`` (BC11-02): each entry is
    keyed by the id of the message that carries the attachment, cached at the turn's clock."""
    owner = {a["id"]: msg["id"] for msg in _items(doc, "messages") for a in msg.get("attachments") or []}
    cache = MemoryTranscriptCache()
    for entry in _items(doc, "voice_transcripts"):
        cache.put(
            owner[entry["attachment_id"]],
            entry["text"],
            "user_stt",
            now_ms=doc["now_ms"],
            attachment_id=entry["attachment_id"],
        )
    return cache


# ---------------------------------------------------------------------------------------------
# Database-shaped parts → rows
# ---------------------------------------------------------------------------------------------

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
    for p in _items(doc, "personas"):
        persona = m.Persona.objects.create(
            server=server,
            persona_nickname=p["persona_nickname"],
            is_alter=p["is_alter"],
            persona_lineage_id=p["persona_lineage_id"],
            trigger_words=list(p.get("trigger_words") or []),
            persona_prompt=p.get("persona_prompt"),
            physical_appearance_tags=list(p.get("physical_appearance_tags") or []),
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
        for u in _items(doc, "users")
    )
    user_ids = {u.user_disc_id: u.user_id for u in users}

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
        for mem, d in zip(parse_members(doc), _items(doc, "members"), strict=True)
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
        for pm in _items(doc, "personal_memories")
    ]
    _insert_with_created_at(
        m.PersonalMemory, memories, [pm["created_at_ms"] for pm in _items(doc, "personal_memories")]
    )

    server_memories = [
        m.ServerMemory(
            server=server,
            persona_lineage_id=sm["persona_lineage_id"],
            content=sm["content"],
            tags=list(sm.get("tags") or []),
        )
        for sm in _items(doc, "server_memories")
    ]
    _insert_with_created_at(
        m.ServerMemory, server_memories, [sm["created_at_ms"] for sm in _items(doc, "server_memories")]
    )

    bot_id = doc["bot_user"]["id"]
    channel_id = doc["channel"]["id"]
    for r in _items(doc, "reminders"):
        self_reminder = r.get("self_reminder")
        m.Reminder.objects.create(
            **({"reminder_id": r["id"]} if r.get("id") is not None else {}),
            server=server,
            channel_disc_id=channel_id,
            user_discord_id=r["user_disc_id"],
            reminder_purpose=r["purpose"],
            reminder_time=_dt(r["due_at_ms"]),
            repetition_interval_hours=r.get("repetition_interval_hours"),
            # A reminder aimed at the bot's own id is a persona self-task (data-model.md §2.13).
            self_reminder=(r["user_disc_id"] == bot_id) if self_reminder is None else self_reminder,
            persona_id=persona_ids[r["persona_key"]] if r.get("persona_key") else None,
        )

    m.PersonalizationBlacklist.objects.bulk_create(
        m.PersonalizationBlacklist(server=server, user_disc_id=b["user_disc_id"]) for b in _items(doc, "blacklist")
    )
    blocks: dict[tuple[int, str], m.PersonaUserBlock] = {}
    for b in _items(doc, "persona_user_blocks"):
        # A block without persona_key applies to every persona of the server.
        targets = [persona_ids[b["persona_key"]]] if b.get("persona_key") else list(persona_ids.values())
        for pid in targets:
            blocks[(pid, b["user_disc_id"])] = m.PersonaUserBlock(
                server=server,
                persona_id=pid,
                user_disc_id=b["user_disc_id"],
                block_type=m.PersonaUserBlock.BlockType.BLOCK,
                reason="",
                expires_at=_dt(b["expires_at_ms"]),
            )
    m.PersonaUserBlock.objects.bulk_create(blocks.values())
    return LoadedSnapshot(server_id=server.server_id, persona_ids=persona_ids, user_ids=user_ids)


# ---------------------------------------------------------------------------------------------
# The turn
# ---------------------------------------------------------------------------------------------


def bot_author(doc: Mapping[str, Any]) -> Author:
    bot = doc["bot_user"]
    return Author(id=bot["id"], username=bot["username"], global_name=bot.get("global_name"), bot=True)


def snapshot_personas(doc: Mapping[str, Any], loaded: LoadedSnapshot) -> dict[str, PersonaInfo]:
    """Persona key → the persona as the normal loader reads it, plus the snapshot's webhook id
    (webhooks are per channel, so the database keeps none)."""
    by_id = {p.persona_id: p for p in repository.load_personas(loaded.server_id)}
    return {
        p["key"]: replace(by_id[loaded.persona_ids[p["key"]]], webhook_id=p.get("webhook_id"))
        for p in _items(doc, "personas")
    }


def _incoming(doc: Mapping[str, Any], trigger: DiscordMessage) -> ChatIncoming:
    turn = doc["turn"]
    reminder = turn.get("reminder")
    self_reminder = bool(reminder) and reminder["user_disc_id"] == doc["bot_user"]["id"]
    impersonated = turn.get("impersonated_user_disc_id")
    manual = turn.get("manual_prefill") is not None or turn.get("manual_directive") is not None
    return ChatIncoming(
        message=trigger,
        is_from_queue=bool(turn.get("is_from_queue")),
        # A manual prefill or directive only comes from a manual trigger (BC8-06).
        is_manually_triggered=True if manual else None,
        force_reason=True if turn.get("reasoning_directive") else None,
        reasoning_query=turn.get("reasoning_directive"),
        is_stop_response=bool(turn.get("is_stop_response")),
        reminder_recipient_id=None if not reminder or self_reminder else reminder["user_disc_id"],
        reminder_data=(
            ReminderData(reminder_purpose=reminder["purpose"], self_reminder=self_reminder) if reminder else None
        ),
        is_user_impersonation=impersonated is not None,
        impersonated_user_id=impersonated,
        manual_system_prompt=turn.get("manual_directive"),
        manual_prefill=turn.get("manual_prefill"),
    )


def snapshot_chat_turn(
    doc: Mapping[str, Any],
    loaded: LoadedSnapshot,
    messages: Sequence[DiscordMessage],
    members: Sequence[MemberInfo],
) -> ChatTurn:
    """The ``ChatTurn`` the snapshot describes, read back through the normal loaders so it is
    exactly what the bot would have built from the same rows."""
    turn_doc = doc["turn"]
    server = repository.load_server(doc["server"]["disc_id"])
    if server is None:  # load_snapshot_rows was not run in this transaction
        raise RuntimeError("snapshot rows are not loaded")
    personas = snapshot_personas(doc, loaded)
    persona = personas[turn_doc["persona_key"]]
    co_responders = [personas[k] for k in turn_doc.get("co_responder_keys") or [] if k != turn_doc["persona_key"]]
    trigger = next(msg for msg in messages if msg.id == turn_doc["trigger_message_id"])
    author_id = trigger.author.id
    row = repository.load_user_rows([author_id]).get(author_id)
    blacklisted = author_id in repository.load_blacklisted(server.server_id, [author_id])
    member = next((mem for mem in members if mem.user_disc_id == author_id), None)
    name = triggerer_naming(server, persona, row, member, trigger.author, blacklisted=blacklisted)
    responders = [persona, *co_responders]
    locked = LockedTurn(
        incoming=_incoming(doc, trigger),
        channel_id=doc["channel"]["id"],
        locked_at_ms=doc["now_ms"],
        triggered_persona_ids=tuple(p.persona_id for p in responders if p.persona_id is not None),
    )
    bot = bot_author(doc)
    return ChatTurn(
        locked_turn=locked,
        persona=persona,
        all_personas=tuple(personas.values()),
        server=server,
        channel_name=doc["channel"]["name"],
        bot_user=bot,
        now_ms=doc["now_ms"],
        user_row=row,
        main_persona=next((p for p in personas.values() if not p.is_alter), None),
        persona_index=0,
        total_personas=len(responders),
        channel_description=doc["channel"].get("topic"),
        triggerer_name=name.nickname,
        triggerer_formatted_name=name.formatted,
        triggerer_address_term=name.address_term,
        is_self_message=author_id == bot.id,
    )


def snapshot_transport(
    doc: Mapping[str, Any], messages: Sequence[DiscordMessage], members: Sequence[MemberInfo]
) -> InMemoryTransport:
    """The channel as the snapshot froze it: its messages, members, the users it knows (for
    reactor and author names), its one channel and the members' roles. DMs have no guild."""
    users: dict[str, Author] = {}
    for u in _items(doc, "users"):
        users.setdefault(
            u["disc_id"], Author(id=u["disc_id"], username=u.get("username") or "", global_name=u.get("global_name"))
        )
    for msg in messages:
        users.setdefault(msg.author.id, msg.author)
    users.setdefault(doc["bot_user"]["id"], bot_author(doc))
    roles = {r.id: r.name for mem in members for r in mem.roles}
    return InMemoryTransport(
        messages,
        members=members,
        users=users.values(),
        channels={doc["channel"]["id"]: doc["channel"]["name"]},
        roles=roles,
        guild_available=not doc["server"].get("is_dm"),
    )


@dataclass(frozen=True)
class SnapshotTurn:
    """What ``build_turn_context`` needs to assemble the turn a loaded snapshot describes."""

    turn: ChatTurn
    transport: InMemoryTransport
    transcripts: MemoryTranscriptCache


def snapshot_turn(doc: Mapping[str, Any], loaded: LoadedSnapshot) -> SnapshotTurn:
    """The turn, channel and voice transcripts of ``doc``, whose rows ``loaded`` describes."""
    messages, members = parse_messages(doc), parse_members(doc)
    return SnapshotTurn(
        snapshot_chat_turn(doc, loaded, messages, members),
        snapshot_transport(doc, messages, members),
        transcript_cache(doc),
    )
