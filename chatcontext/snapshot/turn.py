"""The ``ChatTurn``, in-memory transport and preloaded transcript cache of a loaded snapshot, read back
through the normal loaders so they are exactly what the bot would have built from the same rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from chatcontext import repository
from chatcontext.core.budget import ContextBudget
from chatcontext.core.memory_transport import InMemoryTransport, TransportCapabilities
from chatcontext.core.preset import Preset
from chatcontext.core.snapshot_format import SnapshotError, doc_items
from chatcontext.core.snapshot_parse import parse_members, parse_messages, transcript_cache
from chatcontext.core.transcripts import MemoryTranscriptCache
from chatcontext.core.triggerer import triggerer_naming
from chatcontext.core.types import (
    Author,
    CardFields,
    ChatIncoming,
    ChatTurn,
    DiscordMessage,
    LockedTurn,
    LoreEntryInfo,
    MemberInfo,
    PersonaInfo,
    ReminderData,
    ShortTermNote,
)
from chatcontext.snapshot.load import LoadedSnapshot


def bot_author(doc: Mapping[str, Any]) -> Author:
    bot = doc["bot_user"]
    return Author(id=bot["id"], username=bot["username"], global_name=bot.get("global_name"), bot=True)


def snapshot_personas(doc: Mapping[str, Any], loaded: LoadedSnapshot) -> dict[str, PersonaInfo]:
    """Persona key → the persona as the normal loader reads it, plus the snapshot's webhook id
    (webhooks are per channel, so the database keeps none), sprite names (the loader reads them
    from every sprite post of the persona; the snapshot keeps only the posts among its messages), and
    preset, lorebook entries and card fields as the stage read them (the entries with the book ids the prompt's
    world-info hits name, which new rows on the scratch database would not keep). A document without
    them (version 1, another persona's) leaves what the loader read: nothing on the scratch database."""
    by_id = {p.persona_id: p for p in repository.load_personas(loaded.server_id)}
    personas = {}
    for p in doc_items(doc, "personas"):
        persona = replace(by_id[loaded.persona_ids[p["key"]]], webhook_id=p.get("webhook_id"))
        if p.get("preset") is not None:
            persona = replace(persona, preset=Preset.from_json(p["preset"]))
        if p.get("lorebook") is not None:
            persona = replace(persona, lorebook=tuple(_lore_entry(entry) for entry in p["lorebook"]))
        if "card" in p:
            persona = replace(persona, card=CardFields(**p["card"]) if p["card"] is not None else None)
        if p.get("sprite_names") is not None:
            persona = replace(persona, sprite_names=tuple(p["sprite_names"]))
        personas[p["key"]] = persona
    return personas


def _lore_entry(entry: Mapping[str, Any]) -> LoreEntryInfo:
    """An entry as ``capture.lore_entry_json`` wrote it (the schema requires every field)."""
    fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
    return LoreEntryInfo(**fields)


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
            ReminderData(
                reminder_purpose=reminder["purpose"],
                self_reminder=self_reminder,
                reminder_lateness=reminder.get("lateness"),
            )
            if reminder
            else None
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
        thread_parent_id=doc["channel"].get("parent_id"),
        triggerer=triggerer_naming(server, persona, row, member, trigger.author, blacklisted=blacklisted),
        is_self_message=author_id == bot.id,
        short_term_memory=short_term_note(turn_doc),
        history_anchor_id=turn_doc.get("history_anchor_id"),
    )


def short_term_note(turn_doc: Mapping[str, Any]) -> ShortTermNote | None:
    """The persona's note of the channel as the turn read it (BC8-12b); a document without one
    (version 1 or 2, a persona without a note) replays as a turn without it."""
    note = turn_doc.get("short_term_memory")
    if note is None:
        return None
    return ShortTermNote(
        content=note["content"],
        updated_at_ms=note.get("updated_at_ms"),
        tool_offered=bool(note.get("tool_offered")),
        author_ids=tuple(note.get("author_ids", ())),
    )


def context_budget(turn_doc: Mapping[str, Any]) -> ContextBudget | None:
    """The budget the turn's prompt was fitted to (BC13); None (version 1 or 2, a turn stored without
    one): the prompt is replayed uncut."""
    budget = turn_doc.get("budget")
    if budget is None:
        return None
    try:
        return ContextBudget(**budget)
    except ValueError as exc:  # a reply budget the window cannot hold: the schema cannot say so
        raise SnapshotError("turn.budget", str(exc)) from None


def snapshot_transport(
    doc: Mapping[str, Any], messages: Sequence[DiscordMessage], members: Sequence[MemberInfo]
) -> InMemoryTransport:
    """The channel as the snapshot froze it: its messages, members, the users it knows (for
    reactor and author names), its channel and the others it names, the members' roles and the
    roles it names. DMs have no guild."""
    users: dict[str, Author] = {}
    for u in doc_items(doc, "users"):
        users.setdefault(
            u["disc_id"], Author(id=u["disc_id"], username=u.get("username") or "", global_name=u.get("global_name"))
        )
    for msg in messages:
        users.setdefault(msg.author.id, msg.author)
    users.setdefault(doc["bot_user"]["id"], bot_author(doc))
    roles = {r.id: r.name for mem in members for r in mem.roles}
    roles.update((r["id"], r["name"]) for r in doc_items(doc, "roles"))
    channels = {c["id"]: c["name"] for c in doc_items(doc, "channels")}
    return InMemoryTransport(
        messages,
        members=members,
        users=users.values(),
        channels={**channels, doc["channel"]["id"]: doc["channel"]["name"]},
        roles=roles,
        capabilities=TransportCapabilities(guild_available=not doc["server"].get("is_dm")),
    )


@dataclass(frozen=True)
class SnapshotTurn:
    """What ``build_turn_context`` needs to assemble the turn a loaded snapshot describes."""

    turn: ChatTurn
    transport: InMemoryTransport
    transcripts: MemoryTranscriptCache
    budget: ContextBudget | None = None


def snapshot_turn(doc: Mapping[str, Any], loaded: LoadedSnapshot) -> SnapshotTurn:
    """The turn, channel and voice transcripts of ``doc``, whose rows ``loaded`` describes."""
    messages, members = parse_messages(doc), parse_members(doc)
    return SnapshotTurn(
        snapshot_chat_turn(doc, loaded, messages, members),
        snapshot_transport(doc, messages, members),
        transcript_cache(doc),
        context_budget(doc["turn"]),
    )
